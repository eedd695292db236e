// Binder: queries, FROM items (tables, views, CTEs, derived tables, window TVFs,
// joins), projections, DISTINCT, set operations, ORDER BY / LIMIT, INSERT.
#include <algorithm>
#include <cctype>

#include "binder_internal.hpp"
#include "clink/sql/parser.hpp"

namespace clink::sql {

namespace {

std::string qualified_text(const ast::QualifiedName& n) {
  std::string s;
  for (std::size_t i = 0; i < n.size(); ++i) s += (i ? "." : "") + n[i];
  return s;
}

// Flink makes duplicate output names of a join unique by appending 0, 1, ...
std::vector<std::string> unique_names(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  std::set<std::string> used;
  for (const auto& n : names) {
    std::string candidate = n;
    for (int i = 0; used.count(candidate); ++i) candidate = n + std::to_string(i);
    used.insert(candidate);
    out.push_back(candidate);
  }
  return out;
}

std::optional<std::int64_t> literal_int(const ast::ExprPtr& e) {
  if (!e) return std::nullopt;
  const auto* l = e->as<ast::Literal>();
  if (!l || l->kind != ast::Literal::Kind::Integer) return std::nullopt;
  return std::stoll(l->text);
}

}  // namespace

LogicalType to_logical_type(const TypeName& type) {
  try {
    return parse_logical_type(to_string(type));
  } catch (const ClinkError& e) {
    throw TranslationError(type.pos, fmt::format("unsupported type {}: {}", to_string(type), e.what()));
  }
}

Binder::Binder(const Catalog& catalog, const FunctionRegistry& registry, const SessionConfig& session)
    : impl_(std::make_unique<Impl>(catalog, registry, session)) {}
Binder::~Binder() = default;

LogicalPtr Binder::bind_select(const ast::Query& query) { return impl_->bind_query(query).plan; }

ExprPtr Binder::bind_scalar(const ast::Expr& e, const Schema& schema) {
  Scope scope = Scope::of(schema, "");
  ExprContext ctx;
  ctx.scope = &scope;
  ctx.clause = "expression";
  std::vector<const ast::Expr*> aggs;
  collect_aggregates(&e, aggs);
  if (!aggs.empty()) fail(aggs[0]->pos, "aggregate functions are not allowed here");
  return impl_->bind_expr(e, ctx);
}

// ------------------------------------------------------------------ queries

Bound Binder::Impl::bind_query(const ast::Query& q) {
  ctes.emplace_back();
  for (const auto& cte : q.with) {
    if (ctes.back().count(cte.name)) fail(cte.pos, fmt::format("duplicate WITH item `{}`", cte.name));
    Bound b = bind_query(*cte.query);
    b = with_aliases(std::move(b), cte.columns, cte.name, cte.pos);
    ctes.back()[cte.name] = std::move(b);
  }
  Bound body = bind_query_body(q);
  Bound out = bind_order_limit(q, std::move(body));
  ctes.pop_back();
  return out;
}

Bound Binder::Impl::bind_query_body(const ast::Query& q) {
  if (const auto* s = std::get_if<ast::Select>(&q.body)) return bind_select(*s, q.pos);
  if (const auto* v = std::get_if<ast::Values>(&q.body)) return bind_values(*v, q.pos);
  return bind_set_operation(std::get<ast::SetOperation>(q.body), q.pos);
}

Bound Binder::Impl::with_aliases(Bound b, const std::vector<std::string>& aliases, const std::string& qualifier,
                                 SourcePosition pos) {
  if (!aliases.empty()) {
    if (aliases.size() != b.scope.columns.size())
      fail(pos, fmt::format("`{}` has {} columns but {} column aliases were given", qualifier,
                            b.scope.columns.size(), aliases.size()));
    std::set<std::string> seen;
    for (const auto& a : aliases)
      if (!seen.insert(a).second) fail(pos, fmt::format("duplicate column alias `{}`", a));
    std::vector<ExprPtr> exprs;
    for (std::size_t i = 0; i < aliases.size(); ++i)
      exprs.push_back(expr::column(i, b.scope.columns[i].type, b.scope.columns[i].name));
    b.plan = make_project(b.plan, std::move(exprs), aliases, pos);
    for (std::size_t i = 0; i < aliases.size(); ++i) b.scope.columns[i].name = aliases[i];
  }
  for (auto& c : b.scope.columns) c.qualifier = qualifier;
  return b;
}

Bound Binder::Impl::bind_values(const ast::Values& v, SourcePosition pos) {
  if (v.rows.empty()) fail(pos, "VALUES needs at least one row");
  Scope empty;
  ExprContext ctx;
  ctx.scope = &empty;
  ctx.clause = "VALUES";
  std::vector<std::vector<ExprPtr>> rows;
  for (const auto& r : v.rows) {
    if (r.size() != v.rows[0].size()) fail(r.empty() ? pos : r[0]->pos, "VALUES rows have different column counts");
    std::vector<ExprPtr> row;
    for (const auto& e : r) {
      ExprPtr b = bind_expr(*e, ctx);
      if (!b->is_literal() && !(b->kind == ExprKind::kCast && b->args[0]->is_literal()))
        fail(e->pos, "VALUES accepts literals only");
      row.push_back(b);
    }
    rows.push_back(std::move(row));
  }
  std::vector<RowField> fields;
  for (std::size_t c = 0; c < rows[0].size(); ++c) {
    std::vector<LogicalType> types;
    for (const auto& r : rows) types.push_back(r[c]->type);
    auto t = find_common_type(types);
    if (!t) fail(v.rows[0][c]->pos, fmt::format("VALUES column {} has no common type", c + 1));
    // Flink types a VALUES string column as CHAR(n) of the longest literal; keep that.
    fields.push_back({fmt::format("EXPR${}", c), *t});
    for (auto& r : rows) r[c] = at(v.rows[0][c]->pos, [&] { return expr::cast_if_needed(r[c], *t); });
  }
  auto node = std::make_shared<LogicalValues>();
  node->schema = Schema(fields);
  node->rows = std::move(rows);
  node->pos = pos;
  return {node, Scope::of(node->schema, "")};
}

Bound Binder::Impl::bind_set_operation(const ast::SetOperation& op, SourcePosition pos) {
  if (op.op != ast::SetOperation::Op::Union)
    fail(pos, fmt::format("{} is not supported (only UNION and UNION ALL)",
                          op.op == ast::SetOperation::Op::Intersect ? "INTERSECT" : "EXCEPT"));
  Bound l = bind_query(*op.left);
  Bound r = bind_query(*op.right);
  if (l.scope.columns.size() != r.scope.columns.size())
    fail(op.right->pos, fmt::format("UNION inputs have different column counts: {} and {}", l.scope.columns.size(),
                                    r.scope.columns.size()));
  std::vector<LogicalType> common;
  bool cast_l = false, cast_r = false;
  for (std::size_t i = 0; i < l.scope.columns.size(); ++i) {
    auto t = find_common_type({l.scope.columns[i].type, r.scope.columns[i].type});
    if (!t)
      fail(op.right->pos, fmt::format("UNION column {} (`{}`) has incompatible types {} and {}", i + 1,
                                      l.scope.columns[i].name, l.scope.columns[i].type.to_string(),
                                      r.scope.columns[i].type.to_string()));
    common.push_back(*t);
    cast_l = cast_l || !(l.scope.columns[i].type == *t);
    cast_r = cast_r || !(r.scope.columns[i].type == *t);
  }
  auto cast_side = [&](Bound& b, bool needed) {
    if (!needed) return;
    std::vector<ExprPtr> exprs;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < common.size(); ++i) {
      auto col = expr::column(i, b.scope.columns[i].type, b.scope.columns[i].name);
      exprs.push_back(at(pos, [&] { return expr::cast_if_needed(col, common[i]); }));
      names.push_back(b.scope.columns[i].name);
    }
    b.plan = make_project(b.plan, std::move(exprs), std::move(names), pos);
  };
  cast_side(l, cast_l);
  cast_side(r, cast_r);
  auto u = std::make_shared<LogicalUnion>();
  std::vector<RowField> fields;
  for (std::size_t i = 0; i < common.size(); ++i) fields.push_back({l.scope.columns[i].name, common[i]});
  u->schema = Schema(std::move(fields));
  // Nested UNION ALLs flatten into one union (several edges into the next op).
  for (auto* side : {&l, &r}) {
    if (side->plan->kind == LogicalKind::kUnion)
      u->inputs.insert(u->inputs.end(), side->plan->inputs.begin(), side->plan->inputs.end());
    else
      u->inputs.push_back(side->plan);
  }
  u->pos = pos;
  Bound out{u, Scope::of(u->schema, "")};
  if (!op.all) return distinct(out, pos);
  return out;
}

Bound Binder::Impl::distinct(const Bound& in, SourcePosition pos) {
  auto a = std::make_shared<LogicalAggregate>();
  for (std::size_t i = 0; i < in.scope.columns.size(); ++i) a->keys.push_back(i);
  std::vector<std::size_t> set;
  for (std::size_t i = 0; i < a->keys.size(); ++i) set.push_back(i);
  a->grouping_sets = {set};
  a->distinct_only = true;
  a->schema = aggregate_schema(in.plan->schema, a->keys, false, {});
  a->inputs = {in.plan};
  a->pos = pos;
  return {a, in.scope};
}

Bound Binder::Impl::bind_order_limit(const ast::Query& q, Bound body) {
  std::optional<std::int64_t> limit, offset;
  if (q.limit) {
    limit = literal_int(q.limit);
    if (!limit || *limit < 0) fail(q.limit->pos, "LIMIT must be a non-negative integer literal");
  }
  if (q.offset) {
    offset = literal_int(q.offset);
    if (!offset || *offset < 0) fail(q.offset->pos, "OFFSET must be a non-negative integer literal");
  }
  if (q.order_by.empty()) {
    if (!limit && !offset) return body;
    auto l = std::make_shared<LogicalLimit>();
    l->limit = limit.value_or(-1);
    l->offset = offset.value_or(0);
    l->schema = body.plan->schema;
    l->inputs = {body.plan};
    l->pos = q.limit ? q.limit->pos : q.offset->pos;
    body.plan = l;
    return body;
  }
  auto s = std::make_shared<LogicalSort>();
  for (const auto& item : q.order_by) {
    SortKey key;
    key.descending = item.descending;
    key.nulls_first = item.nulls_first.value_or(!item.descending);
    std::optional<std::size_t> col;
    if (auto n = literal_int(item.expr)) {
      if (*n < 1 || static_cast<std::size_t>(*n) > body.scope.columns.size())
        fail(item.expr->pos, fmt::format("ORDER BY position {} is not in the select list", *n));
      col = static_cast<std::size_t>(*n - 1);
    } else if (const auto* ref = item.expr->as<ast::ColumnRef>()) {
      col = resolve_column(*ref, body.scope, item.expr->pos);
    } else {
      fail(item.expr->pos, "ORDER BY supports output columns and positions only");
    }
    key.column = *col;
    s->keys.push_back(key);
  }
  s->limit = limit;
  s->offset = offset.value_or(0);
  s->schema = body.plan->schema;
  s->inputs = {body.plan};
  s->pos = q.order_by[0].pos;
  body.plan = s;
  return body;
}

// ------------------------------------------------------------------ SELECT

Bound Binder::Impl::bind_select(const ast::Select& s, SourcePosition pos) {
  Bound in;
  if (s.from.empty()) {
    // SELECT without FROM: one row of nothing.
    auto v = std::make_shared<LogicalValues>();
    v->rows = {{}};
    v->pos = pos;
    in = {v, {}};
  } else {
    in = bind_from(s.from, pos);
  }
  if (s.where) {
    std::vector<const ast::Expr*> aggs;
    collect_aggregates(s.where.get(), aggs);
    if (!aggs.empty()) fail(aggs[0]->pos, "aggregate functions are not allowed in WHERE");
    ExprContext ctx;
    ctx.scope = &in.scope;
    ctx.clause = "WHERE";
    ExprPtr cond = bind_expr(*s.where, ctx);
    if (!cond->type.is(TypeKind::kBoolean) && !cond->type.is(TypeKind::kNull))
      fail(s.where->pos, fmt::format("WHERE needs a BOOLEAN condition, got {}", cond->type.to_string()));
    in.plan = make_filter(in.plan, cond, s.where->pos);
  }
  bool aggregating = !s.group_by.empty() || s.having != nullptr;
  if (!aggregating) {
    std::vector<const ast::Expr*> aggs;
    for (const auto& item : s.items) collect_aggregates(item.expr.get(), aggs);
    aggregating = !aggs.empty();
  }
  Bound out = aggregating ? bind_aggregate(s, std::move(in), pos) : project_items(s.items, in, nullptr, pos);
  if (s.distinct) out = distinct(out, pos);
  return out;
}

Bound Binder::Impl::project_items(const std::vector<ast::SelectItem>& items, const Bound& in, const AggContext* agg,
                                  SourcePosition pos) {
  std::vector<ExprPtr> exprs;
  std::vector<std::string> names;
  ExprContext ctx;
  ctx.scope = agg ? agg->input : &in.scope;
  ctx.agg = agg;
  ctx.clause = "SELECT";
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto& item = items[i];
    if (const auto* star = item.expr->as<ast::Star>()) {
      if (agg) fail(item.pos, "* is not allowed with GROUP BY");
      bool any = false;
      for (std::size_t c = 0; c < in.scope.columns.size(); ++c) {
        const auto& col = in.scope.columns[c];
        if (!star->qualifier.empty() && col.qualifier != star->qualifier.back()) continue;
        exprs.push_back(expr::column(c, col.type, col.name));
        names.push_back(col.name);
        any = true;
      }
      if (!any && !star->qualifier.empty())
        fail(item.pos, fmt::format("unknown table `{}` in {}.*", qualified_text(star->qualifier),
                                   qualified_text(star->qualifier)));
      continue;
    }
    ExprPtr e = bind_expr(*item.expr, ctx);
    exprs.push_back(e);
    if (item.alias) {
      names.push_back(*item.alias);
    } else if (const auto* ref = item.expr->as<ast::ColumnRef>()) {
      names.push_back(ref->names.back());
    } else {
      names.push_back(fmt::format("EXPR${}", i));
    }
  }
  Scope scope;
  for (std::size_t i = 0; i < exprs.size(); ++i) scope.columns.push_back({"", names[i], exprs[i]->type});
  // A projection that returns its input unchanged is dropped.
  const LogicalNode& input = *in.plan;
  bool identity = exprs.size() == input.schema.size();
  for (std::size_t i = 0; identity && i < exprs.size(); ++i)
    identity = exprs[i]->kind == ExprKind::kColumnRef && exprs[i]->column_index == i && names[i] == input.schema.name(i);
  if (identity) return {in.plan, scope};
  return {make_project(in.plan, std::move(exprs), std::move(names), pos), scope};
}

// ------------------------------------------------------------------ FROM

Bound Binder::Impl::bind_from(const std::vector<ast::TableRefPtr>& from, SourcePosition) {
  Bound acc = bind_table_ref(*from[0]);
  for (std::size_t i = 1; i < from.size(); ++i) {
    // FROM a, b: a cross join (a WHERE condition may later make it an equi-join).
    Bound right = bind_table_ref(*from[i]);
    auto j = std::make_shared<LogicalJoin>();
    j->type = LogicalJoin::Type::kInner;
    std::vector<std::string> names;
    std::vector<RowField> fields;
    for (const auto& c : acc.scope.columns) fields.push_back({c.name, c.type});
    for (const auto& c : right.scope.columns) fields.push_back({c.name, c.type});
    for (const auto& f : fields) names.push_back(f.name);
    names = unique_names(names);
    for (std::size_t k = 0; k < fields.size(); ++k) fields[k].name = names[k];
    j->schema = Schema(std::move(fields));
    j->inputs = {acc.plan, right.plan};
    j->pos = from[i]->pos;
    acc.plan = j;
    acc.scope.columns.insert(acc.scope.columns.end(), right.scope.columns.begin(), right.scope.columns.end());
  }
  return acc;
}

Bound Binder::Impl::bind_table_ref(const ast::TableRef& t) {
  Bound b;
  std::string qualifier = t.alias.value_or("");
  if (const auto* n = std::get_if<ast::NamedTable>(&t.node)) {
    b = bind_named_table(*n, t);
    if (qualifier.empty()) qualifier = n->name.back();
  } else if (const auto* d = std::get_if<ast::DerivedTable>(&t.node)) {
    b = bind_query(*d->query);
  } else if (const auto* w = std::get_if<ast::WindowTvf>(&t.node)) {
    b = bind_window_tvf(*w, t);
  } else {
    b = bind_join(std::get<ast::Join>(t.node), t);
    if (t.alias) fail(t.pos, "an alias on a parenthesised join is not supported");
    return b;
  }
  return with_aliases(std::move(b), t.column_aliases, qualifier, t.pos);
}

Bound Binder::Impl::bind_named_table(const ast::NamedTable& t, const ast::TableRef& ref) {
  if (t.name.size() > 1 && !(t.name.size() <= 3))
    fail(ref.pos, fmt::format("invalid table name `{}`", qualified_text(t.name)));
  const std::string& name = t.name.back();
  if (t.name.size() == 1) {
    for (auto it = ctes.rbegin(); it != ctes.rend(); ++it) {
      auto found = it->find(name);
      if (found != it->end()) {
        if (!t.hints.empty()) fail(t.hints[0].pos, "OPTIONS hints apply to catalog tables only");
        return found->second;
      }
    }
  }
  if (const ViewDef* v = catalog.view(name)) {
    if (!t.hints.empty()) fail(t.hints[0].pos, "OPTIONS hints apply to catalog tables only");
    return bind_view(*v, name, ref.pos);
  }
  const TableDef* def = catalog.table(name);
  if (!def) fail(ref.pos, fmt::format("Object '{}' not found", qualified_text(t.name)));
  TableDef merged = *def;
  for (const auto& hint : t.hints) {
    if (hint.name != "OPTIONS") fail(hint.pos, fmt::format("unsupported table hint {}", hint.name));
    for (const auto& p : hint.options) merged.set_option(p.key, p.value);
  }
  return bind_table_def(merged, name, ref.pos);
}

Bound Binder::Impl::bind_view(const ViewDef& view, const std::string& qualifier, SourcePosition pos) {
  if (std::find(expanding_views.begin(), expanding_views.end(), view.name) != expanding_views.end()) {
    std::string cycle;
    for (const auto& v : expanding_views) cycle += v + " -> ";
    fail(pos, fmt::format("view `{}` references itself: {}{}", view.name, cycle, view.name));
  }
  expanding_views.push_back(view.name);
  auto saved_ctes = std::move(ctes);  // a view's query does not see the referencing query's CTEs
  ctes.clear();
  Bound b;
  try {
    b = bind_query(*view.query);
  } catch (const SqlError& e) {
    ctes = std::move(saved_ctes);
    expanding_views.pop_back();
    throw TranslationError(pos, fmt::format("view `{}` cannot be expanded: {}", view.name, e.what()));
  }
  ctes = std::move(saved_ctes);
  expanding_views.pop_back();
  return with_aliases(std::move(b), view.column_aliases, qualifier, pos);
}

Bound Binder::Impl::bind_table_def(const TableDef& def, const std::string& qualifier, SourcePosition pos) {
  for (const auto& c : def.columns)
    if (c.kind == CatalogColumn::Kind::kMetadata)
      fail(pos, fmt::format("table `{}` declares the metadata column `{}`: the {} connector provides no metadata",
                            def.name, c.name, def.connector()));
  auto scan = std::make_shared<LogicalScan>();
  scan->table = def;
  scan->alias = qualifier;
  scan->schema = def.physical_schema();
  for (std::size_t i = 0; i < scan->schema.size(); ++i) scan->projected.push_back(i);
  scan->pos = pos;
  LogicalPtr plan = scan;
  Schema full = def.schema();
  bool computed = std::any_of(def.columns.begin(), def.columns.end(),
                              [](const auto& c) { return c.kind == CatalogColumn::Kind::kComputed; });
  if (computed) {
    Scope physical = Scope::of(scan->schema, "");
    ExprContext ctx;
    ctx.scope = &physical;
    ctx.clause = "computed column";
    std::vector<ExprPtr> exprs;
    std::vector<std::string> names;
    std::size_t p = 0;
    for (const auto& c : def.columns) {
      if (c.kind == CatalogColumn::Kind::kPhysical) {
        exprs.push_back(expr::column(p, c.type, c.name));
        ++p;
      } else {
        exprs.push_back(bind_expr(*c.expr, ctx));
      }
      names.push_back(c.name);
    }
    plan = make_project(plan, std::move(exprs), std::move(names), pos);
  }
  if (def.watermark) {
    Scope scope = Scope::of(full, "");
    ExprContext ctx;
    ctx.scope = &scope;
    ctx.clause = "WATERMARK";
    auto w = std::make_shared<LogicalWatermarkAssigner>();
    w->rowtime = *def.column_index(def.watermark->rowtime_column);
    w->watermark = bind_expr(*def.watermark->expr, ctx);
    w->emit = def.option("scan.watermark.emit.strategy").value_or("on-periodic");
    if (w->emit != "on-event" && w->emit != "on-periodic")
      fail(pos, fmt::format("table `{}`: 'scan.watermark.emit.strategy' must be on-event or on-periodic, got '{}'",
                            def.name, w->emit));
    auto duration = [&](const std::string& key, std::int64_t dflt) -> std::int64_t {
      auto v = def.option(key);
      if (!v) return dflt;
      auto ms = parse_duration_ms(*v);
      if (!ms) fail(pos, fmt::format("table `{}`: option '{}' is not a duration: '{}'", def.name, key, *v));
      return *ms;
    };
    auto interval = session.find("pipeline.auto-watermark-interval");
    w->interval_ms = 200;
    if (interval != session.end()) {
      auto ms = parse_duration_ms(interval->second);
      if (!ms) fail(pos, fmt::format("'pipeline.auto-watermark-interval' is not a duration: '{}'", interval->second));
      w->interval_ms = *ms;
    }
    w->idle_timeout_ms = duration("scan.watermark.idle-timeout", 0);
    if (auto g = def.option("scan.watermark.alignment.group")) {
      w->alignment_group = *g;
      w->alignment_max_drift_ms = duration("scan.watermark.alignment.max-drift", 0);
      w->alignment_update_interval_ms = duration("scan.watermark.alignment.update-interval", 1000);
    }
    w->schema = plan->schema;
    w->inputs = {plan};
    w->pos = pos;
    plan = w;
  }
  return {plan, Scope::of(plan->schema, qualifier)};
}

Bound Binder::Impl::bind_join(const ast::Join& j, const ast::TableRef& ref) {
  if (j.natural || !j.using_columns.empty())
    fail(ref.pos, "NATURAL and USING joins are not supported (write the ON condition)");
  Bound left = bind_table_ref(*j.left);
  Bound right = bind_table_ref(*j.right);
  auto node = std::make_shared<LogicalJoin>();
  switch (j.type) {
    case ast::Join::Type::Inner:
    case ast::Join::Type::Cross: node->type = LogicalJoin::Type::kInner; break;
    case ast::Join::Type::Left: node->type = LogicalJoin::Type::kLeft; break;
    case ast::Join::Type::Right: node->type = LogicalJoin::Type::kRight; break;
    case ast::Join::Type::Full: node->type = LogicalJoin::Type::kFull; break;
  }
  Bound out;
  out.scope.columns = left.scope.columns;
  out.scope.columns.insert(out.scope.columns.end(), right.scope.columns.begin(), right.scope.columns.end());
  auto nullable_side = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) out.scope.columns[i].type = out.scope.columns[i].type.with_nullable(true);
  };
  if (j.on) {
    ExprContext ctx;
    ctx.scope = &out.scope;
    ctx.clause = "JOIN ON";
    std::vector<const ast::Expr*> aggs;
    collect_aggregates(j.on.get(), aggs);
    if (!aggs.empty()) fail(aggs[0]->pos, "aggregate functions are not allowed in ON");
    node->condition = bind_expr(*j.on, ctx);
    if (!node->condition->type.is(TypeKind::kBoolean))
      fail(j.on->pos, fmt::format("JOIN ON needs a BOOLEAN condition, got {}", node->condition->type.to_string()));
  } else if (j.type != ast::Join::Type::Cross && j.type != ast::Join::Type::Inner) {
    fail(ref.pos, "an outer join needs an ON condition");
  }
  std::size_t nl = left.scope.columns.size(), n = out.scope.columns.size();
  if (node->type == LogicalJoin::Type::kLeft || node->type == LogicalJoin::Type::kFull) nullable_side(nl, n);
  if (node->type == LogicalJoin::Type::kRight || node->type == LogicalJoin::Type::kFull) nullable_side(0, nl);
  std::vector<std::string> names;
  for (const auto& c : out.scope.columns) names.push_back(c.name);
  names = unique_names(names);
  std::vector<RowField> fields;
  for (std::size_t i = 0; i < n; ++i) fields.push_back({names[i], out.scope.columns[i].type});
  node->schema = Schema(std::move(fields));
  node->inputs = {left.plan, right.plan};
  node->pos = ref.pos;
  out.plan = node;
  return out;
}

Bound Binder::Impl::bind_window_tvf(const ast::WindowTvf& tvf, const ast::TableRef& ref) {
  std::string fn = upper_name(tvf.function);
  const ast::TvfArg* table = nullptr;
  const ast::TvfArg* descriptor = nullptr;
  std::vector<const ast::TvfArg*> values;
  for (const auto& a : tvf.args) {
    if (a.kind == ast::TvfArg::Kind::Table) {
      if (table) fail(a.pos, fmt::format("{} takes one TABLE argument", fn));
      table = &a;
    } else if (a.kind == ast::TvfArg::Kind::Descriptor) {
      if (descriptor) fail(a.pos, fmt::format("{} takes one DESCRIPTOR argument", fn));
      descriptor = &a;
    } else {
      values.push_back(&a);
    }
  }
  if (!table) fail(ref.pos, fmt::format("{} needs a TABLE argument", fn));
  if (!descriptor) fail(ref.pos, fmt::format("{} needs a DESCRIPTOR(time column) argument", fn));
  if (descriptor->columns.size() != 1) fail(descriptor->pos, "DESCRIPTOR takes exactly one time column");
  ast::NamedTable nt;
  nt.name = table->table;
  ast::TableRef tref;
  tref.pos = table->pos;
  tref.node = nt;
  Bound in = bind_named_table(nt, tref);
  in = with_aliases(std::move(in), {}, table->table.back(), table->pos);
  WindowSpec w;
  ast::ColumnRef time_ref;
  time_ref.names = {descriptor->columns[0]};
  w.time_column = resolve_column(time_ref, in.scope, descriptor->pos);
  const LogicalType& tt = in.scope.columns[w.time_column].type;
  if (!tt.is(TypeKind::kTimestamp) && !tt.is(TypeKind::kTimestampLtz))
    fail(descriptor->pos, fmt::format("the window time column `{}` must be TIMESTAMP(3) or TIMESTAMP_LTZ(3), got {}",
                                      descriptor->columns[0], tt.to_string()));
  if (!is_time_attribute(*in.plan, w.time_column))
    fail(descriptor->pos, fmt::format("the window time column `{}` is not a time attribute (declare WATERMARK FOR {} "
                                      "on the table); processing-time windows are not supported",
                                      descriptor->columns[0], descriptor->columns[0]));
  auto arg = [&](std::size_t i, const char* what) -> std::int64_t {
    if (i >= values.size()) fail(ref.pos, fmt::format("{} needs the {} argument", fn, what));
    return interval_literal_ms(*values[i]->expr, what);
  };
  std::size_t expected = 0;
  if (fn == "TUMBLE") {
    w.kind = WindowSpec::Kind::kTumble;
    w.size_ms = arg(0, "size");
    expected = 1;
  } else if (fn == "HOP") {
    w.kind = WindowSpec::Kind::kHop;
    w.slide_ms = arg(0, "slide");
    w.size_ms = arg(1, "size");
    if (w.size_ms % w.slide_ms != 0)
      fail(values[1]->pos, "HOP size must be an integral multiple of the slide");
    expected = 2;
  } else if (fn == "CUMULATE") {
    w.kind = WindowSpec::Kind::kCumulate;
    w.step_ms = arg(0, "step");
    w.size_ms = arg(1, "max size");
    if (w.size_ms % w.step_ms != 0)
      fail(values[1]->pos, "CUMULATE max size must be an integral multiple of the step");
    expected = 2;
  } else if (fn == "SESSION") {
    w.kind = WindowSpec::Kind::kSession;
    w.gap_ms = arg(0, "gap");
    expected = 1;
    for (const auto& k : table->partition_by) {
      ast::ColumnRef r;
      r.names = k;
      w.partition_keys.push_back(resolve_column(r, in.scope, table->pos));
    }
  } else {
    fail(ref.pos, fmt::format("unknown window function {}", fn));
  }
  if (values.size() == expected + 1 && fn != "SESSION") {
    w.offset_ms = interval_literal_ms(*values[expected]->expr, "offset");
  } else if (values.size() > expected) {
    fail(values[expected]->pos, fmt::format("too many arguments for {}", fn));
  }
  auto node = std::make_shared<LogicalWindowTvf>();
  node->window = w;
  node->schema = window_tvf_schema(in.plan->schema, w);
  node->inputs = {in.plan};
  node->pos = ref.pos;
  return {node, Scope::of(node->schema, "")};
}

// ------------------------------------------------------------------ INSERT

LogicalPtr Binder::bind_insert(const ast::Insert& insert) {
  auto& self = *impl_;
  const std::string& name = insert.table.back();
  if (self.catalog.view(name)) fail(insert.pos, fmt::format("cannot INSERT INTO the view `{}`", name));
  const TableDef* def = self.catalog.table(name);
  if (!def) fail(insert.pos, fmt::format("Object '{}' not found", qualified_text(insert.table)));
  TableDef sink_def = *def;
  for (const auto& hint : insert.hints)
    for (const auto& p : hint.options) sink_def.set_option(p.key, p.value);
  if (!insert.partition.empty()) fail(insert.pos, "INSERT ... PARTITION is not supported");
  Bound q = self.bind_query(*insert.query);
  // The writable columns: physical ones (computed columns cannot be written).
  Schema target = sink_def.physical_schema();
  std::vector<std::optional<std::size_t>> source_of(target.size());  // sink column -> query column
  if (insert.columns.empty()) {
    if (q.scope.columns.size() != target.size())
      fail(insert.query->pos, fmt::format("INSERT INTO {}: the query has {} columns but the sink has {} ({})", name,
                                          q.scope.columns.size(), target.size(), target.to_string()));
    for (std::size_t i = 0; i < target.size(); ++i) source_of[i] = i;
  } else {
    if (insert.columns.size() != q.scope.columns.size())
      fail(insert.query->pos, fmt::format("INSERT INTO {}: {} target columns but the query has {} columns", name,
                                          insert.columns.size(), q.scope.columns.size()));
    for (std::size_t i = 0; i < insert.columns.size(); ++i) {
      std::optional<std::size_t> idx;
      for (std::size_t t = 0; t < target.size(); ++t)
        if (target.name(t) == insert.columns[i]) idx = t;
      if (!idx) fail(insert.pos, fmt::format("INSERT INTO {}: unknown target column `{}`", name, insert.columns[i]));
      if (source_of[*idx]) fail(insert.pos, fmt::format("INSERT INTO {}: column `{}` listed twice", name, insert.columns[i]));
      source_of[*idx] = i;
    }
  }
  std::vector<ExprPtr> exprs;
  std::vector<std::string> names;
  bool identity = q.scope.columns.size() == target.size();
  for (std::size_t t = 0; t < target.size(); ++t) {
    const LogicalType& want = target.type(t);
    if (!source_of[t]) {
      if (!want.nullable())
        fail(insert.pos, fmt::format("INSERT INTO {}: column `{}` is NOT NULL and not written", name, target.name(t)));
      exprs.push_back(expr::null_literal(want));
      identity = false;
    } else {
      std::size_t s = *source_of[t];
      const LogicalType& have = q.scope.columns[s].type;
      if (!supports_implicit_cast(have, want))
        fail(insert.query->pos,
             fmt::format("INSERT INTO {}: incompatible types for sink column `{}` at position {}: the query "
                         "produces {}, the sink takes {}",
                         name, target.name(t), t, have.to_string(), want.to_string()));
      if (!want.nullable() && have.nullable())
        fail(insert.query->pos, fmt::format("INSERT INTO {}: column `{}` is NOT NULL but the query's value may be NULL",
                                            name, target.name(t)));
      ExprPtr col = expr::column(s, have, q.scope.columns[s].name);
      ExprPtr cast = at(insert.query->pos, [&] { return expr::cast_if_needed(col, want); });
      identity = identity && s == t && cast == col;
      exprs.push_back(cast);
    }
    names.push_back(target.name(t));
  }
  LogicalPtr plan = q.plan;
  if (!identity) plan = make_project(plan, std::move(exprs), std::move(names), insert.query->pos);
  auto sink = std::make_shared<LogicalSink>();
  sink->table = std::move(sink_def);
  sink->overwrite = insert.overwrite;
  sink->schema = plan->schema;
  sink->inputs = {plan};
  sink->pos = insert.pos;
  sink->table_pos = insert.pos;
  return sink;
}

}  // namespace clink::sql
