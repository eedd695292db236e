// Watermarks per Kafka partition (Flink's split-level watermarks with the WATERMARK
// pushed into the source): a partition read ahead of another does not make the other's
// rows late; an idle partition holds the watermark back only until its idle timeout; a
// partition added while the job runs is read from its start.
//
// The expected windows are Flink's for the same events: with per-partition watermarks the
// watermark is the minimum over the partitions of each one's max(rt) - 0 s, so a window
// fires once every partition passed its end (docs: "Watermark Strategies and the Kafka
// Connector", "Dealing With Idle Sources"). Each case was run on Flink 2.3 with its Kafka
// connector (tests/flink/kafka_watermarks.py lag | idle | idle-none | added) and gave
// these windows: lag (0 s, 3), (10 s, 2), (20 s, 1); idle (0 s, 1) while running, then
// (10 s, 2) and no recount of the first window; idle-none nothing in 8 s; added (0 s, 1),
// then (10 s, 2).
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "../tools/clink_runner.hpp"
#include "../support/clink_process.hpp"
#include "kafka_test_env.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;

std::string event(int id, long long ts) {
  return "{\"id\":" + std::to_string(id) + ",\"ts\":" + std::to_string(ts) + "}";
}

class KafkaWatermarks : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / unique_kafka_name("clink-kafka-wm");
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Counts per 10 s tumbling window of `topic`, printed; `options` extend the source's.
  fs::path script(const std::string& topic, const std::string& options) {
    std::string sql =
        "CREATE TABLE src (id INT, ts BIGINT, rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt) WITH ("
        "'connector' = 'kafka', 'topic' = '" + topic + "', 'properties.bootstrap.servers' = '" + kafka_bootstrap() +
        "', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json'" + options + ");\n"
        "CREATE TABLE out (ws TIMESTAMP_LTZ(3), c BIGINT) WITH ('connector' = 'print');\n"
        "INSERT INTO out SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(rt), "
        "INTERVAL '10' SECOND)) GROUP BY window_start, window_end;\n";
    fs::path p = dir_ / "job.sql";
    std::ofstream(p) << sql;
    return p;
  }

  fs::path dir_;
};

// Partition 0 runs ahead to 25 s while partition 1 is still in the first window: its rows
// are on time, because the watermark is the slower partition's.
TEST_F(KafkaWatermarks, ALaggingPartitionsRowsAreNotLate) {
  const std::string topic = unique_kafka_name("wm-lag");
  create_kafka_topic(topic, 2);
  produce_kafka(topic, {kafka_value(event(1, 1000), 0), kafka_value(event(2, 12000), 0),
                        kafka_value(event(3, 25000), 0), kafka_value(event(4, 2000), 1),
                        kafka_value(event(5, 9000), 1), kafka_value(event(6, 14000), 1)});
  auto r = run_clink("run '" + script(topic, ", 'scan.bounded.mode' = 'latest-offset'").string() + "'", dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.lines(), (std::vector<std::string>{"+I[1970-01-01T00:00:00Z, 3]", "+I[1970-01-01T00:00:10Z, 2]",
                                                 "+I[1970-01-01T00:00:20Z, 1]"}));
}

// An empty partition holds the watermark back; with 'scan.watermark.idle-timeout' it is
// left out after the timeout, and the windows the busy partition passed fire while the
// job runs. A row arriving later in the idle partition is clamped to the watermark.
TEST_F(KafkaWatermarks, AnIdlePartitionStopsHoldingTheWatermarkAfterItsTimeout) {
  const std::string topic = unique_kafka_name("wm-idle");
  create_kafka_topic(topic, 2);
  produce_kafka(topic, {kafka_value(event(1, 1000), 0), kafka_value(event(2, 15000), 0)});
  {
    ClinkProcess job({"run", script(topic, "").string()}, dir_);
    EXPECT_FALSE(job.wait_for_output("+I[", 1500)) << "without idleness the empty partition holds the window back";
    job.kill(SIGKILL);
  }
  ClinkProcess job({"run", script(topic, ", 'scan.watermark.idle-timeout' = '200 ms'").string()}, dir_);
  ASSERT_TRUE(job.wait_for_output("+I[1970-01-01T00:00:00Z, 1]", 20000)) << job.out() << job.err();
  // Partition 1 comes back with rows behind and ahead of the watermark (15 s): the late
  // one is dropped, the other counts once partition 0 moves on. (Partition 0 moves on
  // only after partition 1 is active again: had both arrived at once, partition 0 could be
  // read first while 1 still counts as idle, and then 16 s would be late too, in Flink as
  // here.)
  produce_kafka(topic, {kafka_value(event(3, 5000), 1), kafka_value(event(4, 16000), 1)});
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  produce_kafka(topic, {kafka_value(event(5, 31000), 0), kafka_value(event(6, 32000), 1)});
  ASSERT_TRUE(job.wait_for_output("+I[1970-01-01T00:00:10Z, 2]", 20000)) << job.out() << job.err();
  job.kill(SIGKILL);
  EXPECT_EQ(job.out().find("+I[1970-01-01T00:00:00Z, 2]"), std::string::npos) << "the late row must not count";
}

// A partition added while the job runs is found by partition discovery and read from its
// earliest offset; until it has rows it holds the watermark back like any other.
TEST_F(KafkaWatermarks, APartitionAddedWhileRunningIsRead) {
  const std::string topic = unique_kafka_name("wm-added");
  create_kafka_topic(topic, 1);
  produce_kafka(topic, {kafka_value(event(1, 1000), 0), kafka_value(event(2, 12000), 0)});
  ClinkProcess job({"run", script(topic, ", 'scan.topic-partition-discovery.interval' = '100 ms'").string()}, dir_);
  ASSERT_TRUE(job.wait_for_output("+I[1970-01-01T00:00:00Z, 1]", 20000)) << job.out() << job.err();
  // A second partition, with a row in the second window, and partition 0 moves past it.
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", kafka_bootstrap().c_str(), err, sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  ASSERT_NE(rk, nullptr) << err;
  rd_kafka_NewPartitions_t* np = rd_kafka_NewPartitions_new(topic.c_str(), 2, err, sizeof err);
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk);
  rd_kafka_CreatePartitions(rk, &np, 1, nullptr, q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 30000);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(rd_kafka_event_error(ev), RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_event_error_string(ev);
  rd_kafka_event_destroy(ev);
  rd_kafka_NewPartitions_destroy(np);
  rd_kafka_queue_destroy(q);
  rd_kafka_destroy(rk);
  // Discovery (every 100 ms) takes the new partition, which holds the watermark back from
  // then on; partition 0 moves past the window only after that.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  produce_kafka(topic, {kafka_value(event(3, 13000), 1), kafka_value(event(4, 22000), 1),
                        kafka_value(event(5, 21000), 0)});
  ASSERT_TRUE(job.wait_for_output("+I[1970-01-01T00:00:10Z, 2]", 20000)) << job.out() << job.err();
  job.kill(SIGKILL);
}

}  // namespace
}  // namespace clink::test
