// Subqueries inside expressions (scalar subqueries in SELECT, WHERE, HAVING and ON; IN and
// EXISTS under OR / NOT), rewritten into LEFT joins the way Flink's planner does it
// (Calcite's SubQueryRemoveRule, then decorrelation into joins): the outer input is joined
// with the subquery's relation and the subquery's value becomes an expression over the
// join's added columns. A subquery that reads the outer row through equalities
// (`WHERE inner.c = outer.d AND ...`) is decorrelated: its relation is grouped by the
// inner side of those equalities and joined on them; other correlating conditions use the
// value generator (OuterValues, binder_subquery_support.hpp).
//
//   (SELECT agg(x) FROM s WHERE s.c = t.d)   t LEFT JOIN (SELECT c, agg(x), TRUE m FROM s
//                                            GROUP BY c) ON t.d = c; the value on a row
//                                            without a group is agg's value over no rows
//                                            (COUNT 0, others NULL): CASE WHEN m IS NULL
//   (SELECT agg(x) FROM s)                   t LEFT JOIN (the global aggregate) ON TRUE
//   (SELECT x FROM ...)                      the same over SINGLE_VALUE(x): a second row is
//                                            a runtime error, no row NULL
//   EXISTS (SELECT ...)                      LEFT JOIN (SELECT DISTINCT [c,] TRUE m ...):
//                                            m IS NOT NULL
//   x IN (SELECT y ...)                      LEFT JOIN (SELECT DISTINCT [c,] y, TRUE m ...)
//                                            ON x = y, and when x or y can be NULL a LEFT
//                                            JOIN (SELECT [c,] COUNT(*) n, COUNT(y) nk ...)
//                                            for the three-valued result:
//                                            CASE WHEN n IS NULL OR n = 0 THEN FALSE
//                                                 WHEN m IS NOT NULL THEN TRUE
//                                                 WHEN x IS NULL THEN NULL
//                                                 WHEN nk < n THEN NULL ELSE FALSE END
// A streaming join with no equality runs at parallelism 1 (Flink's singleton exchange):
// when the subquery's value changes, the join retracts the rows it joined and emits them
// again with the new value.
#include <algorithm>

#include "../planner/plan_rewrite.hpp"
#include "binder_internal.hpp"
#include "binder_subquery_support.hpp"

namespace clink::sql {

namespace {

using rewrite::collect_columns;
using rewrite::conjunction;
using rewrite::remap_columns;

void find_subqueries(const ast::Expr& e, std::vector<const ast::Expr*>& out) {
  if (e.as<ast::ScalarSubquery>() || e.as<ast::Exists>()) {
    out.push_back(&e);
    return;
  }
  if (const auto* in = e.as<ast::InSubquery>()) {
    find_subqueries(*in->value, out);  // its value's subqueries join first
    out.push_back(&e);
    return;
  }
  walk_children(e, [&](const ast::ExprPtr& c) {
    if (c) find_subqueries(*c, out);
  });
}

void split_and(const ast::ExprPtr& e, std::vector<ast::ExprPtr>& out) {
  if (const auto* b = e->as<ast::Binary>(); b && b->op == "AND") {
    split_and(b->left, out);
    split_and(b->right, out);
    return;
  }
  out.push_back(e);
}

// ---------------------------------------------------------------- AST pieces

ast::ExprPtr column_ast(std::vector<std::string> names, SourcePosition pos) {
  return ast::make_expr(pos, ast::ColumnRef{std::move(names)});
}
ast::ExprPtr true_ast(SourcePosition pos) {
  ast::Literal l;
  l.kind = ast::Literal::Kind::Boolean;
  l.text = "TRUE";
  return ast::make_expr(pos, l);
}
ast::ExprPtr call_ast(const char* name, std::vector<ast::ExprPtr> args, SourcePosition pos, bool star = false) {
  ast::FunctionCall f;
  f.name = {name};
  f.args = std::move(args);
  f.star = star;
  return ast::make_expr(pos, std::move(f));
}
// COUNT(*) of the rows whose `columns` are all non-NULL: COUNT(c) for one column.
ast::ExprPtr count_non_null_ast(const std::vector<ast::ExprPtr>& columns, SourcePosition pos) {
  if (columns.size() == 1) return call_ast("COUNT", {columns[0]}, pos);
  ast::ExprPtr all;
  for (const auto& c : columns) {
    ast::IsTest t;
    t.negated = true;
    t.operand = c;
    ast::ExprPtr nn = ast::make_expr(pos, t);
    all = all ? ast::make_expr(pos, ast::Binary{"AND", all, nn}) : nn;
  }
  ast::Case k;
  k.whens.push_back({all, true_ast(pos)});
  return call_ast("COUNT", {ast::make_expr(pos, std::move(k))}, pos);
}
ast::SelectItem item_ast(ast::ExprPtr e, std::string alias, SourcePosition pos) {
  return ast::SelectItem{std::move(e), std::move(alias), pos};
}
ast::ExprPtr and_ast(const std::vector<ast::ExprPtr>& parts, SourcePosition pos) {
  ast::ExprPtr all;
  for (const auto& p : parts) all = all ? ast::make_expr(pos, ast::Binary{"AND", all, p}) : p;
  return all;
}
// FROM (q) AS $sq($c0, ..., $cn-1)
ast::TableRefPtr derived_ast(const ast::Query& q, std::size_t columns, SourcePosition pos) {
  auto t = std::make_shared<ast::TableRef>();
  t->pos = pos;
  t->node = ast::DerivedTable{std::make_shared<const ast::Query>(q)};
  t->alias = "$sq";
  for (std::size_t i = 0; i < columns; ++i) t->column_aliases.push_back(fmt::format("$c{}", i));
  return t;
}
std::vector<ast::ExprPtr> derived_columns(std::size_t n, SourcePosition pos) {
  std::vector<ast::ExprPtr> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(column_ast({"$sq", fmt::format("$c{}", i)}, pos));
  return out;
}

// A SELECT over the subquery's rows: a correlated subquery's FROM and local conjuncts
// grouped by its correlation keys (selected first), or an uncorrelated one as a derived
// table. `extra_keys` are grouped too; `values` follow the keys.
struct SubqueryRows {
  std::vector<ast::TableRefPtr> from;
  ast::ExprPtr where;
  std::vector<ast::ExprPtr> keys;
};

ast::Select grouped_select(const SubqueryRows& rows, const std::vector<ast::ExprPtr>& extra_keys,
                           const std::vector<ast::ExprPtr>& values, SourcePosition pos) {
  ast::Select s;
  s.from = rows.from;
  s.where = rows.where;
  std::size_t k = 0;
  for (const auto* keys : {&rows.keys, &extra_keys})
    for (const auto& e : *keys) {
      s.items.push_back(item_ast(e, fmt::format("$k{}", k++), pos));
      ast::GroupingElement g;
      g.kind = ast::GroupingElement::Kind::Expression;
      g.expr = e;
      g.pos = pos;
      s.group_by.push_back(std::move(g));
    }
  for (std::size_t i = 0; i < values.size(); ++i) s.items.push_back(item_ast(values[i], fmt::format("$v{}", i), pos));
  return s;
}

bool is_global_aggregate(const ast::Query& q, const FunctionRegistry& registry) {
  const auto* s = std::get_if<ast::Select>(&q.body);
  if (!s || !s->group_by.empty() || s->items.size() != 1 || q.offset) return false;
  std::vector<const ast::Expr*> aggs, overs;
  collect_aggregates(s->items[0].expr.get(), registry, aggs);
  collect_over_calls(s->items[0].expr.get(), overs);
  return !aggs.empty() && overs.empty();
}

}  // namespace

OuterValues::OuterValues(std::vector<std::map<std::string, Bound>>& ctes,
                         const std::function<Bound(const Bound&)>& distinct, SubqueryCorrelation& corr, const Scope& outer, const LogicalPtr& outer_plan,
                         std::vector<ast::TableRefPtr>& from, std::vector<ast::ExprPtr>& conds,
                         std::vector<ast::ExprPtr>& keys, SourcePosition pos)
    : ctes_(ctes) {
  std::string qualifier;
  for (std::size_t i : corr.general_outer) {
    const auto& col = outer.columns[i];
    if (col.qualifier.empty() || (!qualifier.empty() && col.qualifier != qualifier))
      fail(corr.general[0]->pos, "a correlated subquery's conditions that are not equalities must read the "
                                 "columns of one table of the outer query");
    qualifier = col.qualifier;
  }
  Scope vscope;
  for (std::size_t i : corr.general_outer) {
    vscope.columns.push_back(outer.columns[i]);
    vscope.columns.back().qualified_only = true;  // `v` still names the subquery's own column
  }
  Bound values = distinct(Bound{make_column_project(outer_plan, corr.general_outer, pos), vscope});
  ctes_.push_back({{"$outer_values", values}});
  auto t = std::make_shared<ast::TableRef>();
  t->pos = pos;
  ast::NamedTable nt;
  nt.name = {"$outer_values"};
  t->node = std::move(nt);
  t->alias = qualifier;
  from.push_back(t);
  conds.insert(conds.end(), corr.general.begin(), corr.general.end());
  for (std::size_t i : corr.general_outer) {
    const auto& col = outer.columns[i];
    keys.push_back(column_ast({qualifier, col.name}, pos));
    corr.outer_keys.push_back(expr::column(i, col.type, col.name));
  }
}

OuterValues::~OuterValues() { ctes_.pop_back(); }

ExprPtr empty_group_value(const LogicalNode& grouped, std::size_t column) {
  const auto* p = dynamic_cast<const LogicalProject*>(&grouped);
  if (!p || p->input().kind != LogicalKind::kAggregate) return nullptr;
  const auto& a = static_cast<const LogicalAggregate&>(p->input());
  std::vector<ExprPtr> repl;
  for (std::size_t k = 0; k < a.keys.size(); ++k) repl.push_back(expr::null_literal(a.schema.type(k).with_nullable(true)));
  for (const auto& c : a.aggregates)
    repl.push_back(c.function == "COUNT" ? expr::literal(Value(std::int64_t{0}), c.type)
                                         : expr::null_literal(c.type.with_nullable(true)));
  return rewrite::substitute(p->exprs[column], repl);
}

ExprPtr value_or_empty(ExprPtr value, const ExprPtr& empty, ExprPtr missing) {
  if (!empty || empty->is_null_literal()) return value;
  LogicalType t = value->type;
  return expr::case_when({{std::move(missing), expr::cast_if_needed(empty, t)}}, std::move(value));
}

bool Binder::Impl::has_subquery(const ast::Expr& e) {
  std::vector<const ast::Expr*> found;
  find_subqueries(e, found);
  return !found.empty();
}

Bound Binder::Impl::with_item_subqueries(const ast::Select& s, Bound in) {
  std::vector<const ast::Expr*> items;
  for (const auto& item : s.items) items.push_back(item.expr.get());
  return join_expr_subqueries(items, std::move(in), true);
}

Bound Binder::Impl::drop_subquery_columns(Bound b, SourcePosition pos) {
  std::vector<std::size_t> keep;
  Scope scope;
  for (std::size_t i = 0; i < b.scope.columns.size(); ++i)
    if (b.scope.columns[i].qualifier != kSubqueryQualifier) {
      keep.push_back(i);
      scope.columns.push_back(b.scope.columns[i]);
    }
  if (keep.size() == b.scope.columns.size()) return b;
  return {make_column_project(b.plan, keep, pos), std::move(scope)};
}

std::optional<SubqueryCorrelation> Binder::Impl::correlate_subquery(const ast::Query& q, const Scope& outer) {
  const auto* s = std::get_if<ast::Select>(&q.body);
  if (!s || !q.with.empty() || !s->where || s->from.empty()) return std::nullopt;
  Bound inner = bind_from(s->from, q.pos);
  const std::size_t ni = inner.scope.columns.size();
  ExprContext ctx;
  ctx.scope = &inner.scope;
  ctx.outer = &outer;
  ctx.clause = "WHERE";
  // 0: reads only the subquery's columns, 1: only the outer query's, -1: both / neither.
  auto side = [&](const ExprPtr& e) {
    std::set<std::size_t> cols;
    collect_columns(e, cols);
    if (cols.empty()) return -1;
    if (*cols.rbegin() < ni) return 0;
    if (*cols.begin() >= ni) return 1;
    return -1;
  };
  SubqueryCorrelation c;
  c.select = s;
  std::vector<ast::ExprPtr> parts;
  split_and(s->where, parts);
  for (const auto& p : parts) {
    if (has_subquery(*p)) {
      c.local.push_back(p);
      continue;
    }
    std::set<std::size_t> cols;
    collect_columns(bind_expr(*p, ctx), cols);
    if (cols.empty() || *cols.rbegin() < ni) {
      c.local.push_back(p);
      continue;
    }
    const auto* eq = p->as<ast::Binary>();
    ExprPtr l = eq && eq->op == "=" ? bind_expr(*eq->left, ctx) : nullptr;
    ExprPtr r = eq && eq->op == "=" ? bind_expr(*eq->right, ctx) : nullptr;
    auto outer_side = [&](const ExprPtr& e) { return remap_columns(e, [&](std::size_t i) { return i - ni; }); };
    if (l && side(l) == 0 && side(r) == 1) {
      c.inner_keys.push_back(eq->left);
      c.outer_keys.push_back(outer_side(r));
    } else if (l && side(l) == 1 && side(r) == 0) {
      c.inner_keys.push_back(eq->right);
      c.outer_keys.push_back(outer_side(l));
    } else {
      c.general.push_back(p);
      for (std::size_t i : cols)
        if (i >= ni) c.general_outer.push_back(i - ni);
    }
  }
  std::sort(c.general_outer.begin(), c.general_outer.end());
  c.general_outer.erase(std::unique(c.general_outer.begin(), c.general_outer.end()), c.general_outer.end());
  if (c.inner_keys.empty() && c.general.empty()) return std::nullopt;
  if (!s->group_by.empty() || s->having || !s->windows.empty() || !q.order_by.empty() || q.limit || q.offset)
    fail(q.pos, "a correlated subquery with GROUP BY, HAVING, WINDOW, ORDER BY or LIMIT is not supported");
  return c;
}

Bound Binder::Impl::join_expr_subqueries(const std::vector<const ast::Expr*>& exprs, Bound in, bool correlate,
                                         const AggContext* agg) {
  std::vector<const ast::Expr*> found;
  for (const auto* e : exprs)
    if (e) find_subqueries(*e, found);
  const Scope outer_scope = in.scope;  // correlations read the input's own columns
  const LogicalPtr outer_plan = in.plan;
  for (const ast::Expr* e : found) {
    if (subquery_values.count(e)) continue;
    const SourcePosition pos = e->pos;
    const ast::Query& q = *(e->as<ast::ScalarSubquery>()  ? e->as<ast::ScalarSubquery>()->query
                            : e->as<ast::Exists>()        ? e->as<ast::Exists>()->query
                                                          : e->as<ast::InSubquery>()->query);
    std::optional<SubqueryCorrelation> corr;
    if (correlate) corr = correlate_subquery(q, outer_scope);
    SubqueryRows rows;
    std::vector<ast::ExprPtr> offered;  // the subquery's SELECT items (IN, scalar)
    std::optional<OuterValues> outer_values;
    if (corr) {
      rows.from = corr->select->from;
      rows.keys = corr->inner_keys;
      std::vector<ast::ExprPtr> conds = corr->local;
      if (!corr->general.empty()) outer_values.emplace(ctes, [&](const Bound& v) { return distinct(v, pos); }, *corr, outer_scope, outer_plan, rows.from, conds, rows.keys, pos);
      rows.where = and_ast(conds, pos);
      for (const auto& item : corr->select->items) {
        if (item.expr->as<ast::Star>() && !e->as<ast::Exists>())
          fail(item.pos, "a correlated subquery's select list cannot use * here (name the columns)");
        offered.push_back(item.expr);
      }
    }
    auto bind_uncorrelated = [&](const ast::Query& query) {
      struct Restore {
        const Scope*& slot;
        const Scope* saved;
        ~Restore() { slot = saved; }
      } restore{uncorrelated_outer, uncorrelated_outer};
      uncorrelated_outer = &outer_scope;
      return bind_query(query);
    };
    auto uncorrelated_rows = [&](std::size_t columns) {
      rows.from = {derived_ast(q, columns, pos)};
      offered = derived_columns(columns, pos);
    };
    // Joins `sub` (its first `keys` columns the correlation keys, in order) to `in` with
    // `extra` ANDed to the key equalities; the first added column's index.
    auto join = [&](const Bound& sub, std::vector<ExprPtr> extra) {
      const std::size_t nl = in.scope.columns.size();
      std::vector<ExprPtr> cond;
      for (std::size_t k = 0; corr && k < corr->outer_keys.size(); ++k)
        cond.push_back(call("=", {corr->outer_keys[k], expr::column(nl + k, sub.plan->schema.type(k), sub.plan->schema.name(k))}, pos));
      for (auto& x : extra) cond.push_back(std::move(x));
      auto node = std::make_shared<LogicalJoin>();
      node->type = LogicalJoin::Type::kLeft;
      node->condition = cond.empty() ? expr::literal(Value(true), LogicalType::boolean().not_null())
                                     : at(pos, [&] { return conjunction(std::move(cond)); });
      std::vector<std::string> names;
      std::vector<LogicalType> types;
      for (const auto& f : in.plan->schema.fields()) {
        names.push_back(f.name);
        types.push_back(f.type);
      }
      for (const auto& f : sub.plan->schema.fields()) {
        names.push_back(f.name);
        types.push_back(f.type.with_nullable(true));
        in.scope.columns.push_back({kSubqueryQualifier, f.name, f.type.with_nullable(true)});
      }
      names = unique_names(names);
      std::vector<RowField> fields;
      for (std::size_t i = 0; i < names.size(); ++i) fields.push_back({names[i], types[i]});
      node->schema = Schema(std::move(fields));
      node->inputs = {in.plan, sub.plan};
      node->pos = pos;
      in.plan = node;
      return nl;
    };
    auto added = [&](std::size_t at_index) {
      const auto& c = in.scope.columns[at_index];
      return expr::column(at_index, c.type, c.name);
    };
    const std::size_t nkeys = corr ? rows.keys.size() : 0;

    if (e->as<ast::ScalarSubquery>()) {
      if (!corr) {
        Bound sub = bind_uncorrelated(q);
        if (sub.scope.columns.size() != 1)
          fail(pos, fmt::format("a scalar subquery must return exactly one column, not {}", sub.scope.columns.size()));
        if (!is_global_aggregate(q, registry)) {
          // Possibly more than one row: SINGLE_VALUE over it (Flink's plan).
          uncorrelated_rows(1);
          ast::Select s = grouped_select(rows, {}, {call_ast("SINGLE_VALUE", {offered[0]}, pos)}, pos);
          sub = bind_select(s, pos);
        }
        subquery_values[e] = added(join(sub, {}));
        continue;
      }
      if (offered.size() != 1)
        fail(pos, fmt::format("a scalar subquery must return exactly one column, not {}", offered.size()));
      std::vector<const ast::Expr*> aggs;
      collect_aggregates(offered[0].get(), registry, aggs);
      ast::ExprPtr value = aggs.empty() ? call_ast("SINGLE_VALUE", {offered[0]}, pos) : offered[0];
      ast::Select s = grouped_select(rows, {}, {value, true_ast(pos)}, pos);
      Bound sub = bind_select(s, pos);
      const std::size_t at_index = join(sub, {});
      ExprPtr v = added(at_index + nkeys);
      // A row without a group: the value over no rows (COUNT 0, the other aggregates NULL).
      ExprPtr missing = call("IS NULL", {added(at_index + nkeys + 1)}, pos);
      subquery_values[e] = at(pos, [&] { return value_or_empty(v, empty_group_value(*sub.plan, nkeys), missing); });
      continue;
    }

    if (e->as<ast::Exists>()) {
      if (!corr) {
        Bound probe = bind_uncorrelated(q);
        uncorrelated_rows(probe.scope.columns.size());
      }
      ast::Select s = grouped_select(rows, {}, {true_ast(pos)}, pos);
      s.distinct = !corr;  // one row while the subquery has any
      Bound sub = bind_select(s, pos);
      const std::size_t at_index = join(sub, {});
      subquery_values[e] = call("IS NOT NULL", {added(at_index + nkeys)}, pos);
      continue;
    }

    // [NOT] IN (SELECT ...)
    const auto& in_node = *e->as<ast::InSubquery>();
    ExprContext vctx;
    vctx.scope = agg ? agg->input : &in.scope;
    vctx.agg = agg;
    vctx.clause = "IN";
    std::vector<ExprPtr> values;
    const auto* row = in_node.value->as<ast::RowConstructor>();
    if (row && !row->explicit_row) {
      for (const auto& f : row->fields) values.push_back(bind_expr(*f, vctx));
    } else {
      values.push_back(bind_expr(*in_node.value, vctx));
    }
    if (!corr) {
      Bound probe = bind_uncorrelated(q);
      uncorrelated_rows(probe.scope.columns.size());
    }
    if (values.size() != offered.size())
      fail(q.pos, fmt::format("the IN subquery returns {} columns but {} {} compared", offered.size(), values.size(),
                              values.size() == 1 ? "value is" : "values are"));
    // The distinct rows of the subquery, each with a marker.
    ast::Select ds = grouped_select(rows, offered, {true_ast(pos)}, pos);
    Bound dsub = bind_select(ds, pos);
    bool nullable = false;
    for (const auto& v : values) nullable = nullable || v->type.nullable();
    for (std::size_t k = 0; k < offered.size(); ++k) nullable = nullable || dsub.plan->schema.type(nkeys + k).nullable();
    std::optional<std::size_t> counts;
    if (nullable) {
      ast::Select cs = grouped_select(rows, {}, {call_ast("COUNT", {}, pos, true), count_non_null_ast(offered, pos)}, pos);
      counts = join(bind_select(cs, pos), {});
    }
    const std::size_t nl = in.scope.columns.size();
    std::vector<ExprPtr> eqs;
    for (std::size_t k = 0; k < values.size(); ++k) {
      LogicalType ot = dsub.plan->schema.type(nkeys + k);
      ExprPtr o = expr::column(nl + nkeys + k, ot, dsub.plan->schema.name(nkeys + k));
      auto common = find_common_type({values[k]->type, ot});
      if (!common)
        fail(in_node.value->pos, fmt::format("IN compares {} with the subquery's column {} of type {}",
                                             values[k]->type.to_string(), k + 1, ot.to_string()));
      ExprPtr l = at(pos, [&] { return expr::cast_if_needed(values[k], common->with_nullable(values[k]->type.nullable())); });
      ExprPtr r = at(pos, [&] { return expr::cast_if_needed(o, common->with_nullable(ot.nullable())); });
      eqs.push_back(call("=", {l, r}, pos));
    }
    const std::size_t at_index = join(dsub, std::move(eqs));
    ExprPtr found_row = call("IS NOT NULL", {added(at_index + nkeys + offered.size())}, pos);
    if (!counts) {
      subquery_values[e] = in_node.negated ? call("NOT", {found_row}, pos) : found_row;
      continue;
    }
    ExprPtr n = added(*counts + nkeys), nk = added(*counts + nkeys + 1);
    auto lit = [](bool b) { return expr::literal(Value(b), LogicalType::boolean().not_null()); };
    std::vector<ExprPtr> value_nulls;
    for (const auto& v : values)
      if (v->type.nullable()) value_nulls.push_back(call("IS NULL", {v}, pos));
    std::vector<std::pair<ExprPtr, ExprPtr>> branches;
    branches.emplace_back(at(pos, [&] { return expr::or_({call("IS NULL", {n}, pos),
        call("=", {n, expr::literal(Value(std::int64_t{0}), LogicalType::bigint().not_null())}, pos)}); }), lit(false));
    branches.emplace_back(found_row, lit(true));
    ExprPtr unknown = expr::null_literal(LogicalType::boolean());
    if (!value_nulls.empty()) branches.emplace_back(at(pos, [&] { return expr::or_(value_nulls); }), unknown);
    branches.emplace_back(call("<", {nk, n}, pos), unknown);
    ExprPtr result = at(pos, [&] { return expr::case_when(std::move(branches), lit(false)); });
    subquery_values[e] = in_node.negated ? call("NOT", {result}, pos) : result;
  }
  return in;
}

}  // namespace clink::sql
