// The lookup join's condition split as Flink's CommonPhysicalLookupJoin splits it
// (lookup_join_plan.hpp), and its EXPLAIN line.
#include "clink/sql/planner/lookup_join_plan.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "plan_rewrite.hpp"

namespace clink::sql {

namespace {

using namespace rewrite;

bool is_integer(const LogicalType& t) {
  return t.is(TypeKind::kTinyInt) || t.is(TypeKind::kSmallInt) || t.is(TypeKind::kInt) || t.is(TypeKind::kBigInt);
}

int integer_width(const LogicalType& t) {
  if (t.is(TypeKind::kTinyInt)) return 1;
  if (t.is(TypeKind::kSmallInt)) return 2;
  if (t.is(TypeKind::kInt)) return 4;
  return 8;
}

bool is_string(const LogicalType& t) { return t.is(TypeKind::kVarChar) || t.is(TypeKind::kChar); }

ExprPtr strip_casts(ExprPtr e) {
  while (e->kind == ExprKind::kCast) e = e->args[0];
  return e;
}

// `value` (over the input) as a key of a column of type `column`: the same type, a
// narrower integer (widened exactly), or a string: the key bytes of both sides then agree.
// Implicit casts the `=` put on it are looked through. Null when looking up by it could
// match wrongly (a wider integer, another family).
ExprPtr key_value(const ExprPtr& value, const LogicalType& column) {
  for (ExprPtr v = value;; v = v->args[0]) {
    const LogicalType& t = v->type;
    if (t.with_nullable(true) == column.with_nullable(true)) return v;
    if (is_string(t) && is_string(column)) return v;
    if (is_integer(t) && is_integer(column) && integer_width(t) <= integer_width(column))
      return expr::cast(v, column.with_nullable(t.nullable()));
    if (t.is(TypeKind::kNull)) return expr::cast(v, column.with_nullable(true));
    if (v->kind != ExprKind::kCast) return nullptr;
  }
}

}  // namespace

Schema lookup_fetched_schema(const LogicalLookupJoin& j) {
  const Schema physical = j.table.physical_schema();
  std::vector<RowField> fields;
  for (auto c : j.columns) {
    RowField f = physical.field(c);
    if (j.left_outer) f.type = f.type.with_nullable(true);
    fields.push_back(f);
  }
  return Schema(std::move(fields));
}

Schema lookup_join_schema(const Schema& input, const LogicalLookupJoin& j) {
  std::vector<RowField> fields = input.fields();
  const Schema fetched = lookup_fetched_schema(j);
  for (const auto& f : fetched.fields()) fields.push_back(f);
  std::vector<std::string> names;
  for (const auto& f : fields) names.push_back(f.name);
  names = unique_names(names);
  for (std::size_t i = 0; i < fields.size(); ++i) fields[i].name = names[i];
  return Schema(std::move(fields));
}

LookupJoinAnalysis analyze_lookup_join(const LogicalLookupJoin& j) {
  LookupJoinAnalysis out;
  const std::size_t nl = j.input_columns(), n = nl + j.columns.size();
  const Schema fetched = lookup_fetched_schema(j);
  auto only_in = [](const ExprPtr& e, std::size_t from, std::size_t to) {
    std::set<std::size_t> cols;
    collect_columns(e, cols);
    return std::all_of(cols.begin(), cols.end(), [&](std::size_t c) { return c >= from && c < to; });
  };
  auto is_key_column = [&](std::size_t col) {
    return std::any_of(out.keys.begin(), out.keys.end(), [&](const LookupKey& k) { return k.column == col; });
  };
  // Whether `c` is a lookup key (recorded) or an IS NOT DISTINCT FROM between the sides.
  auto take_key = [&](const ExprPtr& c) {
    if (c->kind != ExprKind::kCall || c->args.size() != 2 || (c->name != "=" && c->name != "IS NOT DISTINCT FROM"))
      return false;
    // The table's side: a bare column (through casts); the other side: the input's.
    for (int side = 0; side < 2; ++side) {
      ExprPtr d = strip_casts(c->args[side]);
      const ExprPtr& v = c->args[1 - side];
      if (d->kind != ExprKind::kColumnRef || d->column_index < nl || d->column_index >= n) continue;
      if (!only_in(v, 0, nl) || !is_deterministic(v)) continue;
      if (c->name != "=") {
        if (!out.not_distinct) out.not_distinct = c;
        return false;
      }
      const std::size_t col = d->column_index - nl;
      if (is_key_column(col)) return false;
      ExprPtr value = key_value(v, fetched.type(col));
      if (!value) return false;
      out.keys.push_back({col, value});
      return true;
    }
    return false;
  };
  std::vector<ExprPtr> pre, dim, rest;
  for (const auto& c : conjuncts(j.condition)) {
    if (take_key(c)) continue;
    if (only_in(c, 0, nl) && j.left_outer && is_deterministic(c)) pre.push_back(c);
    else if (only_in(c, nl, n) && is_deterministic(c))
      dim.push_back(remap_columns(c, [&](std::size_t i) { return i - nl; }));
    else rest.push_back(c);
  }
  std::sort(out.keys.begin(), out.keys.end(), [](const LookupKey& a, const LookupKey& b) { return a.column < b.column; });
  out.pre_filter = conjunction(std::move(pre));
  out.dim_filter = conjunction(std::move(dim));
  out.residual = conjunction(std::move(rest));
  return out;
}

std::string describe_lookup_join(const LogicalLookupJoin& j) {
  const LookupJoinAnalysis a = analyze_lookup_join(j);
  const Schema& in = j.input().schema;
  const Schema fetched = lookup_fetched_schema(j);
  std::vector<std::string> keys, names;
  for (const auto& k : a.keys) keys.push_back(fetched.name(k.column) + "=" + expr_text(k.value, in));
  // Flink's select: the output's names, or, when it projects or filters the table (a calc
  // on the temporal table), the input's then the table's own column names.
  const bool calc = a.dim_filter || j.columns.size() < j.table.physical_schema().size();
  for (std::size_t i = 0; i < j.schema.size(); ++i)
    names.push_back(calc && i >= j.input_columns() ? fetched.name(i - j.input_columns()) : j.schema.name(i));
  auto joined = [](const std::vector<std::string>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s;
  };
  std::string text = fmt::format("LookupJoin(table=[{}], joinType=[{}], lookup=[{}]", j.table.name,
                                 j.left_outer ? "LeftOuterJoin" : "InnerJoin", joined(keys));
  if (a.dim_filter) text += fmt::format(", where=[{}]", expr_text(a.dim_filter, fetched));
  if (a.pre_filter || a.residual) {
    std::string cond;
    if (a.pre_filter) cond += expr_text(a.pre_filter, j.schema);
    if (a.residual) cond += expr_text(a.residual, j.schema);
    text += fmt::format(", joinCondition=[{}]", cond);
  }
  text += fmt::format(", select=[{}]", joined(names));
  if (j.async.configured) text += fmt::format(", async=[{}]", j.async.describe());
  return text + ")";
}

}  // namespace clink::sql
