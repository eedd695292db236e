#pragma once
// Helpers for expression and function tests: literals, one-row evaluation, printing.
#include <string>
#include <vector>

#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/common/value_format.hpp"
#include "clink/sql/expression/expr.hpp"
#include "clink/sql/expression/expr_compiler.hpp"
#include "clink/sql/function/function_registry.hpp"

namespace clink::sql::testing {

inline ExprPtr i32(std::int64_t v) { return expr::literal(Value(v), LogicalType::int_type().not_null()); }
inline ExprPtr i64(std::int64_t v) { return expr::literal(Value(v), LogicalType::bigint().not_null()); }
inline ExprPtr f64(double v) { return expr::literal(Value(v), LogicalType::double_type().not_null()); }
inline ExprPtr str(std::string s) { return expr::literal(Value(std::move(s)), LogicalType::string().not_null()); }
inline ExprPtr boolean(bool b) { return expr::literal(Value(b), LogicalType::boolean().not_null()); }
inline ExprPtr null_of(LogicalType t = LogicalType::null_type()) { return expr::null_literal(std::move(t)); }
inline ExprPtr dec(const std::string& text, int p, int s) {
  Int128 v = 0;
  Decimal128::parse(text, p, s, v);
  return expr::literal(Value::decimal(v), LogicalType::decimal(p, s).not_null());
}

// The cell as CAST(... AS STRING) prints it, "NULL" for NULL.
inline std::string cell(const Column& c, std::size_t row, const TimeZone& zone) {
  if (c.is_null(row)) return "NULL";
  std::string s;
  append_cell_string(c, row, zone, false, s);
  return s;
}

// Evaluates `e` over a one-row batch with no columns and returns the printed value.
inline std::string eval(const ExprPtr& e, const SessionContext& session = {}) {
  static const SchemaPtr kEmpty = make_schema({});
  ColumnBatch b(kEmpty);
  b.commit_rows(1);
  CompiledExpr c(e, session);
  return cell(c.evaluate(b), 0, *session.time_zone);
}

inline ExprPtr call(std::string_view name, std::vector<ExprPtr> args) {
  return expr::call(FunctionRegistry::builtins(), name, std::move(args));
}
inline std::string eval_call(std::string_view name, std::vector<ExprPtr> args) { return eval(call(name, std::move(args))); }

// Evaluates over every row of a batch.
inline std::vector<std::string> eval_rows(const ExprPtr& e, const ColumnBatch& b, const SessionContext& session = {}) {
  CompiledExpr c(e, session);
  const Column& col = c.evaluate(b);
  std::vector<std::string> out;
  for (std::size_t r = 0; r < b.size(); ++r) out.push_back(cell(col, r, *session.time_zone));
  return out;
}

}  // namespace clink::sql::testing
