#pragma once
// EXPLAIN text: the optimised plan as a tree, each node with its estimated row count
// and changelog mode, Flink-like:
//   GroupAggregate(groupBy=[a], select=[a, COUNT(*) AS cnt]) [rows=10, changelog=retract]
// A source whose table declares no statistics is marked "no stats" (its row count is
// the kDefaultRowCount placeholder).
#include <string>
#include <vector>

#include "clink/sql/planner/logical_plan.hpp"

namespace clink::sql {

// `props`: the plan's derived properties, shared with the physical planner when the
// caller compiles the plan too (null: derived here).
std::string explain_plan(const LogicalNode& plan, PlanProperties* props = nullptr);
// Several sinks (a statement set): one tree after the other.
std::string explain_plans(const std::vector<LogicalPtr>& plans, PlanProperties* props = nullptr);

}  // namespace clink::sql
