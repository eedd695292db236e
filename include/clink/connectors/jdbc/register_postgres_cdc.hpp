#pragma once
// Registers the `postgres-cdc` SQL connector's factory: sql_postgres_cdc_source.
#include "clink/runtime/operator_registry.hpp"

namespace clink::sql {
void register_postgres_cdc_connector(OperatorRegistry& registry);
}
