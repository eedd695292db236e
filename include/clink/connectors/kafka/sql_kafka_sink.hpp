#pragma once
// Flink's `kafka` and `upsert-kafka` table sinks: the shared record writer
// (kafka_record_writer.hpp: delivery guarantees, Kafka transactions per checkpoint,
// recovery) plus encoding rows with the key and value formats.
//
// upsert-kafka writes each +I / +U as the row keyed by the PRIMARY KEY and each -D as a
// tombstone (the key, no value), and so each -U, as Flink's; a -U directly followed by its
// key's +U is left out (the +U replaces the row), so a -U whose +U a filter removed still
// deletes the row that no longer qualifies.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "clink/api/two_phase_commit_sink.hpp"
#include "clink/connectors/kafka/kafka_formats.hpp"
#include "clink/connectors/kafka/kafka_record_writer.hpp"
#include "clink/connectors/sql/sql_transactional_batch.hpp"
#include "clink/formats/record_format.hpp"
#include "clink/sql/common/column_batch.hpp"

namespace clink::sql {

struct KafkaSinkConfig {
  using Delivery = kafka::DeliveryGuarantee;
  using Partitioner = kafka::KafkaPartitioner;

  kafka::KafkaWriterConfig writer;  // the table's topic, properties.* and sink.* options
  SchemaPtr input_schema;
  KafkaMessageFormats formats;
  bool upsert = false;
  // Writable metadata: input columns written as each record's timestamp (TIMESTAMP_LTZ)
  // and headers (MAP<STRING, BYTES>); absent: the producer's time, no headers.
  std::optional<std::size_t> timestamp_column;
  std::optional<std::size_t> headers_column;
  // upsert-kafka's sink.buffer-flush.max-rows / .interval (both > 0, or neither): the
  // last change per key is kept and written when that many keys are buffered, when the
  // interval has passed at a write, and at every checkpoint.
  std::int64_t buffer_flush_max_rows = 0;
  std::int64_t buffer_flush_interval_ms = 0;
};

class KafkaSqlSink final : public TransactionalSink<ColumnBatch> {
 public:
  explicit KafkaSqlSink(KafkaSinkConfig config) : config_(std::move(config)) {}
  std::unique_ptr<TransactionalSinkWriter<ColumnBatch>> create_writer(int subtask, int parallelism) const override;
  std::string factory_name() const override { return config_.upsert ? "sql_upsert_kafka_sink" : "sql_kafka_sink"; }
  const KafkaSinkConfig& config() const { return config_; }

 private:
  KafkaSinkConfig config_;
};

}  // namespace clink::sql
