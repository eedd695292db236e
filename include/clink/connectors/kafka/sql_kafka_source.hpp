#pragma once
// Flink's `kafka` and `upsert-kafka` table sources: the shared partition reader
// (kafka_partition_reader.hpp: splits, offsets, discovery, union state, group commits)
// plus decoding. Each record's key and value are decoded by their formats
// (record_format.hpp) straight into the batch's columns; metadata columns (topic,
// partition, offset, timestamp, timestamp-type, headers, leader-epoch) follow the
// physical ones. A record that does not decode goes to the dead-letter output when the
// planner wired it, else fails the job naming topic, partition and offset (the formats'
// ignore-parse-errors skips it).
#include <memory>
#include <string>
#include <vector>

#include "clink/connectors/kafka/kafka_formats.hpp"
#include "clink/connectors/kafka/kafka_partition_reader.hpp"
#include "clink/connectors/sql/sql_source.hpp"
#include "clink/formats/record_format.hpp"

namespace clink::sql {

using kafka::KafkaOffsetSpec;
using kafka::KafkaTopicPartition;

// What a Kafka metadata column reads.
enum class KafkaMetadata { kTopic, kPartition, kOffset, kTimestamp, kTimestampType, kHeaders, kLeaderEpoch };

struct KafkaSourceConfig {
  kafka::KafkaReaderConfig reader;  // the table's topics, properties.* and scan.* options
  SchemaPtr output_schema;          // the physical columns, then the metadata ones
  KafkaMessageFormats formats;
  std::vector<KafkaMetadata> metadata;  // the columns after the physical ones
  bool upsert = false;  // upsert-kafka: a record without value (tombstone) deletes its key
  bool dead_letter_wired = false;
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
