// Subqueries in WHERE and INTERSECT / EXCEPT as semi and anti joins, the way Flink's
// streaming planner rewrites them (SubQueryRemoveRule / FlinkSubQueryRemoveRule,
// ReplaceIntersectWithSemiJoinRule, ReplaceMinusWithAntiJoinRule):
//   x IN (SELECT y ...)              LeftSemiJoin on =(x, y)
//   x NOT IN (SELECT y ...)          LeftAntiJoin on OR(IS NULL(x), IS NULL(y), =(x, y))
//                                    (a NULL on either side makes the row not qualify:
//                                    the comparison is not FALSE; plain =(x, y) when
//                                    neither side can be NULL)
//   (x1, x2) [NOT] IN (SELECT y1, y2 ...)   the same per column, ANDed
//   [NOT] EXISTS (SELECT ...)        LeftSemiJoin / LeftAntiJoin on the correlation
//                                    conditions (TRUE when uncorrelated)
//   A INTERSECT B / A EXCEPT B       DISTINCT over A semi / anti join B on IS NOT
//                                    DISTINCT FROM over every column
// A correlated subquery is `SELECT ... FROM ... [WHERE ...]` (no GROUP BY, HAVING, ORDER
// BY, LIMIT or subqueries of its own, which bind as an uncorrelated query): its WHERE conjuncts that read the outer row become the join condition,
// the rest filter the subquery's rows. Subquery conjuncts apply after the WHERE's other
// conjuncts, in the order written.
#include "../planner/plan_rewrite.hpp"
#include "binder_internal.hpp"
#include "clink/sql/planner/rank_plan.hpp"

namespace clink::sql {

namespace {

using rewrite::collect_columns;
using rewrite::conjunction;
using rewrite::conjuncts;
using rewrite::remap_columns;

void split_and(const ast::Expr& e, std::vector<const ast::Expr*>& out) {
  if (const auto* b = e.as<ast::Binary>(); b && b->op == "AND") {
    split_and(*b->left, out);
    split_and(*b->right, out);
    return;
  }
  out.push_back(&e);
}

// A WHERE conjunct that is a subquery predicate: what it tests and whether it is negated.
struct SubqueryPredicate {
  const ast::Query* query = nullptr;
  const ast::Expr* in_value = nullptr;  // IN: the value(s) compared; EXISTS: null
  bool negated = false;
};

std::optional<SubqueryPredicate> subquery_predicate(const ast::Expr& e) {
  if (const auto* in = e.as<ast::InSubquery>()) return SubqueryPredicate{in->query.get(), in->value.get(), in->negated};
  if (const auto* ex = e.as<ast::Exists>()) return SubqueryPredicate{ex->query.get(), nullptr, false};
  if (const auto* u = e.as<ast::Unary>(); u && u->op == "NOT")
    if (const auto* ex = u->operand->as<ast::Exists>()) return SubqueryPredicate{ex->query.get(), nullptr, true};
  return std::nullopt;
}

// Whether `q` is a SELECT the correlated binding handles: FROM [WHERE], no grouping,
// ordering or limit (DISTINCT does not change what a semi / anti join sees). Under EXISTS
// a GROUP BY of expressions without HAVING does not either: it has a group exactly when
// its input has a row (as Flink decorrelates it), whatever its select list computes.
const ast::Select* plain_select(const ast::Query& q, bool exists, const FunctionRegistry& registry) {
  const auto* s = std::get_if<ast::Select>(&q.body);
  if (!s || !q.with.empty() || !q.order_by.empty() || q.limit || q.offset) return nullptr;
  if (s->from.empty() || s->having || !s->windows.empty()) return nullptr;
  bool grouped = !s->group_by.empty();
  for (const auto& el : s->group_by)
    if (!exists || el.kind != ast::GroupingElement::Kind::Expression) return nullptr;
  std::vector<const ast::Expr*> aggs;
  for (const auto& item : s->items) collect_aggregates(item.expr.get(), registry, aggs);
  if (!aggs.empty() && !grouped) return nullptr;
  // Subqueries in its WHERE bind through bind_query (uncorrelated only).
  if (s->where) {
    std::vector<const ast::Expr*> parts;
    split_and(*s->where, parts);
    for (const auto* p : parts)
      if (subquery_predicate(*p)) return nullptr;
  }
  return s;
}

}  // namespace

Bound Binder::Impl::bind_where(const ast::Expr& where, Bound in) {
  std::vector<const ast::Expr*> aggs;
  collect_aggregates(&where, registry, aggs);
  if (!aggs.empty()) fail(aggs[0]->pos, "aggregate functions are not allowed in WHERE");
  ExprContext ctx;
  ctx.scope = &in.scope;
  ctx.clause = "WHERE";
  auto check_boolean = [](const ExprPtr& cond, SourcePosition pos) {
    if (!cond->type.is(TypeKind::kBoolean) && !cond->type.is(TypeKind::kNull))
      fail(pos, fmt::format("WHERE needs a BOOLEAN condition, got {}", cond->type.to_string()));
  };
  std::vector<const ast::Expr*> parts;
  split_and(where, parts);
  std::vector<std::pair<SubqueryPredicate, SourcePosition>> subqueries;
  std::vector<const ast::Expr*> plain;
  for (const auto& p : parts) {
    if (auto sp = subquery_predicate(*p)) subqueries.emplace_back(*sp, p->pos);
    else plain.push_back(p);
  }
  bool nested = false;  // scalar subqueries, IN / EXISTS under OR or NOT (binder_subquery_expr.cpp)
  for (const auto* p : plain) nested = nested || has_subquery(*p);
  if (subqueries.empty() && !nested) {
    ExprPtr cond = bind_expr(where, ctx);
    check_boolean(cond, where.pos);
    in.plan = absorb_rank_filter(make_filter(in.plan, cond, where.pos));
    return in;
  }
  if (!plain.empty()) {
    Bound w = nested ? join_expr_subqueries(plain, in, true) : in;
    ExprContext wctx = ctx;
    wctx.scope = &w.scope;
    std::vector<ExprPtr> conds;
    for (const auto& p : plain) {
      conds.push_back(bind_expr(*p, wctx));
      check_boolean(conds.back(), p->pos);
    }
    ExprPtr cond = conds.size() == 1 ? conds[0] : at(where.pos, [&] { return expr::and_(conds); });
    w.plan = make_filter(w.plan, cond, where.pos);
    if (nested) w = drop_subquery_columns(std::move(w), where.pos);
    else w.plan = absorb_rank_filter(w.plan);
    in = std::move(w);
  }
  const std::size_t nl = in.scope.columns.size();
  for (const auto& [sp, pos] : subqueries) {
    // The right input, the values it offers to IN (over left ++ right) and the
    // correlation conditions (over left ++ right).
    LogicalPtr right;
    std::vector<ExprPtr> offered;
    std::vector<ExprPtr> correlation;
    if (const ast::Select* s = plain_select(*sp.query, sp.in_value == nullptr, registry)) {
      Bound inner = bind_from(s->from, sp.query->pos);
      const std::size_t ni = inner.scope.columns.size();
      LogicalPtr plan = inner.plan;
      if (s->where) {
        ExprContext wctx;
        wctx.scope = &inner.scope;
        wctx.outer = &in.scope;
        wctx.clause = "WHERE";
        std::vector<const ast::Expr*> inner_aggs;
        collect_aggregates(s->where.get(), registry, inner_aggs);
        if (!inner_aggs.empty()) fail(inner_aggs[0]->pos, "aggregate functions are not allowed in WHERE");
        ExprPtr cond = bind_expr(*s->where, wctx);  // over inner ++ outer
        check_boolean(cond, s->where->pos);
        std::vector<ExprPtr> local;
        for (const auto& c : conjuncts(cond)) {
          std::set<std::size_t> cols;
          collect_columns(c, cols);
          bool correlated = !cols.empty() && *cols.rbegin() >= ni;
          if (correlated)
            correlation.push_back(remap_columns(c, [&](std::size_t i) { return i >= ni ? i - ni : nl + i; }));
          else
            local.push_back(c);
        }
        if (!local.empty()) plan = make_filter(plan, conjunction(std::move(local)), s->where->pos);
      }
      right = plan;
      ExprContext gctx;  // the keys of an EXISTS's GROUP BY name its FROM's columns
      gctx.scope = &inner.scope;
      gctx.clause = "GROUP BY";
      for (const auto& el : s->group_by) bind_expr(*el.expr, gctx);
      if (sp.in_value) {
        ExprContext ictx;
        ictx.scope = &inner.scope;
        ictx.clause = "SELECT";
        for (const auto& item : s->items) {
          if (const auto* star = item.expr->as<ast::Star>()) {
            for (std::size_t c = 0; c < ni; ++c) {
              const auto& col = inner.scope.columns[c];
              if (star->qualifier.empty() || col.qualifier == star->qualifier.back())
                offered.push_back(expr::column(nl + c, col.type, col.name));
            }
            continue;
          }
          offered.push_back(remap_columns(bind_expr(*item.expr, ictx), [&](std::size_t i) { return nl + i; }));
        }
      }
    } else {
      struct Restore {
        const Scope*& slot;
        const Scope* saved;
        ~Restore() { slot = saved; }
      } restore{uncorrelated_outer, uncorrelated_outer};
      uncorrelated_outer = &in.scope;
      Bound sub = bind_query(*sp.query);
      right = sub.plan;
      for (std::size_t c = 0; sp.in_value && c < sub.scope.columns.size(); ++c)
        offered.push_back(expr::column(nl + c, sub.scope.columns[c].type, sub.scope.columns[c].name));
    }
    std::vector<ExprPtr> cond;
    if (sp.in_value) {
      std::vector<ExprPtr> values;
      const auto* row = sp.in_value->as<ast::RowConstructor>();
      if (row && !row->explicit_row) {
        for (const auto& f : row->fields) values.push_back(bind_expr(*f, ctx));
      } else {
        values.push_back(bind_expr(*sp.in_value, ctx));
      }
      if (values.size() != offered.size())
        fail(sp.query->pos, fmt::format("the IN subquery returns {} columns but {} {} compared", offered.size(),
                                        values.size(), values.size() == 1 ? "value is" : "values are"));
      for (std::size_t k = 0; k < values.size(); ++k) {
        auto common = find_common_type({values[k]->type, offered[k]->type});
        if (!common)
          fail(sp.in_value->pos, fmt::format("IN compares {} with the subquery's column {} of type {}",
                                             values[k]->type.to_string(), k + 1, offered[k]->type.to_string()));
        ExprPtr l = at(pos, [&] { return expr::cast_if_needed(values[k], common->with_nullable(values[k]->type.nullable())); });
        ExprPtr r = at(pos, [&] { return expr::cast_if_needed(offered[k], common->with_nullable(offered[k]->type.nullable())); });
        ExprPtr eq = call("=", {l, r}, pos);
        if (sp.negated && (l->type.nullable() || r->type.nullable())) {
          // NOT IN: the row qualifies only when every comparison is FALSE (not UNKNOWN).
          std::vector<ExprPtr> any;
          if (l->type.nullable()) any.push_back(call("IS NULL", {l}, pos));
          if (r->type.nullable()) any.push_back(call("IS NULL", {r}, pos));
          any.push_back(eq);
          eq = at(pos, [&] { return expr::or_(any); });
        }
        cond.push_back(eq);
      }
    }
    cond.insert(cond.end(), correlation.begin(), correlation.end());
    in.plan = make_semi_anti_join(in.plan, right, conjunction(std::move(cond)), sp.negated, pos);
  }
  return in;
}

Bound Binder::Impl::bind_intersect_except(const ast::SetOperation& op, Bound l, Bound r, SourcePosition pos) {
  const std::size_t n = l.plan->schema.size();
  std::vector<ExprPtr> cond;
  for (std::size_t i = 0; i < n; ++i) {
    ExprPtr a = expr::column(i, l.plan->schema.type(i), l.plan->schema.name(i));
    ExprPtr b = expr::column(n + i, r.plan->schema.type(i), r.plan->schema.name(i));
    cond.push_back(call("IS NOT DISTINCT FROM", {a, b}, pos));
  }
  LogicalPtr join = make_semi_anti_join(l.plan, r.plan, conjunction(std::move(cond)),
                                        op.op == ast::SetOperation::Op::Except, pos);
  Scope scope;
  for (std::size_t i = 0; i < n; ++i) scope.columns.push_back({"", join->schema.name(i), join->schema.type(i)});
  return distinct(Bound{join, scope}, pos);
}

}  // namespace clink::sql
