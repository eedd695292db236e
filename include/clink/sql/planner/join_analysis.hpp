#pragma once
// What a join's ON condition means to the physical planner, as Flink splits it
// (JoinInfo / IntervalJoinUtil):
//   - equi-key pairs `l = r` (or `l IS NOT DISTINCT FROM r`) between a left and a right
//     column of the same type: both inputs are hash-partitioned and keyed by them;
//   - time bounds `l.rt >= r.rt + a AND l.rt <= r.rt + b` (BETWEEN, <, >, with
//     INTERVAL offsets) between two event-time attributes: an interval join;
//   - a window join when the keys equate both inputs' window_start and window_end;
//   - the residual: every other conjunct, evaluated over the joined row (left ++ right).
// Analysed on demand from the LogicalJoin (the binder, the changelog derivation, EXPLAIN
// and the physical planner agree because they all call this).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "clink/sql/planner/logical_plan.hpp"

namespace clink::sql {

struct IntervalBounds {
  std::size_t left_time = 0;   // column of the left input
  std::size_t right_time = 0;  // column of the right input
  // left.rt in [right.rt + lower_ms, right.rt + upper_ms] (strict bounds made inclusive
  // by 1 ms, as Flink does for row time).
  std::int64_t lower_ms = 0;
  std::int64_t upper_ms = 0;
};

// A window join (Flink's WindowJoin): both inputs are windowed (window aggregates or
// window TVFs over TIMESTAMP time columns) and the keys equate their window_start and
// window_end columns.
struct WindowJoinBounds {
  std::size_t left_end = 0;   // window_end column of the left input
  std::size_t right_end = 0;  // of the right input
};

// An event-time temporal join (Flink's TemporalJoin): `JOIN v FOR SYSTEM_TIME AS OF
// l.rowtime`. The binder marks it with Flink's __TEMPORAL_JOIN_CONDITION(left_time,
// right_time, __TEMPORAL_JOIN_CONDITION_PRIMARY_KEY(pk...), __TEMPORAL_JOIN_LEFT_KEY(...),
// __TEMPORAL_JOIN_RIGHT_KEY(...)) conjunct in the ON condition, so every rewrite that
// remaps or prunes columns keeps it consistent; it is never part of the residual.
struct TemporalJoinBounds {
  std::size_t left_time = 0;   // the AS OF time attribute, a column of the left input
  std::size_t right_time = 0;  // the versioned table's time attribute, a column of the right input
};
inline constexpr const char* kTemporalJoinCondition = "__TEMPORAL_JOIN_CONDITION";

// The marker conjunct; columns index left ++ right.
ExprPtr make_temporal_join_condition(const Schema& joined, std::size_t left_time, std::size_t right_time,
                                     const std::vector<std::size_t>& primary_key,
                                     const std::vector<std::size_t>& left_keys,
                                     const std::vector<std::size_t>& right_keys);
// Whether the join carries the marker (a temporal join).
bool is_temporal_join(const LogicalJoin& join);

struct JoinAnalysis {
  std::vector<std::size_t> left_keys;   // columns of the left input
  std::vector<std::size_t> right_keys;  // columns of the right input, pairwise with left_keys
  std::vector<bool> filter_nulls;       // per key: `=` (NULL never matches) vs IS NOT DISTINCT FROM
  ExprPtr residual;                     // over left ++ right; null: TRUE
  std::optional<IntervalBounds> interval;
  std::optional<WindowJoinBounds> window;
  std::optional<TemporalJoinBounds> temporal;
};

// The (window_start, window_end) columns of a windowed node's output, if it has them.
std::optional<std::pair<std::size_t, std::size_t>> window_bound_columns(const LogicalNode& node);

JoinAnalysis analyze_join(const LogicalJoin& join);


// "InnerJoin" -> "inner", ... (the operators' `join_type` param).
std::string join_type_param(LogicalJoin::Type type);

}  // namespace clink::sql
