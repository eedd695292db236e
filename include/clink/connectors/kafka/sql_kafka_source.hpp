#pragma once
// Flink's `kafka` and `upsert-kafka` table sources over librdkafka.
//
// Splits are topic partitions, as Flink's KafkaSource: each checkpointed as the offset
// of the next record to read (and, when bounded, the offset it stops at), so a restore
// at any parallelism deals them over the new readers and each continues exactly after
// its last row. There is no enumerator: every reader lists the topics itself (at start
// and every `scan.topic-partition-discovery.interval`) and takes the partitions it owns
// by Flink's owner rule; the partitions some reader already took are union state, so a
// partition is never taken twice, and one that appears while running is read from its
// earliest offset (as Flink).
//
// Each record's key and value are decoded by their formats (record_format.hpp) straight
// into the batch's columns; metadata columns (topic, partition, offset, timestamp,
// timestamp-type, headers, leader-epoch) follow the physical ones. A record that does
// not decode goes to the dead-letter output when the planner wired it, else fails the
// job naming topic, partition and offset (the formats' ignore-parse-errors skips it).
//
// With a group.id, the offsets of a completed checkpoint are committed back to the
// group (for monitoring and `group-offsets` startup, as Flink); the checkpoint itself is
// what a restore reads.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "clink/connectors/sql/sql_source.hpp"
#include "clink/connectors/kafka/kafka_formats.hpp"
#include "clink/formats/record_format.hpp"

namespace clink::sql {

struct KafkaTopicPartition {
  std::string topic;
  std::int32_t partition = 0;
  auto operator<=>(const KafkaTopicPartition&) const = default;
};

// Where a partition starts (scan.startup.mode) or, when bounded, stops (scan.bounded.mode).
struct KafkaOffsetSpec {
  enum class Mode { kEarliest, kLatest, kGroupOffsets, kTimestamp, kSpecificOffsets, kUnbounded };
  Mode mode = Mode::kUnbounded;
  std::int64_t timestamp_ms = 0;                          // kTimestamp
  std::map<KafkaTopicPartition, std::int64_t> specific;  // kSpecificOffsets
};

// What a Kafka metadata column reads.
enum class KafkaMetadata { kTopic, kPartition, kOffset, kTimestamp, kTimestampType, kHeaders, kLeaderEpoch };

struct KafkaSourceConfig {
  std::map<std::string, std::string> client;  // librdkafka properties (the table's properties.*)
  std::vector<std::string> topics;            // topic, or
  std::string topic_pattern;                  // topic-pattern (a regex over topic names)
  KafkaOffsetSpec startup{.mode = KafkaOffsetSpec::Mode::kGroupOffsets};
  KafkaOffsetSpec bounded;  // kUnbounded: never ends
  std::int64_t discovery_interval_ms = 5 * 60 * 1000;  // <= 0: list the topics once

  SchemaPtr output_schema;  // the physical columns, then the metadata ones
  KafkaMessageFormats formats;
  std::vector<KafkaMetadata> metadata;  // the columns after the physical ones
  bool upsert = false;  // upsert-kafka: a record without value (tombstone) deletes its key
  bool dead_letter_wired = false;
  std::string what;  // the source in messages: "kafka source of table `orders`"
};

class KafkaSqlSource final : public SqlSource {
 public:
  explicit KafkaSqlSource(KafkaSourceConfig config);
  std::unique_ptr<SqlSourceReader> create_reader(int subtask, int parallelism) const override;
  const SchemaPtr& output_schema() const override { return config_.output_schema; }
  std::string factory_name() const override { return config_.upsert ? "sql_upsert_kafka_source" : "sql_kafka_source"; }
  const KafkaSourceConfig& config() const { return config_; }

 private:
  KafkaSourceConfig config_;
};

}  // namespace clink::sql
