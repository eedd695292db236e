// Exactly-once through the DataStream Kafka connectors under failure: a JobGraphSpec job
// kafka_source -> tokenize -> count (keyed state) -> kafka_sink (exactly-once), run by the
// real `clink` binary, SIGKILLed at random points and restarted from its latest
// checkpoint; what a read_committed reader sees afterwards must be what a failure-free
// run writes, record for record.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "../support/clink_process.hpp"
#include "../support/kill_restart.hpp"
#include "kafka_test_env.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;

constexpr int kLines = 150000;
constexpr int kInputPartitions = 3;

// The input: kLines lines of four words out of 53.
const std::string& input_topic() {
  static const std::string topic = [] {
    std::string t = unique_kafka_name("ds-eo-input");
    create_kafka_topic(t, kInputPartitions);
    std::vector<KafkaRecord> records;
    records.reserve(kLines);
    for (int i = 0; i < kLines; ++i) {
      std::string line;
      for (int w = 0; w < 4; ++w) line += (w ? " w" : "w") + std::to_string((i * 7 + w * 13) % 53);
      records.push_back(kafka_value(line, i % kInputPartitions));
    }
    produce_kafka(t, records);
    return t;
  }();
  return topic;
}

class KafkaDataStreamExactlyOnce : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / unique_kafka_name("clink-kafka-ds-eo");
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The job's spec writing topic `out`; returns its path.
  fs::path spec(const std::string& out) {
    std::string json = R"({"name": "kafka_word_count", "config": {"parallelism": 1}, "ops": [
      {"id": "lines", "type": "kafka_source", "params": {"bootstrap_servers": "${B}", "topics": "${IN}",
       "starting_offsets": "earliest", "bounded": "latest"}},
      {"id": "words", "type": "tokenize", "inputs": [{"from": "lines"}]},
      {"id": "count", "type": "count", "parallelism": 2, "params": {"emit": "every"},
       "inputs": [{"from": "words", "partitioning": "hash", "key": "string.self"}]},
      {"id": "out", "type": "kafka_sink", "parallelism": 2, "params": {"bootstrap_servers": "${B}",
       "topic": "${OUT}", "format": "json", "delivery_guarantee": "exactly-once",
       "transactional_id_prefix": "${OUT}-tx"}, "inputs": [{"from": "count"}]}]})";
    json = std::regex_replace(json, std::regex("\\$\\{B\\}"), kafka_bootstrap());
    json = std::regex_replace(json, std::regex("\\$\\{IN\\}"), input_topic());
    json = std::regex_replace(json, std::regex("\\$\\{OUT\\}"), out);
    fs::path p = dir_ / (out + ".json");
    std::ofstream(p) << json;
    return p;
  }

  std::unique_ptr<ClinkProcess> start(std::vector<std::string> args) {
    args.insert(args.begin(), "run");
    return std::make_unique<ClinkProcess>(args, dir_);
  }

  // Every value a read_committed reader of `topic` sees, sorted.
  static std::vector<std::string> view(const std::string& topic) {
    std::vector<std::string> out = values_of(consume_kafka(topic));
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path dir_;
};

// SIGKILL at >= 20 random points, each run restarted from the latest checkpoint (or from
// scratch before the first), then run to the end.
TEST_P(KafkaDataStreamExactlyOnce, KilledAtRandomPointsAndRestarted) {
  std::vector<std::string> expected;
  {
    const std::string out = unique_kafka_name("ds-eo-ref");
    create_kafka_topic(out, 2);
    auto run = start({spec(out).string(), "--checkpoint-dir", (dir_ / "ref").string(), "--checkpoint-interval", "100",
                      "--state-backend", GetParam()});
    ASSERT_EQ(run->wait_for(120000), std::optional<int>(0)) << run->err();
    expected = view(out);
  }
  ASSERT_EQ(expected.size(), 4u * kLines);  // a count per word read
  std::mt19937 rng(20261202);
  const std::string out = unique_kafka_name("ds-eo");
  create_kafka_topic(out, 2);
  const fs::path job = spec(out);
  const fs::path checkpoints = dir_ / "chk";
  const auto r = run_killed_and_restarted(
      [&](std::vector<std::string> args) { return start(std::move(args)); },
      {job.string(), "--checkpoint-dir", checkpoints.string(), "--checkpoint-interval", "50", "--state-backend",
       GetParam()},
      checkpoints, rng, {.kills = 20});
  ASSERT_EQ(r.exit_code, std::optional<int>(0)) << r.error;
  EXPECT_GE(r.kills, 20);
  EXPECT_GE(r.restored, 6) << "runs restore the checkpoints of earlier ones";
  EXPECT_EQ(view(out), expected);
}

INSTANTIATE_TEST_SUITE_P(Backends, KafkaDataStreamExactlyOnce, ::testing::Values("memory", "rocksdb"));

}  // namespace
}  // namespace clink::test
