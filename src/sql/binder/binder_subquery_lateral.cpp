// LATERAL subqueries in FROM (`FROM t, LATERAL (SELECT ... FROM s WHERE s.c = t.d)`,
// `t [LEFT] JOIN LATERAL (...) ON ...`), decorrelated into a join the way Flink's planner
// does it: the subquery's rows, with the inner side of its correlating equalities (and the
// value generator's columns, binder_subquery_support.hpp) selected first, join the left
// input on those keys (and the ON condition). An
// uncorrelated LATERAL subquery is a plain derived table. A correlated one of aggregates
// without GROUP BY is grouped by the keys (LEFT JOIN: COUNT 0 where no group joined).
#include "../planner/plan_rewrite.hpp"
#include "binder_internal.hpp"
#include "binder_subquery_support.hpp"

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
  std::optional<OuterValues> outer_values;
  bool with_empty_values = false;     // LEFT JOIN LATERAL of aggregates
  std::vector<ExprPtr> empty_values;  // then each item's value over no rows
  if (!corr) {
    right = bind_table_ref(ref);
  } else {
    const ast::Select& s = *corr->select;
    std::vector<const ast::Expr*> aggs;
    for (const auto& item : s.items) collect_aggregates(item.expr.get(), registry, aggs);
    if (s.distinct) fail(pos, "a correlated LATERAL subquery with DISTINCT is not supported");
    // Aggregates without GROUP BY: grouped by the keys and joined as written, as Flink does:
    // `FROM t, LATERAL (SELECT COUNT(*) ...)` has no row for an outer row without matches;
    // LEFT JOIN LATERAL gives it NULLs, except that a subquery of one item gets its value
    // over no rows (COUNT 0: a marker column tells), as Flink 2.3 does.
    const bool aggregating = !aggs.empty();
    with_empty_values = aggregating && left_outer && s.items.size() == 1;
    // SELECT keys..., items... FROM ... WHERE <local conjuncts> [GROUP BY keys]
    ast::Select sub;
    sub.from = s.from;
    std::vector<ast::ExprPtr> keys = corr->inner_keys, conds = corr->local;
    if (!corr->general.empty()) outer_values.emplace(ctes, [&](const Bound& v) { return distinct(v, pos); }, *corr, left.scope, left.plan, sub.from, conds, keys, pos);
    for (const auto& p : conds)
      sub.where = sub.where ? ast::make_expr(pos, ast::Binary{"AND", sub.where, p}) : p;
    nkeys = keys.size();
    for (std::size_t k = 0; k < nkeys; ++k) {
      sub.items.push_back(ast::SelectItem{keys[k], fmt::format("$k{}", k), pos});
      if (!aggregating) continue;
      ast::GroupingElement g;
      g.kind = ast::GroupingElement::Kind::Expression;
      g.expr = keys[k];
      g.pos = pos;
      sub.group_by.push_back(std::move(g));
    }
    sub.items.insert(sub.items.end(), s.items.begin(), s.items.end());
    if (with_empty_values) {
      ast::Literal t;
      t.kind = ast::Literal::Kind::Boolean;
      t.text = "TRUE";
      sub.items.push_back(ast::SelectItem{ast::make_expr(pos, t), "$m", pos});
    }
    Bound b = bind_select(sub, q.pos);
    const std::size_t nitems = b.scope.columns.size() - nkeys - (with_empty_values ? 1 : 0);
    // The subquery's own columns carry the LATERAL item's alias; the keys stay hidden.
    Bound visible{make_column_project(b.plan, [&] {
                    std::vector<std::size_t> cols;
                    for (std::size_t i = nkeys; i < nkeys + nitems; ++i) cols.push_back(i);
                    return cols;
                  }(), pos),
                  {}};
    visible.scope.columns.assign(b.scope.columns.begin() + static_cast<std::ptrdiff_t>(nkeys),
                                 b.scope.columns.begin() + static_cast<std::ptrdiff_t>(nkeys + nitems));
    visible = with_aliases(std::move(visible), ref.column_aliases, ref.alias.value_or(""), pos);
    right.plan = b.plan;
    for (std::size_t k = 0; k < nkeys; ++k)
      right.scope.columns.push_back({kSubqueryQualifier, b.scope.columns[k].name, b.scope.columns[k].type});
    right.scope.columns.insert(right.scope.columns.end(), visible.scope.columns.begin(), visible.scope.columns.end());
    if (with_empty_values) {
      const auto& m = b.scope.columns.back();
      right.scope.columns.push_back({kSubqueryQualifier, m.name, m.type});
      for (std::size_t i = 0; i < nitems; ++i) empty_values.push_back(empty_group_value(*b.plan, nkeys + i));
    }
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
  if (with_empty_values) {
    const std::size_t first = nl + nkeys, n = out.scope.columns.size();
    const auto& m = out.scope.columns[n - 1];
    ExprPtr missing = call("IS NULL", {expr::column(n - 1, m.type, m.name)}, pos);
    std::vector<ExprPtr> exprs;
    std::vector<std::string> pnames;
    for (std::size_t i = 0; i < n; ++i) {
      ExprPtr c = expr::column(i, out.scope.columns[i].type, node->schema.name(i));
      if (i >= first && i < first + empty_values.size())
        c = at(pos, [&] { return value_or_empty(c, empty_values[i - first], missing); });
      exprs.push_back(c);
      pnames.push_back(node->schema.name(i));
    }
    out.plan = make_project(out.plan, std::move(exprs), std::move(pnames), pos);
  }
  return drop_subquery_columns(std::move(out), pos);
}

}  // namespace clink::sql
