#pragma once
// Flink's KafkaSink<T> for the DataStream API, on the one Kafka writer the SQL `kafka`
// table uses too (kafka_record_writer.hpp: delivery guarantees, a Kafka transaction per
// checkpoint for exactly-once, recovery of pre-committed and lingering transactions):
//
//   auto sink = clink::KafkaSink<std::string>::builder()
//                   .set_bootstrap_servers("localhost:9092")
//                   .set_record_serializer(clink::KafkaRecordSerializationSchema<std::string>::value_only("output"))
//                   .set_delivery_guarantee(clink::DeliveryGuarantee::kExactlyOnce)
//                   .set_transactional_id_prefix("my-job")
//                   .build();
//   stream.sink_to(sink, "Kafka Sink");
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clink/api/two_phase_commit_sink.hpp"
#include "clink/connectors/kafka/kafka_record_writer.hpp"
#include "clink/core/error.hpp"
#include "clink/core/format_value.hpp"
#include "clink/core/type_name.hpp"
#include "clink/formats/json_codec.hpp"
#include "clink/formats/line_format.hpp"

namespace clink {

using DeliveryGuarantee = kafka::DeliveryGuarantee;
using KafkaPartitioner = kafka::KafkaPartitioner;

// One record to write, as a serializer fills it. The writer reuses it from record to
// record (the strings keep their capacity), so serializing allocates nothing per record.
struct KafkaProducerRecord {
  std::string key;
  bool has_key = false;
  std::string value;
  bool has_value = true;  // false: a tombstone
  std::int32_t partition = kafka::kAnyPartition;
  // Preset to the element's event time (as Flink's KafkaSink does), 0 without one: the
  // producer's clock. Records with a timestamp or headers are sent one by one (the
  // client's batch call takes neither); set 0 to write faster in batches.
  std::int64_t timestamp_ms = 0;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;

  void set_key(std::string_view k) {
    key.assign(k);
    has_key = true;
  }
  void set_value(std::string_view v) {
    value.assign(v);
    has_value = true;
  }
};

// Flink's KafkaRecordSerializationSchema: the topic and what an element becomes.
template <class T>
class KafkaRecordSerializationSchema {
 public:
  // Fills `out` (cleared: no key, an empty value) for `value`; false: write nothing.
  using Serializer = std::function<bool(const T& value, EventTime event_time, KafkaProducerRecord& out)>;
  // An element to bytes, appended to `out` (Flink's SerializationSchema).
  using BytesSerializer = std::function<void(const T& value, std::string& out)>;

  class Builder {
   public:
    Builder& set_topic(std::string topic) {
      topic_ = std::move(topic);
      return *this;
    }
    Builder& set_value_serialization_schema(BytesSerializer fn) {
      value_ = std::move(fn);
      return *this;
    }
    Builder& set_key_serialization_schema(BytesSerializer fn) {
      key_ = std::move(fn);
      return *this;
    }
    KafkaRecordSerializationSchema build() const {
      if (!value_) throw ClinkError("KafkaRecordSerializationSchema: a value serialization schema is required");
      return of(topic_, [key = key_, value = value_](const T& v, EventTime, KafkaProducerRecord& out) {
        if (key) {
          key(v, out.key);
          out.has_key = true;
        }
        value(v, out.value);
        return true;
      });
    }

   private:
    std::string topic_;
    BytesSerializer key_;
    BytesSerializer value_;
  };
  static Builder builder() { return Builder(); }

  static KafkaRecordSerializationSchema of(std::string topic, Serializer fn) {
    if (topic.empty()) throw ClinkError("KafkaRecordSerializationSchema: the topic is required");
    KafkaRecordSerializationSchema s;
    s.topic_ = std::move(topic);
    s.serializer_ = std::move(fn);
    return s;
  }
  // The element as the value, without key, in a line format (line_format.hpp): text =
  // its text form (a string as itself, Flink's SimpleStringSchema), json = its JSON form.
  // Throws ClinkError now if T has no JSON form.
  static KafkaRecordSerializationSchema value_only(std::string topic, LineFormat format = LineFormat::kText) {
    if (format == LineFormat::kJson) {
      if constexpr (JsonEncodable<T>) {
        return of(std::move(topic), [](const T& v, EventTime, KafkaProducerRecord& out) {
          encode_json(v, out.value);
          return true;
        });
      } else {
        throw ClinkError("no JSON encoder for record type " + type_name<T>());
      }
    }
    return of(std::move(topic), [](const T& v, EventTime, KafkaProducerRecord& out) {
      format_value(v, out.value);
      return true;
    });
  }

  const std::string& topic() const { return topic_; }
  const Serializer& serializer() const { return serializer_; }
  explicit operator bool() const { return static_cast<bool>(serializer_); }

 private:
  std::string topic_;
  Serializer serializer_;
};

template <class T>
class KafkaSink final : public TransactionalSink<T> {
 public:
  class Builder;
  static Builder builder() { return Builder(); }

  KafkaSink(kafka::KafkaWriterConfig config, KafkaRecordSerializationSchema<T> schema)
      : config_(std::move(config)), schema_(std::move(schema)) {}

  std::unique_ptr<TransactionalSinkWriter<T>> create_writer(int subtask, int parallelism) const override {
    return std::make_unique<Writer>(*this, subtask, parallelism);
  }
  std::string factory_name() const override { return "kafka_sink"; }
  const kafka::KafkaWriterConfig& config() const { return config_; }

 private:
  class Writer;

  kafka::KafkaWriterConfig config_;
  KafkaRecordSerializationSchema<T> schema_;
};

template <class T>
class KafkaSink<T>::Builder {
 public:
  Builder& set_bootstrap_servers(std::string servers) { return set_property("bootstrap.servers", std::move(servers)); }
  Builder& set_record_serializer(KafkaRecordSerializationSchema<T> schema) {
    schema_ = std::move(schema);
    return *this;
  }
  // kNone by default, as Flink's KafkaSink (the SQL sink's default is at-least-once).
  Builder& set_delivery_guarantee(DeliveryGuarantee guarantee) {
    config_.delivery = guarantee;
    return *this;
  }
  // Required for exactly-once: transactional ids are "<prefix>-<subtask>-<checkpoint>",
  // so two sinks writing the same cluster need different prefixes.
  Builder& set_transactional_id_prefix(std::string prefix) {
    config_.transactional_id_prefix = std::move(prefix);
    return *this;
  }
  Builder& set_partitioner(KafkaPartitioner partitioner) {
    config_.partitioner = partitioner;
    return *this;
  }
  // A client property (Kafka's names: transaction.timeout.ms, linger.ms, ...).
  Builder& set_property(std::string key, std::string value) {
    config_.client[std::move(key)] = std::move(value);
    return *this;
  }
  Builder& set_properties(const std::map<std::string, std::string>& properties) {
    for (const auto& [k, v] : properties) set_property(k, v);
    return *this;
  }
  Builder& set_name(std::string what) {
    config_.what = std::move(what);
    return *this;
  }

  // Throws ClinkError for a missing setting, as Flink's builder.
  std::shared_ptr<KafkaSink<T>> build() const {
    kafka::KafkaWriterConfig c = config_;
    if (!c.client.count("bootstrap.servers")) throw ClinkError("KafkaSink: the bootstrap servers are required");
    if (!schema_) throw ClinkError("KafkaSink: a record serializer is required");
    if (c.delivery == DeliveryGuarantee::kExactlyOnce && c.transactional_id_prefix.empty())
      throw ClinkError("KafkaSink: EXACTLY_ONCE delivery guarantee requires a transactional id prefix to be set to "
                       "provide unique transaction names across multiple KafkaSinks writing to the same Kafka cluster");
    c.topic = schema_.topic();
    if (c.what.empty()) c.what = "kafka sink of '" + c.topic + "'";
    return std::make_shared<KafkaSink<T>>(std::move(c), schema_);
  }

 private:
  kafka::KafkaWriterConfig config_{.delivery = DeliveryGuarantee::kNone};
  KafkaRecordSerializationSchema<T> schema_;
};

// Serializes each element into a reused KafkaProducerRecord and hands its bytes to the
// shared record writer.
template <class T>
class KafkaSink<T>::Writer final : public TransactionalSinkWriter<T> {
 public:
  Writer(const KafkaSink& sink, int subtask, int parallelism)
      : serialize_(sink.schema_.serializer()), records_(sink.config_, subtask, parallelism) {}

  void open(RuntimeContext& ctx) override { records_.open(ctx.restored_checkpoint_id()); }
  void begin_transaction(std::int64_t transaction_id) override { records_.begin_transaction(transaction_id); }

  void write(const Batch<T>& batch) override {
    for (const Record<T>& r : batch.records) {
      out_.key.clear();
      out_.has_key = false;
      out_.value.clear();
      out_.has_value = true;
      out_.partition = kafka::kAnyPartition;
      out_.timestamp_ms = r.has_event_time() && r.event_time > 0 ? r.event_time : 0;
      out_.headers.clear();
      if (!serialize_(r.value, r.event_time, out_)) continue;
      const auto key = out_.has_key ? std::optional<std::string_view>(out_.key) : std::nullopt;
      const auto value = out_.has_value ? std::optional<std::string_view>(out_.value) : std::nullopt;
      if (out_.timestamp_ms == 0 && out_.headers.empty()) {
        records_.add(key, value, out_.partition);
        continue;
      }
      headers_.clear();
      for (const auto& [name, v] : out_.headers)
        headers_.push_back({name, v ? std::optional<std::string_view>(*v) : std::nullopt});
      records_.send(key, value, out_.timestamp_ms, headers_, out_.partition);
    }
    records_.send_queued();
  }

  std::string pre_commit() override { return records_.pre_commit(); }
  void commit(const std::string& committable) override { records_.commit(committable); }
  void abort() override { records_.abort(); }
  void close() override { records_.close(); }

 private:
  typename KafkaRecordSerializationSchema<T>::Serializer serialize_;
  kafka::KafkaRecordWriter records_;
  KafkaProducerRecord out_;
  std::vector<kafka::KafkaHeader> headers_;
};

}  // namespace clink
