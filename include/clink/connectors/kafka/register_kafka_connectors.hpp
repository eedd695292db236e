#pragma once
// Registers the Kafka connectors' factories: the SQL ones (sql_kafka_source,
// sql_kafka_sink, sql_upsert_kafka_source, sql_upsert_kafka_sink) and the DataStream ones
// (kafka_source, kafka_sink), all on the one Kafka reader and writer.
#include "clink/runtime/operator_registry.hpp"

namespace clink::sql {
void register_kafka_connectors(OperatorRegistry& registry);
}

namespace clink {
void register_kafka_stream_connectors(OperatorRegistry& registry);
}
