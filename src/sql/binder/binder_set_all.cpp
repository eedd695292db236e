// Binder: INTERSECT ALL and EXCEPT ALL, rewritten the way Flink's RewriteIntersectAllRule
// and RewriteMinusAllRule do (there is no bag-semantics join to run them):
//
//   A INTERSECT ALL B   UNION ALL of A ++ (TRUE, NULL) and B ++ (NULL, TRUE); GROUP BY every
//                       column with COUNT of each marker (vcol_left_cnt, vcol_right_cnt);
//                       keep groups where both are >= 1; the multiplicity is the smaller
//                       count (IF(l > r, r, l)).
//   A EXCEPT ALL B      UNION ALL of A ++ 1 and B ++ -1; GROUP BY every column with
//                       SUM(vcol_marker); keep groups where the sum is > 0: the multiplicity.
//
// Then REPLICATE_ROWS(multiplicity, columns...) through a Correlate emits each group's row
// that many times, and a projection keeps its copy of the columns. GROUP BY keys compare
// NULL equal to NULL, as set operations do. The result updates: when a group's counts
// change, the aggregate retracts its old row and the Correlate retracts every copy.
#include "../planner/plan_rewrite.hpp"
#include "binder_internal.hpp"

namespace clink::sql {

Bound Binder::Impl::bind_intersect_except_all(const ast::SetOperation& op, Bound l, Bound r, SourcePosition pos) {
  const bool except = op.op == ast::SetOperation::Op::Except;
  const std::size_t n = l.plan->schema.size();
  // Each side with its marker column(s), then their union. Both sides carry the union's
  // exact schema (the left's names; a column nullable when either side's is): the operator
  // after the union reads both with one schema.
  std::vector<LogicalType> types;
  for (std::size_t i = 0; i < n; ++i) {
    const bool nullable = l.plan->schema.type(i).nullable() || r.plan->schema.type(i).nullable();
    types.push_back(l.plan->schema.type(i).with_nullable(nullable));
  }
  auto marked = [&](const Bound& side, bool left) {
    std::vector<ExprPtr> exprs;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < n; ++i) {
      ExprPtr col = expr::column(i, side.plan->schema.type(i), side.plan->schema.name(i));
      // A NOT NULL column under a nullable union column: TRY_CAST to its own type widens
      // it (CAST keeps its input's nullability) and cannot fail.
      exprs.push_back(col->type == types[i] ? col : at(pos, [&] { return expr::try_cast(col, types[i]); }));
      names.push_back(l.plan->schema.name(i));
    }
    if (except) {
      exprs.push_back(expr::literal(Value(std::int64_t{left ? 1 : -1}), LogicalType::bigint().not_null()));
      names.push_back("vcol_marker");
    } else {
      auto marker = [](bool on) {
        return on ? expr::literal(Value(true), LogicalType::boolean()) : expr::null_literal(LogicalType::boolean());
      };
      exprs.push_back(marker(left));
      names.push_back("vcol_left_marker");
      exprs.push_back(marker(!left));
      names.push_back("vcol_right_marker");
    }
    return make_project(side.plan, std::move(exprs), std::move(names), pos);
  };

  LogicalPtr left = marked(l, true);
  LogicalPtr right = marked(r, false);
  auto u = std::make_shared<LogicalUnion>();
  u->schema = left->schema;
  u->inputs = {left, right};
  u->pos = pos;

  // GROUP BY every column, counting each side's rows.
  auto agg = std::make_shared<LogicalAggregate>();
  std::vector<std::size_t> set;
  for (std::size_t i = 0; i < n; ++i) {
    agg->keys.push_back(i);
    set.push_back(i);
  }
  agg->grouping_sets = {set};
  if (except) {
    AggregateCall sum;
    sum.function = "SUM";
    sum.args = {n};
    sum.type = sum_result_type(LogicalType::bigint().not_null());
    sum.name = "sum_vcol_marker";
    agg->aggregates.push_back(sum);
  } else {
    for (std::size_t side = 0; side < 2; ++side) {
      AggregateCall count;
      count.function = "COUNT";
      count.args = {n + side};
      count.type = LogicalType::bigint().not_null();
      count.name = side == 0 ? "vcol_left_cnt" : "vcol_right_cnt";
      agg->aggregates.push_back(count);
    }
  }
  agg->schema = aggregate_schema(u->schema, agg->keys, false, agg->aggregates);
  agg->inputs = {u};
  agg->pos = pos;

  // Keep the groups in the result and compute their multiplicity (first, as Flink's $f0).
  auto agg_column = [&](std::size_t i) { return expr::column(n + i, agg->schema.type(n + i), agg->schema.name(n + i)); };
  auto one = expr::literal(Value(std::int64_t{1}), LogicalType::bigint().not_null());
  ExprPtr keep, multiplicity;
  std::string multiplicity_name;
  if (except) {
    keep = call(">", {agg_column(0), expr::literal(Value(std::int64_t{0}), LogicalType::bigint().not_null())}, pos);
    multiplicity = agg_column(0);
    multiplicity_name = "sum_vcol_marker";
  } else {
    keep = rewrite::conjunction({call(">=", {agg_column(0), one}, pos), call(">=", {agg_column(1), one}, pos)});
    multiplicity = call("IF", {call(">", {agg_column(0), agg_column(1)}, pos), agg_column(1), agg_column(0)}, pos);
    multiplicity_name = "$f0";
  }
  LogicalPtr kept = make_filter(agg, keep, pos);
  std::vector<ExprPtr> exprs{multiplicity};
  std::vector<std::string> names{multiplicity_name};
  for (std::size_t i = 0; i < n; ++i) {
    exprs.push_back(expr::column(i, agg->schema.type(i), agg->schema.name(i)));
    names.push_back(agg->schema.name(i));
  }
  LogicalPtr counted = make_project(kept, std::move(exprs), std::move(names), pos);

  // REPLICATE_ROWS(multiplicity, columns...): each row that many times.
  auto c = std::make_shared<LogicalCorrelate>();
  c->function = LogicalCorrelate::Function::kReplicateRows;
  c->function_name = "REPLICATE_ROWS";
  for (std::size_t i = 0; i <= n; ++i) c->args.push_back(expr::column(i, counted->schema.type(i), counted->schema.name(i)));
  std::vector<std::string> all_names;
  for (std::size_t i = 0; i <= n; ++i) all_names.push_back(counted->schema.name(i));
  for (std::size_t i = 1; i <= n; ++i) all_names.push_back(counted->schema.name(i));
  all_names = unique_names(all_names);
  std::vector<RowField> fields;
  for (std::size_t i = 0; i <= n; ++i) fields.push_back({all_names[i], counted->schema.type(i)});
  for (std::size_t i = 1; i <= n; ++i) fields.push_back({all_names[n + i], counted->schema.type(i)});
  c->schema = Schema(std::move(fields));
  c->inputs = {counted};
  c->pos = pos;

  // The replicated columns, under the left input's names.
  std::vector<ExprPtr> out_exprs;
  std::vector<std::string> out_names;
  Scope scope;
  for (std::size_t i = 0; i < n; ++i) {
    out_exprs.push_back(expr::column(n + 1 + i, c->schema.type(n + 1 + i), c->schema.name(n + 1 + i)));
    out_names.push_back(l.plan->schema.name(i));
    scope.columns.push_back({"", l.plan->schema.name(i), c->schema.type(n + 1 + i)});
  }
  return {make_project(c, std::move(out_exprs), std::move(out_names), pos), scope};
}

}  // namespace clink::sql
