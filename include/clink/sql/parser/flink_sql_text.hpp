#pragma once
// An expression as Flink prints it back (Calcite's unparse), for SHOW CREATE TABLE and
// DESCRIBE: every identifier in backticks, built-in function names in capitals,
// parentheses only where operator precedence needs them (`p` + 1 * 2, (`p` + 1) * 2),
// BETWEEN ASYMMETRIC, CAST(... AS INTEGER). ast::to_string stays the canonical, fully
// parenthesised form the catalog stores and parses back.
#include <string>

#include "clink/sql/parser/ast.hpp"

namespace clink::sql::ast {

std::string to_flink_string(const Expr& expr);

// An identifier in backticks, always (Flink's EncodingUtils.escapeIdentifier): `a`, `a``b`.
std::string backquoted_identifier(const std::string& name);

}  // namespace clink::sql::ast
