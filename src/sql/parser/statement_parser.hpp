#pragma once
// Internal: the statement parser. Splits a script into statements and parses Flink's
// statement forms from tokens; DDL lives in statement_parser_ddl.cpp, the rest in
// statement_parser.cpp.
#include <string>
#include <vector>

#include "frontend.hpp"
#include "token_cursor.hpp"

namespace clink::sql::detail {

using ast::Script;
using ast::Statement;
using ast::Insert;
using ast::SchemaElements;
using ast::PrimaryKey;
using ast::ExprPtr;
using ast::AlterAction;

class StatementParser {
 public:
  explicit StatementParser(Frontend& fe) : fe_(fe), lx_(fe.lexed()), map_(fe.map()) {}
  Script script();

 private:
  // Index of the ';' ending the statement that starts at `start` (or the token count).
  // A statement set's BEGIN ... END block contains ';' of its own.
  size_t statement_end(size_t start) const;
  // Index of the END closing a statement-set block whose body starts at `i` (CASE ... END
  // inside the inserts is skipped).
  size_t block_end(size_t i) const;
  Statement statement(size_t b, size_t e);
  Statement::Node node(size_t b, size_t e);
  // Something clink has no statement form for: a ParseError when it is not SQL at all,
  // else name what PostgreSQL recognised.
  [[noreturn]] void unknown_statement(TokenCursor& c, size_t b);
  void expect_end(TokenCursor& c);
  Statement::Node show(TokenCursor& c);
  Statement::Node describe_statement(TokenCursor& c);
  Statement::Node use(TokenCursor& c);       // USE [CATALOG] name
  Statement::Node stop_job(TokenCursor& c);  // STOP JOB 'id' [WITH SAVEPOINT] [WITH DRAIN]
  Statement::Node jar(TokenCursor& c);       // ADD JAR / REMOVE JAR 'path'
  Statement::Node analyze(TokenCursor& c);
  Statement::Node explain(TokenCursor& c);
  // The original text of tokens [b, e) (trimmed), for unquoted SET keys and values.
  std::string raw_text(size_t b, size_t e) const;
  Statement::Node set(TokenCursor& c);
  Statement::Node reset(TokenCursor& c);
  Insert insert_statement(TokenCursor& c);
  Statement::Node statement_set(TokenCursor& c);

  // Materialized tables and views (statement_parser_mv.cpp)
  static bool is_materialized(const TokenCursor& c);
  Statement::Node materialized(TokenCursor& c);
  void defining_query(TokenCursor& c, ast::MaterializedTable& m);

  // DDL (statement_parser_ddl.cpp)
  Statement::Node create(TokenCursor& c);
  // An expression running to the next top-level ',' / ')' (or COMMENT, for columns).
  ExprPtr element_expression(TokenCursor& c);
  std::vector<std::string> name_list(TokenCursor& c, std::string_view what);
  void primary_key(TokenCursor& c, SchemaElements& out, PrimaryKey pk, bool column_level);
  void schema_element(TokenCursor& c, SchemaElements& out);
  SchemaElements schema_list(TokenCursor& c);
  Statement::Node create_table(TokenCursor& c, bool temporary);
  Statement::Node create_view(TokenCursor& c, bool temporary, bool or_replace);
  Statement::Node create_function(TokenCursor& c, bool temporary, bool system, bool or_replace);
  // CREATE AGGREGATE (statement_parser_aggregate.cpp): a WebAssembly aggregate.
  Statement::Node create_aggregate(TokenCursor& c, bool temporary, bool or_replace);
  Statement::Node create_model(TokenCursor& c, bool temporary);  // model_statements.cpp
  // Parses the inside of a string literal as an expression, mapping positions into the
  // literal ('' escapes included).
  ExprPtr string_body_expression(const Token& literal);
  Statement::Node drop(TokenCursor& c);
  SchemaElements elements_or_list(TokenCursor& c);
  AlterAction alter_action(TokenCursor& c);
  Statement::Node alter_table(TokenCursor& c);

  Frontend& fe_;
  const Lexed& lx_;
  const preparse::SourceMap& map_;
};

std::string upper_case(std::string s);
bool starts_query(const TokenCursor& c, size_t ahead = 0);

}  // namespace clink::sql::detail
