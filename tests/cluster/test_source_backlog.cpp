// The sources' backlog metrics through a coordinator's REST API and Prometheus endpoint:
// a filesystem source's pendingBytes and numBytesIn (FLIP-33), and a Kafka source's
// pendingRecords and KafkaSourceReader.KafkaConsumer.records-lag-max, with Flink's names.
// The Kafka test runs against the broker of the `kafka` ctest fixture
// (CLINK_KAFKA_BOOTSTRAP); the values while reading are pinned by the connectors' tests.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "../kafka/kafka_test_env.hpp"
#include "coordinator_process.hpp"
#include "metrics_scrape.hpp"

namespace clink::test {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::ordered_json;

class SourceBacklog : public CoordinatorTest {
 protected:
  SourceBacklog() : CoordinatorTest("clink_source_backlog_test_") {}
  // Submits a SQL script; the id of its one job.
  std::string submit_sql(const std::string& sql) {
    auto posted = coordinator_->post("/api/v1/jobs/sql", json{{"script", sql}}.dump());
    EXPECT_EQ(posted.status, 202) << posted.body.dump();
    return posted.body["jobids"][0];
  }
  // The metric prefix ("<subtask>.<operator>.") of the operator of `vertex` that lists `metric`.
  std::string prefix_of(const std::string& job, const std::string& vertex, const std::string& metric) {
    for (int i = 0; i < 200; ++i) {
      for (const auto& m : coordinator_->get("/jobs/" + job + "/vertices/" + vertex + "/metrics").body)
        if (const std::string id = m["id"]; id.starts_with("0.") && id.ends_with("." + metric))
          return id.substr(0, id.size() - metric.size());
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "no " << metric << " on vertex " << vertex;
    return "";
  }
};

TEST_F(SourceBacklog, AFilesystemSourcesBytesReadAndPendingOverRest) {
  auto& c = start({"-D", "heartbeat.interval=200 ms"});
  fs::create_directories(dir_ / "in");
  std::ofstream(dir_ / "in" / "a.json") << "{\"id\": 1}\n{\"id\": 2}\n";  // 20 bytes
  std::ofstream(dir_ / "in" / "b.json") << "{\"id\": 30}\n";              // 11 bytes
  const std::string job = submit_sql(
      "CREATE TABLE f (id INT) WITH ('connector' = 'filesystem', 'path' = '" + (dir_ / "in").string() +
      "', 'format' = 'json');\n"
      "CREATE TABLE sunk (id INT) WITH ('connector' = 'blackhole');\n"
      "INSERT INTO sunk SELECT id FROM f;\n");
  ASSERT_EQ(c.wait_for_state(job, "FINISHED"), "FINISHED");
  const std::string src = c.get("/jobs/" + job).body["vertices"][0]["id"];
  const std::string op = prefix_of(job, src, "pendingBytes");
  EXPECT_EQ(vertex_values(c, job, src, {op + "pendingBytes", op + "numRecordsOut", "0.numBytesIn"}),
            (std::map<std::string, double>{{op + "pendingBytes", 0}, {op + "numRecordsOut", 3}, {"0.numBytesIn", 31}}))
      << "the task's numBytesIn is its source's: the bytes of the files read";
}

TEST_F(SourceBacklog, AKafkaSourcesPendingRecordsAndRecordsLagMaxOverRestAndPrometheus) {
  if (!have_parser(dir_)) GTEST_SKIP() << "no prometheus_client in " << venv_python() << ": run tests/flink/setup";
  const std::string topic = unique_kafka_name("backlog");
  create_kafka_topic(topic, 2);
  std::vector<KafkaRecord> records;
  for (int i = 0; i < 30; ++i) records.push_back(kafka_value("{\"id\": " + std::to_string(i) + "}", 0));
  for (int i = 0; i < 10; ++i) records.push_back(kafka_value("{\"id\": " + std::to_string(100 + i) + "}", 1));
  produce_kafka(topic, records);
  auto& c = start({"-D", "metrics.reporter.prom.port=0", "-D", "heartbeat.interval=200 ms"});
  std::smatch m;
  std::string out = slurp_file(dir_ / "coordinator.out");
  ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(prometheus: (http://[^:]+:\d+/metrics))"))) << out;
  const std::string url = m[1];
  const std::string job = submit_sql(
      "CREATE TABLE k (id INT) WITH ('connector' = 'kafka', 'topic' = '" + topic +
      "', 'properties.bootstrap.servers' = '" + kafka_bootstrap() +
      "', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json');\n"
      "CREATE TABLE sunk (id INT) WITH ('connector' = 'blackhole');\n"
      "INSERT INTO sunk SELECT id FROM k;\n");
  ASSERT_EQ(c.wait_for_state(job, "RUNNING"), "RUNNING");
  const std::string src = c.get("/jobs/" + job).body["vertices"][0]["id"];
  const std::string lag = "KafkaSourceReader.KafkaConsumer.records-lag-max";
  const std::string op = prefix_of(job, src, lag);
  // Unbounded: it reads all 40 and waits for more, with nothing left behind.
  const std::map<std::string, double> caught_up{{op + "numRecordsOut", 40}, {op + "pendingRecords", 0}, {op + lag, 0}};
  std::map<std::string, double> seen;
  for (int i = 0; i < 200 && seen != caught_up; ++i) {
    seen = vertex_values(c, job, src, {op + "numRecordsOut", op + "pendingRecords", op + lag});
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(seen, caught_up);

  auto samples = scrape(url, dir_);
  const std::map<std::string, std::string> labels{{"job_id", job}, {"task_id", src}, {"subtask_index", "0"}};
  auto lag_max = find(samples, "flink_taskmanager_job_task_operator_KafkaSourceReader_KafkaConsumer_records_lag_max", labels);
  ASSERT_EQ(lag_max.size(), 1u);
  EXPECT_EQ(lag_max[0].value, 0);
  EXPECT_EQ(lag_max[0].help, "records-lag-max (scope: taskmanager_job_task_operator_KafkaSourceReader_KafkaConsumer)");
  auto pending = find(samples, "flink_taskmanager_job_task_operator_pendingRecords", labels);
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].value, 0);
  EXPECT_TRUE(find(samples, "flink_taskmanager_job_task_operator_pendingBytes", labels).empty()) << "files only";
  EXPECT_EQ(c.patch("/jobs/" + job + "?mode=cancel").status, 202);
}

}  // namespace
}  // namespace clink::test
