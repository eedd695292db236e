// LATERAL subqueries in FROM (`FROM t, LATERAL (SELECT ... FROM s WHERE s.c = t.d)`,
// `t [LEFT] JOIN LATERAL (...) ON ...`), decorrelated into a join the way Flink's planner
// does it: the subquery's rows, with the inner side of its correlating equalities
// selected first, join the left input on those equalities (and the ON condition). An
// uncorrelated LATERAL subquery is a plain derived table.
#include "../planner/plan_rewrite.hpp"
#include "binder_internal.hpp"

namespace clink::sql {

Bound Binder::Impl::bind_lateral(Bound left, const ast::TableRef& ref, bool left_outer, const ast::Expr* on) {
  const auto& derived = std::get<ast::DerivedTable>(ref.node);
  const ast::Query& q = *derived.query;
  const SourcePosition pos = ref.pos;
  std::optional<SubqueryCorrelation> corr = correlate_subquery(q, left.scope);
  const std::size_t nl = left.scope.columns.size();
  std::vector<ExprPtr> cond;
  Bound right;
  std::size_t nkeys = 0;
  if (!corr) {
    right = bind_table_ref(ref);
  } else {
    const ast::Select& s = *corr->select;
    std::vector<const ast::Expr*> aggs;
    for (const auto& item : s.items) collect_aggregates(item.expr.get(), registry, aggs);
    if (!aggs.empty() || s.distinct)
      fail(pos, "a correlated LATERAL subquery with aggregate functions or DISTINCT is not supported");
    // SELECT keys..., items... FROM ... WHERE <local conjuncts>
    ast::Select sub;
    sub.from = s.from;
    for (const auto& p : corr->local)
      sub.where = sub.where ? ast::make_expr(pos, ast::Binary{"AND", sub.where, p}) : p;
    nkeys = corr->inner_keys.size();
    for (std::size_t k = 0; k < nkeys; ++k)
      sub.items.push_back(ast::SelectItem{corr->inner_keys[k], fmt::format("$k{}", k), pos});
    sub.items.insert(sub.items.end(), s.items.begin(), s.items.end());
    Bound b = bind_select(sub, q.pos);
    // The subquery's own columns carry the LATERAL item's alias; the keys stay hidden.
    Bound visible{make_column_project(b.plan, [&] {
                    std::vector<std::size_t> cols;
                    for (std::size_t i = nkeys; i < b.scope.columns.size(); ++i) cols.push_back(i);
                    return cols;
                  }(), pos),
                  {}};
    visible.scope.columns.assign(b.scope.columns.begin() + static_cast<std::ptrdiff_t>(nkeys), b.scope.columns.end());
    visible = with_aliases(std::move(visible), ref.column_aliases, ref.alias.value_or(""), pos);
    right.plan = b.plan;
    for (std::size_t k = 0; k < nkeys; ++k)
      right.scope.columns.push_back({kSubqueryQualifier, b.scope.columns[k].name, b.scope.columns[k].type});
    right.scope.columns.insert(right.scope.columns.end(), visible.scope.columns.begin(), visible.scope.columns.end());
    for (std::size_t k = 0; k < nkeys; ++k)
      cond.push_back(call("=", {corr->outer_keys[k], expr::column(nl + k, b.scope.columns[k].type, b.scope.columns[k].name)}, pos));
  }
  auto node = std::make_shared<LogicalJoin>();
  node->type = left_outer ? LogicalJoin::Type::kLeft : LogicalJoin::Type::kInner;
  Bound out;
  out.scope.columns = left.scope.columns;
  for (auto c : right.scope.columns) {
    if (left_outer) c.type = c.type.with_nullable(true);
    out.scope.columns.push_back(std::move(c));
  }
  if (on) {
    ExprContext ctx;
    ctx.scope = &out.scope;
    ctx.clause = "JOIN ON";
    ExprPtr c = bind_expr(*on, ctx);
    if (!c->type.is(TypeKind::kBoolean))
      fail(on->pos, fmt::format("JOIN ON needs a BOOLEAN condition, got {}", c->type.to_string()));
    cond.push_back(c);
  }
  if (left_outer && cond.empty()) cond.push_back(expr::literal(Value(true), LogicalType::boolean().not_null()));
  node->condition = rewrite::conjunction(std::move(cond));
  std::vector<std::string> names;
  for (const auto& c : out.scope.columns) names.push_back(c.name);
  names = unique_names(names);
  std::vector<RowField> fields;
  for (std::size_t i = 0; i < names.size(); ++i) fields.push_back({names[i], out.scope.columns[i].type});
  node->schema = Schema(std::move(fields));
  node->inputs = {left.plan, right.plan};
  node->pos = pos;
  out.plan = node;
  return drop_subquery_columns(std::move(out), pos);
}

}  // namespace clink::sql
