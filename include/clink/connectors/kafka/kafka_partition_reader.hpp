#pragma once
// The one Kafka reader behind every Kafka source (the SQL `kafka` / `upsert-kafka` tables
// and the DataStream KafkaSource<T>): partition management without any format. It hands
// out raw messages (key, value, headers, timestamp, topic, partition, offset); what a
// record becomes (columns, a typed value) is its caller's business.
//
// Splits are topic partitions, as Flink's KafkaSource: each checkpointed as the offset
// of the next record to read (and, when bounded, the offset it stops at), so a restore
// at any parallelism deals them over the new readers and each continues exactly after
// its last record. There is no enumerator: every reader lists the topics itself (at
// start and every discovery interval) and takes the partitions it owns by Flink's owner
// rule; the partitions some reader already took are union ("shared") state, so a
// partition is never taken twice, and one that appears while running is read from its
// earliest offset (as Flink).
//
// With a group.id, the offsets of a completed checkpoint are committed back to the
// group (for monitoring and committed-offsets startup, as Flink); the checkpoint itself
// is what a restore reads.
#include <cstddef>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "clink/connectors/kafka/kafka_message.hpp"
#include "clink/runtime/operator.hpp"

namespace clink::kafka {

// Where a partition starts (startup) or, when bounded, stops. Flink's OffsetsInitializer.
struct KafkaOffsetSpec {
  enum class Mode { kEarliest, kLatest, kGroupOffsets, kTimestamp, kSpecificOffsets, kUnbounded };
  Mode mode = Mode::kUnbounded;
  std::int64_t timestamp_ms = 0;                          // kTimestamp
  std::map<KafkaTopicPartition, std::int64_t> specific;  // kSpecificOffsets
  // kGroupOffsets (and kSpecificOffsets' partitions not listed, which default to
  // "earliest"): where a partition without a committed offset starts: "earliest",
  // "latest" or "none" (fail). Empty: the client's 'auto.offset.reset', else "none".
  std::string reset;
};

struct KafkaReaderConfig {
  std::map<std::string, std::string> client;  // librdkafka (= Kafka) client properties
  std::vector<std::string> topics;            // the topics read, or
  std::string topic_pattern;                  // a regex over topic names ('__' ones never match)
  KafkaOffsetSpec startup{.mode = KafkaOffsetSpec::Mode::kGroupOffsets};
  KafkaOffsetSpec bounded;  // kUnbounded: never ends
  std::int64_t discovery_interval_ms = 5 * 60 * 1000;  // <= 0: list the topics once
  std::string what;  // the source in messages: "kafka source of table `orders`"
};

// One subtask's share of the partitions. Polled on the source task's thread.
class KafkaPartitionReader {
 public:
  using Status = SourceOperator::PollStatus;

  // `config` must outlive the reader.
  KafkaPartitionReader(const KafkaReaderConfig& config, int subtask, int parallelism);
  ~KafkaPartitionReader();
  KafkaPartitionReader(const KafkaPartitionReader&) = delete;
  KafkaPartitionReader& operator=(const KafkaPartitionReader&) = delete;

  // Creates the consumer (throws ClinkError naming a property it rejects).
  void open();
  // Lists the topics when due, then reads what the client has (at most `max_messages`,
  // not waiting). The records among them, in order per partition, are records() until
  // the next poll. kEnd once a bounded reader has read every split to its stop.
  Status poll(std::size_t max_messages);
  std::span<const KafkaMessage> records() const;
  void close();

  // The unfinished splits, each continuing exactly after its last record handed out.
  std::vector<std::string> snapshot_splits() const;
  void restore_splits(const std::vector<std::string>& splits);
  // The partitions taken so far (union state): each reader writes those it took,
  // subtask 0 also the restored ones, so the union holds each about once.
  std::vector<std::string> snapshot_shared() const;
  void restore_shared(const std::vector<std::string>& items);
  // After snapshot_splits for checkpoint `checkpoint_id` / when it completed: commits
  // that checkpoint's offsets to the group (when the client has a group.id).
  void snapshot_taken(std::int64_t checkpoint_id);
  void notify_checkpoint_complete(std::int64_t checkpoint_id);

  // The splits held now (KafkaMessage::split of each), for per-split watermarks.
  const std::vector<std::uint64_t>& held_splits() const;
  // Their partitions, in the same order (they change only when the splits do).
  const std::vector<KafkaTopicPartition>& held_partitions() const;
  const std::string& what() const;
  // Where to store the source's backlog: Flink's pendingRecords (the records between each
  // held partition's next offset and its high watermark, or its stop offset when bounded,
  // summed) and the Kafka consumer's records-lag-max (the largest high watermark - next
  // offset over the held partitions). Updated by poll() at most once a second from the
  // offsets the client already has (no request to the broker).
  void report_backlog_to(std::atomic<std::int64_t>* pending_records, std::atomic<std::int64_t>* records_lag_max);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace clink::kafka
