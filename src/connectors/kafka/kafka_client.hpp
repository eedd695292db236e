#pragma once
// librdkafka handles for the Kafka connectors: owned handles, a client built from the
// table's properties, and the error text of a response code. Private to the connectors.
#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace clink::kafka {

struct RdKafkaDestroy {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
using KafkaHandle = std::unique_ptr<rd_kafka_t, RdKafkaDestroy>;

struct PartitionListDestroy {
  void operator()(rd_kafka_topic_partition_list_t* l) const { rd_kafka_topic_partition_list_destroy(l); }
};
using PartitionList = std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDestroy>;
inline PartitionList new_partition_list(int capacity) {
  return PartitionList(rd_kafka_topic_partition_list_new(capacity));
}

// A consumer or producer configured with `properties` (librdkafka's names, which are
// Kafka's: bootstrap.servers, group.id, ...). `what` names the connector in errors
// ("kafka source of topic 'orders'"). Throws ClinkError naming a property it rejects.
// `configure` sets what properties cannot (callbacks, their opaque).
KafkaHandle make_kafka_client(rd_kafka_type_t type, const std::map<std::string, std::string>& properties,
                              std::string_view what, const std::function<void(rd_kafka_conf_t*)>& configure = {});

std::string kafka_error_text(rd_kafka_resp_err_t err);

// Java's String.hashCode of an ASCII / UTF-8 topic name (for Flink's split owner rule).
inline std::int32_t java_string_hash(std::string_view s) {
  std::uint32_t h = 0;
  for (unsigned char c : s) h = 31 * h + c;
  return static_cast<std::int32_t>(h);
}

// The subtask that reads a partition, as Flink's KafkaSourceEnumerator.getSplitOwner:
// a topic's partitions go round-robin from a start subtask given by the topic's hash.
inline int kafka_split_owner(std::string_view topic, std::int32_t partition, int parallelism) {
  const int start = static_cast<int>(((static_cast<std::int64_t>(java_string_hash(topic)) * 31) & 0x7FFFFFFF) %
                                     parallelism);
  return (start + partition) % parallelism;
}

}  // namespace clink::kafka
