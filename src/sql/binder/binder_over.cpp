// Binder: OVER aggregates, `agg(...) OVER (PARTITION BY ... ORDER BY time ... frame)` and
// `agg(...) OVER w` with `WINDOW w AS (...)`, as Flink plans them in streaming mode:
//   - ORDER BY exactly one time attribute (event or processing time), ascending; or, as
//     Flink 2.1+, one other column or expression from UNBOUNDED PRECEDING (an updating
//     aggregate, planned as sql_over_nontime);
//   - frames from UNBOUNDED PRECEDING, `n PRECEDING` (ROWS) or `INTERVAL ... PRECEDING`
//     (RANGE) up to CURRENT ROW (no FOLLOWING); without a frame RANGE UNBOUNDED PRECEDING;
//   - every call of one query over the same window (one OverAggregate node);
//   - bounded frames retract rows leaving the frame, so their functions must retract;
//   - LAG (an aggregate keeping the last values) over the default frame only, as Flink.
// Plan shape as Flink's: a Calc keeps the input's columns and appends partition keys,
// aggregate arguments and FILTER conditions that are not plain columns; the
// OverAggregate appends one column per call (w0$o0, ...); a Calc evaluates the select
// list over the input's columns and those.
#include <algorithm>
#include <set>

#include "binder_internal.hpp"

namespace clink::sql {

namespace {

const char* const kSameWindow =
    "Over Agg: Unsupported use of OVER windows. All aggregates must be computed on the same window. please re-check "
    "the over window statement.";
// Flink 2.3's message for no ORDER BY as for several.
const char* const kSingleTimeOrder = "The window can only be ordered by a single time column.";

bool same_window(const OverWindow& a, const OverWindow& b) {
  return a.partition_keys == b.partition_keys && a.order_column == b.order_column && a.proctime == b.proctime &&
         a.rows == b.rows && a.preceding == b.preceding;
}

}  // namespace

bool has_over_aggregate(const ast::Select& s, const FunctionRegistry& registry) {
  std::vector<const ast::Expr*> calls;
  for (const auto& item : s.items) collect_over_calls(item.expr.get(), calls);
  return std::any_of(calls.begin(), calls.end(), [&](const ast::Expr* c) {
    return is_aggregate_name(upper_name(c->as<ast::FunctionCall>()->name.back()), registry);
  });
}

Bound Binder::Impl::bind_over(const ast::Select& s, Bound in, SourcePosition pos) {
  // The pre-projection: the input's columns, then what the window and the calls compute.
  std::vector<ExprPtr> pre_exprs;
  std::vector<std::string> pre_names;
  for (std::size_t i = 0; i < in.scope.columns.size(); ++i) {
    const auto& c = in.scope.columns[i];
    pre_exprs.push_back(expr::column(i, c.type, c.name));
    pre_names.push_back(c.name);
  }
  ExprContext ctx;
  ctx.scope = &in.scope;
  ctx.clause = "an OVER window";

  bool nontime = false;  // the window bind_window bound last is ordered by a column that is not a time attribute
  auto bind_window = [&](const ast::WindowSpec& spec, SourcePosition at) {
    OverWindow w;
    for (const auto& p : spec.partition_by) {
      std::vector<const ast::Expr*> nested;
      collect_aggregates(p.get(), registry, nested);
      if (!nested.empty()) fail(nested[0]->pos, "aggregate functions are not allowed in PARTITION BY");
      ExprPtr e = bind_expr(*p, ctx);
      w.partition_keys.push_back(
          pre_column(pre_exprs, pre_names, e, e->kind == ExprKind::kColumnRef ? e->name : fmt::format("$f{}", pre_exprs.size())));
    }
    if (spec.order_by.empty()) fail(at, kSingleTimeOrder);
    if (spec.order_by.size() > 1) fail(spec.order_by[1].pos, kSingleTimeOrder);
    const ast::OrderItem& order = spec.order_by[0];
    ExprPtr o = bind_expr(*order.expr, ctx);
    if (o->kind == ExprKind::kColumnRef) {
      w.order_column = o->column_index;
      w.proctime = is_proctime_attribute(*in.plan, w.order_column);
      nontime = !w.proctime && !is_time_attribute(*in.plan, w.order_column);
    } else {  // an expression is never a time attribute
      w.order_column = pre_column(pre_exprs, pre_names, o, fmt::format("$f{}", pre_exprs.size()));
      nontime = true;
    }
    if (order.descending) fail(order.pos, "The window can only be ordered in ASCENDING mode.");
    if (!spec.frame) return w;  // RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    const ast::WindowFrame& frame = *spec.frame;
    w.rows = frame.mode == ast::WindowFrame::Mode::Rows;
    auto bound_pos = [&](const ast::FrameBound& b) { return b.offset ? b.offset->pos : at; };
    using K = ast::FrameBound::Kind;
    // Flink 2.1+ runs a non-time order from UNBOUNDED PRECEDING only (its updating
    // NonTime{Range,Rows}UnboundedPrecedingFunction), with Flink's messages for the rest.
    if (nontime && frame.start.kind == K::Preceding)
      fail(bound_pos(frame.start), "Non-time attribute sort is not supported for bounded OVER window.");
    if (nontime && frame.start.kind == K::CurrentRow) fail(at, "OVER RANGE FOLLOWING windows are not supported yet.");
    switch (frame.start.kind) {
      case K::UnboundedPreceding: break;
      case K::CurrentRow: w.preceding = 0; break;
      case K::Preceding: {
        const ast::Expr& off = *frame.start.offset;
        if (w.rows) {
          const auto* l = off.as<ast::Literal>();
          if (!l || l->kind != ast::Literal::Kind::Integer || l->text.front() == '-')
            fail(off.pos, "a ROWS frame's offset must be a non-negative integer literal (ROWS BETWEEN 2 PRECEDING AND "
                          "CURRENT ROW)");
          w.preceding = std::stoll(l->text);
        } else {
          if (!off.as<ast::IntervalLiteral>())
            fail(off.pos, "a RANGE frame over a time attribute needs an INTERVAL offset (RANGE BETWEEN INTERVAL '1' "
                          "HOUR PRECEDING AND CURRENT ROW)");
          w.preceding = interval_literal_ms(off, "frame offset");
        }
        break;
      }
      case K::Following:
      case K::UnboundedFollowing: fail(bound_pos(frame.start), "OVER RANGE FOLLOWING windows are not supported yet.");
    }
    if (frame.end && frame.end->kind != K::CurrentRow) {
      if (frame.end->kind == K::Following || frame.end->kind == K::UnboundedFollowing)
        fail(bound_pos(*frame.end), "OVER RANGE FOLLOWING windows are not supported yet.");
      fail(bound_pos(*frame.end), "an OVER window must end at CURRENT ROW");
    }
    return w;
  };

  // The calls (one per distinct text), all over one window.
  std::vector<const ast::Expr*> calls;
  for (const auto& item : s.items) collect_over_calls(item.expr.get(), calls);
  std::optional<OverWindow> window;
  std::vector<AggregateCall> aggregates;
  std::map<std::string, std::pair<std::size_t, LogicalType>> outputs;
  std::vector<std::string> texts;
  for (const ast::Expr* c : calls) {
    const auto& f = std::get<ast::FunctionCall>(c->node);
    const std::string fn = upper_name(f.name.back());
    if (!is_aggregate_name(fn, registry))
      fail(c->pos, fmt::format("{} OVER (...) is not supported here: only aggregate functions run over an OVER window",
                               fn));
    const ast::WindowSpec& spec = resolve_window(s, *f.over, c->pos);
    // Flink runs LAG (LagAggFunction) over the default frame only, and no LEAD in streaming.
    if (fn == "LEAD") fail(c->pos, "LEAD Function is not supported in stream mode.");
    if (fn == "LAG" && spec.frame)
      fail(c->pos, "ROW/RANGE not allowed with RANK, DENSE_RANK, ROW_NUMBER or LAG/LEAD functions: LAG runs over "
                   "the default frame (RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)");
    OverWindow w = bind_window(spec, c->pos);
    if (window && !same_window(*window, w)) fail(c->pos, kSameWindow);
    window = w;
    const std::string text = ast_text(*c);
    if (std::find(texts.begin(), texts.end(), text) != texts.end()) continue;
    AggregateCall a = bind_aggregate_call(f, *c, in.scope, pre_exprs, pre_names);
    // Flink 2.3 plans these over a non-time order but fails when the job runs.
    if (nontime && (fn == "LAG" || a.distinct))
      fail(c->pos, fmt::format("{} over an OVER window ordered by a column that is not a time attribute is not "
                               "supported (Flink fails such a job when it runs)",
                               a.distinct ? fn + "(DISTINCT ...)" : fn));
    // Flink expands STDDEV / VAR over an OVER window into sums for an integer, FLOAT or
    // DOUBLE argument (function_aggregates_stats.cpp): their $OVER_ variant.
    static const std::set<std::string> kMoments = {"STDDEV_POP", "STDDEV_SAMP", "STDDEV", "VAR_POP", "VAR_SAMP", "VARIANCE"};
    if (kMoments.count(a.function) && a.args.size() == 1) {
      const LogicalType& t = pre_exprs[a.args[0]]->type;
      if (t.is_integer() || t.is(TypeKind::kFloat) || t.is(TypeKind::kDouble)) a.function = "$OVER_" + a.function;
    }
    if (w.preceding && !a.retractable)
      fail(c->pos, fmt::format("the aggregate function {} cannot retract, which a bounded OVER window ({}) needs to "
                               "remove the rows leaving the frame",
                               a.function, w.frame_text()));
    a.name = fmt::format("w0$o{}", aggregates.size());
    texts.push_back(text);
    aggregates.push_back(std::move(a));
  }

  LogicalPtr pre = in.plan;
  if (pre_exprs.size() > in.scope.columns.size()) pre = make_project(in.plan, pre_exprs, pre_names, calls[0]->pos);
  auto over = std::make_shared<LogicalOverAggregate>();
  over->window = *window;
  over->aggregates = aggregates;
  over->schema = over_aggregate_schema(pre->schema, aggregates);
  over->inputs = {pre};
  over->pos = calls[0]->pos;
  for (std::size_t i = 0; i < aggregates.size(); ++i)
    outputs[texts[i]] = {pre->schema.size() + i, aggregates[i].type};

  // The select list over the input's columns (0..n-1 pass through) and the calls' columns.
  return project_over_items(s.items, Bound{over, in.scope}, std::move(outputs), pos);
}

const ast::WindowSpec& Binder::Impl::resolve_window(const ast::Select& s, const ast::WindowSpec& spec,
                                                    SourcePosition at) {
  std::map<std::string, const ast::NamedWindow*> named;
  for (const auto& w : s.windows)
    if (!named.emplace(w.name, &w).second) fail(w.pos, fmt::format("duplicate window name `{}`", w.name));
  if (spec.ref.empty()) return spec;
  auto it = named.find(spec.ref);
  if (it == named.end()) fail(at, fmt::format("window `{}` is not defined (WINDOW {} AS (...))", spec.ref, spec.ref));
  if (!spec.partition_by.empty() || !spec.order_by.empty() || spec.frame)
    fail(at, fmt::format("OVER ({} ...) refines a named window, which is not supported: define the whole window in "
                         "the WINDOW clause",
                         spec.ref));
  if (!it->second->spec->ref.empty())
    fail(it->second->pos, fmt::format("window `{}` is defined over another window, which is not supported",
                                      it->second->name));
  return *it->second->spec;
}

Bound Binder::Impl::project_over_items(const std::vector<ast::SelectItem>& items, const Bound& over,
                                       std::map<std::string, std::pair<std::size_t, LogicalType>> columns,
                                       SourcePosition pos) {
  struct Restore {
    std::map<std::string, std::pair<std::size_t, LogicalType>>& slot;
    ~Restore() { slot.clear(); }
  } restore{over_columns};
  over_columns = std::move(columns);
  return project_items(items, over, nullptr, pos);
}

void Binder::Impl::bind_over_reference(const ast::FunctionCall& f, const ast::Expr& e, const ExprContext& ctx) {
  if (ctx.agg)
    fail(e.pos, "OVER aggregates together with GROUP BY are not supported (the GROUP BY produces updates, which an "
                "OVER aggregate cannot consume)");
  fail(e.pos, fmt::format("{} OVER (...) is not allowed in {}", upper_name(f.name.back()), ctx.clause));
}

}  // namespace clink::sql
