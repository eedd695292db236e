#pragma once
// Flink's KafkaSource<T> for the DataStream API, on the one Kafka reader the SQL `kafka`
// table uses too (kafka_partition_reader.hpp: splits per partition, startup and bounded
// offsets, discovery, union state of the partitions taken, group commits):
//
//   auto source = clink::KafkaSource<std::string>::builder()
//                     .set_bootstrap_servers("localhost:9092")
//                     .set_topics({"input"})
//                     .set_group_id("my-group")
//                     .set_starting_offsets(clink::OffsetsInitializer::earliest())
//                     .set_bounded(clink::OffsetsInitializer::latest())
//                     .set_deserializer(clink::KafkaRecordDeserializationSchema<std::string>::value_only())
//                     .build();
//   env.from_source<std::string>(source, "Kafka Source");
//
// Each record carries its Kafka timestamp as event time (as Flink's source does; a
// WatermarkStrategy without a timestamp assigner uses it) and its topic partition as
// Record::partition (the partition number when one topic is read), so the
// PartitionAwareBoundedOutOfOrdernessStrategy watermarks each partition on its own.
#include <concepts>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "clink/api/source.hpp"
#include "clink/connectors/kafka/kafka_partition_reader.hpp"
#include "clink/core/error.hpp"
#include "clink/formats/line_decoder.hpp"

namespace clink {

using KafkaMessage = kafka::KafkaMessage;
using KafkaOffsetSpec = kafka::KafkaOffsetSpec;
using KafkaTopicPartition = kafka::KafkaTopicPartition;

// Flink's OffsetsInitializer: where each partition starts or, given to set_bounded, stops.
struct OffsetsInitializer {
  static KafkaOffsetSpec earliest() { return {.mode = KafkaOffsetSpec::Mode::kEarliest}; }
  static KafkaOffsetSpec latest() { return {.mode = KafkaOffsetSpec::Mode::kLatest}; }
  // The group's committed offsets; a partition without one starts at `reset`:
  // "earliest", "latest" or "none" (fail). Flink's committedOffsets(OffsetResetStrategy).
  static KafkaOffsetSpec committed_offsets(std::string reset = "none") {
    return {.mode = KafkaOffsetSpec::Mode::kGroupOffsets, .reset = std::move(reset)};
  }
  // The first record at or after `timestamp_ms` (the partition's end when none is).
  static KafkaOffsetSpec timestamp(std::int64_t timestamp_ms) {
    return {.mode = KafkaOffsetSpec::Mode::kTimestamp, .timestamp_ms = timestamp_ms};
  }
  // These offsets; a partition not listed starts at `reset` (committed, else this).
  static KafkaOffsetSpec offsets(std::map<KafkaTopicPartition, std::int64_t> offsets, std::string reset = "earliest") {
    return {.mode = KafkaOffsetSpec::Mode::kSpecificOffsets, .specific = std::move(offsets), .reset = std::move(reset)};
  }
};

// Flink's KafkaRecordDeserializationSchema: what a message becomes. Each reader makes
// its own deserializer, so one may keep state (a parser's buffers).
template <class T>
class KafkaRecordDeserializationSchema {
 public:
  // Reads `message` into `out` (a default T, or the previous record's moved-from value);
  // false: the message gives no record. An exception fails the job, naming the message's
  // topic, partition and offset.
  using Deserializer = std::function<bool(const KafkaMessage& message, T& out)>;

  // Any function of the message to std::optional<T> (nullopt: no record).
  template <class F>
    requires std::is_invocable_r_v<std::optional<T>, F&, const KafkaMessage&>
  static KafkaRecordDeserializationSchema of(F fn) {
    return per_reader([fn] {
      return Deserializer([fn](const KafkaMessage& m, T& out) mutable {
        std::optional<T> v = fn(m);
        if (!v) return false;
        out = std::move(*v);
        return true;
      });
    });
  }
  // A function writing into the record in place (no temporary T).
  static KafkaRecordDeserializationSchema in_place(Deserializer fn) {
    return per_reader([fn] { return fn; });
  }
  // `make` is called once per reader.
  static KafkaRecordDeserializationSchema per_reader(std::function<Deserializer()> make) {
    KafkaRecordDeserializationSchema s;
    s.make_ = std::move(make);
    return s;
  }
  // Flink's valueOnly(...): the message's value in a line format (file formats,
  // line_format.hpp): text = the value as a string (Flink's SimpleStringSchema), json =
  // one JSON value of the spec types (int64, string, event, word_count, ...). A message
  // without value gives no record. Throws ClinkError now if T has no such decoding.
  static KafkaRecordDeserializationSchema value_only(LineFormat format = LineFormat::kText) {
    make_line_decoder<T>(format);
    return per_reader([format] {
      std::shared_ptr<LineDecoder<T>> decoder = make_line_decoder<T>(format);
      auto reason = std::make_shared<std::string>();
      return Deserializer([decoder, reason](const KafkaMessage& m, T& out) {
        if (!m.value) return false;
        if (!decoder->decode(*m.value, m.value->size(), out, *reason))
          throw ClinkError(std::string("malformed ") + decoder->format_label() + " value: " + *reason);
        return true;
      });
    });
  }

  explicit operator bool() const { return static_cast<bool>(make_); }
  Deserializer make() const { return make_(); }

 private:
  std::function<Deserializer()> make_;
};

template <class T>
class KafkaSource final : public Source<T> {
 public:
  class Builder;
  static Builder builder() { return Builder(); }

  std::unique_ptr<SourceReader<T>> create_reader(int subtask, int parallelism) const override {
    return std::make_unique<Reader>(*this, subtask, parallelism);
  }
  std::string factory_name() const override { return "kafka_source"; }
  const kafka::KafkaReaderConfig& config() const { return config_; }

  KafkaSource(kafka::KafkaReaderConfig config, KafkaRecordDeserializationSchema<T> schema)
      : config_(std::move(config)), schema_(std::move(schema)) {}

 private:
  class Reader;

  kafka::KafkaReaderConfig config_;
  KafkaRecordDeserializationSchema<T> schema_;
};

template <class T>
class KafkaSource<T>::Builder {
 public:
  Builder& set_bootstrap_servers(std::string servers) { return set_property("bootstrap.servers", std::move(servers)); }
  Builder& set_topics(std::vector<std::string> topics) {
    config_.topics = std::move(topics);
    return *this;
  }
  Builder& set_topics(std::string topic) { return set_topics(std::vector<std::string>{std::move(topic)}); }
  // A regex over topic names: every matching topic, also those created while running.
  Builder& set_topic_pattern(std::string regex) {
    config_.topic_pattern = std::move(regex);
    return *this;
  }
  Builder& set_group_id(std::string group) { return set_property("group.id", std::move(group)); }
  Builder& set_starting_offsets(KafkaOffsetSpec spec) {
    config_.startup = std::move(spec);
    return *this;
  }
  // Read up to these offsets, then end (a bounded source).
  Builder& set_bounded(KafkaOffsetSpec spec) {
    config_.bounded = std::move(spec);
    return *this;
  }
  Builder& set_deserializer(KafkaRecordDeserializationSchema<T> schema) {
    schema_ = std::move(schema);
    return *this;
  }
  // A client property (Kafka's names: isolation.level, security.protocol, ...), or
  // Flink's partition.discovery.interval.ms (default 5 minutes, <= 0: list the topics once).
  Builder& set_property(std::string key, std::string value) {
    config_.client[std::move(key)] = std::move(value);
    return *this;
  }
  Builder& set_properties(const std::map<std::string, std::string>& properties) {
    for (const auto& [k, v] : properties) set_property(k, v);
    return *this;
  }
  // How the source is named in errors (default: "kafka source of <topics>").
  Builder& set_name(std::string what) {
    config_.what = std::move(what);
    return *this;
  }

  // Throws ClinkError for a missing or conflicting setting, as Flink's builder.
  std::shared_ptr<KafkaSource<T>> build() const {
    kafka::KafkaReaderConfig c = config_;
    if (!c.client.count("bootstrap.servers")) throw ClinkError("KafkaSource: the bootstrap servers are required");
    if (c.topics.empty() == c.topic_pattern.empty())
      throw ClinkError("KafkaSource: set either the topics or a topic pattern");
    if (!schema_) throw ClinkError("KafkaSource: a deserializer is required");
    if (c.startup.mode == KafkaOffsetSpec::Mode::kUnbounded)
      throw ClinkError("KafkaSource: the starting offsets cannot be unbounded");
    if ((c.startup.mode == KafkaOffsetSpec::Mode::kGroupOffsets || c.bounded.mode == KafkaOffsetSpec::Mode::kGroupOffsets) &&
        !c.client.count("group.id"))
      throw ClinkError("KafkaSource: the committed offsets need a group id (set_group_id)");
    // A bounded source lists its topics once, as Flink's, unless told otherwise.
    c.discovery_interval_ms = c.bounded.mode != KafkaOffsetSpec::Mode::kUnbounded ? 0 : 5 * 60 * 1000;
    if (auto it = c.client.find("partition.discovery.interval.ms"); it != c.client.end()) {
      try {
        c.discovery_interval_ms = std::stoll(it->second);
      } catch (const std::exception&) {
        throw ClinkError("KafkaSource: partition.discovery.interval.ms is not a number: '" + it->second + "'");
      }
    }
    if (c.what.empty()) {
      std::string topics = c.topic_pattern;
      for (const auto& t : c.topics) topics += (topics.empty() ? "" : ";") + t;
      c.what = "kafka source of '" + topics + "'";
    }
    return std::make_shared<KafkaSource<T>>(std::move(c), schema_);
  }

 private:
  // Flink's KafkaSource starts at the earliest offsets unless told otherwise.
  kafka::KafkaReaderConfig config_{.startup = {.mode = KafkaOffsetSpec::Mode::kEarliest}};
  KafkaRecordDeserializationSchema<T> schema_;
};

// Deserializes the shared reader's messages into typed records.
template <class T>
class KafkaSource<T>::Reader final : public SourceReader<T> {
 public:
  using Status = typename SourceReader<T>::Status;

  Reader(const KafkaSource& source, int subtask, int parallelism)
      : source_(source), partitions_(source.config_, subtask, parallelism),
        single_topic_(source.config_.topics.size() == 1 && source.config_.topic_pattern.empty()) {}

  void open(RuntimeContext& ctx) override {
    partitions_.open();
    partitions_.report_backlog_to(&ctx.metrics().pending_records, &ctx.metrics().records_lag_max);
    deserialize_ = source_.schema_.make();
  }

  Status poll(Batch<T>& out, std::size_t max_records) override {
    const Status status = partitions_.poll(max_records);
    // The held partitions as their records' splits, worked out again only when the
    // reader's assignment changed.
    if (partitions_.held_splits() != held_keys_) {
      held_keys_ = partitions_.held_splits();
      held_.clear();
      for (const auto& tp : partitions_.held_partitions()) held_.push_back(record_split(partition_id(tp.topic, tp.partition)));
    }
    const auto messages = partitions_.records();
    std::size_t i = 0;
    try {
      for (; i < messages.size(); ++i) {
        const KafkaMessage& m = messages[i];
        Record<T>& r = out.records.emplace_back();
        if (!deserialize_(m, r.value)) {
          out.records.pop_back();
          continue;
        }
        r.event_time = m.timestamp_ms >= 0 ? m.timestamp_ms : kNoEventTime;
        r.partition = partition_id(m.topic, m.partition);
      }
    } catch (const std::exception& e) {
      throw ClinkError(partitions_.what() + ": cannot deserialize the record at " + messages[i].position() + ": " +
                       e.what());
    }
    return status;
  }

  std::int64_t wait_hint_ms() const override { return 5; }
  void close() override { partitions_.close(); }

  const std::vector<std::uint64_t>& held_splits() const override { return held_; }

  std::optional<std::vector<std::string>> snapshot_splits() const override { return partitions_.snapshot_splits(); }
  void restore_splits(std::vector<std::string> splits) override { partitions_.restore_splits(splits); }
  std::vector<std::string> snapshot_shared() const override { return partitions_.snapshot_shared(); }
  void restore_shared(std::vector<std::string> items) override { partitions_.restore_shared(items); }
  void snapshot_taken(std::int64_t checkpoint_id) override { partitions_.snapshot_taken(checkpoint_id); }
  void notify_checkpoint_complete(std::int64_t checkpoint_id) override {
    partitions_.notify_checkpoint_complete(checkpoint_id);
  }

 private:
  // The partition number when one topic is read; else 11 bits of the topic's hash above
  // the partition's 20, stable across runs (two topics whose bits collide share their
  // partitions' ids, and so their per-split watermarks, on a reader holding both).
  PartitionId partition_id(std::string_view topic, std::int32_t partition) {
    if (single_topic_) return partition;
    if (topic != last_topic_) {
      last_topic_.assign(topic);
      std::uint32_t h = 0;
      for (unsigned char c : topic) h = 31 * h + c;
      topic_bits_ = static_cast<PartitionId>((h & 0x7FF) << 20);
    }
    return topic_bits_ | (partition & 0xFFFFF);
  }

  const KafkaSource& source_;
  kafka::KafkaPartitionReader partitions_;
  const bool single_topic_;
  typename KafkaRecordDeserializationSchema<T>::Deserializer deserialize_;
  std::string last_topic_;  // partition_id's cache: the last topic and its bits
  PartitionId topic_bits_ = 0;
  std::vector<std::uint64_t> held_keys_;  // the shared reader's held splits when held_ was worked out
  std::vector<std::uint64_t> held_;       // record_split of each held partition
};

}  // namespace clink
