#pragma once
// Cost-based join reordering over trees of inner joins (three or more inputs).
//
// The inputs and the conjuncts of every ON condition are collected; a dynamic program
// over subsets (bushy trees, up to kMaxReorderInputs inputs) picks the order with the
// smallest sum of intermediate result sizes (cardinality.hpp: declared or ANALYZE
// statistics). Joins between unconnected inputs (cross products) are only considered
// when no connected split exists. Each conjunct is evaluated at the lowest join that
// sees all its columns. A projection on top restores the original column order. The
// plan only changes when the chosen order is strictly cheaper than the written one.
#include "clink/sql/planner/logical_plan.hpp"

namespace clink::sql {

inline constexpr std::size_t kMaxReorderInputs = 10;

LogicalPtr reorder_joins(const LogicalPtr& plan);

// The cost the reorderer assigns a join tree: the sum of its joins' estimated rows.
double join_tree_cost(const LogicalNode& plan);

}  // namespace clink::sql
