// Watermarks per Kafka partition in the DataStream KafkaSource<T> (Flink's
// env.fromSource(source, strategy, name)): each partition runs its own copy of the
// strategy over the Kafka timestamps and the source emits the minimum, so a partition
// read ahead does not make another's records late; an empty partition holds the
// watermark back until the strategy's idleness leaves it out. The expected windows are
// Flink's for the same events (the SQL connector's watermark tests use the same ones).
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "clink/api/data_stream.hpp"
#include "clink/api/windowed_stream.hpp"
#include "clink/connectors/collect_sink.hpp"
#include "clink/connectors/kafka/kafka_source.hpp"
#include "kafka_test_env.hpp"

namespace clink::test {
namespace {

KafkaRecord at(std::string value, std::int32_t partition, std::int64_t timestamp_ms) {
  KafkaRecord r = kafka_value(std::move(value), partition);
  r.timestamp_ms = timestamp_ms;
  return r;
}

// (window end - 1, count) of each 10 s tumbling window over the topic's records.
using WindowCounts = std::vector<std::pair<EventTime, std::int64_t>>;

// `stop`: where the source ends (nullopt: unbounded).
std::shared_ptr<CollectSink<std::int64_t>> count_windows(StreamExecutionEnvironment& env, const std::string& topic,
                                                         const WatermarkStrategy<std::string>& strategy,
                                                         std::optional<KafkaOffsetSpec> stop) {
  auto b = KafkaSource<std::string>::builder();
  b.set_bootstrap_servers(kafka_bootstrap())
      .set_topics(topic)
      .set_deserializer(KafkaRecordDeserializationSchema<std::string>::value_only());
  if (stop) b.set_bounded(*stop);
  auto sink = std::make_shared<CollectSink<std::int64_t>>();
  env.from_source<std::string>(b.build(), strategy, "Kafka")
      .map([](const std::string&) { return std::int64_t{1}; })
      .key_by([](std::int64_t) { return std::int64_t{0}; })
      .window(TumblingEventTimeWindows::of(10000))
      .reduce([](std::int64_t a, std::int64_t b) { return a + b; })
      .sink_to(sink);
  return sink;
}

WindowCounts windows_of(const CollectSink<std::int64_t>& sink) {
  WindowCounts out;
  for (const auto& r : sink.records()) out.emplace_back(r.event_time, r.value);
  return out;
}

// Partition 0 runs ahead to 25 s (and ends) before partition 1's records of the first
// window are even written: they are on time, because the watermark is the slower
// partition's. (One watermark for the whole source would have passed them: they would
// be late and dropped.)
TEST(KafkaDataStreamWatermarks, ALaggingPartitionsRecordsAreNotLate) {
  const std::string topic = unique_kafka_name("ds-wm-lag");
  create_kafka_topic(topic, 2);
  produce_kafka(topic, {at("a", 0, 1000), at("b", 0, 12000), at("c", 0, 25000)});
  StreamExecutionEnvironment env;
  auto sink = count_windows(env, topic, BoundedOutOfOrdernessStrategy<std::string>(0),
                            OffsetsInitializer::offsets({{{topic, 0}, 3}, {{topic, 1}, 3}}));
  auto handle = execute_async(env.graph());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // partition 0 read
  produce_kafka(topic, {at("d", 1, 2000), at("e", 1, 9000), at("f", 1, 14000)});
  handle.wait();
  EXPECT_EQ(handle.status(), JobStatus::kFinished) << handle.error();
  EXPECT_EQ(windows_of(*sink), (WindowCounts{{9999, 3}, {19999, 2}, {29999, 1}}));
}

// An empty partition holds the watermark back; with idleness it is left out after the
// timeout, and the window the busy partition passed fires while the job runs.
TEST(KafkaDataStreamWatermarks, AnEmptyPartitionHoldsTheWatermarkBackUntilItIsIdle) {
  const std::string topic = unique_kafka_name("ds-wm-idle");
  create_kafka_topic(topic, 2);
  produce_kafka(topic, {at("a", 0, 1000), at("b", 0, 15000)});
  auto first_window_within = [&](const WatermarkStrategy<std::string>& strategy, std::chrono::milliseconds wait) {
    StreamExecutionEnvironment env;
    auto sink = count_windows(env, topic, strategy, std::nullopt);
    auto handle = execute_async(env.graph());
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (sink->size() == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    handle.cancel();
    handle.wait();
    return windows_of(*sink);
  };
  EXPECT_EQ(first_window_within(BoundedOutOfOrdernessStrategy<std::string>(0), std::chrono::milliseconds(1500)),
            WindowCounts{})
      << "partition 1 has no record yet: it holds the watermark back";
  BoundedOutOfOrdernessStrategy<std::string> idle(0);
  idle.with_idleness(300);
  EXPECT_EQ(first_window_within(idle, std::chrono::seconds(20)), (WindowCounts{{9999, 1}}));
}

// A timestamp assigner sees each record with its Kafka timestamp (Flink's
// recordTimestamp) and may replace it.
TEST(KafkaDataStreamWatermarks, ATimestampAssignerGetsTheKafkaTimestamp) {
  const std::string topic = unique_kafka_name("ds-wm-assigner");
  create_kafka_topic(topic, 1);
  produce_kafka(topic, {at("5000", 0, 100), at("15000", 0, 200)});
  BoundedOutOfOrdernessStrategy<std::string> strategy(0);
  strategy.with_timestamp_assigner([](const std::string& v, EventTime kafka_ts) {
    return std::stoll(v) + kafka_ts;  // 5100, 15200
  });
  StreamExecutionEnvironment env;
  auto sink = count_windows(env, topic, strategy, OffsetsInitializer::latest());
  env.execute("assigner");
  EXPECT_EQ(windows_of(*sink), (WindowCounts{{9999, 1}, {19999, 1}}));
}

}  // namespace
}  // namespace clink::test
