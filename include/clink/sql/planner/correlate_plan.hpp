#pragma once
// The Correlate node's planning helpers (LogicalCorrelate in logical_plan.hpp): its EXPLAIN
// line, as Flink's StreamPhysicalCorrelate prints it:
//   Correlate(invocation=[$UNNEST_ROWS$1($cor0.arr)], correlate=[table($UNNEST_ROWS$1($cor0.arr))],
//             select=[id,arr,f0], rowType=[RecordType(INTEGER id, INTEGER ARRAY arr, INTEGER f0)],
//             joinType=[INNER])
#include <string>

#include "clink/sql/planner/logical_plan.hpp"

namespace clink::sql {

std::string describe_correlate(const LogicalCorrelate& c);
// A type as Calcite's RelDataType prints it in Flink's plans: INTEGER, VARCHAR(2147483647),
// INTEGER ARRAY, (VARCHAR(2147483647), INTEGER) MAP, RecordType:peek_no_expand(INTEGER a).
std::string rel_type_text(const LogicalType& t);

}  // namespace clink::sql
