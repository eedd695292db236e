// Binder: queries, FROM items (tables, views, CTEs, derived tables, window TVFs,
// joins), projections, DISTINCT, set operations, ORDER BY / LIMIT, INSERT.
#include <algorithm>
#include <cctype>
#include <set>

#include "binder_internal.hpp"
#include "clink/metrics/sql_metrics.hpp"
#include "clink/sql/spec/connector_table.hpp"
#include "clink/sql/parser/parser.hpp"
#include "clink/sql/planner/rank_plan.hpp"

namespace clink::sql {

namespace {

std::optional<std::int64_t> literal_int(const ast::ExprPtr& e) {
  if (!e) return std::nullopt;
  const auto* l = e->as<ast::Literal>();
  if (!l || l->kind != ast::Literal::Kind::Integer) return std::nullopt;
  return std::stoll(l->text);
}

// ORDER BY an expression that is not an output column (GROUPING(k), a + b, a column not
// selected): as Calcite, the expression joins the select list as a hidden column named
// $order<i>, the ORDER BY item refers to it, and bind_query drops the hidden columns after
// the sort. Not for SELECT DISTINCT (whose ORDER BY must be in the select list, as in
// Flink) nor set operations.
struct HiddenOrder {
  ast::Query query;
  std::size_t hidden = 0;
};
std::optional<HiddenOrder> with_hidden_order_columns(const ast::Query& q) {
  const auto* s = std::get_if<ast::Select>(&q.body);
  if (!s || s->distinct) return std::nullopt;
  std::set<std::string> names;
  bool star = false;
  for (const auto& item : s->items) {
    if (item.alias) names.insert(*item.alias);
    else if (const auto* ref = item.expr->as<ast::ColumnRef>()) names.insert(ref->names.back());
    else if (item.expr->as<ast::Star>()) star = true;
  }
  auto shown = [&](const ast::OrderItem& o) {
    if (literal_int(o.expr)) return true;
    const auto* ref = o.expr->as<ast::ColumnRef>();
    return ref && (star || names.count(ref->names.back()) > 0);
  };
  if (std::all_of(q.order_by.begin(), q.order_by.end(), shown)) return std::nullopt;
  HiddenOrder out{q, 0};
  auto& select = std::get<ast::Select>(out.query.body);
  for (auto& o : out.query.order_by) {
    if (shown(o)) continue;
    const std::string name = fmt::format("$order{}", out.hidden++);
    select.items.push_back(ast::SelectItem{o.expr, name, o.expr->pos});
    o.expr = ast::make_expr(o.expr->pos, ast::ColumnRef{{name}});
  }
  return out;
}

}  // namespace

namespace {

// Flink SQL (FlinkTypeSystem.getDefaultPrecision): VARCHAR / VARBINARY written without a
// length in DDL and CAST are VARCHAR(MAX) / VARBINARY(MAX), i.e. STRING / BYTES (the type
// string parser keeps LogicalTypeParser's default of 1). Nexmark declares VARCHAR fields.
TypeName with_sql_default_lengths(TypeName t) {
  if ((t.name == "VARCHAR" || t.name == "VARBINARY") && t.params.empty()) t.params = {2147483647};
  for (auto& e : t.elements) e = with_sql_default_lengths(std::move(e));
  for (auto& f : t.fields)
    for (auto& ft : f.type) ft = with_sql_default_lengths(std::move(ft));
  return t;
}

}  // namespace

LogicalType to_logical_type(const TypeName& type) {
  try {
    return parse_logical_type(to_string(with_sql_default_lengths(type)));
  } catch (const ClinkError& e) {
    throw TranslationError(type.pos, fmt::format("unsupported type {}: {}", to_string(type), e.what()));
  }
}

Binder::Binder(const Catalog& catalog, const FunctionRegistry& registry, const SessionConfig& session)
    : impl_(std::make_unique<Impl>(catalog, registry, session)) {}
Binder::~Binder() = default;

LogicalPtr Binder::bind_select(const ast::Query& query) {
  metrics::sql::StageTimer timer(metrics::sql::counters().bind);
  return impl_->bind_query(query).plan;
}

LogicalPtr Binder::bind_view_query(const ast::Query& query, bool reuse_bound_views, std::size_t& depth) {
  metrics::sql::StageTimer timer(metrics::sql::counters().bind);
  impl_->reuse_bound_views = reuse_bound_views;
  impl_->deepest_views = 0;
  LogicalPtr plan = impl_->bind_query(query).plan;
  depth = impl_->deepest_views + 1;
  return plan;
}

ExprPtr Binder::bind_scalar(const ast::Expr& e, const Schema& schema) {
  Scope scope = Scope::of(schema, "");
  ExprContext ctx;
  ctx.scope = &scope;
  ctx.clause = "expression";
  std::vector<const ast::Expr*> aggs;
  collect_aggregates(&e, impl_->registry, aggs);
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
  Bound out;
  if (auto sorted = with_hidden_order_columns(q)) {
    out = bind_order_limit(sorted->query, bind_query_body(sorted->query));
    const std::size_t shown = out.scope.columns.size() - sorted->hidden;
    std::vector<ExprPtr> exprs;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < shown; ++i) {
      exprs.push_back(expr::column(i, out.scope.columns[i].type, out.scope.columns[i].name));
      names.push_back(out.scope.columns[i].name);
    }
    out.plan = make_project(out.plan, std::move(exprs), std::move(names), q.order_by[0].pos);
    out.scope.columns.resize(shown);
  } else {
    out = bind_order_limit(q, bind_query_body(q));
  }
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
      // Any constant expression, as Flink (the scope is empty, so a column is "not found").
      std::vector<const ast::Expr*> aggs;
      collect_aggregates(e.get(), registry, aggs);
      if (!aggs.empty()) fail(aggs[0]->pos, "aggregate functions are not allowed in VALUES");
      row.push_back(bind_expr(*e, ctx));
    }
    rows.push_back(std::move(row));
  }
  std::vector<RowField> fields;
  for (std::size_t c = 0; c < rows[0].size(); ++c) {
    std::vector<LogicalType> types;
    for (const auto& r : rows) types.push_back(r[c]->type);
    auto t = find_common_type(types);
    if (!t) {
      // Name the first row that does not fit the rows before it (Calcite's message first).
      std::size_t bad = 1;
      while (bad + 1 < types.size() && find_common_type({types.begin(), types.begin() + bad + 1})) ++bad;
      fail(v.rows[bad][c]->pos,
           fmt::format("Values passed to VALUES operator must have compatible types: column {} is {} before row {} "
                       "and {} in row {}", c + 1, find_common_type({types.begin(), types.begin() + bad})->to_string(),
                       bad + 1, types[bad].to_string(), bad + 1));
    }
    bool nullable = t->nullable();
    for (auto& r : rows) {
      r[c] = at(v.rows[0][c]->pos, [&] { return expr::cast_if_needed(r[c], *t); });
      nullable = nullable || r[c]->type.nullable();  // a narrowing cast may give NULL
    }
    fields.push_back({fmt::format("EXPR${}", c), t->with_nullable(nullable)});
  }
  auto node = std::make_shared<LogicalValues>();
  node->schema = Schema(fields);
  node->rows = std::move(rows);
  node->pos = pos;
  return {node, Scope::of(node->schema, "")};
}

Bound Binder::Impl::bind_set_operation(const ast::SetOperation& op, SourcePosition pos) {
  const char* name = op.op == ast::SetOperation::Op::Union       ? "UNION"
                     : op.op == ast::SetOperation::Op::Intersect ? "INTERSECT"
                                                                 : "EXCEPT";
  Bound l = bind_query(*op.left);
  Bound r = bind_query(*op.right);
  if (l.scope.columns.size() != r.scope.columns.size())
    fail(op.right->pos, fmt::format("{} inputs have different column counts: {} and {}", name, l.scope.columns.size(),
                                    r.scope.columns.size()));
  std::vector<LogicalType> common;
  bool cast_l = false, cast_r = false;
  for (std::size_t i = 0; i < l.scope.columns.size(); ++i) {
    auto t = find_common_type({l.scope.columns[i].type, r.scope.columns[i].type});
    if (!t)
      fail(op.right->pos, fmt::format("{} column {} (`{}`) has incompatible types {} and {}", name, i + 1,
                                      l.scope.columns[i].name, l.scope.columns[i].type.to_string(),
                                      r.scope.columns[i].type.to_string()));
    common.push_back(*t);
    cast_l = cast_l || !(l.scope.columns[i].type == *t);
    cast_r = cast_r || !(r.scope.columns[i].type == *t);
  }
  // Each side is cast to the common types and, for a UNION, takes the left side's column
  // names (the union's), so the physical union sees one schema whatever the branches
  // named their columns.
  auto cast_side = [&](Bound& b, bool needed) {
    bool renamed = false;
    for (std::size_t i = 0; i < common.size(); ++i)
      renamed = renamed || b.scope.columns[i].name != l.scope.columns[i].name;
    if (!needed && !renamed) return;
    std::vector<ExprPtr> exprs;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < common.size(); ++i) {
      auto col = expr::column(i, b.scope.columns[i].type, b.scope.columns[i].name);
      exprs.push_back(at(pos, [&] { return expr::cast_if_needed(col, common[i]); }));
      names.push_back(l.scope.columns[i].name);
    }
    // Only nullability differs: the union's type covers it without a cast.
    bool all_columns = std::all_of(exprs.begin(), exprs.end(), [](const auto& e) { return e->kind == ExprKind::kColumnRef; });
    if (all_columns && !renamed) return;
    if (all_columns && b.plan->kind == LogicalKind::kProject) {  // a rename of a projection: in place
      const auto& p = static_cast<const LogicalProject&>(*b.plan);
      b.plan = make_project(p.inputs[0], p.exprs, std::move(names), p.pos);
      return;
    }
    b.plan = make_project(b.plan, std::move(exprs), std::move(names), pos);
  };
  cast_side(l, cast_l);
  cast_side(r, cast_r);
  if (op.op != ast::SetOperation::Op::Union && op.all) return bind_intersect_except_all(op, std::move(l), std::move(r), pos);
  if (op.op != ast::SetOperation::Op::Union) return bind_intersect_except(op, std::move(l), std::move(r), pos);
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
  if (auto ranked = stream_sort(*s)) body.plan = ranked;
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
  if (s.where) in = bind_where(*s.where, std::move(in));
  bool aggregating = !s.group_by.empty() || s.having != nullptr;
  if (!aggregating) {
    std::vector<const ast::Expr*> aggs;
    for (const auto& item : s.items) collect_aggregates(item.expr.get(), registry, aggs);
    aggregating = !aggs.empty();
  }
  std::optional<Bound> ranked = aggregating ? std::nullopt : bind_rank_select(s, in, pos);
  Bound out = ranked                            ? std::move(*ranked)
              : aggregating                     ? bind_aggregate(s, std::move(in), pos)
              : has_over_aggregate(s, registry) ? bind_over(s, std::move(in), pos)
                                                : project_items(s.items, with_item_subqueries(s, std::move(in)), nullptr, pos);
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
        if (col.qualifier == kSubqueryQualifier || (col.qualified_only && star->qualifier.empty())) continue;
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

// ------------------------------------------------------------------ INSERT

namespace {

// The columns an INSERT writes: physical, then persisted metadata ones the connector can write.
Schema writable_schema(const TableDef& def, SourcePosition pos) {
  const ConnectorDescriptor* connector = find_sql_connector(def.connector());
  std::vector<RowField> fields;
  for (const auto& c : def.columns) {
    if (c.kind == CatalogColumn::Kind::kPhysical) {
      fields.push_back({c.name, c.type});
    } else if (c.kind == CatalogColumn::Kind::kMetadata && !c.is_virtual) {
      const std::string key = c.metadata_key.value_or(c.name);
      const std::string* type = connector ? connector->writable_metadata_type(key) : nullptr;
      if (!type)
        fail(pos, fmt::format("INSERT INTO {}: the {} connector cannot write metadata '{}' (column `{}`; declare it "
                              "VIRTUAL to only read it)",
                              def.name, def.connector(), key, c.name));
      fields.push_back({c.name, c.type});
    }
  }
  return Schema(std::move(fields));
}

// table.exec.sink.not-null-enforcer: ERROR (Flink's default) or DROP.
std::string not_null_enforcer(const SessionConfig& session, SourcePosition pos) {
  auto it = session.find("table.exec.sink.not-null-enforcer");
  if (it == session.end()) return "ERROR";
  std::string v = it->second;
  for (auto& c : v) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (v != "ERROR" && v != "DROP")
    fail(pos, fmt::format("'table.exec.sink.not-null-enforcer' = '{}': expected ERROR or DROP", it->second));
  return v;
}

}  // namespace

LogicalPtr Binder::bind_insert(const ast::Insert& insert) {
  metrics::sql::StageTimer timer(metrics::sql::counters().bind);
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
  // The writable columns: physical ones and persisted (not VIRTUAL) metadata columns, in
  // the table's order, as Flink; computed columns cannot be written.
  Schema target = writable_schema(sink_def, insert.pos);
  std::vector<std::optional<std::size_t>> source_of(target.size());  // sink column -> query column
  if (insert.columns.empty()) {
    if (q.scope.columns.size() != target.size())
      fail(insert.query->pos, fmt::format("INSERT INTO {}: the query has {} columns but the sink has {}: {}", name,
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
  std::vector<ExprPtr> not_null_checks;  // DROP: rows passing them are written
  bool drop_nulls = not_null_enforcer(self.session, insert.pos) == "DROP";
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
      if (!supports_assignment_cast(have, want))
        fail(insert.query->pos,
             fmt::format("INSERT INTO {}: incompatible types for sink column `{}` at position {}: the query "
                         "produces {}, the sink takes {}",
                         name, target.name(t), t, have.to_string(), want.to_string()));
      ExprPtr column = expr::column(s, have, q.scope.columns[s].name);
      ExprPtr col = column;
      // A nullable value into a NOT NULL column: Flink plans it and enforces at run time
      // (table.exec.sink.not-null-enforcer: ERROR fails the job on a NULL, DROP drops the row).
      if (!want.nullable() && have.nullable()) {
        // Under DROP the filter below removes the NULLs first, so the enforcer never fails.
        if (drop_nulls) not_null_checks.push_back(self.call("IS NOT NULL", {col}, insert.query->pos));
        col = self.call(kSinkNotNull, {col, expr::literal(Value(target.name(t)), LogicalType::string())},
                        insert.query->pos);
      }
      ExprPtr cast = at(insert.query->pos, [&] { return expr::cast_if_needed(col, want); });
      identity = identity && s == t && cast == column && q.scope.columns[s].name == target.name(t);
      exprs.push_back(cast);
    }
    names.push_back(target.name(t));
  }
  LogicalPtr plan = q.plan;
  if (!not_null_checks.empty()) {
    ExprPtr cond = not_null_checks.size() == 1 ? not_null_checks[0] : expr::and_(std::move(not_null_checks));
    plan = make_filter(plan, cond, insert.query->pos);
  }
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
