#pragma once
// Internal: translates libpg_query's JSON parse tree into clink's AST. The JSON (and
// nlohmann::json) stays inside ast_builder.cpp.
#include <string>

#include "clink/sql/parser/ast.hpp"
#include "clink/sql/parser/preparse.hpp"

namespace clink::sql::detail {

struct PgContext {
  const preparse::Rewritten& rewritten;  // the text PostgreSQL parsed
  const preparse::SourceMap& map;
  const preparse::Placeholders& placeholders;
  SourcePosition fallback;  // position of the fragment's first token
};

// The JSON of a parse of one query (SELECT / VALUES / set operation).
ast::QueryPtr build_query(const std::string& json, const PgContext& ctx);
// The JSON of a parse of "SELECT <expression>".
ast::ExprPtr build_expression(const std::string& json, const PgContext& ctx);
// The node name of the first statement (e.g. "IndexStmt"), for error messages.
std::string statement_node_name(const std::string& json);

}  // namespace clink::sql::detail
