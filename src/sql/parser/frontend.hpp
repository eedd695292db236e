#pragma once
// Internal: owns one script's text, tokens and placeholders, and parses token ranges
// as queries or expressions through libpg_query.
#include <string>
#include <string_view>

#include "clink/sql/parser/ast.hpp"
#include "clink/sql/parser/preparse.hpp"

namespace clink::sql::detail {

class Frontend : public preparse::ExpressionSource {
 public:
  explicit Frontend(std::string_view original);

  const preparse::SourceMap& map() const { return map_; }
  const preparse::Lexed& lexed() const { return lexed_; }

  ast::ExprPtr parse_expression(const preparse::Lexed& lexed, size_t begin, size_t end) override;
  ast::QueryPtr parse_query(const preparse::Lexed& lexed, size_t begin, size_t end);
  // For statements clink does not know: PostgreSQL's node name when PostgreSQL parses
  // the text (the caller reports it as unsupported), else a ParseError.
  std::string postgres_statement_kind(const preparse::Lexed& lexed, size_t begin, size_t end);
  // Marks a hint token as taken (INSERT INTO t /*+ ... */).
  void use_hint(const preparse::Token& hint) { placeholders_.used_hints.insert(hint.origin); }
  // Throws a TranslationError for the first /*+ ... */ hint no table took.
  void check_hints_used() const;

 private:
  // Parses `text` with libpg_query (giving FROM subqueries without an alias one).
  std::string run_postgres(preparse::Rewritten& text, const preparse::Lexed& lexed);
  SourcePosition start_of(const preparse::Lexed& lexed, size_t begin) const;

  std::string original_;
  preparse::SourceMap map_;
  preparse::Lexed lexed_;
  preparse::Placeholders placeholders_;
};

// Splits the frontend's tokens into statements and parses them.
ast::Script parse_statements(Frontend& frontend);

}  // namespace clink::sql::detail
