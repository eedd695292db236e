#pragma once
// The SQL front door: Flink SQL text -> clink's AST (ast.hpp).
//
// Pipeline: the preparse shim (preparse.hpp) tokenizes the script and splits it into
// statements; Flink statements are parsed by clink's statement parser, and every query
// and expression inside them is rewritten for PostgreSQL's grammar and parsed by
// libpg_query; the AST builder turns the parse tree into clink's AST, restoring what
// the shim cut out. Positions always refer to the original text.
//
// Errors: ParseError for invalid syntax, TranslationError for valid SQL outside the
// supported subset (both with line and column).
#include <string_view>

#include "clink/sql/common/sql_error.hpp"
#include "clink/sql/parser/ast.hpp"

namespace clink::sql {

// A script of ';'-separated statements (a trailing ';' is optional).
ast::Script parse(std::string_view sql);

// One scalar expression, e.g. "a + 1" or "CAST(x AS DECIMAL(10, 2))".
ast::ExprPtr parse_expression(std::string_view sql);

// One query (SELECT, VALUES, set operations, WITH).
ast::QueryPtr parse_query(std::string_view sql);

}  // namespace clink::sql
