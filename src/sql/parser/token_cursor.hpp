#pragma once
// Internal: a cursor over a token range, shared by the statement parser, the type
// parser and the preparse rewriter. Hint tokens are invisible to peek()/next();
// hints_here() reads them where they are meaningful (after a table name).
#include <string>
#include <string_view>
#include <vector>

#include "clink/sql/parser/ast.hpp"
#include "clink/sql/parser/preparse.hpp"

namespace clink::sql::detail {

using preparse::Lexed;
using preparse::Token;
using preparse::TokenKind;

class TokenCursor {
 public:
  TokenCursor(const Lexed& lexed, size_t begin, size_t end, const preparse::SourceMap& map);

  const Lexed& lexed() const { return lexed_; }
  const preparse::SourceMap& map() const { return map_; }
  size_t index() const { return i_; }  // raw token index (may point at a hint)
  size_t end_index() const { return end_; }
  void seek(size_t i) { i_ = i; }

  bool at_end() const { return index_ahead(0) >= end_; }
  const Token& peek(size_t ahead = 0) const;
  size_t index_ahead(size_t ahead) const;  // raw index of the ahead-th visible token
  bool peek_is(std::string_view keyword_or_symbol, size_t ahead = 0) const;
  const Token& next();
  bool accept(std::string_view keyword_or_symbol);
  bool accept_all(std::initializer_list<std::string_view> sequence);  // all or nothing
  const Token& expect(std::string_view keyword_or_symbol);
  // Hint tokens at the current position (consumed).
  std::vector<const Token*> hints_here();

  std::string identifier(std::string_view what);  // a word or quoted word
  ast::QualifiedName qualified_name(std::string_view what);
  std::string string_literal(std::string_view what);
  int integer(std::string_view what);
  // Raw index of the token closing the bracket opened at raw index `open`.
  size_t matching_close(size_t open) const;
  // Raw index of the next visible token at bracket depth 0 matching one of `stops`,
  // or end_index() when none.
  size_t find_top_level(std::initializer_list<std::string_view> stops) const;

  SourcePosition position(const Token& t) const { return map_.position(t.origin); }
  SourcePosition position() const { return position(peek()); }
  [[noreturn]] void fail(const Token& at, const std::string& message) const;
  [[noreturn]] void fail_expected(std::string_view what) const;
  [[noreturn]] void unsupported(const Token& at, const std::string& message) const;

 private:
  const Lexed& lexed_;
  size_t begin_, end_, i_;
  const preparse::SourceMap& map_;
  Token end_token_;
};

// Printable form of a token for messages: 'FROM', end of input.
std::string describe(const Token& t);
bool matches(const Token& t, std::string_view keyword_or_symbol);

// Parses a data type at the cursor (see type_syntax.hpp for the accepted forms).
TypeName parse_type(TokenCursor& cursor);
// Parses `INTERVAL [-]'v' unit [(p)] [TO unit [(p)]]` with the cursor on INTERVAL.
ast::ExprPtr parse_interval_literal(TokenCursor& cursor);
// Canonical singular upper-case time unit, or "" when `word` is not one.
std::string time_unit(const Token& word);

// `key = value`: the key a string literal or a (dotted) name, the value a string
// literal, a number, TRUE/FALSE or a name; both spelled as written.
ast::Property parse_property(TokenCursor& cursor);
// '(' property, ... ')'
std::vector<ast::Property> parse_property_list(TokenCursor& cursor);

// True when the token at the cursor starts a SQL/JSON clause (RETURNING, a wrapper,
// `NULL ON ...`, `DEFAULT x ON ...`).
bool at_json_clause(const TokenCursor& cursor);
// Parses the SQL/JSON clauses at the cursor up to its end; `expression` parses the
// DEFAULT values (a raw token range).
ast::JsonClauses parse_json_clauses(TokenCursor& cursor, preparse::ExpressionSource& expressions);

}  // namespace clink::sql::detail

namespace clink::sql::preparse {
// The hints of a /*+ ... */ token (only OPTIONS(...) is accepted).
std::vector<ast::TableHint> parse_hint_token(const Lexed& lexed, const Token& hint, const SourceMap& map);
}  // namespace clink::sql::preparse
