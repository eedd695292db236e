#pragma once
// The one Kafka writer behind every Kafka sink (the SQL `kafka` / `upsert-kafka` tables
// and the DataStream KafkaSink<T>): producing raw records (key, value, headers,
// timestamp, partition) with a delivery guarantee, on the project's two-phase-commit
// sink framework (api/two_phase_commit_sink.hpp: its writer calls begin_transaction,
// pre_commit, commit and abort here). What a record's bytes are is its caller's business.
//
// Delivery guarantees:
//   none           records are sent and not waited for;
//   at-least-once  every checkpoint waits until the broker acknowledged all records sent
//                  before its barrier (a replay after a failure may send some again);
//   exactly-once   each checkpoint interval writes one Kafka transaction, whose id is
//                  "<transactional id prefix>-<subtask>-<checkpoint>" as Flink's
//                  KafkaSink: flushed at the barrier (pre-commit), its producer id and
//                  epoch kept in the checkpoint, committed once the checkpoint completed.
//                  A restored writer commits what its checkpoint pre-committed (the
//                  producer that opened it is gone, so through the transaction
//                  coordinator: kafka_transaction_admin.hpp) and aborts the transactions
//                  later attempts left open, so read_committed readers see every record once.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "clink/connectors/kafka/kafka_message.hpp"

namespace clink::kafka {

enum class DeliveryGuarantee { kNone, kAtLeastOnce, kExactlyOnce };

// Where records go: kDefault and kRoundRobin leave it to the producer (the Java client's
// murmur2 of the key; keyless records spread), as Flink; kFixed: subtask i writes
// partition i mod the partition count (Flink's FlinkFixedPartitioner). A record given
// its own partition goes there whatever this says.
enum class KafkaPartitioner { kDefault, kFixed, kRoundRobin };

inline constexpr std::int32_t kAnyPartition = -1;  // the partitioner decides

struct KafkaWriterConfig {
  std::map<std::string, std::string> client;  // librdkafka (= Kafka) client properties
  std::string topic;
  DeliveryGuarantee delivery = DeliveryGuarantee::kAtLeastOnce;  // Flink's default
  std::string transactional_id_prefix;  // required for exactly-once
  KafkaPartitioner partitioner = KafkaPartitioner::kDefault;
  std::string what;  // the sink in messages: "kafka sink of table `totals`"
};

// One subtask's producer. Used on the sink task's thread.
class KafkaRecordWriter {
 public:
  // `config` must outlive the writer.
  KafkaRecordWriter(const KafkaWriterConfig& config, int subtask, int parallelism);
  ~KafkaRecordWriter();
  KafkaRecordWriter(const KafkaRecordWriter&) = delete;
  KafkaRecordWriter& operator=(const KafkaRecordWriter&) = delete;

  // Creates the producer of a non-transactional writer (throws ClinkError naming a
  // property the client rejects, or a topic that does not exist). `restored_checkpoint`:
  // the checkpoint the sink restored (0: none); transactions earlier attempts left open
  // after it are aborted before the first one begins.
  void open(std::int64_t restored_checkpoint);
  // The two-phase-commit protocol (TransactionalSinkWriter's calls).
  void begin_transaction(std::int64_t transaction_id);
  std::string pre_commit();  // flushes; exactly-once: the committable, empty when nothing was written
  void commit(const std::string& committable);
  void abort();
  void close();

  // Queues a record (key and value copied into the writer's arena; nullopt: none) for
  // send_queued(), which hands every queued record to the producer in one call.
  void add(std::optional<std::string_view> key, std::optional<std::string_view> value,
           std::int32_t partition = kAnyPartition);
  // Sends one record now, with its timestamp (0: the producer's clock) and headers
  // (librdkafka's batch call takes neither). Queued records go first.
  void send(std::optional<std::string_view> key, std::optional<std::string_view> value, std::int64_t timestamp_ms,
            std::span<const KafkaHeader> headers, std::int32_t partition = kAnyPartition);
  // Sends the queued records and serves delivery reports; throws ClinkError for a record
  // the broker refused. Call once per input batch.
  void send_queued();

  // The topic's partition count (known once the first producer was created).
  std::int32_t partition_count() const;
  const std::string& what() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace clink::kafka
