// Binder: FROM items (catalog tables with computed columns and watermarks, views, CTEs,
// derived tables, window TVFs, joins).
#include <algorithm>

#include "../planner/plan_rewrite.hpp"
#include "binder_internal.hpp"
#include "clink/core/duration.hpp"
#include "clink/sql/spec/connector_table.hpp"

namespace clink::sql {

std::string qualified_text(const ast::QualifiedName& n) {
  std::string s;
  for (std::size_t i = 0; i < n.size(); ++i) s += (i ? "." : "") + n[i];
  return s;
}


// ------------------------------------------------------------------ FROM

Bound Binder::Impl::bind_from(const std::vector<ast::TableRefPtr>& from, SourcePosition) {
  Bound acc = bind_table_ref(*from[0]);
  for (std::size_t i = 1; i < from.size(); ++i) {
    // FROM a, UNNEST(a.arr): the function over each row of what is on its left.
    if (std::holds_alternative<ast::TableFunction>(from[i]->node)) {
      acc = bind_correlate(std::move(acc), *from[i], false);
      continue;
    }
    // FROM a, LATERAL TABLE(VECTOR_SEARCH(TABLE vt, ...)): the search for each row of a.
    if (is_vector_search(*from[i])) {
      acc = bind_vector_search(std::get<ast::WindowTvf>(from[i]->node), *from[i], &acc);
      continue;
    }
    // FROM a, LATERAL (SELECT ...): the subquery decorrelated into a join.
    if (const auto* d = std::get_if<ast::DerivedTable>(&from[i]->node); d && d->lateral) {
      acc = bind_lateral(std::move(acc), *from[i], false, nullptr);
      continue;
    }
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
    if (is_vector_search(t)) return bind_vector_search(*w, t, nullptr);
    b = w->function == "ML_PREDICT" ? bind_ml_predict(*w, t) : bind_window_tvf(*w, t);
  } else if (const auto* m = std::get_if<ast::MatchRecognize>(&t.node)) {
    b = bind_match_recognize(*m, t);
  } else if (std::holds_alternative<ast::TableFunction>(t.node)) {
    return bind_uncorrelated_table_function(t);
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
  if (t.system_time && temporal_right != &t)
    fail(ref.pos, "FOR SYSTEM_TIME AS OF is only supported on the right side of a JOIN (an event-time temporal "
                  "join); querying a table as of a point in time (time travel) is not supported");
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
  // Each view's query is a level of the plan every later stage recurses through: bounded
  // as the parser bounds a statement's nesting (10 000 chained views overflowed the stack).
  constexpr std::size_t kMaxViewDepth = 1000;
  // CREATE VIEW binds against the views it reads as they were bound when defined, instead
  // of expanding their chains again (defining a chain of n views was quadratic). A view
  // over the bound expands, so that the error names the chain.
  if (reuse_bound_views && view.bound && view.bound_generation == catalog.generation() &&
      expanding_views.size() + view.depth <= kMaxViewDepth) {
    deepest_views = std::max(deepest_views, expanding_views.size() + view.depth);
    return with_aliases(Bound{view.bound, Scope::of(view.bound->schema, "")}, view.column_aliases, qualifier, pos);
  }
  if (expanding_views.size() >= kMaxViewDepth) {
    views_too_deep = true;
    fail(pos, fmt::format("views nested more than {} deep: `{}` expands `{}`, which expands ... `{}`; define some of "
                          "them as one query",
                          kMaxViewDepth, expanding_views.front(), expanding_views[1], view.name));
  }
  expanding_views.push_back(view.name);
  deepest_views = std::max(deepest_views, expanding_views.size());
  auto saved_ctes = std::move(ctes);  // a view's query does not see the referencing query's CTEs
  ctes.clear();
  Bound b;
  try {
    b = bind_query(*view.query);
  } catch (const SqlError& e) {
    ctes = std::move(saved_ctes);
    expanding_views.pop_back();
    if (views_too_deep) {
      if (!expanding_views.empty()) throw;
      views_too_deep = false;  // the outermost view names the chain once
    }
    throw TranslationError(pos, fmt::format("view `{}` cannot be expanded: {}", view.name, e.what()));
  }
  ctes = std::move(saved_ctes);
  expanding_views.pop_back();
  return with_aliases(std::move(b), view.column_aliases, qualifier, pos);
}

Bound Binder::Impl::bind_table_def(const TableDef& def, const std::string& qualifier, SourcePosition pos) {
  // The scan reads the physical columns, then the metadata ones (Flink's order); a
  // projection puts them, and the computed columns, in the table's declared order.
  auto scan = std::make_shared<LogicalScan>();
  scan->table = def;
  scan->alias = qualifier;
  scan->schema = def.physical_schema();
  const ConnectorDescriptor* connector = find_sql_connector(def.connector());
  std::vector<std::size_t> metadata_at;  // per column: its scan index (physical or metadata)
  bool reordered = false;
  {
    std::vector<RowField> fields = scan->schema.fields();
    std::size_t physical = 0;
    for (const auto& c : def.columns) {
      if (c.kind == CatalogColumn::Kind::kPhysical) {
        metadata_at.push_back(physical++);
        continue;
      }
      if (c.kind != CatalogColumn::Kind::kMetadata) {
        metadata_at.push_back(SIZE_MAX);
        continue;
      }
      const std::string key = c.metadata_key.value_or(c.name);
      const std::string* type = connector ? connector->metadata_type(key) : nullptr;
      if (!type) {
        std::string known;
        if (connector)
          for (const auto& [k, t] : connector->readable_metadata) known += (known.empty() ? "" : ", ") + k;
        if (known.empty())
          fail(pos, fmt::format("table `{}` declares the metadata column `{}`: the {} connector provides no metadata",
                                def.name, c.name, def.connector()));
        fail(pos, fmt::format("table `{}`: the {} connector has no metadata key '{}' (it has: {})", def.name,
                              def.connector(), key, known));
      }
      LogicalType mt = parse_logical_type(*type);
      if (!(mt.with_nullable(true) == c.type.with_nullable(true)))
        fail(pos, fmt::format("table `{}`: the metadata column `{}` is declared {}, but metadata '{}' is {}", def.name,
                              c.name, c.type.to_string(), key, mt.to_string()));
      metadata_at.push_back(fields.size());
      fields.push_back({c.name, c.type});
      reordered = true;
    }
    scan->schema = Schema(std::move(fields));
  }
  for (std::size_t i = 0; i < scan->schema.size(); ++i) scan->projected.push_back(i);
  scan->pos = pos;
  LogicalPtr plan = scan;
  Schema full = def.schema();
  bool computed = std::any_of(def.columns.begin(), def.columns.end(),
                              [](const auto& c) { return c.kind == CatalogColumn::Kind::kComputed; });
  if (computed || reordered) {
    Scope physical = Scope::of(scan->schema, "");
    ExprContext ctx;
    ctx.scope = &physical;
    ctx.clause = "computed column";
    std::vector<ExprPtr> exprs;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < def.columns.size(); ++i) {
      const auto& c = def.columns[i];
      if (c.kind == CatalogColumn::Kind::kComputed) exprs.push_back(bind_expr(*c.expr, ctx));
      else exprs.push_back(expr::column(metadata_at[i], scan->schema.type(metadata_at[i]), c.name));
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
  if (std::holds_alternative<ast::TableFunction>(j.right->node)) return bind_correlate_join(j, ref);
  if (j.natural || !j.using_columns.empty())
    fail(ref.pos, "NATURAL and USING joins are not supported (write the ON condition)");
  if (const auto* l = std::get_if<ast::NamedTable>(&j.left->node); l && l->system_time)
    fail(j.left->pos, "Temporal table join only support apply FOR SYSTEM_TIME AS OF on the right table.");
  Bound left = bind_table_ref(*j.left);
  if (const auto* d = std::get_if<ast::DerivedTable>(&j.right->node); d && d->lateral) {
    if (j.type != ast::Join::Type::Inner && j.type != ast::Join::Type::Left && j.type != ast::Join::Type::Cross)
      fail(ref.pos, "a LATERAL subquery joins only as INNER, CROSS or LEFT JOIN");
    return bind_lateral(std::move(left), *j.right, j.type == ast::Join::Type::Left, j.on.get());
  }
  const auto* versioned = std::get_if<ast::NamedTable>(&j.right->node);
  if (versioned && !versioned->system_time) versioned = nullptr;
  if (versioned)
    if (auto lookup = bind_lookup_join(j, ref, left, *versioned)) return std::move(*lookup);
  temporal_right = versioned;
  Bound right;
  try {
    right = bind_table_ref(*j.right);
  } catch (...) {
    temporal_right = nullptr;
    throw;
  }
  temporal_right = nullptr;
  // Scalar subqueries (and IN / EXISTS) in ON: joined to the right input first.
  const bool on_subqueries = j.on && !versioned && has_subquery(*j.on);
  if (on_subqueries) {
    std::set<const ast::Expr*> before;
    for (const auto& [e, v] : subquery_values) before.insert(e);
    right = join_expr_subqueries({j.on.get()}, std::move(right), false);
    // Their values read the right input's columns; ON reads left ++ right.
    const std::size_t nl = left.scope.columns.size();
    for (auto& [e, v] : subquery_values)
      if (!before.count(e)) v = rewrite::remap_columns(v, [nl](std::size_t i) { return i + nl; });
  }
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
    collect_aggregates(j.on.get(), registry, aggs);
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
  if (versioned) bind_temporal_join(*node, left, right, j, *versioned);
  out.plan = node;
  return on_subqueries ? drop_subquery_columns(std::move(out), ref.pos) : out;
}

Bound Binder::Impl::bind_table_argument(const ast::TvfArg& table) {
  if (const auto* sub = table.expr ? std::get_if<ast::ScalarSubquery>(&table.expr->node) : nullptr)
    return with_aliases(bind_query(*sub->query), {}, "", table.pos);  // TABLE (SELECT ...)
  ast::NamedTable nt;
  nt.name = table.table;
  ast::TableRef tref;
  tref.pos = table.pos;
  tref.node = nt;
  Bound in = bind_named_table(nt, tref);
  return with_aliases(std::move(in), {}, table.table.back(), table.pos);
}

Bound Binder::Impl::bind_window_tvf(const ast::WindowTvf& tvf, const ast::TableRef& ref) {
  std::string fn = upper_name(tvf.function);
  if (fn != "TUMBLE" && fn != "HOP" && fn != "CUMULATE" && fn != "SESSION")
    return bind_process_table_function(tvf, ref);
  for (const auto& a : tvf.args)
    if (a.kind == ast::TvfArg::Kind::Expression && !a.expr) fail(a.pos, fmt::format("{} takes no DEFAULT argument", fn));
    else if (!a.order_by.empty()) fail(a.order_by_pos, fmt::format("{} takes no ORDER BY on its table", fn));
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
  Bound in = bind_table_argument(*table);
  WindowSpec w;
  ast::ColumnRef time_ref;
  time_ref.names = {descriptor->columns[0]};
  w.time_column = resolve_column(time_ref, in.scope, descriptor->pos);
  const LogicalType& tt = in.scope.columns[w.time_column].type;
  if (!tt.is(TypeKind::kTimestamp) && !tt.is(TypeKind::kTimestampLtz))
    fail(descriptor->pos, fmt::format("the window time column `{}` must be TIMESTAMP(3) or TIMESTAMP_LTZ(3), got {}",
                                      descriptor->columns[0], tt.to_string()));
  if (is_proctime_attribute(*in.plan, w.time_column)) {
    check_proctime_window_zone(session, descriptor->pos);
    w.proctime = true;
  } else if (!is_time_attribute(*in.plan, w.time_column)) {
    fail(descriptor->pos, fmt::format("the window time column `{}` is not a time attribute (declare WATERMARK FOR {} "
                                      "on the table, or `{}` AS PROCTIME())",
                                      descriptor->columns[0], descriptor->columns[0], descriptor->columns[0]));
  }
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

}  // namespace clink::sql
