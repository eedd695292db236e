// The DataStream Kafka connectors as JobGraphSpec factories, `kafka_source` and
// `kafka_sink`: their params mirror Flink's KafkaSource / KafkaSink builders and build the
// very KafkaSource<T> / KafkaSink<T> a C++ job builds (kafka_source.hpp, kafka_sink.hpp),
// with records in a line format: text (strings) or json (the spec record types).
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "clink/api/spec_types.hpp"
#include "clink/connectors/kafka/kafka_sink.hpp"
#include "clink/connectors/kafka/kafka_source.hpp"
#include "clink/connectors/kafka/register_kafka_connectors.hpp"
#include "clink/runtime/op_params.hpp"
#include "clink/time/watermark_strategy.hpp"

namespace clink {

namespace {

const std::vector<std::string> kJsonTypes = {"int64", "string", "event", "word_count", "window_count", "dead_letter"};

std::string require_string(const OpParams& p, const std::string& name) {
  if (!p.has(name)) p.fail("missing required param '" + name + "'");
  return p.get_string(name, "");
}

// "properties": {"key": "value", ...}: client properties (numbers and booleans as their text).
std::map<std::string, std::string> client_properties(const OpParams& p) {
  std::map<std::string, std::string> out;
  if (!p.has("properties")) return out;
  const auto& props = p.params().at("properties");
  if (!props.is_object()) p.fail("param 'properties' must be an object of client properties, got " + props.dump());
  for (const auto& [k, v] : props.items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
    else if (v.is_number() || v.is_boolean()) out[k] = v.dump();
    else p.fail("param 'properties': '" + k + "' must be a string, got " + v.dump());
  }
  return out;
}

// ---- kafka_source ---------------------------------------------------------------------

OpParams source_params(const OperatorSpecContext& ctx) {
  return OpParams(ctx, "kafka_source",
                  {"bootstrap_servers", "topics", "topic_pattern", "group_id", "starting_offsets",
                   "starting_offsets_timestamp_ms", "bounded", "bounded_timestamp_ms", "properties", "format", "type",
                   "watermarks"});
}

// text reads strings; json reads the named type (required: the values do not say).
std::string source_type(const OpParams& p) {
  if (p.get_choice("format", "text", {"text", "json"}) == "text") return p.get_choice("type", "string", {"string"});
  if (!p.has("type")) p.fail("missing required param 'type' for format json");
  return p.get_choice("type", "", kJsonTypes);
}

// "earliest", "latest", "committed" (+ the client's auto.offset.reset), "timestamp" (+ <name>_timestamp_ms).
KafkaOffsetSpec offsets(const OpParams& p, const std::string& name, const std::string& fallback,
                        const std::map<std::string, std::string>& client) {
  const std::string mode = p.get_choice(name, fallback, {"earliest", "latest", "committed", "timestamp"});
  const std::string ts = name + "_timestamp_ms";
  if (mode != "timestamp" && p.has(ts)) p.fail("param '" + ts + "' needs '" + name + "' = 'timestamp'");
  if (mode == "earliest") return OffsetsInitializer::earliest();
  if (mode == "latest") return OffsetsInitializer::latest();
  if (mode == "timestamp") {
    if (!p.has(ts)) p.fail("'" + name + "' = 'timestamp' needs param '" + ts + "'");
    return OffsetsInitializer::timestamp(p.get_int(ts, 0, 0));
  }
  auto reset = client.find("auto.offset.reset");
  return OffsetsInitializer::committed_offsets(reset == client.end() ? "none" : reset->second);
}

// "watermarks": {"strategy": "bounded" | "monotonic", "out_of_orderness_ms", "idleness_ms"}:
// the strategy each partition gets in the source (Flink's fromSource(source, strategy, ..)).
template <class T>
std::shared_ptr<const WatermarkStrategy<T>> source_watermarks(const OpParams& p) {
  if (!p.has("watermarks")) return nullptr;
  const auto& w = p.params().at("watermarks");
  if (!w.is_object()) p.fail("param 'watermarks' must be an object, got " + w.dump());
  for (const auto& [k, v] : w.items())
    if (k != "strategy" && k != "out_of_orderness_ms" && k != "idleness_ms")
      p.fail("param 'watermarks': unknown key '" + k + "' (known: strategy, out_of_orderness_ms, idleness_ms)");
  auto number = [&](const char* key) -> std::int64_t {
    if (!w.contains(key)) return 0;
    if (!w.at(key).is_number_integer() || w.at(key).get<std::int64_t>() < 0)
      p.fail(std::string("param 'watermarks': '") + key + "' must be an integer >= 0, got " + w.at(key).dump());
    return w.at(key).get<std::int64_t>();
  };
  const std::string kind = w.value("strategy", "bounded");
  std::unique_ptr<WatermarkStrategy<T>> s;
  if (kind == "bounded") s = std::make_unique<BoundedOutOfOrdernessStrategy<T>>(number("out_of_orderness_ms"));
  else if (kind == "monotonic" && !w.contains("out_of_orderness_ms")) s = std::make_unique<MonotonicWatermarkStrategy<T>>();
  else p.fail("param 'watermarks': 'strategy' must be bounded or monotonic (without out_of_orderness_ms), got " + w.dump());
  if (number("idleness_ms") > 0) s->with_idleness(number("idleness_ms"));
  return s;
}

OperatorBuilder make_kafka_source(const OperatorSpecContext& ctx) {
  OpParams p = source_params(ctx);
  auto client = client_properties(p);
  const std::string format = p.get_choice("format", "text", {"text", "json"});
  return dispatch_spec_type(source_type(p), [&]<class T>() -> OperatorBuilder {
    if constexpr (JsonDecodable<T>) {
      auto b = KafkaSource<T>::builder();
      b.set_properties(client).set_bootstrap_servers(require_string(p, "bootstrap_servers"));
      if (p.has("topics")) {
        const auto& t = p.params().at("topics");
        std::vector<std::string> topics;
        if (t.is_string()) {
          // "a;b" as the SQL connector's 'topic'
          std::string s = t.get<std::string>();
          for (std::size_t start = 0; start <= s.size();) {
            auto end = std::min(s.find(';', start), s.size());
            if (end > start) topics.push_back(s.substr(start, end - start));
            start = end + 1;
          }
        } else if (t.is_array()) {
          for (const auto& x : t) {
            if (!x.is_string()) p.fail("param 'topics' must hold strings, got " + x.dump());
            topics.push_back(x.get<std::string>());
          }
        } else {
          p.fail("param 'topics' must be a string or a list of strings, got " + t.dump());
        }
        b.set_topics(std::move(topics));
      }
      if (p.has("topic_pattern")) b.set_topic_pattern(p.get_string("topic_pattern", ""));
      if (p.has("group_id")) b.set_group_id(p.get_string("group_id", ""));
      b.set_starting_offsets(offsets(p, "starting_offsets", "earliest", client));
      if (p.has("bounded")) b.set_bounded(offsets(p, "bounded", "", client));
      else if (p.has("bounded_timestamp_ms")) p.fail("param 'bounded_timestamp_ms' needs 'bounded' = 'timestamp'");
      b.set_deserializer(KafkaRecordDeserializationSchema<T>::value_only(parse_line_format(format)));
      b.set_name("op '" + ctx.id + "' (kafka_source)");
      std::shared_ptr<const Source<T>> source;
      try {
        source = b.build();
      } catch (const ClinkError& e) {
        p.fail(e.what());
      }
      std::shared_ptr<const WatermarkStrategy<T>> watermarks = source_watermarks<T>(p);
      return [source, watermarks] {
        return std::make_unique<ReaderSourceOperator<T>>(source, kDefaultBatchSize, watermarks);
      };
    } else {
      p.fail("cannot read " + type_name<T>() + " records");
    }
  });
}

// ---- kafka_sink -----------------------------------------------------------------------

OperatorBuilder make_kafka_sink(const OperatorSpecContext& ctx) {
  OpParams p(ctx, "kafka_sink",
             {"bootstrap_servers", "topic", "delivery_guarantee", "transactional_id_prefix", "partitioner", "properties",
              "format"});
  auto client = client_properties(p);
  const std::string topic = require_string(p, "topic");
  const LineFormat format = parse_line_format(p.get_choice("format", "text", {"text", "json"}));
  const std::string guarantee = p.get_choice("delivery_guarantee", "none", {"none", "at-least-once", "exactly-once"});
  const std::string partitioner = p.get_choice("partitioner", "default", {"default", "fixed", "round-robin"});
  return dispatch_spec_type(p.input_type(0, kJsonTypes), [&]<class T>() -> OperatorBuilder {
    std::shared_ptr<const TransactionalSink<T>> sink;
    try {
      auto b = KafkaSink<T>::builder();
      b.set_properties(client)
          .set_bootstrap_servers(require_string(p, "bootstrap_servers"))
          .set_record_serializer(KafkaRecordSerializationSchema<T>::value_only(topic, format))
          .set_delivery_guarantee(guarantee == "none"            ? DeliveryGuarantee::kNone
                                  : guarantee == "exactly-once" ? DeliveryGuarantee::kExactlyOnce
                                                                : DeliveryGuarantee::kAtLeastOnce)
          .set_transactional_id_prefix(p.get_string("transactional_id_prefix", ""))
          .set_partitioner(partitioner == "fixed"         ? KafkaPartitioner::kFixed
                           : partitioner == "round-robin" ? KafkaPartitioner::kRoundRobin
                                                          : KafkaPartitioner::kDefault)
          .set_name("op '" + ctx.id + "' (kafka_sink)");
      sink = b.build();
    } catch (const ClinkError& e) {
      p.fail(e.what());
    }
    return [sink] { return std::make_unique<TwoPhaseCommitSinkOperator<T>>(sink); };
  });
}

}  // namespace

void register_kafka_stream_connectors(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "kafka_source",
      .description =
          "source reading Kafka topics (Flink's KafkaSource; one split per partition): bootstrap_servers, topics "
          "(a list or 'a;b') or topic_pattern, group_id, starting_offsets earliest (default) | latest | committed | "
          "timestamp (+ starting_offsets_timestamp_ms), bounded (the same; absent: unbounded), properties (client "
          "properties), format text (the value as a string) or json (+ type int64|string|event|...); records carry "
          "the Kafka timestamp as event time; watermarks {strategy bounded|monotonic, out_of_orderness_ms, "
          "idleness_ms}: generated per partition in the source, the minimum emitted",
      .num_inputs = 0,
      .out_type = [](const OperatorSpecContext& ctx) { return source_type(source_params(ctx)); },
      .make = make_kafka_source});
  r.add(OperatorFactoryInfo{
      .name = "kafka_sink",
      .description =
          "sink writing a Kafka topic (Flink's KafkaSink): bootstrap_servers, topic, delivery_guarantee none "
          "(default, as Flink's) | at-least-once | exactly-once (Kafka transactions per checkpoint; needs "
          "transactional_id_prefix), partitioner default | fixed | round-robin, properties, format text | json; "
          "each record's value, without key, its event time as the record's timestamp",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext& ctx) { return ctx.input_types.empty() ? std::string() : ctx.input_types[0]; },
      .make = make_kafka_sink});
}

}  // namespace clink
