// The DataStream KafkaSource<T> / KafkaSink<T> against a real broker: bounded reads of
// several partitions, deserializers and serializers, offsets, delivery guarantees, and a
// restore at another parallelism from a checkpoint.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "../support/checkpoint_support.hpp"
#include "clink/api/data_stream.hpp"
#include "clink/checkpoint/checkpoint_metadata.hpp"
#include "clink/connectors/collect_sink.hpp"
#include "clink/connectors/exactly_once_collect_sink.hpp"
#include "clink/connectors/kafka/kafka_sink.hpp"
#include "clink/connectors/kafka/kafka_source.hpp"
#include "kafka_test_env.hpp"

namespace clink::test {
namespace {

// A topic of `partitions` x `per_partition` records "p<partition>-<i>", record i of each
// partition at timestamp 1000 + i; returns the values.
std::vector<std::string> fill_topic(const std::string& topic, int partitions, int per_partition) {
  create_kafka_topic(topic, partitions);
  std::vector<KafkaRecord> records;
  std::vector<std::string> values;
  for (int i = 0; i < per_partition; ++i)
    for (int p = 0; p < partitions; ++p) {
      records.push_back(kafka_value("p" + std::to_string(p) + "-" + std::to_string(i), p));
      records.back().timestamp_ms = 1000 + i;
      values.push_back(records.back().value);
    }
  produce_kafka(topic, records);
  std::sort(values.begin(), values.end());
  return values;
}

KafkaSource<std::string>::Builder strings_of(const std::string& topic) {
  auto b = KafkaSource<std::string>::builder();
  b.set_bootstrap_servers(kafka_bootstrap())
      .set_topics(topic)
      .set_starting_offsets(OffsetsInitializer::earliest())
      .set_bounded(OffsetsInitializer::latest())
      .set_deserializer(KafkaRecordDeserializationSchema<std::string>::value_only());
  return b;
}

std::vector<std::string> read_all(std::shared_ptr<KafkaSource<std::string>> source, int parallelism = 1) {
  StreamExecutionEnvironment env;
  env.set_parallelism(parallelism);
  auto sink = std::make_shared<CollectSink<std::string>>();
  env.from_source<std::string>(source, "Kafka").sink_to(sink);
  env.execute("read");
  return sorted(sink->values());
}

TEST(KafkaDataStream, BoundedReadOfAMultiPartitionTopicGivesEveryRecordOnceWithItsTimestampAndPartition) {
  const std::string topic = unique_kafka_name("ds-bounded");
  const std::vector<std::string> expected = fill_topic(topic, 3, 400);
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  auto sink = std::make_shared<CollectSink<std::string>>();
  env.from_source<std::string>(strings_of(topic).build(), "Kafka").sink_to(sink);
  env.execute("bounded");
  std::vector<std::string> got;
  for (const auto& r : sink->records()) {
    got.push_back(r.value);
    // "p<partition>-<i>": the Kafka timestamp is the event time, the partition the record's.
    const auto dash = r.value.find('-');
    EXPECT_EQ(r.partition, std::stoi(r.value.substr(1, dash - 1))) << r.value;
    EXPECT_EQ(r.event_time, 1000 + std::stoll(r.value.substr(dash + 1))) << r.value;
  }
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, expected);
}

TEST(KafkaDataStream, ADeserializerSeesTheWholeMessageAndMaySkipIt) {
  const std::string topic = unique_kafka_name("ds-message");
  create_kafka_topic(topic, 1);
  KafkaRecord first = kafka_keyed("k1", "v1");
  first.headers = {{"trace", "t1"}};
  first.timestamp_ms = 1700000000123;
  KafkaRecord tombstone = kafka_keyed("k2", "");
  tombstone.has_value = false;
  produce_kafka(topic, {first, tombstone, kafka_value("v3")});
  auto describe = [](const KafkaMessage& m) -> std::optional<std::string> {
    if (!m.value) return std::nullopt;  // tombstones give no record
    std::string s = std::string(m.key.value_or("-")) + "|" + std::string(*m.value) + "|" +
                    std::to_string(m.partition) + "|" + std::to_string(m.offset) + "|" +
                    std::string(kafka::timestamp_type_name(m.timestamp_type));
    for (const auto& h : m.headers()) s += "|" + std::string(h.name) + "=" + std::string(h.value.value_or(""));
    return s;
  };
  auto source = strings_of(topic).set_deserializer(KafkaRecordDeserializationSchema<std::string>::of(describe)).build();
  EXPECT_EQ(read_all(source), (std::vector<std::string>{"-|v3|0|2|CreateTime", "k1|v1|0|0|CreateTime|trace=t1"}));
}

TEST(KafkaDataStream, JsonValuesAndAMalformedOneFailsTheJobNamingItsPosition) {
  const std::string topic = unique_kafka_name("ds-json");
  create_kafka_topic(topic, 1);
  produce_kafka(topic, {kafka_value(R"({"key":"a","value":1})"), kafka_value(R"({"key":"b","value":2})")});
  auto events = KafkaSource<Event>::builder()
                    .set_bootstrap_servers(kafka_bootstrap())
                    .set_topics(topic)
                    .set_bounded(OffsetsInitializer::latest())
                    .set_deserializer(KafkaRecordDeserializationSchema<Event>::value_only(LineFormat::kJson))
                    .build();
  {
    StreamExecutionEnvironment env;
    auto sink = std::make_shared<CollectSink<Event>>();
    env.from_source<Event>(events, "Kafka").sink_to(sink);
    env.execute("json");
    EXPECT_EQ(sink->values(), (std::vector<Event>{{"a", 1}, {"b", 2}}));
  }
  produce_kafka(topic, {kafka_value(R"({"key":"c"})")});
  StreamExecutionEnvironment env;
  env.from_source<Event>(events, "Kafka").sink_to(std::make_shared<CollectSink<Event>>());
  try {
    env.execute("malformed");
    FAIL() << "a malformed record must fail the job";
  } catch (const JobFailedError& e) {
    EXPECT_NE(std::string(e.what()).find("topic " + topic + " partition 0 offset 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("malformed JSON"), std::string::npos) << e.what();
  }
}

TEST(KafkaDataStream, StartingAndStoppingOffsets) {
  const std::string topic = unique_kafka_name("ds-offsets");
  fill_topic(topic, 2, 5);  // p0-0..p0-4, p1-0..p1-4 at 1000..1004
  // From timestamp 1003 to the end: the last two of each partition.
  EXPECT_EQ(read_all(strings_of(topic).set_starting_offsets(OffsetsInitializer::timestamp(1003)).build()),
            (std::vector<std::string>{"p0-3", "p0-4", "p1-3", "p1-4"}));
  // From offset 1 of partition 0 (partition 1 from its earliest) up to offset 2 of both.
  auto from = OffsetsInitializer::offsets({{{topic, 0}, 1}});
  auto to = OffsetsInitializer::offsets({{{topic, 0}, 2}, {{topic, 1}, 2}});
  EXPECT_EQ(read_all(strings_of(topic).set_starting_offsets(from).set_bounded(to).build(), 2),
            (std::vector<std::string>{"p0-1", "p1-0", "p1-1"}));
  // A group without committed offsets: committed offsets fall back as told.
  auto committed = strings_of(topic)
                       .set_group_id(unique_kafka_name("ds-group"))
                       .set_starting_offsets(OffsetsInitializer::committed_offsets("latest"))
                       .build();
  EXPECT_EQ(read_all(committed), std::vector<std::string>{});
  EXPECT_THROW(strings_of(topic).set_starting_offsets(OffsetsInitializer::committed_offsets()).build(), ClinkError)
      << "committed offsets need a group id";
}

// Written with each delivery guarantee and read back by a read_committed consumer.
TEST(KafkaDataStream, SinkWritesWithEachDeliveryGuarantee) {
  for (auto guarantee : {DeliveryGuarantee::kNone, DeliveryGuarantee::kAtLeastOnce, DeliveryGuarantee::kExactlyOnce}) {
    const std::string topic = unique_kafka_name("ds-sink");
    create_kafka_topic(topic, 2);
    StreamExecutionEnvironment env;
    env.set_parallelism(2);
    std::vector<std::string> values;
    for (int i = 0; i < 500; ++i) values.push_back("v" + std::to_string(i));
    auto sink = KafkaSink<std::string>::builder()
                    .set_bootstrap_servers(kafka_bootstrap())
                    .set_record_serializer(KafkaRecordSerializationSchema<std::string>::value_only(topic))
                    .set_delivery_guarantee(guarantee)
                    .set_transactional_id_prefix(topic + "-tx")
                    .build();
    env.from_collection(values).rebalance().sink_to(sink, "Kafka");
    env.execute("sink");
    std::vector<std::string> got = values_of(consume_kafka(topic));
    std::sort(got.begin(), got.end());
    std::sort(values.begin(), values.end());
    EXPECT_EQ(got, values) << "guarantee " << static_cast<int>(guarantee);
  }
  EXPECT_THROW(KafkaSink<std::string>::builder()
                   .set_bootstrap_servers(kafka_bootstrap())
                   .set_record_serializer(KafkaRecordSerializationSchema<std::string>::value_only("t"))
                   .set_delivery_guarantee(DeliveryGuarantee::kExactlyOnce)
                   .build(),
               ClinkError)
      << "exactly-once needs a transactional id prefix";
}

TEST(KafkaDataStream, SerializerSetsKeyPartitionTimestampAndHeaders) {
  const std::string topic = unique_kafka_name("ds-serializer");
  create_kafka_topic(topic, 2);
  auto schema = KafkaRecordSerializationSchema<std::int64_t>::of(
      topic, [](const std::int64_t& v, EventTime, KafkaProducerRecord& out) {
        if (v == 3) return false;  // not written
        out.set_key("k" + std::to_string(v));
        out.set_value("v" + std::to_string(v));
        out.partition = static_cast<std::int32_t>(v % 2);
        out.timestamp_ms = 5000 + v;
        out.headers.push_back({"n", std::to_string(v)});
        return true;
      });
  StreamExecutionEnvironment env;
  env.from_collection<std::int64_t>({0, 1, 2, 3}).sink_to(
      KafkaSink<std::int64_t>::builder().set_bootstrap_servers(kafka_bootstrap()).set_record_serializer(schema).build());
  env.execute("serializer");
  std::vector<std::string> got;
  for (const auto& r : consume_kafka(topic)) {
    std::string s = std::to_string(r.partition) + " " + r.key + " " + r.value + " " + std::to_string(r.timestamp_ms);
    for (const auto& [k, v] : r.headers) s += " " + k + "=" + v;
    got.push_back(s);
  }
  EXPECT_EQ(got, (std::vector<std::string>{"0 k0 v0 5000 n=0", "0 k2 v2 5002 n=2", "1 k1 v1 5001 n=1"}));
}

// Kafka -> Kafka: each record keeps its timestamp (its event time), as Flink's KafkaSink
// writes the element's timestamp; the builder's key and value schemas.
TEST(KafkaDataStream, ReadsATopicAndWritesATopicKeepingTimestamps) {
  const std::string in = unique_kafka_name("ds-in"), out = unique_kafka_name("ds-out");
  fill_topic(in, 2, 3);
  create_kafka_topic(out, 1);
  StreamExecutionEnvironment env;
  auto schema = KafkaRecordSerializationSchema<std::string>::builder()
                    .set_topic(out)
                    .set_key_serialization_schema([](const std::string& v, std::string& o) { o += v.substr(0, 2); })
                    .set_value_serialization_schema([](const std::string& v, std::string& o) { o += v + "!"; })
                    .build();
  env.from_source<std::string>(strings_of(in).build(), "In")
      .sink_to(KafkaSink<std::string>::builder().set_bootstrap_servers(kafka_bootstrap()).set_record_serializer(schema).build());
  env.execute("copy");
  std::vector<std::string> got;
  for (const auto& r : consume_kafka(out)) got.push_back(r.key + " " + r.value + " " + std::to_string(r.timestamp_ms));
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"p0 p0-0! 1000", "p0 p0-1! 1001", "p0 p0-2! 1002", "p1 p1-0! 1000",
                                           "p1 p1-1! 1001", "p1 p1-2! 1002"}));
}

// Parallelism 2, cancelled after two checkpoints (throttled, so mid-topic), restored from
// the latest checkpoint at parallelism 3: the exactly-once output holds every record
// once. The restored readers deal the checkpointed partitions among them and take no
// partition a reader of the first run took (the union state of taken partitions).
class KafkaSourceRescale : public BackendTest {};
INSTANTIATE_TEST_SUITE_P(Backends, KafkaSourceRescale, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

TEST_P(KafkaSourceRescale, RestoresAtAnotherParallelismWithoutGapOrDuplicate) {
  TempDir dir;
  const std::string topic = unique_kafka_name("ds-rescale");
  const std::vector<std::string> expected = fill_topic(topic, 4, 3000);
  auto sink = std::make_shared<ExactlyOnceCollectSink<std::string>>();
  auto seen = std::make_shared<std::atomic<std::int64_t>>(0);
  auto build = [&](StreamExecutionEnvironment& env, int p, bool throttled) {
    env.from_source<std::string>(strings_of(topic).build(), "Kafka")
        .set_parallelism(p)
        .uid("kafka")
        .map([throttled, seen](const std::string& s) {
          if (throttled && seen->fetch_add(1) % 10 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
          return s;
        }, "Throttle")
        .set_parallelism(p)
        .uid("throttle")
        .sink_to(sink, "Sink");
  };
  {
    StreamExecutionEnvironment env;
    build(env, 2, true);
    run_until_checkpoints(env, checkpointing(dir.path));
  }
  auto from = latest_checkpoint(dir.path);
  ASSERT_TRUE(from.has_value());
  const std::size_t committed = sink->values().size();
  EXPECT_GT(committed, 0u);
  EXPECT_LT(committed, expected.size()) << "the first run must stop mid-topic";
  StreamExecutionEnvironment env;
  build(env, 3, false);
  auto options = checkpointing(dir.path);
  options.restore = RestoreSettings{*from};
  auto handle = execute_async(env.graph(), options);
  handle.wait();
  EXPECT_EQ(handle.status(), JobStatus::kFinished) << handle.error();
  EXPECT_EQ(sorted(sink->values()), expected);
}

}  // namespace
}  // namespace clink::test
