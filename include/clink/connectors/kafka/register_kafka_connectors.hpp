#pragma once
// Registers the Kafka SQL connectors' factories: sql_kafka_source, sql_kafka_sink,
// sql_upsert_kafka_source, sql_upsert_kafka_sink.
#include "clink/runtime/operator_registry.hpp"

namespace clink::sql {
void register_kafka_connectors(OperatorRegistry& registry);
}
