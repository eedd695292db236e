// Flink's metrics in clink, against real processes: the REST metric routes of a
// coordinator (records in / out of a bounded job equal its data), its Prometheus endpoint
// scraped twice while a job runs and parsed by prometheus_client's text-format parser
// (tests/cluster/prometheus_scrape.py, in the venv of tests/flink/setup), a job on
// worker processes (metrics and bytes over the network come in heartbeats), and
// `clink run --set metrics.reporter.prom.port=...`. Plus unit tests of the rates and
// the reporter's options.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "clink/cluster/rest/prometheus.hpp"
#include "clink/core/error.hpp"
#include "clink/metrics/metric_registry.hpp"
#include "clink/runtime/job_graph.hpp"
#include "../../src/cluster/rest/job_metrics.hpp"
#include "coordinator_process.hpp"
#include "metrics_scrape.hpp"
#include "../support/clink_process.hpp"

namespace clink::test {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using json = nlohmann::ordered_json;

// ---- unit tests ----

TEST(MetricRates, RateOverTheSampledWindowAndZeroBeforeASecondPassed) {
  MetricRegistry r;
  EXPECT_EQ(r.rate("x", 0, 10'000), 0) << "one sample: no rate yet";
  EXPECT_EQ(r.rate("x", 500, 10'400), 0) << "less than a second of samples";
  EXPECT_DOUBLE_EQ(r.rate("x", 1000, 11'000), 1000.0);
  EXPECT_DOUBLE_EQ(r.rate("x", 3000, 12'000), 1500.0) << "over the window's two seconds";
  // 61 s later the first samples left the 60 s window: the rate is the recent one.
  for (int s = 13; s <= 73; ++s) r.rate("x", 3000 + (s - 12) * 10.0, s * 1000);
  EXPECT_NEAR(r.rate("x", 3000 + 62 * 10.0, 74'000), 10.0, 0.5);
  EXPECT_EQ(r.rate("y", 7, 74'000), 0) << "rates are per key";
  EXPECT_EQ(r.rate("x", 5, 75'000), 0) << "a counter that went down (a new attempt) starts over";
}

TEST(MetricValues, TextIsWhatFlinksRestAnswers) {
  using cluster::metrics::MetricValue;
  EXPECT_EQ(MetricValue::of_long("a", 1100).text(), "1100");
  EXPECT_EQ(MetricValue::of_double("a", 6.5).text(), "6.5");
  EXPECT_EQ(MetricValue::of_double("a", 30).text(), "30.0");
  EXPECT_EQ(MetricValue::of_double("a", std::nan("")).text(), "NaN");
  EXPECT_EQ(MetricValue::of_string("a", "n/a").text(), "n/a");
  EXPECT_EQ(cluster::metrics::rest_component("Source: src[1]"), "Source__src[1]");
  EXPECT_EQ(cluster::metrics::rest_component("a.b,c"), "a_b_c");
}

TEST(PrometheusOptions, FlinksPortOrRangeLoopbackUnlessAHostIsSet) {
  EXPECT_FALSE(cluster::prometheus_options({}).has_value()) << "no port: no reporter";
  auto one = cluster::prometheus_options({{"metrics.reporter.prom.port", "9250"}});
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->host, "127.0.0.1");
  EXPECT_EQ(one->first_port, 9250);
  EXPECT_EQ(one->last_port, 9250);
  auto range = cluster::prometheus_options({{"metrics.reporter.prom.port", "9250-9260"},
                                            {"metrics.reporter.prom.host", "0.0.0.0"}});
  ASSERT_TRUE(range.has_value());
  EXPECT_EQ(range->first_port, 9250);
  EXPECT_EQ(range->last_port, 9260);
  EXPECT_EQ(range->host, "0.0.0.0");
  for (const char* bad : {"x", "9260-9250", "70000", "1-"}) {
    try {
      cluster::prometheus_options({{"metrics.reporter.prom.port", bad}});
      ADD_FAILURE() << bad << " was accepted";
    } catch (const ClinkError& e) {
      EXPECT_THAT(e.what(), HasSubstr("metrics.reporter.prom.port")) << bad;
    }
  }
}

// ---- against processes ----

class ClusterMetrics : public CoordinatorTest {
 protected:
  ClusterMetrics() : CoordinatorTest("clink_metrics_test_") {}
  // The one job a file submits.
  std::string submit_one(const std::string& file) {
    auto ids = submit(file);
    EXPECT_EQ(ids.size(), 1u);
    return ids.empty() ? std::string() : ids.front();
  }
  // The records in / out of the bounded counts job (source -> count -> sink, n events)
  // as its vertices' metrics say: they must equal the data.
  void expect_counts_metrics(const std::string& job, int n) {
    auto& c = *coordinator_;
    auto d = c.get("/jobs/" + job).body;
    ASSERT_EQ(d["vertices"].size(), 2u);
    std::string src = d["vertices"][0]["id"], counts = d["vertices"][1]["id"];

    auto listed = c.get("/jobs/" + job + "/vertices/" + src + "/metrics").body;
    std::set<std::string> ids;
    for (const auto& m : listed) ids.insert(m["id"].get<std::string>());
    for (const char* id : {"0.numRecordsIn", "0.numRecordsOut", "0.numRecordsOutPerSecond", "0.numBytesOut",
                           "0.busyTimeMsPerSecond", "0.idleTimeMsPerSecond", "0.backPressuredTimeMsPerSecond",
                           "0.events.numRecordsOut", "0.events.currentOutputWatermark", "0.events.watermarkLag"})
      EXPECT_TRUE(ids.count(id)) << id << " not in " << listed.dump();

    auto s = vertex_values(c, job, src, {"0.numRecordsIn", "0.numRecordsOut", "0.events.numRecordsOut", "nonexistent"});
    EXPECT_EQ(s, (std::map<std::string, double>{{"0.numRecordsIn", 0}, {"0.numRecordsOut", n}, {"0.events.numRecordsOut", n}}))
        << "unknown names are left out, as Flink";

    std::vector<std::string> want;
    for (int i = 0; i < 2; ++i)
      for (const char* m : {"numRecordsIn", "numRecordsOut", "count.numRecordsIn", "count.numRecordsOut",
                            "sink.numRecordsIn", "count.currentInputWatermark", "numBytesIn"})
        want.push_back(std::to_string(i) + "." + m);
    auto v = vertex_values(c, job, counts, want);
    ASSERT_EQ(v.size(), want.size());
    auto sum = [&](const std::string& m) { return v["0." + m] + v["1." + m]; };
    EXPECT_EQ(sum("numRecordsIn"), n);
    EXPECT_EQ(sum("numRecordsOut"), 0) << "a sink's writes leave the job (Flink's task numRecordsOut)";
    EXPECT_EQ(sum("count.numRecordsIn"), n);
    EXPECT_EQ(sum("count.numRecordsOut"), n) << "count emits every update";
    EXPECT_EQ(sum("sink.numRecordsIn"), n);
    EXPECT_EQ(v["0.count.currentInputWatermark"], static_cast<double>(std::numeric_limits<std::int64_t>::max()));
    // What crossed the network is counted at both ends alike (0 when all ran in one process).
    auto sent = vertex_values(c, job, src, {"0.numBytesOut"});
    EXPECT_EQ(sent["0.numBytesOut"], sum("numBytesIn"));

    auto jm = c.get("/jobs/" + job + "/metrics?get=numRestarts,numberOfCompletedCheckpoints,lastCheckpointSize,"
                                     "lastCheckpointExternalPath,uptime").body;
    EXPECT_EQ(jm, json::parse(R"([{"id": "numRestarts", "value": "0"}, {"id": "numberOfCompletedCheckpoints", "value": "0"},
        {"id": "lastCheckpointSize", "value": "-1"}, {"id": "lastCheckpointExternalPath", "value": "n/a"},
        {"id": "uptime", "value": "-1"}])"));
  }
};

TEST_F(ClusterMetrics, ABoundedJobsRecordsInAndOutEqualTheData) {
  auto& c = start();
  const int n = 2000;
  std::string job = submit_one(write_counts_spec(dir_, n, 4000));
  ASSERT_EQ(c.wait_for_state(job, "FINISHED"), "FINISHED");
  expect_counts_metrics(job, n);

  auto names = c.get("/jobs/" + job + "/metrics").body;
  EXPECT_THAT(names.dump(), HasSubstr(R"({"id":"numberOfFailedCheckpoints"})"));
  EXPECT_THAT(names.dump(), HasSubstr(R"({"id":"lastCheckpointDuration"})"));
  EXPECT_EQ(c.get("/jobmanager/metrics?get=numRunningJobs,taskSlotsTotal,numRegisteredTaskManagers").body,
            json::parse(R"([{"id": "numRunningJobs", "value": "0"}, {"id": "taskSlotsTotal", "value": "4"},
                            {"id": "numRegisteredTaskManagers", "value": "1"}])"));
  EXPECT_EQ(c.get("/v1/jobs/" + job + "/metrics?get=numRestarts").body, json::parse(R"([{"id": "numRestarts", "value": "0"}])"));
  EXPECT_EQ(c.get("/taskmanagers/local/metrics").body, json::array());
  EXPECT_EQ(c.get("/taskmanagers/nope/metrics").status, 404);
  EXPECT_EQ(c.get("/jobs/" + std::string(32, 'a') + "/metrics").status, 404);
  EXPECT_EQ(c.get("/jobs/" + job + "/vertices/" + std::string(32, 'f') + "/metrics").status, 404);
  EXPECT_EQ(c.get("/jobs/xyz/metrics").status, 400);
}

TEST_F(ClusterMetrics, AJobOnWorkerProcessesReportsItsMetricsAndNetworkBytes) {
  auto& c = start({"--local-slots", "0"});
  std::vector<std::unique_ptr<ClinkProcess>> workers;
  for (int i = 0; i < 2; ++i) {
    fs::path wd = dir_ / ("w" + std::to_string(i));
    fs::create_directories(wd);
    // One slot each: the job's two parallel pipelines land on different workers.
    workers.push_back(std::make_unique<ClinkProcess>(
        std::vector<std::string>{"worker", "--slots", "1", "--coordinator", c.address()}, wd));
    ASSERT_TRUE(workers.back()->wait_for_output("data port", 10'000)) << workers.back()->err();
  }
  const int n = 3000;
  std::string job = submit_one(write_counts_spec(dir_, n, 6000));
  ASSERT_EQ(c.wait_for_state(job, "FINISHED", 60), "FINISHED");
  expect_counts_metrics(job, n);
  auto d = c.get("/jobs/" + job).body;
  auto sent = vertex_values(c, job, d["vertices"][0]["id"], {"0.numBytesOut", "0.events.numRecordsOut"});
  EXPECT_GT(sent["0.numBytesOut"], 0) << "a count subtask runs on the other worker: batches crossed the network";

  // Where each subtask ran (Flink's taskmanager-id and endpoint, kept after the end):
  // subtask i of every vertex in slot i, one slot per worker, so one worker each.
  std::map<std::string, std::string> endpoints;  // task manager id -> host:data port
  const auto tms = c.get("/taskmanagers").body;
  for (const auto& tm : tms["taskmanagers"])
    endpoints[tm["id"]] = "127.0.0.1:" + std::to_string(tm["dataPort"].get<int>());
  ASSERT_EQ(endpoints.size(), 2u);
  auto counts = c.get("/jobs/" + job + "/vertices/" + d["vertices"][1]["id"].get<std::string>()).body["subtasks"];
  auto source = c.get("/jobs/" + job + "/vertices/" + d["vertices"][0]["id"].get<std::string>()).body["subtasks"];
  ASSERT_EQ(counts.size(), 2u);
  ASSERT_EQ(source.size(), 1u);
  const std::string tm0 = counts[0]["taskmanager-id"], tm1 = counts[1]["taskmanager-id"];
  EXPECT_NE(tm0, tm1);
  EXPECT_EQ(endpoints.count(tm0) + endpoints.count(tm1), 2u) << tm0 << " " << tm1;
  EXPECT_EQ(counts[0]["endpoint"], endpoints[tm0]);
  EXPECT_EQ(counts[1]["endpoint"], endpoints[tm1]);
  EXPECT_EQ(source[0]["taskmanager-id"], tm0) << "subtask 0 of every vertex shares slot 0";
}

// Polls a savepoint operation until it is no longer in progress; its answer.
json await_savepoint(CoordinatorProcess& c, const std::string& job, const std::string& trigger) {
  json r;
  for (int i = 0; i < 600; ++i) {
    r = c.get("/jobs/" + job + "/savepoints/" + trigger).body;
    if (r["status"]["id"] != "IN_PROGRESS") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return r;
}

// State size per operator: clink's operator-scope lastCheckpointSize / lastCheckpointFullSize
// and Flink's per-vertex checkpointed_size / state_size of a checkpoint's details are what
// the operator subtasks' files in the checkpoint take: over the job, every file of the
// savepoint but its _metadata.
TEST_F(ClusterMetrics, StateSizePerOperatorIsWhatItsFilesInTheLastCheckpointTake) {
  auto& c = start({"-D", "heartbeat.interval=500 ms"});
  std::string job = submit_one(write_counts_spec(dir_, 1'000'000, 2000));
  ASSERT_EQ(c.wait_for_state(job, "RUNNING"), "RUNNING");
  auto d = c.get("/jobs/" + job).body;
  const std::string src = d["vertices"][0]["id"], counts = d["vertices"][1]["id"];
  EXPECT_EQ(vertex_values(c, job, counts, {"1.count.lastCheckpointSize", "1.sink.lastCheckpointFullSize",
                                           "1.lastCheckpointSyncDuration"}),
            (std::map<std::string, double>{{"1.count.lastCheckpointSize", -1}, {"1.sink.lastCheckpointFullSize", -1},
                                           {"1.lastCheckpointSyncDuration", -1}}))
      << "no checkpoint yet";
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  // A savepoint and the job cancelled: the savepoint stays the last completed checkpoint.
  auto t = c.post("/jobs/" + job + "/savepoints",
                  json{{"target-directory", (dir_ / "sp").string()}, {"cancel-job", true}}.dump());
  ASSERT_EQ(t.status, 202) << t.error;
  auto done = await_savepoint(c, job, t.body["request-id"]);
  ASSERT_EQ(done["status"]["id"], "COMPLETED") << done.dump();
  const fs::path location = done["operation"]["location"].get<std::string>();
  ASSERT_EQ(c.wait_for_state(job, "CANCELED"), "CANCELED");

  std::int64_t files = 0;  // the savepoint's files, but its metadata
  for (const auto& e : fs::recursive_directory_iterator(location))
    if (e.is_regular_file() && e.path().filename() != "_metadata") files += static_cast<std::int64_t>(e.file_size());
  const std::int64_t id = c.get("/jobs/" + job + "/checkpoints").body["latest"]["savepoint"]["id"];
  auto details = c.get("/jobs/" + job + "/checkpoints/details/" + std::to_string(id)).body;
  struct Vertex {
    std::string id;
    std::vector<std::string> operators;
    int parallelism;
  };
  std::int64_t total = 0;
  for (const Vertex& v : {Vertex{src, {"events"}, 1}, Vertex{counts, {"count", "sink"}, 2}}) {
    std::vector<std::string> ids;
    for (int i = 0; i < v.parallelism; ++i)
      for (const auto& op : v.operators)
        for (const char* m : {"lastCheckpointSize", "lastCheckpointFullSize"})
          ids.push_back(std::to_string(i) + "." + op + "." + m);
    auto values = vertex_values(c, job, v.id, ids);
    ASSERT_EQ(values.size(), ids.size()) << v.id;
    std::int64_t checkpointed = 0, full = 0;
    for (const auto& [name, value] : values) {
      EXPECT_GE(value, 0) << name;
      (name.ends_with("FullSize") ? full : checkpointed) += static_cast<std::int64_t>(value);
    }
    const auto& task = details["tasks"][v.id];
    EXPECT_EQ(task["state_size"].get<std::int64_t>(), full) << v.id;
    EXPECT_EQ(task["checkpointed_size"].get<std::int64_t>(), checkpointed) << v.id;
    EXPECT_EQ(checkpointed, full) << "a savepoint is self-contained: nothing shared with an earlier one";
    EXPECT_GT(full, 0) << v.id << ": the source's position, the counts of its keys";
    total += full;
  }
  EXPECT_EQ(total, files) << "every file of the savepoint is some operator subtask's state";

  // Per subtask, Flink's /checkpoints/details/:id/subtasks/:vertexid: each count subtask's
  // operators' state (count and the sink chained to it).
  auto per = c.get("/jobs/" + job + "/checkpoints/details/" + std::to_string(id) + "/subtasks/" + counts).body;
  auto ops = vertex_values(c, job, counts, {"0.count.lastCheckpointFullSize", "0.sink.lastCheckpointFullSize",
                                            "1.count.lastCheckpointFullSize", "1.sink.lastCheckpointFullSize"});
  ASSERT_EQ(per["subtasks"].size(), 2u) << per.dump();
  std::int64_t most = 0, last_ack = 0, most_sync = -1, most_async = -1;
  const auto task_times = vertex_values(c, job, counts, {"0.lastCheckpointSyncDuration", "0.lastCheckpointAsyncDuration",
                                                         "1.lastCheckpointSyncDuration", "1.lastCheckpointAsyncDuration"});
  ASSERT_EQ(task_times.size(), 4u);
  for (int i = 0; i < 2; ++i) {
    const auto& sub = per["subtasks"][i];
    // Its snapshot's synchronous and asynchronous parts (ms), as Flink's, and the same as
    // the task's metrics: the counts' keyed state is written after the barrier.
    ASSERT_TRUE(sub["checkpoint"]["sync"].is_number_integer()) << sub.dump();
    ASSERT_TRUE(sub["checkpoint"]["async"].is_number_integer()) << sub.dump();
    const std::int64_t sync = sub["checkpoint"]["sync"], async = sub["checkpoint"]["async"];
    EXPECT_GE(sync, 0) << i;
    EXPECT_GE(async, 0) << i;
    EXPECT_LE(sync + async, sub["end_to_end_duration"].get<std::int64_t>() + 1) << i;
    EXPECT_EQ(task_times.at(std::to_string(i) + ".lastCheckpointSyncDuration"), static_cast<double>(sync)) << i;
    EXPECT_EQ(task_times.at(std::to_string(i) + ".lastCheckpointAsyncDuration"), static_cast<double>(async)) << i;
    most_sync = std::max(most_sync, sync);
    most_async = std::max(most_async, async);
    const std::string n = std::to_string(i);
    const auto size = static_cast<std::int64_t>(ops[n + ".count.lastCheckpointFullSize"] + ops[n + ".sink.lastCheckpointFullSize"]);
    EXPECT_EQ(sub["index"], i);
    EXPECT_EQ(sub["status"], "completed");
    EXPECT_EQ(sub["state_size"].get<std::int64_t>(), size) << i;
    EXPECT_EQ(sub["checkpointed_size"].get<std::int64_t>(), size) << i;
    most = std::max(most, size);
    // Its own acknowledgement: after the trigger, by the checkpoint's end; no alignment
    // (one input channel: the one source subtask).
    const std::int64_t trigger = details["trigger_timestamp"], end_to_end = sub["end_to_end_duration"];
    EXPECT_EQ(sub["ack_timestamp"].get<std::int64_t>(), trigger + end_to_end) << i;
    EXPECT_GE(end_to_end, 0) << i;
    EXPECT_LE(end_to_end, details["end_to_end_duration"].get<std::int64_t>()) << i;
    EXPECT_EQ(sub["alignment"]["duration"], 0) << i;
    last_ack = std::max(last_ack, sub["ack_timestamp"].get<std::int64_t>());
  }
  EXPECT_EQ(details["tasks"][counts]["latest_ack_timestamp"], last_ack) << "the vertex's last acknowledgement";
  EXPECT_EQ(per["summary"]["alignment"]["duration"]["max"], 0);
  EXPECT_EQ(per["summary"]["checkpoint_duration"]["sync"]["max"], most_sync);
  EXPECT_EQ(per["summary"]["checkpoint_duration"]["async"]["max"], most_async);
  EXPECT_EQ(per["state_size"], details["tasks"][counts]["state_size"]);
  EXPECT_EQ(per["summary"]["state_size"]["max"].get<std::int64_t>(), most);
  EXPECT_EQ(c.get("/jobs/" + job + "/checkpoints/details/" + std::to_string(id) + "/subtasks/" + std::string(32, 'f')).status,
            404);
  const auto metadata = static_cast<std::int64_t>(fs::file_size(location / "_metadata"));
  auto jm = c.get("/jobs/" + job + "/metrics?get=lastCheckpointSize").body;
  EXPECT_EQ(jm[0]["value"], std::to_string(files + metadata)) << "the job's: the whole directory";
}

// Incremental RocksDB checkpoints: a checkpoint's checkpointed size is what it wrote (its
// own directory's files and the shared SSTs it uploaded, named "-c<id>-"), its state size
// also counts the SSTs it took over from earlier checkpoints.
TEST_F(ClusterMetrics, IncrementalCheckpointsCountOnlyTheSstsTheyUploaded) {
  auto& c = start();
  const fs::path ck = dir_ / "ck";
  // A slow source: RocksDB's per-record work must not backpressure the barriers on a loaded machine.
  json body{{"spec", json::parse(slurp_file(write_counts_spec(dir_, 1'000'000, 400)))},
            {"options",
             {{"execution.checkpointing.interval", "150 ms"}, {"execution.checkpointing.dir", ck.string()},
              {"execution.checkpointing.num-retained", "100"}, {"execution.checkpointing.incremental", "true"},
              {"state.backend.type", "rocksdb"}}}};
  auto submitted = c.post("/api/v1/jobs/spec", body.dump());
  ASSERT_EQ(submitted.status, 202) << submitted.body.dump();
  const std::string job = submitted.body["jobid"];
  json stats;
  for (int i = 0; i < 1200; ++i) {
    stats = c.get("/jobs/" + job + "/checkpoints").body;
    if (stats.value("counts", json::object()).value("completed", 0) >= 4) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  c.patch("/jobs/" + job);
  ASSERT_EQ(c.wait_for_state(job, "CANCELED"), "CANCELED");
  stats = c.get("/jobs/" + job + "/checkpoints").body;
  ASSERT_GE(stats["history"].size(), 4u) << stats["history"].dump() << c.stderr_text();
  int reused = 0;
  for (const auto& h : stats["history"]) {
    if (h["status"] != "COMPLETED") continue;
    const std::int64_t id = h["id"];
    const fs::path chk = h["external_path"].get<std::string>();
    std::int64_t written = 0;
    for (const auto& e : fs::recursive_directory_iterator(chk))
      if (e.is_regular_file() && e.path().filename() != "_metadata") written += static_cast<std::int64_t>(e.file_size());
    const std::string mark = "-c" + std::to_string(id) + "-";
    for (const auto& e : fs::directory_iterator(chk.parent_path() / "shared"))
      if (e.path().filename().string().find(mark) != std::string::npos) written += static_cast<std::int64_t>(e.file_size());
    std::int64_t checkpointed = 0, full = 0;
    const auto details = c.get("/jobs/" + job + "/checkpoints/details/" + std::to_string(id)).body;
    for (const auto& [vid, task] : details["tasks"].items()) {
      checkpointed += task["checkpointed_size"].get<std::int64_t>();
      full += task["state_size"].get<std::int64_t>();
    }
    EXPECT_EQ(checkpointed, written) << "checkpoint " << id;
    EXPECT_GE(full, checkpointed) << "checkpoint " << id;
    reused += full > checkpointed;
  }
  EXPECT_GT(reused, 0) << "a later checkpoint references SSTs an earlier one uploaded";
}

// Over a cluster's heartbeats: dead letters by reason (a filesystem source's malformed
// JSON lines routed to the dead-letter table), and FLIP-33's pendingRecords of a bounded
// datagen source (number-of-rows): the rows it has left, 0 at its end.
TEST_F(ClusterMetrics, DeadLettersByReasonAndDatagenPendingRecordsComeWithHeartbeats) {
  auto& c = start({"-D", "heartbeat.interval=200 ms"});
  std::ofstream(dir_ / "in.json") << R"({"id": 1, "name": "a"}
{"id": "x", "name": "b"}
{"id": 3, "name": "c"}
{"id": "y", "name": "d"}
)";
  const std::string sql =
      "CREATE TABLE b (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = '" + (dir_ / "in.json").string() +
      "', 'format' = 'json');\n"
      "CREATE TABLE dlq (reason STRING, origin STRING, `position` STRING, payload STRING) WITH ("
      "'connector' = 'filesystem', 'path' = '" + (dir_ / "dlq").string() + "', 'format' = 'json');\n"
      "CREATE TABLE good (id INT, name STRING) WITH ('connector' = 'blackhole');\n"
      "SET 'sql.dead-letter' = 'dlq';\n"
      "INSERT INTO good SELECT * FROM b;\n";
  auto posted = c.post("/api/v1/jobs/sql", json{{"script", sql}}.dump());
  ASSERT_EQ(posted.status, 202) << posted.body.dump();
  const std::string parse_job = posted.body["jobids"][0];
  ASSERT_EQ(c.wait_for_state(parse_job, "FINISHED"), "FINISHED");
  const std::string src = c.get("/jobs/" + parse_job).body["vertices"][0]["id"];
  std::vector<std::string> names;  // "0.<operator>.numDeadLetters", "0.<operator>.deadLetters.<reason>"
  for (const auto& m : c.get("/jobs/" + parse_job + "/vertices/" + src + "/metrics").body)
    if (m["id"].get<std::string>().find("eadLetters") != std::string::npos) names.push_back(m["id"]);
  std::map<std::string, double> dead;  // over the vertex's operators (the source counts them)
  for (const auto& [name, value] : vertex_values(c, parse_job, src, names))
    dead[name.substr(name.find('.', 2) + 1)] += value;
  EXPECT_EQ(dead, (std::map<std::string, double>{{"numDeadLetters", 2}, {"deadLetters.parse-error", 2}}));

  const int rows = 300;
  posted = c.post("/api/v1/jobs/sql",
                  json{{"script", "CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '" +
                                      std::to_string(rows) + "', 'rows-per-second' = '100');\n"
                                      "CREATE TABLE sunk (id BIGINT) WITH ('connector' = 'blackhole');\n"
                                      "INSERT INTO sunk SELECT id FROM g;\n"}}
                      .dump());
  ASSERT_EQ(posted.status, 202) << posted.body.dump();
  const std::string gen_job = posted.body["jobids"][0];
  ASSERT_EQ(c.wait_for_state(gen_job, "RUNNING"), "RUNNING");
  const std::string gen = c.get("/jobs/" + gen_job).body["vertices"][0]["id"];
  std::string op;  // the source operator's metric prefix, "0.<name>.": the one with pendingRecords
  for (int i = 0; i < 100 && op.empty(); ++i) {
    for (const auto& m : c.get("/jobs/" + gen_job + "/vertices/" + gen + "/metrics").body)
      if (const std::string name = m["id"]; name.ends_with(".pendingRecords"))
        op = name.substr(0, name.size() - std::string("pendingRecords").size());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(op.empty()) << "no pendingRecords";
  // While it runs: what it emitted and what it has left make the rows (a heartbeat copies
  // both from one snapshot; a batch between the two reads is retried).
  bool seen_running = false;
  for (int i = 0; i < 100 && !seen_running; ++i) {
    auto v = vertex_values(c, gen_job, gen, {op + "pendingRecords", op + "numRecordsOut"});
    seen_running = v.size() == 2 && v[op + "pendingRecords"] > 0 && v[op + "numRecordsOut"] > 0 &&
                   v[op + "pendingRecords"] + v[op + "numRecordsOut"] == rows;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(seen_running) << "no read with 0 < pendingRecords = " << rows << " - numRecordsOut";
  ASSERT_EQ(c.wait_for_state(gen_job, "FINISHED"), "FINISHED");
  EXPECT_EQ(vertex_values(c, gen_job, gen, {op + "pendingRecords", op + "numRecordsOut"}),
            (std::map<std::string, double>{{op + "pendingRecords", 0}, {op + "numRecordsOut", rows}}));
}

// The Prometheus endpoint of a coordinator (Flink's metrics.reporter.prom.port, given
// with -D), scraped twice while an unbounded SQL job runs.
TEST_F(ClusterMetrics, PrometheusEndpointScrapedTwiceWhileAJobRuns) {
  if (!have_parser(dir_)) GTEST_SKIP() << "no prometheus_client in " << venv_python() << ": run tests/flink/setup";
  // Workers send their counters with each heartbeat: every 500 ms here (Flink's default
  // 10 s is also how often Flink's REST fetches metrics).
  auto& c = start({"-D", "metrics.reporter.prom.port=0", "-D", "heartbeat.interval=500 ms"});
  ASSERT_TRUE(c.running());
  std::smatch m;
  std::string out = slurp_file(dir_ / "coordinator.out");
  ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(prometheus: (http://([^:]+):\d+/metrics))"))) << out;
  const std::string url = m[1];
  EXPECT_EQ(m[2], "127.0.0.1") << "bound to loopback unless metrics.reporter.prom.host says otherwise";

  // The coordinator plans this script itself: its SQL counters count it.
  std::string script =
      "CREATE TABLE src (k INT, v BIGINT) WITH ('connector'='datagen','rows-per-second'='200');\n"
      "CREATE TABLE snk (k INT, v BIGINT) WITH ('connector'='blackhole');\n"
      "INSERT INTO snk SELECT k, v FROM src WHERE v IS NOT NULL;\n";
  auto posted = c.post("/api/v1/jobs/sql", json{{"script", script}}.dump());
  ASSERT_EQ(posted.status, 202) << posted.body.dump();
  std::string job = posted.body["jobids"][0];
  ASSERT_EQ(c.wait_for_state(job, "RUNNING"), "RUNNING");
  auto d = c.get("/jobs/" + job).body;
  const std::string src = d["vertices"][0]["id"];

  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  auto first = scrape(url, dir_);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  auto second = scrape(url, dir_);
  ASSERT_FALSE(first.empty());

  // Flink's names, HELP and TYPE.
  for (const auto& s : second) {
    if (s.name.rfind("flink_", 0) != 0) continue;
    EXPECT_EQ(s.type, "gauge") << s.name;
    EXPECT_THAT(s.help, HasSubstr(" (scope: ")) << s.name;
  }
  const std::map<std::string, std::string> job_labels{{"job_id", job}};
  auto uptime1 = find(first, "flink_jobmanager_job_uptime", job_labels);
  auto uptime2 = find(second, "flink_jobmanager_job_uptime", job_labels);
  ASSERT_EQ(uptime1.size(), 1u);
  ASSERT_EQ(uptime2.size(), 1u);
  EXPECT_GT(uptime2[0].value, uptime1[0].value);
  std::set<std::string> job_label_names;
  for (const auto& [k, v] : uptime2[0].labels) job_label_names.insert(k);
  EXPECT_EQ(job_label_names, (std::set<std::string>{"job_id", "job_name", "host"}));
  EXPECT_EQ(find(second, "flink_jobmanager_job_numRestarts", job_labels).at(0).value, 0);
  EXPECT_EQ(find(second, "flink_jobmanager_numRunningJobs").at(0).value, 1);
  EXPECT_EQ(find(second, "flink_jobmanager_job_numberOfCompletedCheckpoints", job_labels).size(), 1u);

  // The source operator's records out: Flink's labels, and it grows.
  const std::map<std::string, std::string> source_op{{"job_id", job}, {"task_id", src}, {"operator_id", src}};
  auto out1 = find(first, "flink_taskmanager_job_task_operator_numRecordsOut", source_op);
  auto out2 = find(second, "flink_taskmanager_job_task_operator_numRecordsOut", source_op);
  ASSERT_EQ(out1.size(), 1u);
  ASSERT_EQ(out2.size(), 1u);
  EXPECT_GT(out2[0].value, out1[0].value);
  EXPECT_GT(out1[0].value, 0);
  std::set<std::string> names;
  for (const auto& [k, v] : out2[0].labels) names.insert(k);
  EXPECT_EQ(names, (std::set<std::string>{"job_id", "job_name", "task_id", "task_name", "task_attempt_id",
                                          "task_attempt_num", "subtask_index", "tm_id", "host", "operator_id",
                                          "operator_name"}));
  EXPECT_EQ(out2[0].labels["subtask_index"], "0");
  EXPECT_EQ(out2[0].labels["tm_id"], "local");
  for (char ch : out2[0].labels["operator_name"] + out2[0].labels["task_name"] + out2[0].labels["job_name"])
    EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == ':') << "Flink filters label values";

  // The source's rate over the scrapes: 200 rows/s.
  auto rate = find(second, "flink_taskmanager_job_task_operator_numRecordsOutPerSecond", source_op);
  ASSERT_EQ(rate.size(), 1u);
  EXPECT_GT(rate[0].value, 50);
  EXPECT_LT(rate[0].value, 1000);
  for (const char* t : {"busyTimeMsPerSecond", "idleTimeMsPerSecond", "backPressuredTimeMsPerSecond"}) {
    auto v = find(second, std::string("flink_taskmanager_job_task_") + t, {{"job_id", job}, {"task_id", src}});
    ASSERT_EQ(v.size(), 1u) << t;
    EXPECT_GE(v[0].value, 0) << t;
    EXPECT_LE(v[0].value, 1000) << t;
  }
  EXPECT_EQ(find(second, "flink_taskmanager_job_task_operator_watermarkLag", source_op).size(), 1u);

  // The SQL pipeline's counters of this process.
  for (const char* counter : {"clink_sql_parses_total", "clink_sql_binds_total", "clink_sql_optimizes_total",
                              "clink_sql_physical_plans_total"}) {
    auto v = find(second, counter);
    ASSERT_EQ(v.size(), 1u) << counter;
    EXPECT_GE(v[0].value, 1) << counter;
    EXPECT_EQ(v[0].type, "counter") << counter;
  }
  ASSERT_EQ(find(second, "clink_sql_bind_errors_total").size(), 1u);
  EXPECT_EQ(find(second, "clink_sql_bind_errors_total")[0].value, 0);
  auto bind_ns = find(second, "clink_sql_bind_duration_ns");
  ASSERT_EQ(bind_ns.size(), 1u);
  EXPECT_EQ(bind_ns[0].type, "gauge");
  EXPECT_GT(bind_ns[0].value, 0);

  // Cancelled: its metrics are gone, as in Flink.
  c.patch("/jobs/" + job);
  ASSERT_EQ(c.wait_for_state(job, "CANCELED"), "CANCELED");
  EXPECT_TRUE(find(scrape(url, dir_), "flink_jobmanager_job_uptime", job_labels).empty());
}

// `clink run --set metrics.reporter.prom.port=PORT` (Flink's key; the other --set keys
// still override the spec): the embedded job's metrics at http://127.0.0.1:PORT/metrics.
TEST_F(ClusterMetrics, ClinkRunServesPrometheusWhileItsJobRuns) {
  if (!have_parser(dir_)) GTEST_SKIP() << "no prometheus_client in " << venv_python() << ": run tests/flink/setup";
  const int port = free_port();
  std::string spec = write_counts_spec(dir_, 1'000'000, 400);
  ClinkProcess run({"run", spec, "--set", "metrics.reporter.prom.port=" + std::to_string(port), "--set", "name=slow_counts",
                    "--checkpoint-dir", (dir_ / "chk").string(), "--checkpoint-interval", "300"},
                   dir_);
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (run.err().find("prometheus: " + url) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    ASSERT_FALSE(run.wait_for(0).has_value()) << run.err();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_THAT(run.err(), HasSubstr("prometheus: " + url));
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  auto first = scrape(url, dir_);
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  auto second = scrape(url, dir_);
  const std::string source = cluster::vertex_id_for(JobNode{.id = "events", .uid = "events"});
  const std::map<std::string, std::string> labels{{"job_name", "slow_counts"}, {"operator_name", "events"}, {"task_id", source}};
  auto out1 = find(first, "flink_taskmanager_job_task_operator_numRecordsOut", labels);
  auto out2 = find(second, "flink_taskmanager_job_task_operator_numRecordsOut", labels);
  ASSERT_EQ(out1.size(), 1u);
  ASSERT_EQ(out2.size(), 1u);
  EXPECT_GT(out2[0].value, out1[0].value) << "the counter grows while the job runs";
  // Two count subtasks, each with its own labels.
  auto count_in = find(second, "flink_taskmanager_job_task_operator_numRecordsIn", {{"operator_name", "count"}});
  ASSERT_EQ(count_in.size(), 2u);
  EXPECT_NE(count_in[0].labels["subtask_index"], count_in[1].labels["subtask_index"]);
  EXPECT_GT(count_in[0].value + count_in[1].value, 0);
  EXPECT_EQ(find(second, "flink_jobmanager_job_numRestarts", {{"job_name", "slow_counts"}}).at(0).value, 0);
  // Checkpoints every 300 ms: the job's checkpoint metrics.
  const std::map<std::string, std::string> job{{"job_name", "slow_counts"}};
  auto completed = find(second, "flink_jobmanager_job_numberOfCompletedCheckpoints", job);
  ASSERT_EQ(completed.size(), 1u);
  EXPECT_GE(completed[0].value, 2);
  EXPECT_GT(find(second, "flink_jobmanager_job_lastCheckpointSize", job).at(0).value, 0);
  EXPECT_GE(find(second, "flink_jobmanager_job_lastCheckpointDuration", job).at(0).value, 0);
  EXPECT_GE(find(second, "flink_jobmanager_job_lastCompletedCheckpointId", job).at(0).value, completed[0].value);
  EXPECT_EQ(find(second, "flink_jobmanager_job_numberOfFailedCheckpoints", job).at(0).value, 0);
  run.kill(SIGKILL);
}

TEST_F(ClusterMetrics, APortInUseIsAnErrorNamingTheKey) {
  int port = free_port();
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  auto r = run_clink("coordinator --rest-port 0 --rpc-port 0 -D metrics.reporter.prom.port=" + std::to_string(port), dir_);
  ::close(fd);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("metrics.reporter.prom"));
  EXPECT_THAT(r.err, HasSubstr("127.0.0.1:" + std::to_string(port)));
}

}  // namespace
}  // namespace clink::test
