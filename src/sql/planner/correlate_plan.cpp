#include "clink/sql/planner/correlate_plan.hpp"

#include <fmt/format.h>

#include "clink/sql/common/multiset_type.hpp"


namespace clink::sql {


std::string rel_type_text(const LogicalType& t) {
  std::string s;
  switch (t.kind()) {
    case TypeKind::kInt: s = "INTEGER"; break;
    case TypeKind::kVarChar: s = fmt::format("VARCHAR({})", t.precision()); break;
    case TypeKind::kVarBinary: s = fmt::format("VARBINARY({})", t.precision()); break;
    case TypeKind::kTimestampLtz: s = fmt::format("TIMESTAMP_WITH_LOCAL_TIME_ZONE({})", t.precision()); break;
    case TypeKind::kArray: s = rel_type_text(t.element_type()) + " ARRAY"; break;
    case TypeKind::kMap:
      s = is_multiset(t) ? rel_type_text(t.key_type()) + " MULTISET"
                         : fmt::format("({}, {}) MAP", rel_type_text(t.key_type()), rel_type_text(t.value_type()));
      break;
    case TypeKind::kRow: {
      s = "RecordType:peek_no_expand(";
      for (std::size_t i = 0; i < t.fields().size(); ++i)
        s += (i ? ", " : "") + rel_type_text(t.fields()[i].type) + " " + t.fields()[i].name;
      s += ")";
      break;
    }
    default: return t.to_string();
  }
  if (!t.nullable()) s += " NOT NULL";
  return s;
}

std::string describe_correlate(const LogicalCorrelate& c) {
  const Schema& in = c.input().schema;
  // The arguments read the current input row: Calcite's correlation variable $cor0.
  std::vector<RowField> correlated;
  for (const auto& f : in.fields()) correlated.push_back({"$cor0." + f.name, f.type});
  Schema cor(std::move(correlated));
  std::string args;
  for (std::size_t i = 0; i < c.args.size(); ++i) args += (i ? ", " : "") + expr_text(c.args[i], cor);
  std::string function = c.function == LogicalCorrelate::Function::kUser ? c.function_name
                         : c.with_ordinality                             ? "$UNNEST_ROWS_WITH_ORDINALITY$1"
                                                                         : "$UNNEST_ROWS$1";
  std::string invocation = function + "(" + args + ")";
  std::string correlate = invocation;
  if (c.function == LogicalCorrelate::Function::kReplicateRows) {
    // Flink prints the generated function's class with input references, then the call
    // with column names: ReplicateRows($0, $1) and table(ReplicateRows($f0,c)).
    std::string refs, names;
    for (std::size_t i = 0; i < c.args.size(); ++i) {
      const std::string sep = i ? ", " : "";
      refs += sep + (c.args[i]->kind == ExprKind::kColumnRef ? fmt::format("${}", c.args[i]->column_index)
                                                             : expr_text(c.args[i], in));
      names += (i ? "," : "") + expr_text(c.args[i], in);
    }
    invocation = "ReplicateRows(" + refs + ")";
    correlate = "ReplicateRows(" + names + ")";
  }
  std::string select, row_type;
  for (std::size_t i = 0; i < c.schema.size(); ++i) {
    select += (i ? "," : "") + c.schema.name(i);
    // Calcite marks the input's time attributes, which pass through the Correlate.
    const bool input_column = i < in.size();
    const char* marker = input_column && is_time_attribute(c.input(), i)       ? " *ROWTIME*"
                         : input_column && is_proctime_attribute(c.input(), i) ? " *PROCTIME*"
                                                                               : "";
    row_type += (i ? ", " : "") + rel_type_text(c.schema.type(i)) + marker + " " + c.schema.name(i);
  }
  return fmt::format("Correlate(invocation=[{}], correlate=[table({})], select=[{}], rowType=[RecordType({})], "
                     "joinType=[{}]{})",
                     invocation, correlate, select, row_type, c.left_outer ? "LEFT" : "INNER",
                     c.condition ? ", condition=[" + expr_text(c.condition, c.schema) + "]" : std::string());
}

}  // namespace clink::sql
