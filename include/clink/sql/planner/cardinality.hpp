#pragma once
// Row-count estimates for the optimiser's join ordering and EXPLAIN.
//
// Sources: a table's statistics (ANALYZE TABLE results, else the declared options
// 'statistics.row-count' and 'statistics.columns.<col>.ndv'); a table without a row
// count is estimated at kDefaultRowCount and flagged (EXPLAIN prints "no stats").
// Selectivities follow Calcite's defaults: `col = literal` 1/ndv (0.15 without ndv),
// ranges 0.5, IS NOT NULL 0.9, other predicates 0.25; AND multiplies, OR adds (capped).
// Joins: |L| * |R| / max(ndv(l), ndv(r)) per equi-condition, cross joins |L| * |R|.
// Aggregates: the product of the keys' ndvs (default: a tenth of the input), capped by
// the input; a global aggregate 1; windowed aggregates the same per window.
#include <optional>

#include "clink/sql/planner/logical_plan.hpp"

namespace clink::sql {

inline constexpr double kDefaultRowCount = 1000.0;

double estimate_rows(const LogicalNode& node);
// The number of distinct values of output column `col`, when statistics say.
std::optional<double> estimate_ndv(const LogicalNode& node, std::size_t col);
// The fraction of rows `condition` (over `input`'s columns) keeps.
double estimate_selectivity(const ExprPtr& condition, const LogicalNode& input);
// Whether the estimate rests on declared/analysed statistics all the way down.
bool has_statistics(const LogicalNode& node);

}  // namespace clink::sql
