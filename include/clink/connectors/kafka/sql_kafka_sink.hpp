#pragma once
// Flink's `kafka` and `upsert-kafka` table sinks over librdkafka, on the project's
// two-phase-commit sink framework (api/two_phase_commit_sink.hpp).
//
// sink.delivery-guarantee:
//   none           records are sent and not waited for;
//   at-least-once  every checkpoint waits until the broker acknowledged all records sent
//                  before its barrier (a replay after a failure may send some again);
//   exactly-once   each checkpoint interval writes one Kafka transaction, whose id is
//                  "<sink.transactional-id-prefix>-<subtask>-<checkpoint>" as Flink's
//                  KafkaSink: flushed at the barrier (pre-commit), its producer id and
//                  epoch kept in the checkpoint, committed once the checkpoint completed.
//                  A restored sink commits what its checkpoint pre-committed (the
//                  producer that opened it is gone, so through the transaction
//                  coordinator: kafka_transaction_admin.hpp) and aborts the transactions
//                  later attempts left open, so read_committed readers see every row once.
//
// upsert-kafka writes each +I / +U as the row keyed by the PRIMARY KEY and each -D as a
// tombstone (the key, no value); -U is dropped, the +U after it replaces the row.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clink/api/two_phase_commit_sink.hpp"
#include "clink/connectors/sql/sql_transactional_batch.hpp"
#include "clink/connectors/kafka/kafka_formats.hpp"
#include "clink/formats/record_format.hpp"
#include "clink/sql/common/column_batch.hpp"

namespace clink::sql {

struct KafkaSinkConfig {
  enum class Delivery { kNone, kAtLeastOnce, kExactlyOnce };
  // sink.partitioner: default and round-robin leave it to the producer (by the key's
  // murmur2 hash; keyless records spread), as Flink; fixed: subtask i writes partition
  // i mod the partition count (Flink's FlinkFixedPartitioner).
  enum class Partitioner { kDefault, kFixed, kRoundRobin };

  std::map<std::string, std::string> client;  // librdkafka properties (the table's properties.*)
  std::string topic;
  SchemaPtr input_schema;
  KafkaMessageFormats formats;
  Delivery delivery = Delivery::kAtLeastOnce;  // Flink's default
  std::string transactional_id_prefix;
  Partitioner partitioner = Partitioner::kDefault;
  bool upsert = false;
  // upsert-kafka's sink.buffer-flush.max-rows / .interval (both > 0, or neither): the
  // last change per key is kept and written when that many keys are buffered, when the
  // interval has passed at a write, and at every checkpoint.
  // Writable metadata: input columns written as each record's timestamp (TIMESTAMP_LTZ)
  // and headers (MAP<STRING, BYTES>); absent: the producer's time, no headers.
  std::optional<std::size_t> timestamp_column;
  std::optional<std::size_t> headers_column;
  std::int64_t buffer_flush_max_rows = 0;
  std::int64_t buffer_flush_interval_ms = 0;
  std::string table;  // for messages
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
