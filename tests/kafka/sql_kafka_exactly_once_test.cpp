// Exactly-once through Kafka under failure: SQL jobs kafka -> ... -> kafka run by the real
// `clink` binary, SIGKILLed at random points and restarted from their latest checkpoint,
// and rescaled through savepoints; what a read_committed reader sees afterwards must be
// what a failure-free run writes, row for row (upsert-kafka: its compacted view, by key).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "../support/clink_process.hpp"
#include "../support/kill_restart.hpp"
#include "kafka_test_env.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;

constexpr int kRecords = 600000;
constexpr int kInputPartitions = 3;

// The input every job reads: kRecords bids {"id", "k" (one of 7 keys), "ts" (ms)}, in
// event-time order per partition, 4 ms apart.
const std::string& input_topic() {
  static const std::string topic = [] {
    std::string t = unique_kafka_name("eo-input");
    create_kafka_topic(t, kInputPartitions);
    std::vector<KafkaRecord> records;
    records.reserve(kRecords);
    for (int i = 0; i < kRecords; ++i)
      records.push_back(kafka_value("{\"id\":" + std::to_string(i) + ",\"k\":\"k" + std::to_string(i % 7) +
                                        "\",\"ts\":" + std::to_string(1700000000000LL + 4LL * i) + "}",
                                    i % kInputPartitions));
    produce_kafka(t, records);
    return t;
  }();
  return topic;
}

// The rows only in `got` and only in `want` (both sorted), whole: an EXPECT_EQ of the two
// vectors prints only their first rows, which hides where an exactly-once run went wrong.
std::string difference(const std::vector<std::string>& got, const std::vector<std::string>& want) {
  std::vector<std::string> extra, missing;
  std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(extra));
  std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::back_inserter(missing));
  std::string out = std::to_string(got.size()) + " rows, expected " + std::to_string(want.size());
  for (const auto& r : extra) out += "\n  extra:   " + r;
  for (const auto& r : missing) out += "\n  missing: " + r;
  return out;
}

struct Job {
  std::string name;
  std::string sink_ddl;  // CREATE TABLE dst ... (${OUT}, ${TX})
  std::string insert;
  bool upsert = false;
};

std::vector<Job> jobs() {
  const std::string eo = "'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = '${TX}'";
  return {
      {"projection",
       "CREATE TABLE dst (id BIGINT, k STRING) WITH ('connector' = 'kafka', 'topic' = '${OUT}', "
       "'properties.bootstrap.servers' = '${B}', 'format' = 'json', " + eo + ");\n",
       "INSERT INTO dst SELECT id, k FROM src WHERE MOD(id, 3) <> 1;\n"},
      {"window",
       "CREATE TABLE dst (k STRING, ws TIMESTAMP(3), c BIGINT) WITH ('connector' = 'kafka', 'topic' = '${OUT}', "
       "'properties.bootstrap.servers' = '${B}', 'format' = 'json', " + eo + ");\n",
       "INSERT INTO dst SELECT k, window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(rt), "
       "INTERVAL '10' SECOND)) GROUP BY k, window_start, window_end;\n"},
      {"group_by_upsert",
       "CREATE TABLE dst (k STRING, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ("
       "'connector' = 'upsert-kafka', 'topic' = '${OUT}', 'properties.bootstrap.servers' = '${B}', "
       "'key.format' = 'json', 'value.format' = 'json', " + eo + ");\n",
       "INSERT INTO dst SELECT k, COUNT(*), SUM(id) FROM src GROUP BY k;\n", true},
  };
}

class KafkaExactlyOnce : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / unique_kafka_name("clink-kafka-eo");
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes the job's script for output topic `out` and returns its path.
  fs::path script(const Job& job, const std::string& out) {
    std::string sql =
        "CREATE TABLE src (id BIGINT, k STRING NOT NULL, ts BIGINT, rt AS TO_TIMESTAMP_LTZ(ts, 3), "
        "WATERMARK FOR rt AS rt - INTERVAL '1' SECOND) WITH ('connector' = 'kafka', 'topic' = '" + input_topic() +
        "', 'properties.bootstrap.servers' = '${B}', 'scan.startup.mode' = 'earliest-offset', "
        "'scan.bounded.mode' = 'latest-offset', 'format' = 'json');\n" + job.sink_ddl + job.insert;
    sql = std::regex_replace(sql, std::regex("\\$\\{B\\}"), kafka_bootstrap());
    sql = std::regex_replace(sql, std::regex("\\$\\{OUT\\}"), out);
    sql = std::regex_replace(sql, std::regex("\\$\\{TX\\}"), out + "-tx");
    fs::path p = dir_ / (out + ".sql");
    std::ofstream(p) << sql;
    return p;
  }

  std::unique_ptr<ClinkProcess> start(std::vector<std::string> args) {
    args.insert(args.begin(), "run");
    return std::make_unique<ClinkProcess>(args, dir_);
  }

  // What a read_committed reader of `topic` sees: every value (sorted), or for an upsert
  // topic its compacted view "key -> value".
  static std::vector<std::string> view(const std::string& topic, bool upsert) {
    std::vector<std::string> out;
    if (upsert) {
      std::map<std::string, std::string> latest;
      for (const auto& r : consume_kafka(topic)) {
        if (r.has_value) latest[r.key] = r.value;
        else latest.erase(r.key);
      }
      for (const auto& [k, v] : latest) out.push_back(k + " -> " + v);
    } else {
      out = values_of(consume_kafka(topic));
      std::sort(out.begin(), out.end());
    }
    return out;
  }

  std::vector<std::string> failure_free(const Job& job) {
    const std::string out = unique_kafka_name("eo-ref-" + job.name);
    create_kafka_topic(out, 2);
    auto run = start({script(job, out).string(), "--checkpoint-dir", (dir_ / ("ref-" + job.name)).string(),
                      "--checkpoint-interval", "100", "--state-backend", GetParam()});
    EXPECT_EQ(run->wait_for(120000), std::optional<int>(0)) << run->err();
    return view(out, job.upsert);
  }

  fs::path dir_;
};

// SIGKILL at >= 20 random points, each run restarted from the latest checkpoint (or from
// scratch before the first), then run to the end (tests/support/kill_restart.hpp).
TEST_P(KafkaExactlyOnce, KilledAtRandomPointsAndRestarted) {
  std::mt19937 rng(20261201);
  for (const Job& job : jobs()) {
    SCOPED_TRACE(job.name);
    const std::vector<std::string> expected = failure_free(job);
    ASSERT_FALSE(expected.empty());
    const std::string out = unique_kafka_name("eo-" + job.name);
    create_kafka_topic(out, 2);
    const fs::path sql = script(job, out);
    const fs::path checkpoints = dir_ / ("chk-" + job.name);
    const auto r = run_killed_and_restarted(
        [&](std::vector<std::string> args) { return start(std::move(args)); },
        {sql.string(), "--checkpoint-dir", checkpoints.string(), "--checkpoint-interval", "50", "--state-backend",
         GetParam()},
        checkpoints, rng, {.kills = 20, .min_ms = 10, .max_ms = 100});
    ASSERT_EQ(r.exit_code, std::optional<int>(0)) << r.error;
    EXPECT_GE(r.kills, 20);
    EXPECT_GE(r.restored, 5) << "later runs restore the checkpoints of earlier ones";
    const auto got = view(out, job.upsert);
    EXPECT_TRUE(got == expected) << difference(got, expected);
  }
}

// Rescaled 1 -> 2 -> 4 -> 2 through savepoints (SIGTERM with --savepoint-on-stop).
TEST_P(KafkaExactlyOnce, RescaledThroughSavepoints) {
  for (const Job& job : jobs()) {
    SCOPED_TRACE(job.name);
    const std::vector<std::string> expected = failure_free(job);
    const std::string out = unique_kafka_name("eo-rescale-" + job.name);
    create_kafka_topic(out, 2);
    const fs::path sql = script(job, out);
    std::optional<int> code;
    fs::path previous;
    int stops = 0;
    const int parallelism[] = {1, 2, 4, 2};
    for (int step = 0; step < 4 && !code; ++step) {
      fs::path savepoint = dir_ / ("sp-" + job.name + "-" + std::to_string(step));
      const fs::path checkpoints = dir_ / ("rc-" + job.name + "-" + std::to_string(step));
      std::vector<std::string> args{sql.string(), "-p", std::to_string(parallelism[step]), "--checkpoint-dir",
                                    checkpoints.string(), "--checkpoint-interval", "50",
                                    "--state-backend", GetParam(), "--savepoint-on-stop", savepoint.string()};
      if (!previous.empty()) {
        args.push_back("--from-savepoint");
        args.push_back(previous.string());
      }
      auto run = start(args);
      if (step < 3) {
        // Stopped once it has made some progress: its first checkpoint (a slow machine may
        // take a while to get there). A job that ends by itself before the stop takes
        // effect exits 0 with no savepoint: it is done.
        code = run->wait_for(20);
        while (!code && newest_checkpoint(checkpoints) < 0) code = run->wait_for(10);
        if (!code) {
          run->kill(SIGTERM);
          code = run->wait_for(60000);
          ASSERT_EQ(code, std::optional<int>(0)) << run->err();
          if (fs::exists(savepoint)) {
            code.reset();
            previous = savepoint;
            ++stops;
          }
        }
      } else {
        code = run->wait_for(120000);
      }
      if (code && *code != 0) ADD_FAILURE() << run->err();
    }
    ASSERT_EQ(code, std::optional<int>(0));
    EXPECT_GE(stops, 2) << "rescaled at least 1 -> 2 -> 4";
    const auto got = view(out, job.upsert);
    EXPECT_TRUE(got == expected) << difference(got, expected);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, KafkaExactlyOnce, ::testing::Values("memory", "rocksdb"));

}  // namespace
}  // namespace clink::test
