#pragma once
// Internal: the sql_process_table_function operator's params for a process table function
// call (src/sql/ops/sql_process_table_function.cpp reads them), without input_schemas.
#include <nlohmann/json.hpp>

#include "clink/sql/common/session_config.hpp"
#include "clink/sql/planner/logical_plan.hpp"

namespace clink::sql {

// The first table argument's clauses at the top level (partition_keys, order_keys,
// on_time); the further ones (Flink's multi-input PTFs) in "more_tables".
nlohmann::json process_table_function_params(const LogicalProcessTableFunction& f, const SessionConfig& session);

}  // namespace clink::sql
