#pragma once
// Registers the SQL connector factories (docs/sql-runtime-contract.md):
// sql_filesystem_source, sql_datagen_source, sql_filesystem_sink, sql_print_sink,
// sql_blackhole_sink, sql_collect_sink, sql_dead_letter_sink.
#include "clink/runtime/operator_registry.hpp"

namespace clink::sql {
void register_sql_connectors(OperatorRegistry& registry);
}
