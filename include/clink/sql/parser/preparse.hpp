#pragma once
// The preparse shim: the text-level layer between a Flink SQL script and
// libpg_query's PostgreSQL grammar.
//
//  * tokenize() splits text into tokens, skipping comments and keeping string
//    literals, quoted identifiers (backticks or double quotes) and /*+ hints */ whole,
//    so a keyword inside a string or a comment never triggers a rewrite.
//  * rewrite_for_postgres() turns the tokens of a query or an expression into text
//    PostgreSQL parses: backtick identifiers become double-quoted; unquoted non-keyword
//    identifiers are quoted too so PostgreSQL keeps their case (Flink identifiers are
//    case-sensitive); Flink-only constructs become placeholders recorded in
//    Placeholders: data types (__clink_ctype_N), typed and INTERVAL literals
//    (__clink_lit_N), window table functions TABLE(TUMBLE(...)) (__clink_tvf_N);
//    TRY_CAST, MAP[...] and FLOOR/CEIL(x TO unit) are rewritten to their PostgreSQL
//    shape and remembered by position; OPTIONS hints are attached to the table name
//    they follow.
//  * Every byte of a rewritten text maps back to a byte of the ORIGINAL script
//    (MappedText::origin), so positions PostgreSQL reports come out as the user's
//    line and column.
//
// Flink statements PostgreSQL has no grammar for at all (CREATE TABLE with its
// columns, watermarks and WITH options, SET, SHOW, ...) are parsed from the same
// tokens by the statement parser (src/sql/parser/statement_parser.cpp); only their
// embedded queries and expressions go through rewrite_for_postgres.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "clink/sql/common/sql_error.hpp"
#include "clink/sql/parser/ast.hpp"

namespace clink::sql::preparse {

// A text together with, for each byte, the byte offset in the original script it
// came from (origin has one extra entry for the end of the text).
struct MappedText {
  std::string text;
  std::vector<uint32_t> origin{0};

  static MappedText identity(std::string_view text);
  // Appends `s`; every byte maps to original offset `orig`.
  void append(std::string_view s, uint32_t orig);
  // Appends text[b, e) of `from`, keeping its mapping.
  void append_from(const MappedText& from, size_t b, size_t e);
  uint32_t original_offset(size_t i) const { return origin[i < origin.size() ? i : origin.size() - 1]; }
};

// Line and column lookup in the original script.
class SourceMap {
 public:
  explicit SourceMap(std::string_view original);
  SourcePosition position(size_t original_offset) const;
  std::string_view original() const { return original_; }

 private:
  std::string_view original_;
  std::vector<size_t> line_starts_;
  // Offsets of UTF-8 continuation bytes: a column counts code points without walking its
  // line (a statement on one long line has as many positions as tokens).
  std::vector<size_t> continuation_bytes_;
};

enum class TokenKind {
  Word,        // unquoted identifier or keyword
  QuotedWord,  // `name` or "name"
  String,      // 'text'
  Number,      // 12, 1.5, 1.5E3, .5
  Symbol,      // ( ) , ; . [ ] + - * / % = < > <= >= <> != || => :: ...
  Hint,        // /*+ ... */ (value holds the text between /*+ and */)
  End,         // past the last token of a range
};

struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;   // the raw source text
  std::string value;  // identifier name without quotes, unescaped string, hint body
  uint32_t begin = 0, end = 0;  // offsets in the lexed MappedText
  uint32_t origin = 0;          // original offset of the first byte
  bool backtick = false;

  bool is(std::string_view keyword) const;  // an unquoted word, case-insensitive
  bool sym(std::string_view symbol) const { return kind == TokenKind::Symbol && text == symbol; }
  bool word() const { return kind == TokenKind::Word || kind == TokenKind::QuotedWord; }
};

struct Lexed {
  MappedText text;
  std::vector<Token> tokens;
};

// Throws ParseError for an unterminated string, quoted identifier or comment.
Lexed tokenize(MappedText text, const SourceMap& map);

// True when PostgreSQL's grammar treats `word` as a keyword (of any category).
bool is_postgres_keyword(std::string_view word);
// True for PostgreSQL keywords that are not plain names everywhere: reserved ones
// (SELECT, USER, ...) and the column-name / type-function-name ones (TIMESTAMP, INT,
// LEFT, ...). The AST printer quotes these.
bool is_reserved_keyword(std::string_view word);

// Flink-only pieces cut out of the text sent to PostgreSQL, restored by the AST builder.
struct Placeholders {
  std::vector<TypeName> types;                  // __clink_ctype_N
  std::vector<ast::ExprPtr> literals;           // __clink_lit_N
  std::vector<ast::TableRef> table_functions;   // __clink_tvf_N (node is a WindowTvf)
  // `input MATCH_RECOGNIZE (...) [AS] alias` reaches PostgreSQL as `input "__clink_mr_N"`:
  // the AST builder puts the input under the recorded clause and restores the alias.
  struct MatchRecognizeClause {
    ast::MatchRecognize clause;
    std::optional<std::string> alias;
    SourcePosition pos;  // of MATCH_RECOGNIZE
  };
  std::vector<MatchRecognizeClause> match_recognize;
  std::map<uint32_t, std::vector<ast::TableHint>> hints;  // by original offset of the table name
  std::map<uint32_t, std::vector<uint32_t>> hint_tokens;  // the same key: original offsets of the /*+ */
  // Original offsets of the hint tokens a table reference took; a hint left over was
  // written where clink does not support one, which is an error (never ignored).
  mutable std::set<uint32_t> used_hints;
  // `t FOR SYSTEM_TIME AS OF <expr>`, by original offset of the table name; the builder
  // marks the ones a table reference took (one left over is an error).
  std::map<uint32_t, ast::ExprPtr> system_time;
  mutable std::set<uint32_t> used_system_time;
  std::set<uint32_t> try_casts;                 // original offset of TRY_CAST
  std::set<uint32_t> map_constructors;          // original offset of MAP[
  std::map<uint32_t, std::string> floor_ceil_units;  // original offset of FLOOR / CEIL
  std::map<uint32_t, std::shared_ptr<const ast::JsonClauses>> json_clauses;
  std::map<uint32_t, std::string> json_on_null;  // JSON_OBJECT / JSON_ARRAY offset -> "NULL" / "ABSENT"
  std::map<uint32_t, std::string> null_treatment;  // ARRAY_AGG offset -> "IGNORE" / "RESPECT"
  std::set<uint32_t> json_key_value;  // JSON_OBJECT offsets written with KEY k VALUE v / k VALUE v
  std::map<uint32_t, std::string> is_json;  // original offset of IS in `x IS [NOT] JSON kind`  // offset of JSON_VALUE...
};

// Parses an expression from a token range; the rewriter uses it for the size
// arguments of window table functions.
class ExpressionSource {
 public:
  virtual ~ExpressionSource() = default;
  virtual ast::ExprPtr parse_expression(const Lexed& lexed, size_t begin, size_t end) = 0;
};

struct Rewritten {
  MappedText text;
  // Original spelling of the identifiers and numbers written into `text`, by offset in
  // `text` (PostgreSQL folds unquoted keywords used as names to lower case, and its
  // JSON output drops some integer values).
  std::map<uint32_t, std::string> spellings;
};

// Rewrites tokens [begin, end) of `lexed` into PostgreSQL-parseable text.
Rewritten rewrite_for_postgres(const Lexed& lexed, size_t begin, size_t end, const SourceMap& map,
                               Placeholders& placeholders, ExpressionSource& expressions);

}  // namespace clink::sql::preparse
