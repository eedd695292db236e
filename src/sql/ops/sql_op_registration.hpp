#pragma once
// Internal: each SQL operator's source file registers its factory.
#include "clink/runtime/operator_registry.hpp"

namespace clink::sql {
void register_sql_window_assign(OperatorRegistry& r);
void register_sql_window_aggregate(OperatorRegistry& r);
void register_sql_group_aggregate(OperatorRegistry& r);
void register_sql_limit_sort(OperatorRegistry& r);
}  // namespace clink::sql
