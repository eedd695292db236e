#pragma once
// Registers the jdbc (PostgreSQL) SQL connectors' factories: sql_jdbc_sink.
#include "clink/runtime/operator_registry.hpp"

namespace clink::sql {
void register_jdbc_connectors(OperatorRegistry& registry);
}
