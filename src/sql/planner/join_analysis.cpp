#include "clink/sql/planner/join_analysis.hpp"

#include <set>

#include "plan_rewrite.hpp"

namespace clink::sql {

namespace {

using rewrite::conjunction;
using rewrite::conjuncts;

// `col`, `col + INTERVAL`, `col - INTERVAL`, `INTERVAL + col`: the column and the offset.
std::optional<std::pair<std::size_t, std::int64_t>> time_plus_offset(const ExprPtr& e) {
  if (e->kind == ExprKind::kColumnRef) return std::pair{e->column_index, std::int64_t{0}};
  if (e->kind != ExprKind::kCall || e->args.size() != 2 || (e->name != "+" && e->name != "-")) return std::nullopt;
  auto interval_ms = [](const ExprPtr& lit) -> std::optional<std::int64_t> {
    if (!lit->is_literal() || lit->literal.is_null() || !lit->type.is(TypeKind::kIntervalDayTime)) return std::nullopt;
    return lit->literal.as_int();
  };
  const ExprPtr& a = e->args[0];
  const ExprPtr& b = e->args[1];
  if (a->kind == ExprKind::kColumnRef)
    if (auto ms = interval_ms(b)) return std::pair{a->column_index, e->name == "+" ? *ms : -*ms};
  if (e->name == "+" && b->kind == ExprKind::kColumnRef)
    if (auto ms = interval_ms(a)) return std::pair{b->column_index, *ms};
  return std::nullopt;
}

bool is_time_column(const LogicalType& t) { return t.is(TypeKind::kTimestamp) || t.is(TypeKind::kTimestampLtz); }

struct TimeBound {
  std::size_t left_time, right_time;
  bool lower;  // left.rt >= right.rt + offset (else <=)
  std::int64_t offset;
};

// `x OP y` between a left and a right time attribute, normalised to left OP' right + k.
std::optional<TimeBound> time_bound(const ExprPtr& c, const LogicalJoin& j) {
  if (c->kind != ExprKind::kCall || c->args.size() != 2) return std::nullopt;
  const std::string& op = c->name;
  if (op != "<" && op != "<=" && op != ">" && op != ">=") return std::nullopt;
  auto x = time_plus_offset(c->args[0]);
  auto y = time_plus_offset(c->args[1]);
  if (!x || !y) return std::nullopt;
  const std::size_t nl = j.input(0).schema.size();
  bool greater = op[0] == '>';
  bool strict = op.size() == 1;
  // x.col + x.off OP y.col + y.off
  if (x->first >= nl && y->first < nl) {  // right on the left-hand side: swap
    std::swap(x, y);
    greater = !greater;
  }
  if (!(x->first < nl && y->first >= nl)) return std::nullopt;
  std::size_t lt = x->first, rt = y->first - nl;
  if (!is_time_column(j.input(0).schema.type(lt)) || !is_time_column(j.input(1).schema.type(rt))) return std::nullopt;
  if (!is_time_attribute(j.input(0), lt) || !is_time_attribute(j.input(1), rt)) return std::nullopt;
  // left.rt OP right.rt + (y.off - x.off)
  std::int64_t k = y->second - x->second;
  if (strict) k += greater ? 1 : -1;
  return TimeBound{lt, rt, greater, k};
}

}  // namespace

namespace {

bool is_marker(const ExprPtr& c) { return c->kind == ExprKind::kCall && !c->function && c->name == kTemporalJoinCondition; }

ExprPtr marker_call(const char* name, std::vector<ExprPtr> args) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kCall;
  e->type = LogicalType::boolean().not_null();
  e->name = name;
  e->args = std::move(args);
  return e;
}

}  // namespace

ExprPtr make_temporal_join_condition(const Schema& joined, std::size_t left_time, std::size_t right_time,
                                     const std::vector<std::size_t>& primary_key,
                                     const std::vector<std::size_t>& left_keys,
                                     const std::vector<std::size_t>& right_keys) {
  auto cols = [&](const std::vector<std::size_t>& idx) {
    std::vector<ExprPtr> out;
    for (auto i : idx) out.push_back(expr::column(i, joined.type(i), joined.name(i)));
    return out;
  };
  return marker_call(kTemporalJoinCondition,
                     {expr::column(left_time, joined.type(left_time), joined.name(left_time)),
                      expr::column(right_time, joined.type(right_time), joined.name(right_time)),
                      marker_call("__TEMPORAL_JOIN_CONDITION_PRIMARY_KEY", cols(primary_key)),
                      marker_call("__TEMPORAL_JOIN_LEFT_KEY", cols(left_keys)),
                      marker_call("__TEMPORAL_JOIN_RIGHT_KEY", cols(right_keys))});
}

bool is_temporal_join(const LogicalJoin& j) {
  for (const auto& c : conjuncts(j.condition))
    if (is_marker(c)) return true;
  return false;
}

JoinAnalysis analyze_join(const LogicalJoin& j) {
  JoinAnalysis out;
  const std::size_t nl = j.input(0).schema.size();
  std::vector<ExprPtr> rest;
  for (const auto& c : conjuncts(j.condition)) {
    if (is_marker(c)) {
      out.temporal = TemporalJoinBounds{c->args[0]->column_index, c->args[1]->column_index - nl};
      continue;
    }
    bool is_key = false;
    if (c->kind == ExprKind::kCall && c->args.size() == 2 && (c->name == "=" || c->name == "IS NOT DISTINCT FROM") &&
        c->args[0]->kind == ExprKind::kColumnRef && c->args[1]->kind == ExprKind::kColumnRef) {
      std::size_t a = c->args[0]->column_index, b = c->args[1]->column_index;
      if (a >= nl && b < nl) std::swap(a, b);
      if (a < nl && b >= nl && join_key_types_compatible(c->args[0]->type, c->args[1]->type)) {
        out.left_keys.push_back(a);
        out.right_keys.push_back(b - nl);
        out.filter_nulls.push_back(c->name == "=");
        is_key = true;
      }
    }
    if (!is_key) rest.push_back(c);
  }
  auto window_bounds = [&]() -> std::optional<WindowJoinBounds> {
    auto lw = window_bound_columns(j.input(0));
    auto rw = window_bound_columns(j.input(1));
    auto keyed = [&](std::size_t l, std::size_t r) {
      for (std::size_t k = 0; k < out.left_keys.size(); ++k)
        if (out.left_keys[k] == l && out.right_keys[k] == r) return true;
      return false;
    };
    if (lw && rw && keyed(lw->first, rw->first) && keyed(lw->second, rw->second))
      return WindowJoinBounds{lw->second, rw->second};
    return std::nullopt;
  };
  if (j.semi_or_anti()) {
    // Semi and anti joins run as regular (keyed) joins, or as window joins when both sides
    // are windowed and the condition equates their window_start and window_end, as Flink's
    // streaming planner (a window semi / anti join: final per window, append-only).
    out.residual = conjunction(std::move(rest));
    if (!out.temporal) out.window = window_bounds();
    return out;
  }
  // Interval join: a lower and an upper bound over the same pair of time attributes.
  std::optional<TimeBound> lower, upper;
  std::vector<ExprPtr> residual;
  std::vector<std::size_t> bound_positions;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    auto b = time_bound(rest[i], j);
    if (b && b->lower && !lower) {
      lower = b;
      bound_positions.push_back(i);
    } else if (b && !b->lower && !upper) {
      upper = b;
      bound_positions.push_back(i);
    }
  }
  if (!out.temporal && lower && upper && lower->left_time == upper->left_time && lower->right_time == upper->right_time) {
    out.interval = IntervalBounds{lower->left_time, lower->right_time, lower->offset, upper->offset};
    for (std::size_t i = 0; i < rest.size(); ++i)
      if (i != bound_positions[0] && i != bound_positions[1]) residual.push_back(rest[i]);
  } else {
    residual = rest;
  }
  out.residual = conjunction(std::move(residual));
  if (!out.interval && !out.temporal) out.window = window_bounds();
  return out;
}

std::optional<std::pair<std::size_t, std::size_t>> window_bound_columns(const LogicalNode& n) {
  // Windows over TIMESTAMP_LTZ are wall-clock bounds in the session zone: left to the
  // regular join (the window join fires on the epoch value of window_end).
  auto plain_time = [](const LogicalNode& in, std::size_t col) { return in.schema.type(col).is(TypeKind::kTimestamp); };
  switch (n.kind) {
    case LogicalKind::kWindowAggregate: {
      const auto& w = static_cast<const LogicalWindowAggregate&>(n);
      if (!plain_time(n.input(), w.window.time_column)) return std::nullopt;
      return std::pair{w.keys.size(), w.keys.size() + 1};
    }
    case LogicalKind::kWindowTvf: {
      const auto& w = static_cast<const LogicalWindowTvf&>(n);
      if (!plain_time(n.input(), w.window.time_column)) return std::nullopt;
      const std::size_t in = n.input().schema.size();
      return std::pair{in, in + 1};
    }
    case LogicalKind::kFilter:
    case LogicalKind::kCorrelate: return window_bound_columns(n.input());  // input columns come first
    case LogicalKind::kProject: {
      auto below = window_bound_columns(n.input());
      if (!below) return std::nullopt;
      const auto& exprs = static_cast<const LogicalProject&>(n).exprs;
      std::optional<std::size_t> start, end;
      for (std::size_t i = 0; i < exprs.size(); ++i) {
        if (exprs[i]->kind != ExprKind::kColumnRef) continue;
        if (!start && exprs[i]->column_index == below->first) start = i;
        if (!end && exprs[i]->column_index == below->second) end = i;
      }
      if (start && end) return std::pair{*start, *end};
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}


std::string join_type_param(LogicalJoin::Type type) {
  switch (type) {
    case LogicalJoin::Type::kInner: return "inner";
    case LogicalJoin::Type::kLeft: return "left";
    case LogicalJoin::Type::kRight: return "right";
    case LogicalJoin::Type::kFull: return "full";
    case LogicalJoin::Type::kSemi: return "semi";
    case LogicalJoin::Type::kAnti: return "anti";
  }
  return "inner";
}

}  // namespace clink::sql
