#pragma once
// A Kafka record as the shared reader hands it out and the shared writer takes its
// headers: views, no copies (kafka_partition_reader.hpp, kafka_record_writer.hpp).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace clink::kafka {

struct KafkaTopicPartition {
  std::string topic;
  std::int32_t partition = 0;
  auto operator<=>(const KafkaTopicPartition&) const = default;
};

enum class KafkaTimestampType { kNone, kCreateTime, kLogAppendTime };
// "CreateTime", "LogAppendTime", "NoTimestampType" (Kafka's names).
std::string_view timestamp_type_name(KafkaTimestampType t);

struct KafkaHeader {
  std::string_view name;
  std::optional<std::string_view> value;  // nullopt: a header without value
};

// One record as read: views into the client's message, valid until the reader's next
// poll (or close). Nothing here allocates.
struct KafkaMessage {
  std::string_view topic;
  std::int32_t partition = 0;
  std::int64_t offset = 0;
  std::int64_t timestamp_ms = -1;  // -1: none
  KafkaTimestampType timestamp_type = KafkaTimestampType::kNone;
  std::optional<std::string_view> key;    // nullopt: no key
  std::optional<std::string_view> value;  // nullopt: no value (a tombstone)
  std::uint64_t split = 0;  // identifies the partition among the reader's (per-split watermarks)
  const void* native = nullptr;  // the client's message (headers are read from it on demand)

  // Header `i` into `out`; false past the last one.
  bool header(std::size_t i, KafkaHeader& out) const;
  // Every header, in order (allocates: for callers that want them all).
  std::vector<KafkaHeader> headers() const;
  // "topic orders partition 1 offset 42" (for errors).
  std::string position() const;
};

}  // namespace clink::kafka
