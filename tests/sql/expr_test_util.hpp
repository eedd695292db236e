#pragma once
// Helpers for expression and function tests: literals, one-row evaluation, printing.
#include <string>
#include <vector>

#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/common/value_format.hpp"
#include "clink/sql/expression/expr.hpp"
#include "clink/sql/expression/expr_compiler.hpp"
#include "clink/sql/function/function_registry.hpp"

namespace clink::test {

inline sql::ExprPtr i32(std::int64_t v) { return sql::expr::literal(sql::Value(v), sql::LogicalType::int_type().not_null()); }
inline sql::ExprPtr i64(std::int64_t v) { return sql::expr::literal(sql::Value(v), sql::LogicalType::bigint().not_null()); }
inline sql::ExprPtr f64(double v) { return sql::expr::literal(sql::Value(v), sql::LogicalType::double_type().not_null()); }
inline sql::ExprPtr str(std::string s) { return sql::expr::literal(sql::Value(std::move(s)), sql::LogicalType::string().not_null()); }
inline sql::ExprPtr boolean(bool b) { return sql::expr::literal(sql::Value(b), sql::LogicalType::boolean().not_null()); }
inline sql::ExprPtr null_of(sql::LogicalType t = sql::LogicalType::null_type()) { return sql::expr::null_literal(std::move(t)); }
inline sql::ExprPtr dec(const std::string& text, int p, int s) {
  sql::Int128 v = 0;
  sql::Decimal128::parse(text, p, s, v);
  return sql::expr::literal(sql::Value::decimal(v), sql::LogicalType::decimal(p, s).not_null());
}

// The cell as CAST(... AS STRING) prints it, "NULL" for NULL.
inline std::string cell(const sql::Column& c, std::size_t row, const sql::TimeZone& zone) {
  if (c.is_null(row)) return "NULL";
  std::string s;
  sql::append_cell_string(c, row, zone, false, s);
  return s;
}

// Evaluates `e` over a one-row batch with no columns and returns the printed value.
inline std::string eval(const sql::ExprPtr& e, const sql::SessionContext& session = {}) {
  static const sql::SchemaPtr kEmpty = sql::make_schema({});
  sql::ColumnBatch b(kEmpty);
  b.commit_rows(1);
  sql::CompiledExpr c(e, session);
  return cell(c.evaluate(b), 0, *session.time_zone);
}

inline sql::ExprPtr call(std::string_view name, std::vector<sql::ExprPtr> args) {
  return sql::expr::call(sql::FunctionRegistry::builtins(), name, std::move(args));
}
inline std::string eval_call(std::string_view name, std::vector<sql::ExprPtr> args) { return eval(call(name, std::move(args))); }

// Evaluates over every row of a batch.
inline std::vector<std::string> eval_rows(const sql::ExprPtr& e, const sql::ColumnBatch& b, const sql::SessionContext& session = {}) {
  sql::CompiledExpr c(e, session);
  const sql::Column& col = c.evaluate(b);
  std::vector<std::string> out;
  for (std::size_t r = 0; r < b.size(); ++r) out.push_back(cell(col, r, *session.time_zone));
  return out;
}

}  // namespace clink::test
