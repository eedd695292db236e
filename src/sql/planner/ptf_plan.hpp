#pragma once
// Internal: the EXPLAIN line of a process table function call (LogicalProcessTableFunction).
#include <string>

#include "clink/sql/planner/logical_plan.hpp"

namespace clink::sql {

// "ProcessTableFunction(function=[f], uid=[f], partitionBy=[name], onTime=[ts], args=[3], select=[name, EXPR$0, rowtime])"
std::string describe_process_table_function(const LogicalNode& node);

}  // namespace clink::sql
