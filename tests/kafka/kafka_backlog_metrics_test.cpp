// The Kafka reader's backlog metrics against a real broker: Flink's pendingRecords (what
// is left up to each partition's high watermark, or its stop offset when bounded) and the
// Kafka consumer's records-lag-max (the largest high watermark - position), exact for the
// records it handed out, and 0 once a bounded read ended (also when it ended within the
// second that throttles the updates).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "clink/connectors/kafka/kafka_partition_reader.hpp"
#include "kafka_test_env.hpp"

namespace clink::test {
namespace {

using kafka::KafkaOffsetSpec;
using Status = kafka::KafkaPartitionReader::Status;

TEST(KafkaBacklogMetrics, PendingRecordsAndRecordsLagMaxFollowTheRecordsRead) {
  const std::string topic = unique_kafka_name("backlog");
  create_kafka_topic(topic, 2);
  std::vector<KafkaRecord> records;
  for (int i = 0; i < 30; ++i) records.push_back(kafka_value("a" + std::to_string(i), 0));
  for (int i = 0; i < 10; ++i) records.push_back(kafka_value("b" + std::to_string(i), 1));
  produce_kafka(topic, records);  // high watermarks: 30 and 10

  kafka::KafkaReaderConfig c;
  c.client["bootstrap.servers"] = kafka_bootstrap();
  c.topics = {topic};
  c.startup.mode = KafkaOffsetSpec::Mode::kEarliest;
  // Partition 0 stops at 20: pendingRecords counts to there, records-lag-max (the Kafka
  // client's view) to the high watermark.
  c.bounded.mode = KafkaOffsetSpec::Mode::kSpecificOffsets;
  c.bounded.specific = {{{topic, 0}, 20}, {{topic, 1}, 10}};
  c.what = "backlog test";
  kafka::KafkaPartitionReader reader(c, 0, 1);
  reader.open();
  std::atomic<std::int64_t> pending{-1}, lag_max{-1};
  reader.report_backlog_to(&pending, &lag_max);

  std::map<std::int32_t, std::int64_t> next{{0, 0}, {1, 0}};  // from the records handed out
  auto poll = [&](std::size_t n) {
    Status s = reader.poll(n);
    for (const auto& r : reader.records()) next[r.partition] = r.offset + 1;
    return s;
  };
  // A few records, one poll at a time.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (next[0] + next[1] < 3 && std::chrono::steady_clock::now() < deadline) {
    poll(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(next[0] + next[1], 3);
  // Updated at most once a second, at a poll: after one a second later, exact for what
  // was handed out (retried while the client has not seen both high watermarks yet).
  bool exact = false;
  std::int64_t want_pending = 0, want_lag = 0;
  for (int attempt = 0; attempt < 5 && !exact; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1050));
    poll(1);
    want_pending = (20 - next[0]) + (10 - next[1]);
    want_lag = std::max(30 - next[0], 10 - next[1]);
    exact = pending.load() == want_pending && lag_max.load() == want_lag;
  }
  EXPECT_TRUE(exact) << "pendingRecords " << pending.load() << " (want " << want_pending << "), records-lag-max "
                     << lag_max.load() << " (want " << want_lag << ") after reading " << next[0] << " + " << next[1];
  EXPECT_LT(next[0] + next[1], 30) << "still reading";

  // To the end: both splits finished, nothing left.
  Status s = Status::kMore;
  while (s != Status::kEnd && std::chrono::steady_clock::now() < deadline) {
    s = poll(1000);
    if (s == Status::kNothingAvailable) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(s, Status::kEnd);
  EXPECT_EQ(next, (std::map<std::int32_t, std::int64_t>{{0, 20}, {1, 10}}));
  EXPECT_EQ(pending.load(), 0);
  EXPECT_EQ(lag_max.load(), 0);
  reader.close();
}

}  // namespace
}  // namespace clink::test
