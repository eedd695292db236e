// Binder: GROUP BY (grouping sets, ROLLUP, CUBE), aggregate calls (DISTINCT, FILTER),
// window aggregates over window TVFs and the legacy GROUP BY TUMBLE/HOP/SESSION windows.
//
// Shape of the plan, as Flink's: a Calc pre-computes group keys, the window's time
// column, aggregate arguments and FILTER conditions as columns; the aggregate node refers
// to columns only; a Calc after it evaluates HAVING and the select list.
#include <algorithm>

#include "binder_internal.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "clink/sql/function/aggregate.hpp"
#include "clink/sql/planner/join_analysis.hpp"

namespace clink::sql {

namespace {

struct GroupingPlan {
  std::vector<const ast::Expr*> keys;           // distinct non-window key expressions
  std::vector<std::vector<std::size_t>> sets;   // indices into keys
};

std::size_t key_index(GroupingPlan& g, const ast::Expr* e) {
  std::string text = ast_text(*e);
  for (std::size_t i = 0; i < g.keys.size(); ++i)
    if (ast_text(*g.keys[i]) == text) return i;
  g.keys.push_back(e);
  return g.keys.size() - 1;
}

std::vector<std::size_t> row_keys(GroupingPlan& g, const ast::GroupingElement& el) {
  if (el.kind == ast::GroupingElement::Kind::Expression) return {key_index(g, el.expr.get())};
  if (el.kind == ast::GroupingElement::Kind::Empty) return {};
  if (el.kind == ast::GroupingElement::Kind::Row) {
    std::vector<std::size_t> out;
    for (const auto& c : el.children) {
      auto k = row_keys(g, c);
      out.insert(out.end(), k.begin(), k.end());
    }
    return out;
  }
  fail(el.pos, "nested GROUPING SETS / ROLLUP / CUBE inside a row are not supported");
}

std::vector<std::vector<std::size_t>> expand(GroupingPlan& g, const ast::GroupingElement& el) {
  using K = ast::GroupingElement::Kind;
  switch (el.kind) {
    case K::Expression:
    case K::Empty:
    case K::Row: return {row_keys(g, el)};
    case K::Sets: {
      std::vector<std::vector<std::size_t>> out;
      for (const auto& c : el.children) {
        auto sub = expand(g, c);
        out.insert(out.end(), sub.begin(), sub.end());
      }
      return out;
    }
    case K::Rollup: {
      std::vector<std::vector<std::size_t>> parts;
      for (const auto& c : el.children) parts.push_back(row_keys(g, c));
      std::vector<std::vector<std::size_t>> out;
      for (std::size_t n = parts.size() + 1; n-- > 0;) {
        std::vector<std::size_t> set;
        for (std::size_t i = 0; i < n; ++i) set.insert(set.end(), parts[i].begin(), parts[i].end());
        out.push_back(set);
      }
      return out;
    }
    case K::Cube: {
      std::vector<std::vector<std::size_t>> parts;
      for (const auto& c : el.children) parts.push_back(row_keys(g, c));
      if (parts.size() > 12) fail(el.pos, "CUBE over more than 12 elements");
      std::vector<std::vector<std::size_t>> out;
      std::size_t n = parts.size();
      // Calcite's order: the full set first, the first element as the highest bit.
      for (std::size_t mask = (std::size_t{1} << n); mask-- > 0;) {
        std::vector<std::size_t> set;
        for (std::size_t i = 0; i < n; ++i)
          if (mask & (std::size_t{1} << (n - 1 - i))) set.insert(set.end(), parts[i].begin(), parts[i].end());
        out.push_back(set);
      }
      return out;
    }
  }
  return {};
}

const LogicalScan* first_scan(const LogicalNode& n) {
  if (n.kind == LogicalKind::kScan) return static_cast<const LogicalScan*>(&n);
  for (const auto& in : n.inputs)
    if (const auto* s = first_scan(*in)) return s;
  return nullptr;
}

// A GROUPING / GROUPING_ID call in `e` (the aggregate then emits each row's grouping set).
bool mentions_grouping(const ast::Expr* e) {
  if (!e) return false;
  if (const auto* f = e->as<ast::FunctionCall>()) {
    const std::string name = upper_name(f->name.back());
    if (name == "GROUPING" || name == "GROUPING_ID") return true;
  }
  bool found = false;
  walk_children(*e, [&](const ast::ExprPtr& c) { found = found || mentions_grouping(c.get()); });
  return found;
}

// The aggregate's output with one more column: the index of the row's grouping set.
Schema with_grouping_set_column(const Schema& s) {
  std::vector<RowField> fields = s.fields();
  fields.push_back({"$grouping_set", LogicalType::int_type().not_null()});
  return Schema(std::move(fields));
}

bool references_at_least(const ExprPtr& e, std::size_t first) {
  if (e->kind == ExprKind::kColumnRef) return e->column_index >= first;
  return std::any_of(e->args.begin(), e->args.end(), [&](const auto& a) { return references_at_least(a, first); });
}

}  // namespace

// Adds `e` to the pre-aggregation projection (reusing an identical column) and returns its index.
namespace {

// The input columns `e` reads, in order: its text names columns, and two inputs (a.v, b.v)
// can have one name.
void column_sequence(const Expr& e, std::vector<std::size_t>& out) {
  if (e.kind == ExprKind::kColumnRef) out.push_back(e.column_index);
  for (const auto& a : e.args)
    if (a) column_sequence(*a, out);
}

}  // namespace

std::size_t pre_column(std::vector<ExprPtr>& exprs, std::vector<std::string>& names, const ExprPtr& e,
                       const std::string& name) {
  std::string text = e->to_string();
  std::vector<std::size_t> columns, other;
  column_sequence(*e, columns);
  for (std::size_t i = 0; i < exprs.size(); ++i) {
    if (exprs[i]->to_string() != text || exprs[i]->type != e->type) continue;
    other.clear();
    column_sequence(*exprs[i], other);
    if (other == columns) return i;
  }
  exprs.push_back(e);
  names.push_back(name);
  return exprs.size() - 1;
}

namespace {

std::string pre_name(const ExprPtr& e, std::size_t index) {
  if (e->kind == ExprKind::kColumnRef && !e->name.empty()) return e->name;
  return fmt::format("$f{}", index);
}

// The window of the window aggregate or window TVF whose window columns reach `n` through
// projections and filters (window_bound_columns follows the same path).
const WindowSpec* window_below(const LogicalNode& n) {
  switch (n.kind) {
    case LogicalKind::kWindowAggregate: return &static_cast<const LogicalWindowAggregate&>(n).window;
    case LogicalKind::kWindowTvf: return &static_cast<const LogicalWindowTvf&>(n).window;
    case LogicalKind::kFilter:
    case LogicalKind::kCorrelate:
    case LogicalKind::kProject: return window_below(n.input());
    default: return nullptr;
  }
}

}  // namespace

void check_proctime_window_zone(const SessionConfig& session, SourcePosition pos) {
  auto tz = session.find("table.local-time-zone");
  if (tz == session.end()) return;
  TimeZonePtr zone = TimeZone::of(tz->second);
  if (zone->offset_at_utc(0) != 0 || zone->offset_at_utc(15768000) != 0)
    fail(pos, fmt::format("processing-time windows are aligned in UTC; 'table.local-time-zone' = '{}' is not "
                          "supported for them (set it to 'UTC')", tz->second));
}

AggregateCall Binder::Impl::bind_aggregate_call(const ast::FunctionCall& f, const ast::Expr& e, const Scope& scope,
                                                std::vector<ExprPtr>& pre_exprs, std::vector<std::string>& pre_names) {
  AggregateCall call;
  call.function = upper_name(f.name.back());
  call.distinct = f.distinct;
  ExprContext ctx;
  ctx.scope = &scope;
  ctx.clause = "an aggregate argument";
  for (const auto& a : f.args) {
    std::vector<const ast::Expr*> nested;
    collect_aggregates(a.get(), registry, nested);
    if (!nested.empty()) fail(nested[0]->pos, "aggregate calls cannot be nested");
  }
  const std::string& fn = call.function;
  if ((fn == "LAG" || fn == "LEAD") && !f.over)
    fail(e.pos, fmt::format("OVER clause is necessary for window functions: {}(...) OVER (...)", fn));
  std::vector<ExprPtr> args;
  for (const auto& a : f.args) args.push_back(bind_expr(*a, ctx));
  const bool is_builtin = fn == "COUNT" || fn == "SUM" || fn == "AVG" || fn == "MIN" || fn == "MAX";
  auto arity = [&](std::size_t n) {
    if (args.size() != n) fail(e.pos, fmt::format("{} takes {} argument{}, got {}", fn, n, n == 1 ? "" : "s", args.size()));
  };
  if (fn == "COUNT") {
    if (f.star) {
      if (f.distinct) fail(e.pos, "COUNT(DISTINCT *) is not supported");
    } else if (args.size() != 1) {
      fail(e.pos, "COUNT takes one argument (or *)");
    }
    call.type = LogicalType::bigint().not_null();
  } else if (fn == "SUM" || fn == "AVG") {
    arity(1);
    if (!args[0]->type.is_numeric())
      fail(f.args[0]->pos, fmt::format("{} needs a numeric argument, got {}", fn, args[0]->type.to_string()));
    call.type = fn == "SUM" ? sum_result_type(args[0]->type) : avg_result_type(args[0]->type);
  } else if (fn == "MIN" || fn == "MAX") {
    arity(1);
    if (args[0]->type.is_nested())
      fail(f.args[0]->pos, fmt::format("{} does not accept {}", fn, args[0]->type.to_string()));
    call.type = args[0]->type.with_nullable(true);
  } else if (!registry.has_aggregate(fn)) {
    fail(e.pos, fmt::format("the aggregate function {} is not supported", fn));
  }
  if (f.star && fn != "COUNT") fail(e.pos, fmt::format("{}(*) is not supported: only COUNT(*)", fn));
  // The function itself (built-in or a user's) decides the types it accepts, its result
  // type, and whether it can retract (GROUP BY over updating input) and merge (SESSION).
  std::vector<LogicalType> arg_types;
  for (const auto& a : args) arg_types.push_back(a->type);
  std::unique_ptr<AggregateFunction> agg;
  try {
    agg = registry.make_aggregate(fn, arg_types, AggregateOptions{f.distinct, true});
  } catch (const SqlTypeError& err) {
    fail(e.pos, err.what());
  }
  std::vector<LogicalType> declared = agg->argument_types();
  if (!declared.empty()) {
    if (declared.size() != args.size())
      fail(e.pos, fmt::format("{} takes {} arguments, got {}", fn, declared.size(), args.size()));
    for (std::size_t i = 0; i < args.size(); ++i)
      args[i] = expr::cast_if_needed(args[i], declared[i].with_nullable(args[i]->type.nullable()));
  }
  if (!is_builtin) call.type = agg->result_type();
  // SET 'clink.sql.arithmetic' = 'null': an integer SUM / AVG that overflows is NULL (the
  // seed's semantics), not wrapped as Flink's (function_aggregates.cpp).
  if (auto it = session.find("clink.sql.arithmetic"); it != session.end() && it->second == "null" && (fn == "SUM" || fn == "AVG"))
    call.function = "$" + fn;
  call.retractable = agg->supports_retraction();
  call.mergeable = agg->supports_merge();
  for (const auto& a : args) call.args.push_back(pre_column(pre_exprs, pre_names, a, pre_name(a, pre_exprs.size())));
  ExprPtr cond;
  if (f.filter) {
    cond = bind_expr(*f.filter, ctx);
    if (!cond->type.is(TypeKind::kBoolean))
      fail(f.filter->pos, fmt::format("FILTER needs a BOOLEAN condition, got {}", cond->type.to_string()));
  }
  // ARRAY_AGG(x IGNORE NULLS) (Flink's ArrayAggFunction with ignoreNulls): a row whose x
  // is NULL does not count, which is a FILTER on x IS NOT NULL.
  if (f.ignore_nulls) {
    if (fn != "ARRAY_AGG" || args.size() != 1) fail(e.pos, fmt::format("IGNORE NULLS is not supported for {}", fn));
    ExprPtr present = expr::call(registry, "IS NOT NULL", {args[0]});
    cond = cond ? expr::and_({cond, present}) : present;
  }
  if (cond) call.filter = pre_column(pre_exprs, pre_names, cond, fmt::format("$f{}", pre_exprs.size()));
  return call;
}

Bound Binder::Impl::bind_aggregate(const ast::Select& s, Bound in, SourcePosition pos) {
  SourcePosition group_pos = s.group_by.empty() ? pos : s.group_by[0].pos;
  // 1. Window keys: window_start / window_end of a window TVF, or a legacy TUMBLE(...) key.
  const LogicalWindowTvf* tvf = nullptr;
  const LogicalFilter* tvf_filter = nullptr;
  if (in.plan->kind == LogicalKind::kWindowTvf) {
    tvf = static_cast<const LogicalWindowTvf*>(in.plan.get());
  } else if (in.plan->kind == LogicalKind::kFilter && in.plan->input().kind == LogicalKind::kWindowTvf) {
    tvf_filter = static_cast<const LogicalFilter*>(in.plan.get());
    tvf = static_cast<const LogicalWindowTvf*>(&in.plan->input());
    // A WHERE on the window columns needs the TVF's rows: the aggregate then takes the
    // windows they carry (Flink's window-attached strategy), as over a window aggregate.
    if (references_at_least(tvf_filter->condition, tvf->input().schema.size())) {
      if (tvf->window.kind == WindowSpec::Kind::kSession || tvf->window.proctime || !window_bound_columns(*tvf))
        fail(tvf_filter->pos, "a WHERE on window columns before a SESSION, processing-time or TIMESTAMP_LTZ window "
                              "aggregate is not supported");
      tvf = nullptr;
      tvf_filter = nullptr;
    }
  }
  std::size_t n_in = tvf ? tvf->input().schema.size() : 0;
  // Cascaded window aggregation (Flink's): GROUP BY both the window_start and the
  // window_end of a window aggregate's output (through projections and filters) is a
  // window aggregate again, over the windows the rows carry.
  bool attached = false;
  std::size_t attached_start = 0, attached_end = 0;  // input columns
  const WindowSpec* upstream = nullptr;
  if (!tvf) {
    if (auto bounds = window_bound_columns(*in.plan)) {
      attached_start = bounds->first;
      attached_end = bounds->second;
      upstream = window_below(*in.plan);
    }
    std::set<std::size_t> found;
    bool plain = true;
    for (const auto& el : s.group_by) {
      if (el.kind != ast::GroupingElement::Kind::Expression) plain = false;
      else if (const auto* ref = el.expr->as<ast::ColumnRef>(); ref && upstream) {
        std::size_t c = resolve_column(*ref, in.scope, el.pos);
        if (c == attached_start || c == attached_end) found.insert(c);
      }
    }
    attached = upstream && plain && found.size() == 2 && upstream->kind != WindowSpec::Kind::kSession &&
               !upstream->proctime;
  }
  std::vector<const ast::GroupingElement*> elements;
  std::set<std::size_t> window_keys;  // 0 start, 1 end, 2 time
  const ast::FunctionCall* legacy = nullptr;
  const ast::Expr* legacy_expr = nullptr;
  for (const auto& el : s.group_by) {
    if (el.kind == ast::GroupingElement::Kind::Expression) {
      if (const auto* f = el.expr->as<ast::FunctionCall>()) {
        std::string fn = upper_name(f->name.back());
        if (fn == "TUMBLE" || fn == "HOP" || fn == "SESSION") {
          if (legacy) fail(el.pos, "only one group window is allowed in GROUP BY");
          legacy = f;
          legacy_expr = el.expr.get();
          continue;
        }
      }
      if (tvf) {
        if (const auto* ref = el.expr->as<ast::ColumnRef>()) {
          std::size_t c = resolve_column(*ref, in.scope, el.pos);
          if (c >= n_in) {
            window_keys.insert(c - n_in);
            continue;
          }
        }
      }
      if (attached) {
        if (const auto* ref = el.expr->as<ast::ColumnRef>()) {
          std::size_t c = resolve_column(*ref, in.scope, el.pos);
          if (c == attached_start || c == attached_end) continue;
        }
      }
    }
    elements.push_back(&el);
  }
  bool windowed = !window_keys.empty() || legacy || attached;
  if (tvf && !window_keys.empty() && (!window_keys.count(0) || !window_keys.count(1)))
    fail(group_pos, "a window aggregate must GROUP BY both window_start and window_end");
  if (legacy && tvf) fail(legacy_expr->pos, "a group window cannot be combined with a window TVF");
  if (!windowed && tvf) tvf = nullptr;  // a plain GROUP BY over the TVF's rows

  // 2. The scope expressions bind over: a TVF's input (window columns handled apart).
  LogicalPtr base = in.plan;
  if (tvf) {
    base = tvf->inputs[0];
    if (tvf_filter) base = make_filter(base, tvf_filter->condition, tvf_filter->pos);
  }
  GroupingPlan grouping;
  std::vector<std::vector<std::size_t>> sets = {{}};
  for (const auto* el : elements) {
    auto expanded = expand(grouping, *el);
    std::vector<std::vector<std::size_t>> next;
    for (const auto& a : sets)
      for (const auto& b : expanded) {
        std::vector<std::size_t> merged = a;
        for (auto k : b)
          if (std::find(merged.begin(), merged.end(), k) == merged.end()) merged.push_back(k);
        next.push_back(merged);
      }
    sets = std::move(next);
  }
  for (auto& set : sets) std::sort(set.begin(), set.end());

  ExprContext key_ctx;
  key_ctx.scope = &in.scope;
  key_ctx.clause = "GROUP BY";
  std::vector<ExprPtr> pre_exprs;
  std::vector<std::string> pre_names;
  AggContext agg;
  agg.input = &in.scope;
  std::vector<std::size_t> keys;
  for (const auto* k : grouping.keys) {
    std::vector<const ast::Expr*> nested;
    collect_aggregates(k, registry, nested);
    if (!nested.empty()) fail(nested[0]->pos, "aggregate functions are not allowed in GROUP BY");
    ExprPtr e = bind_expr(*k, key_ctx);
    if (tvf && references_at_least(e, n_in)) fail(k->pos, "window_time is not allowed as a grouping key here");
    keys.push_back(pre_column(pre_exprs, pre_names, e, pre_name(e, pre_exprs.size())));
    agg.key_texts.push_back(ast_text(*k));
    agg.key_columns.push_back(e->kind == ExprKind::kColumnRef ? std::optional<std::size_t>(e->column_index) : std::nullopt);
  }
  // Keys are distinct pre-projection columns even when two key expressions coincide.
  WindowSpec window;
  std::optional<std::size_t> time_pre;
  if (tvf) {
    window = tvf->window;
    for (auto pk : window.partition_keys)
      if (std::find(agg.key_columns.begin(), agg.key_columns.end(), std::optional<std::size_t>(pk)) == agg.key_columns.end())
        fail(group_pos, fmt::format("the SESSION window's partition key `{}` must be a GROUP BY key", in.scope.columns[pk].name));
    window.partition_keys.clear();
    const auto& tc = in.scope.columns[window.time_column];
    time_pre = pre_column(pre_exprs, pre_names, expr::column(window.time_column, tc.type, tc.name), tc.name);
    agg.window_input_start = n_in;
  } else if (attached) {
    window = *upstream;
    window.partition_keys.clear();
    const auto& st = in.scope.columns[attached_start];
    const auto& en = in.scope.columns[attached_end];
    window.attached_start = pre_column(pre_exprs, pre_names, expr::column(attached_start, st.type, st.name), st.name);
    time_pre = pre_column(pre_exprs, pre_names, expr::column(attached_end, en.type, en.name), en.name);
    agg.attached_window = {{attached_start, 0}, {attached_end, 1}};
  } else if (legacy) {
    std::string fn = upper_name(legacy->name.back());
    if (legacy->args.empty()) fail(legacy_expr->pos, fmt::format("{} needs a time column", fn));
    ExprPtr t = bind_expr(*legacy->args[0], key_ctx);
    if (t->kind == ExprKind::kColumnRef && is_proctime_attribute(*in.plan, t->column_index)) {
      check_proctime_window_zone(session, legacy->args[0]->pos);
      window.proctime = true;
    } else if (t->kind != ExprKind::kColumnRef || !is_time_attribute(*in.plan, t->column_index)) {
      fail(legacy->args[0]->pos, fmt::format("the first argument of {} must be a time attribute (a column with a "
                                             "WATERMARK, or PROCTIME())", fn));
    }
    window.time_column = t->column_index;
    std::size_t need = fn == "HOP" ? 3 : 2;
    if (legacy->args.size() != need && !(fn != "SESSION" && legacy->args.size() == need + 1))
      fail(legacy_expr->pos, fmt::format("{} takes {} arguments", fn, need));
    if (fn == "TUMBLE") {
      window.kind = WindowSpec::Kind::kTumble;
      window.size_ms = interval_literal_ms(*legacy->args[1], "size");
    } else if (fn == "HOP") {
      window.kind = WindowSpec::Kind::kHop;
      window.slide_ms = interval_literal_ms(*legacy->args[1], "slide");
      window.size_ms = interval_literal_ms(*legacy->args[2], "size");
      if (window.size_ms % window.slide_ms != 0)
        fail(legacy->args[2]->pos, "HOP size must be an integral multiple of the slide");
    } else {
      window.kind = WindowSpec::Kind::kSession;
      window.gap_ms = interval_literal_ms(*legacy->args[1], "gap");
    }
    if (legacy->args.size() == need + 1) window.offset_ms = interval_literal_ms(*legacy->args[need], "offset");
    time_pre = pre_column(pre_exprs, pre_names, t, t->name);
    for (std::size_t i = 0; i < legacy->args.size(); ++i)
      agg.legacy_window_text += (i ? ", " : "") + ast_text(*legacy->args[i]);
    agg.legacy_window_function = fn;
    agg.legacy_window_proctime = window.proctime;
  }

  // 3. Aggregate calls of the select list and HAVING (one per distinct text).
  std::vector<const ast::Expr*> calls;
  for (const auto& item : s.items) collect_aggregates(item.expr.get(), registry, calls);
  collect_aggregates(s.having.get(), registry, calls);
  std::vector<AggregateCall> aggregates;
  std::vector<std::string> call_texts;
  for (const auto* c : calls) {
    std::string text = ast_text(*c);
    if (std::find(call_texts.begin(), call_texts.end(), text) != call_texts.end()) continue;
    AggregateCall a = bind_aggregate_call(std::get<ast::FunctionCall>(c->node), *c, in.scope, pre_exprs, pre_names);
    if (tvf) {
      for (auto arg : a.args)
        if (references_at_least(pre_exprs[arg], n_in)) fail(c->pos, "aggregate arguments cannot use window columns");
      if (a.filter && references_at_least(pre_exprs[*a.filter], n_in))
        fail(c->pos, "aggregate filters cannot use window columns");
    }
    a.name = fmt::format("$a{}", aggregates.size());
    for (std::size_t i = 0; i < s.items.size(); ++i)
      if (s.items[i].expr.get() == c) a.name = s.items[i].alias.value_or(fmt::format("EXPR${}", i));
    call_texts.push_back(text);
    aggregates.push_back(std::move(a));
  }

  // 4. The pre-projection (skipped when it is the identity) and the aggregate node.
  LogicalPtr pre = base;
  bool identity = pre_exprs.size() == base->schema.size();
  for (std::size_t i = 0; identity && i < pre_exprs.size(); ++i)
    identity = pre_exprs[i]->kind == ExprKind::kColumnRef && pre_exprs[i]->column_index == i;
  if (!identity) pre = make_project(base, pre_exprs, pre_names, group_pos);
  bool nullable_keys = sets.size() > 1;
  std::size_t k = keys.size();
  agg.grouping_sets = sets;
  bool set_column = sets.size() > 1 && mentions_grouping(s.having.get());
  for (const auto& item : s.items) set_column = set_column || (sets.size() > 1 && mentions_grouping(item.expr.get()));
  if (windowed) {
    auto w = std::make_shared<LogicalWindowAggregate>();
    window.time_column = *time_pre;
    w->window = window;
    w->keys = keys;
    w->grouping_sets = sets;
    w->aggregates = aggregates;
    if (const auto* scan = first_scan(*base)) {
      w->allowed_lateness_ms = scan->table.allowed_lateness_ms();
      w->late_records_to_dlq = scan->table.late_records_to_dlq();
    }
    w->schema = window_aggregate_schema(pre->schema, window, keys, nullable_keys, aggregates);
    if (set_column) w->schema = with_grouping_set_column(w->schema);
    w->inputs = {pre};
    w->pos = group_pos;
    agg.has_window = true;
    agg.window_output = k;
    agg.output = w->schema;
    for (std::size_t i = 0; i < aggregates.size(); ++i) agg.agg_outputs[call_texts[i]] = k + 3 + i;
    in.plan = w;
  } else {
    auto a = std::make_shared<LogicalAggregate>();
    a->keys = keys;
    a->grouping_sets = sets;
    a->aggregates = aggregates;
    a->schema = aggregate_schema(pre->schema, keys, nullable_keys, aggregates);
    if (set_column) a->schema = with_grouping_set_column(a->schema);
    a->inputs = {pre};
    a->pos = s.group_by.empty() ? (calls.empty() ? pos : calls[0]->pos) : group_pos;
    agg.output = a->schema;
    for (std::size_t i = 0; i < aggregates.size(); ++i) agg.agg_outputs[call_texts[i]] = k + i;
    in.plan = a;
  }

  if (set_column) agg.grouping_set_column = in.plan->schema.size() - 1;

  // 5. HAVING and the select list over the aggregate's output.
  Bound out{in.plan, Scope::of(in.plan->schema, "")};
  // Subqueries of HAVING and the select list join the aggregate's output (uncorrelated).
  std::vector<const ast::Expr*> outputs{s.having.get()};
  for (const auto& item : s.items) outputs.push_back(item.expr.get());
  out = join_expr_subqueries(outputs, std::move(out), false, &agg);
  if (s.having) {
    ExprContext ctx;
    ctx.scope = &in.scope;
    ctx.agg = &agg;
    ctx.clause = "HAVING";
    ExprPtr cond = bind_expr(*s.having, ctx);
    if (!cond->type.is(TypeKind::kBoolean))
      fail(s.having->pos, fmt::format("HAVING needs a BOOLEAN condition, got {}", cond->type.to_string()));
    out.plan = make_filter(out.plan, cond, s.having->pos);
  }
  return project_items(s.items, out, &agg, pos);
}

// Flink's GROUPING_ID(k1, ..., km): per grouping set a number whose bit m-1-j is set when
// kj is not in the set (GROUPING(k) is GROUPING_ID(k)). A constant when every set gives
// the same value; else a CASE over the set index the aggregate emits.
ExprPtr Binder::Impl::bind_grouping(const ast::FunctionCall& f, const ast::Expr& e, const ExprContext& ctx) {
  const std::string name = upper_name(f.name.back());
  if (!ctx.agg) fail(e.pos, fmt::format("{}: GROUPING operator may only occur in an aggregate query", name));
  if (f.args.empty()) fail(e.pos, fmt::format("{} takes at least one argument: a GROUP BY key", name));
  if (f.distinct || f.filter || f.star) fail(e.pos, fmt::format("{} takes GROUP BY keys only", name));
  if (f.args.size() > 63) fail(e.pos, fmt::format("{} takes at most 63 arguments", name));
  const AggContext& agg = *ctx.agg;
  // Per argument: its key, or none for a key of every set (window_start, window_end).
  std::vector<std::optional<std::size_t>> arg_keys;
  for (const auto& a : f.args) {
    auto it = std::find(agg.key_texts.begin(), agg.key_texts.end(), ast_text(*a));
    if (it != agg.key_texts.end()) {
      arg_keys.push_back(static_cast<std::size_t>(it - agg.key_texts.begin()));
      continue;
    }
    if (agg.has_window && a->as<ast::ColumnRef>()) {
      ExprPtr b = bind_expr(*a, ctx);
      if (b->kind == ExprKind::kColumnRef && b->column_index >= agg.window_output &&
          b->column_index < agg.window_output + 2) {
        arg_keys.push_back(std::nullopt);
        continue;
      }
    }
    fail(a->pos, fmt::format("{}: Argument to GROUPING operator must be a grouped expression, got {}", name,
                             ast_text(*a)));
  }
  std::vector<std::vector<std::size_t>> sets = agg.grouping_sets;
  if (sets.empty()) {  // one set of every key
    sets.emplace_back(agg.key_texts.size());
    for (std::size_t i = 0; i < sets[0].size(); ++i) sets[0][i] = i;
  }
  std::vector<std::int64_t> values;
  for (const auto& set : sets) {
    std::int64_t v = 0;
    for (const auto& k : arg_keys) {
      const bool grouped = !k || std::find(set.begin(), set.end(), *k) != set.end();
      v = (v << 1) | (grouped ? 0 : 1);
    }
    values.push_back(v);
  }
  auto lit = [](std::int64_t v) { return expr::literal(Value(v), LogicalType::bigint().not_null()); };
  if (std::all_of(values.begin(), values.end(), [&](std::int64_t v) { return v == values[0]; })) return lit(values[0]);
  if (!agg.grouping_set_column) fail(e.pos, fmt::format("{} is only supported in the select list and HAVING", name));
  ExprPtr set = expr::column(*agg.grouping_set_column, LogicalType::int_type().not_null(), "$grouping_set");
  std::vector<std::pair<ExprPtr, ExprPtr>> branches;
  for (std::size_t i = 0; i + 1 < values.size(); ++i)
    branches.emplace_back(
        call("=", {set, expr::literal(Value(static_cast<std::int64_t>(i)), LogicalType::int_type().not_null())}, e.pos),
        lit(values[i]));
  return expr::case_when(std::move(branches), lit(values.back()));
}

}  // namespace clink::sql
