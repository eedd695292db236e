// Binder: event-time temporal joins, `FROM l [LEFT] JOIN v FOR SYSTEM_TIME AS OF l.rowtime
// AS r ON l.k = r.k`, validated as Flink's TemporalJoinRewriteWithUniqueKeyRule and
// StreamPhysicalTemporalJoinRule do (with their messages): the AS OF expression is the
// left's event-time attribute, the right is a versioned table (a primary key, or the
// partition keys of a ROW_NUMBER deduplication, and an event-time attribute of the same
// type), and the ON condition equates the whole primary key. The join then carries Flink's
// __TEMPORAL_JOIN_CONDITION marker (join_analysis.hpp).
#include <algorithm>

#include "../planner/plan_rewrite.hpp"
#include "binder_internal.hpp"
#include "clink/sql/planner/join_analysis.hpp"

namespace clink::sql {

namespace {

bool is_deduplication(const LogicalRank& r) {
  return r.rank_type == RankType::kRowNumber && r.rank_start == 1 && r.rank_end && *r.rank_end == 1;
}

// The unique key of a versioned table: a table's PRIMARY KEY, or the partition keys of a
// ROW_NUMBER() ... = 1 deduplication (Flink's "versioned view"), through projections and
// filters that keep its columns.
std::optional<std::vector<std::size_t>> unique_key(const LogicalNode& n) {
  switch (n.kind) {
    case LogicalKind::kScan: {
      const auto& s = static_cast<const LogicalScan&>(n);
      if (s.table.primary_key.empty()) return std::nullopt;
      std::vector<std::size_t> out;
      for (const auto& name : s.table.primary_key) {
        std::optional<std::size_t> found;
        for (std::size_t i = 0; i < s.schema.size(); ++i)
          if (s.schema.name(i) == name) found = i;
        if (!found) return std::nullopt;
        out.push_back(*found);
      }
      return out;
    }
    case LogicalKind::kWatermarkAssigner:
    case LogicalKind::kFilter: return unique_key(n.input());
    case LogicalKind::kProject: {
      auto below = unique_key(n.input());
      if (!below) return std::nullopt;
      const auto& exprs = static_cast<const LogicalProject&>(n).exprs;
      std::vector<std::size_t> out;
      for (auto k : *below) {
        auto it = std::find_if(exprs.begin(), exprs.end(),
                               [&](const ExprPtr& e) { return e->kind == ExprKind::kColumnRef && e->column_index == k; });
        if (it == exprs.end()) return std::nullopt;
        out.push_back(static_cast<std::size_t>(it - exprs.begin()));
      }
      return out;
    }
    case LogicalKind::kRank: {
      const auto& r = static_cast<const LogicalRank&>(n);
      if (!is_deduplication(r)) return std::nullopt;
      return r.partition_keys;
    }
    default: return std::nullopt;
  }
}

// Whether `col` is the versioned table's event-time attribute: a time attribute, also
// through a deduplication (which keeps its input's rowtime as the version's time).
bool is_version_time(const LogicalNode& n, std::size_t col) {
  switch (n.kind) {
    case LogicalKind::kFilter: return is_version_time(n.input(), col);
    case LogicalKind::kProject: {
      const auto& e = static_cast<const LogicalProject&>(n).exprs[col];
      return e->kind == ExprKind::kColumnRef && is_version_time(n.input(), e->column_index);
    }
    case LogicalKind::kRank:
      return is_deduplication(static_cast<const LogicalRank&>(n)) && col < n.input().schema.size() &&
             is_version_time(n.input(), col);
    default: return is_time_attribute(n, col);
  }
}

ExprPtr strip_casts(ExprPtr e) {
  while (e->kind == ExprKind::kCast) e = e->args[0];
  return e;
}

}  // namespace

void Binder::Impl::bind_temporal_join(LogicalJoin& join, const Bound& left, const Bound& right, const ast::Join& j,
                                      const ast::NamedTable& versioned) {
  const ast::Expr& as_of = *versioned.system_time;
  if (join.type != LogicalJoin::Type::kInner && join.type != LogicalJoin::Type::kLeft)
    fail(j.right->pos, fmt::format("Temporal table join currently only supports INNER JOIN and LEFT JOIN, but was {}.",
                                   join.type == LogicalJoin::Type::kRight ? "RIGHT JOIN" : "FULL JOIN"));
  // The AS OF expression: the left's time attribute.
  ExprContext ctx;
  ctx.scope = &left.scope;
  ctx.clause = "FOR SYSTEM_TIME AS OF";
  ExprPtr t = bind_expr(as_of, ctx);
  // (A processing-time AS OF is a lookup join, or rejected, in bind_lookup_join.)
  if (t->kind != ExprKind::kColumnRef || !is_time_attribute(*left.plan, t->column_index))
    fail(as_of.pos, "Temporal table join currently only supports 'FOR SYSTEM_TIME AS OF' left table's time attribute "
                    "field");
  const std::size_t left_time = t->column_index;
  const std::size_t nl = left.scope.columns.size();
  // The versioned table: its event-time attribute and its primary key.
  std::optional<std::size_t> right_time;
  for (std::size_t c = 0; c < right.plan->schema.size() && !right_time; ++c)
    if (is_version_time(*right.plan, c)) right_time = c;
  if (!right_time)
    fail(j.right->pos, "Event-Time Temporal Table Join requires both primary key and row time attribute in versioned "
                       "table, but no row time attribute can be found.");
  auto pk = unique_key(*right.plan);
  if (!pk) fail(j.right->pos, "Temporal Table Join requires primary key in versioned table, but no primary key can be found.");
  const LogicalType& lt = left.plan->schema.type(left_time);
  const LogicalType& rt = right.plan->schema.type(*right_time);
  if (lt.kind() != rt.kind())
    fail(as_of.pos, fmt::format("Event-Time Temporal Table Join requires same rowtime type in left table and versioned "
                                "table, but the rowtime types are {} *ROWTIME* and {} *ROWTIME*.",
                                lt.with_nullable(true).to_string(), rt.with_nullable(true).to_string()));
  // The equi-join keys of the ON condition must cover the primary key.
  std::vector<std::size_t> left_keys, right_keys;
  std::vector<std::string> pairs;
  for (const auto& c : rewrite::conjuncts(join.condition)) {
    if (c->kind != ExprKind::kCall || c->name != "=" || c->args.size() != 2) continue;
    ExprPtr a = strip_casts(c->args[0]), b = strip_casts(c->args[1]);
    if (a->kind != ExprKind::kColumnRef || b->kind != ExprKind::kColumnRef) continue;
    std::size_t x = a->column_index, y = b->column_index;
    if (x >= nl && y < nl) std::swap(x, y);
    if (!(x < nl && y >= nl)) continue;
    left_keys.push_back(x);
    right_keys.push_back(y);
    pairs.push_back(join.schema.name(x) + "=" + join.schema.name(y));
  }
  const SourcePosition on_pos = j.on ? j.on->pos : j.right->pos;
  if (left_keys.empty()) fail(on_pos, "Currently the join key in Temporal Table Join can not be empty.");
  std::vector<std::size_t> pk_joined;
  std::vector<std::string> pk_names;
  for (auto k : *pk) {
    pk_joined.push_back(nl + k);
    pk_names.push_back(join.schema.name(nl + k));
  }
  for (auto k : pk_joined)
    if (std::find(right_keys.begin(), right_keys.end(), k) == right_keys.end()) {
      std::string names, cond;
      for (const auto& n : pk_names) names += (names.empty() ? "" : ", ") + n;
      for (const auto& p : pairs) cond += (cond.empty() ? "" : ", ") + p;
      fail(on_pos, fmt::format("Temporal table's primary key [{}] must be included in the equivalence condition of "
                               "temporal join, but current temporal join condition is [{}].",
                               names, cond));
    }
  ExprPtr marker = make_temporal_join_condition(join.schema, left_time, nl + *right_time, pk_joined, left_keys, right_keys);
  std::vector<ExprPtr> all = rewrite::conjuncts(join.condition);
  all.push_back(std::move(marker));
  join.condition = rewrite::conjunction(std::move(all));
}

}  // namespace clink::sql
