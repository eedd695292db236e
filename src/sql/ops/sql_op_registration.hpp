#pragma once
// Internal: each SQL operator's source file registers its factory.
#include "clink/runtime/operator_registry.hpp"

#include "clink/sql/function/function_registry.hpp"

namespace clink::sql {
class SqlOpParams;
// The "session" param ({"table.local-time-zone": ...}) as the expressions' context.
SessionContext session_from_params(const SqlOpParams& p);
void register_sql_calc(OperatorRegistry& r);
void register_sql_watermark_assigner(OperatorRegistry& r);
void register_sql_window_assign(OperatorRegistry& r);
void register_sql_window_aggregate(OperatorRegistry& r);
void register_sql_window_session(OperatorRegistry& r);
void register_sql_group_aggregate(OperatorRegistry& r);
void register_sql_local_group_aggregate(OperatorRegistry& r);
void register_sql_limit_sort(OperatorRegistry& r);
void register_sql_join(OperatorRegistry& r);
void register_sql_semi_anti_join(OperatorRegistry& r);
void register_sql_interval_join(OperatorRegistry& r);
void register_sql_temporal_join(OperatorRegistry& r);
void register_sql_lookup_join(OperatorRegistry& r);
void register_sql_window_join(OperatorRegistry& r);
void register_sql_values_source(OperatorRegistry& r);
void register_sql_rank(OperatorRegistry& r);
void register_sql_deduplicate(OperatorRegistry& r);
void register_sql_changelog_normalize(OperatorRegistry& r);
void register_sql_final_table(OperatorRegistry& r);
void register_sql_window_rank(OperatorRegistry& r);
void register_sql_over_aggregate(OperatorRegistry& r);
void register_sql_over_nontime(OperatorRegistry& r);
void register_sql_correlate(OperatorRegistry& r);
void register_sql_vector_search(OperatorRegistry& r);
void register_sql_match_recognize(OperatorRegistry& r);
void register_sql_process_table_function(OperatorRegistry& r);
}  // namespace clink::sql
