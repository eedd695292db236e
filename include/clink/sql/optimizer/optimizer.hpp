#pragma once
// optimize(): semantics-preserving rewrites of a bound LogicalPlan, in this order:
//   1. constant folding (deterministic sub-expressions over literals are evaluated once,
//      AND/OR with TRUE/FALSE simplified, a filter on TRUE removed);
//   2. predicate pushdown: filters move through projections (inlined), into both sides
//      of inner joins (single-side conjuncts; the rest joins the ON condition), into the
//      preserved side of outer joins, into every UNION ALL input, below GROUP BY when
//      they test grouping keys only, below window TVFs when they test input columns;
//   3. cost-based join reordering over inner joins (join_reorder.hpp);
//   4. join key expressions (join_keys.cpp): `CAST(a AS BIGINT) = b` between the two sides
//      becomes a key by computing the expression as a column below the join;
//   5. split distinct aggregation when enabled (split_distinct.cpp: Flink's
//      `table.optimizer.distinct-agg.split.enabled`);
//   6. projection pushdown: each node keeps the columns its consumers use; a filesystem
//      scan reads only those (its `projected` param); adjacent projections merge.
// A pass that fails on a valid plan is skipped (the plan before it is still valid).
// reuse_scans() then runs over all of a statement's plans together (scan_reuse.cpp).
#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/planner/logical_plan.hpp"

namespace clink::sql {

struct OptimizerOptions {
  bool fold_constants = true;
  bool push_predicates = true;
  bool reorder_joins = true;
  bool push_join_keys = true;
  bool push_projections = true;
  // What folded constants are evaluated with: UNIX_TIMESTAMP('2020-04-15 08:05:00') depends
  // on `table.local-time-zone`, so folding must use the session's zone, not UTC.
  SessionContext session;
  // `table.optimizer.distinct-agg.split.bucket-num` when split distinct aggregation is
  // enabled, else 0 (split_distinct_options() reads both from the session).
  int distinct_agg_split_buckets = 0;
};

LogicalPtr optimize(LogicalPtr plan, const OptimizerOptions& options = {});

// Scans of one table across the optimized plans of one statement (set) that differ only in
// their projection read the union of the columns (Flink's ScanReuser), so they run as one
// source; each consumer still sees its columns (scan_reuse.cpp).
std::vector<LogicalPtr> reuse_scans(const std::vector<LogicalPtr>& plans);

// The individual passes (tests use them one by one).
LogicalPtr fold_constants(const LogicalPtr& plan, const SessionContext& session = {});
ExprPtr fold_constants(const ExprPtr& e, const SessionContext& session = {});
LogicalPtr push_down_predicates(const LogicalPtr& plan);
LogicalPtr push_down_projections(const LogicalPtr& plan);
LogicalPtr push_join_key_expressions(const LogicalPtr& plan);
// Each unbounded GROUP BY with a DISTINCT call becomes a partial aggregate by the keys and
// MOD(HASH_CODE(arg), buckets) and a final one by the keys (Flink's SplitAggregateRule).
LogicalPtr split_distinct_aggregates(const LogicalPtr& plan, int buckets);

}  // namespace clink::sql
