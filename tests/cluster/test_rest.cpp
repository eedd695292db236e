// The coordinator's REST API (Flink's paths and JSON field names) and the `clink` client
// commands, against a real `clink coordinator` process: jobs submitted with
// `clink run --coordinator` (a JobGraphSpec and a SQL script), their details, plan,
// vertices, metrics, checkpoints and exceptions; cancel, savepoints, and stop with a
// savepoint resumed by an embedded `clink run`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <regex>

#include "clink/cluster/rest/dispatcher.hpp"
#include "clink/runtime/job_graph.hpp"
#include "coordinator_process.hpp"

namespace clink::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using json = nlohmann::ordered_json;

class RestApi : public CoordinatorTest {
 protected:
  RestApi() : CoordinatorTest("clink_rest_test_") {}
};

// An unbounded SQL job (datagen at 50 rows/s into blackhole), as a script file.
std::string write_sql_job(const fs::path& dir) {
  auto p = dir / "job.sql";
  std::ofstream(p) << "CREATE TABLE src (k INT, v BIGINT) WITH ('connector'='datagen','rows-per-second'='50',\n"
                      "  'fields.k.min'='1','fields.k.max'='5');\n"
                      "CREATE TABLE snk (k INT, c BIGINT) WITH ('connector'='blackhole');\n"
                      "INSERT INTO snk SELECT k, COUNT(*) FROM src GROUP BY k;\n";
  return p.string();
}

TEST_F(RestApi, AnEmptyCoordinatorAnswersOverviewConfigAndEmptyLists) {
  auto& c = start();
  ASSERT_TRUE(c.running());
  auto overview = c.get("/overview");
  ASSERT_EQ(overview.status, 200);
  EXPECT_EQ(overview.body["taskmanagers"], 1) << "the coordinator runs the jobs itself";
  EXPECT_EQ(overview.body["slots-total"], overview.body["slots-available"]);
  for (const char* k : {"jobs-running", "jobs-finished", "jobs-cancelled", "jobs-failed"}) EXPECT_EQ(overview.body[k], 0) << k;
  EXPECT_EQ(overview.body["flink-version"], "2.3.0");
  EXPECT_EQ(c.get("/v1/overview").body["taskmanagers"], 1) << "Flink's client sends the /v1 prefix";

  auto config = c.get("/config");
  ASSERT_EQ(config.status, 200);
  EXPECT_EQ(config.body["refresh-interval"], 3000);
  EXPECT_EQ(config.body["flink-version"], "2.3.0");
  EXPECT_EQ(config.body["features"]["web-cancel"], true);

  EXPECT_EQ(c.get("/jobs").body, json::parse(R"({"jobs": []})"));
  EXPECT_EQ(c.get("/jobs/overview").body, json::parse(R"({"jobs": []})"));
  auto tms = c.get("/taskmanagers").body["taskmanagers"];
  ASSERT_EQ(tms.size(), 1u);
  EXPECT_EQ(tms[0]["id"], "local");  // the worker inside the coordinator (--local-slots 4)
  EXPECT_EQ(tms[0]["slotsNumber"], 4);
  EXPECT_GE(tms[0]["slotsNumber"].get<int>(), 1);
  auto jm = c.get("/jobmanager/config");
  ASSERT_EQ(jm.status, 200);
  std::map<std::string, std::string> keys;
  for (const auto& e : jm.body) keys[e["key"]] = e["value"];
  EXPECT_EQ(keys["rest.address"], "127.0.0.1");
  EXPECT_EQ(keys["rest.port"], std::to_string(c.port()));

  // A second coordinator on the same port fails, naming the address.
  auto second = clink("coordinator --rest-port " + std::to_string(c.port()));
  EXPECT_EQ(second.exit_code, 1);
  // Its last line (log lines such as "leadership granted" may come before it).
  const std::string expected = "error: REST: cannot bind to 127.0.0.1:" + std::to_string(c.port()) +
                               " (rest.address / rest.port): in use or not an address of this host\n";
  ASSERT_GE(second.err.size(), expected.size()) << second.err;
  EXPECT_EQ(second.err.substr(second.err.size() - expected.size()), expected) << second.err;
  EXPECT_EQ(c.stop(), 0);
}

TEST_F(RestApi, ErrorsAreFlinksErrorBodies) {
  auto& c = start();
  std::string unknown(32, '0');
  auto r = c.get("/jobs/" + unknown);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body, json::parse(R"({"errors": ["Job 00000000000000000000000000000000 not found"]})"));
  r = c.get("/jobs/zzz");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, json::parse(R"({"errors": ["Cannot resolve path parameter (jobid) from value \"zzz\"."]})"));
  r = c.get("/no/such/path");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body, json::parse(R"({"errors": ["Unable to load requested file /no/such/path."]})"));
  EXPECT_EQ(c.patch("/jobs/" + unknown + "?mode=cancel").status, 404);

  r = c.post("/api/v1/jobs/spec", "{bad");
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.body["errors"][0].get<std::string>(), HasSubstr("expected a JSON object {\"spec\""));
  r = c.post("/api/v1/jobs/spec", R"({"spec": {"name": "x", "ops": [{"id": "a", "type": "no_such_op"}]}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.body["errors"][0].get<std::string>(), HasSubstr("no_such_op"));
  r = c.post("/api/v1/jobs/spec", R"({"spec": {}, "options": {"execution.checkpointing.interval": "10 parsecs"}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.body["errors"][0].get<std::string>(), HasSubstr("options: execution.checkpointing.interval: '10 parsecs'"));
  r = c.post("/api/v1/jobs/spec", R"({"spec": {}, "options": {"state.backend.type": "nope"}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["errors"][0], "options: state.backend.type: 'nope' is not supported (hashmap or rocksdb)");
  r = c.post("/api/v1/jobs/spec", R"({"spec": {}, "options": {"execution.checkpointing.interval": "1 s"}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.body["errors"][0].get<std::string>(),
              HasSubstr("options: execution.checkpointing.interval is set (1 s) but execution.checkpointing.dir is not"));

  auto missing = clink("cancel " + unknown + " --coordinator " + c.address());
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err, "error: coordinator " + c.address() + " (HTTP 404): Job " + unknown + " not found\n");
  auto unreachable = clink("list --coordinator 127.0.0.1:1");
  EXPECT_EQ(unreachable.exit_code, 1);
  EXPECT_THAT(unreachable.err, HasSubstr("error: cannot reach the coordinator at 127.0.0.1:1"));
}

// A JobGraphSpec job runs to its end on the coordinator: its details, plan, vertices
// (one per chain, ids stable across submissions) and record counts as Flink reports them.
TEST_F(RestApi, ASpecJobsDetailsPlanVerticesAndMetrics) {
  auto& c = start();
  const int n = 2000;
  std::string spec = write_counts_spec(dir_, n, 4000);
  auto ids = submit(spec);
  ASSERT_EQ(ids.size(), 1u);
  const std::string job = ids[0];
  EXPECT_EQ(c.wait_for_state(job, "FINISHED"), "FINISHED");
  EXPECT_EQ(committed_lines(dir_ / "out"), running_counts(n, 4));

  auto d = c.get("/jobs/" + job).body;
  EXPECT_EQ(d["jid"], job);
  EXPECT_EQ(d["name"], "checkpointed_counts");
  EXPECT_EQ(d["state"], "FINISHED");
  EXPECT_EQ(d["job-type"], "STREAMING");
  EXPECT_GE(d["end-time"].get<std::int64_t>(), d["start-time"].get<std::int64_t>());
  EXPECT_EQ(d["duration"], d["end-time"].get<std::int64_t>() - d["start-time"].get<std::int64_t>());
  ASSERT_EQ(d["vertices"].size(), 2u);
  const auto& source = d["vertices"][0];
  const auto& counts = d["vertices"][1];
  EXPECT_EQ(source["id"], cluster::vertex_id_for(JobNode{.id = "events", .uid = "events"}));
  EXPECT_EQ(source["name"], "events");
  EXPECT_EQ(source["parallelism"], 1);
  EXPECT_EQ(source["maxParallelism"], 128);
  EXPECT_EQ(source["status"], "FINISHED");
  EXPECT_EQ(source["tasks"]["FINISHED"], 1);
  EXPECT_EQ(source["metrics"]["read-records"], 0);
  EXPECT_EQ(source["metrics"]["write-records"], n);
  EXPECT_EQ(counts["name"], "count -> sink");
  EXPECT_EQ(counts["parallelism"], 2);
  EXPECT_EQ(counts["metrics"]["read-records"], n);
  EXPECT_EQ(counts["metrics"]["write-records"], 0) << "a sink's writes leave the job";
  EXPECT_EQ(d["status-counts"]["FINISHED"], 2);
  EXPECT_EQ(d["plan"], c.get("/jobs/" + job + "/plan").body["plan"]);
  EXPECT_EQ(d["plan"]["nodes"][1], json::parse(R"({"id": ")" + counts["id"].get<std::string>() +
                                               R"(", "operator": "", "parallelism": 2, "operator_strategy": "",
      "description": "count<br/>+- sink<br/>", "optimizer_properties": {},
      "inputs": [{"id": ")" + source["id"].get<std::string>() +
                                               R"(", "num": 0, "exchange": "pipelined_bounded", "ship_strategy": "HASH"}]})"));

  std::string vid = counts["id"];
  auto v = c.get("/jobs/" + job + "/vertices/" + vid).body;
  EXPECT_EQ(v["id"], vid);
  ASSERT_EQ(v["subtasks"].size(), 2u);
  EXPECT_EQ(v["subtasks"][0]["metrics"]["read-records"].get<int>() + v["subtasks"][1]["metrics"]["read-records"].get<int>(), n);
  auto m = c.get("/jobs/" + job + "/vertices/" + vid + "/subtasks/metrics?get=numRecordsIn,count.numRecordsOut&agg=sum").body;
  EXPECT_EQ(m, json::parse(R"([{"id": "numRecordsIn", "sum": 2000.0}, {"id": "count.numRecordsOut", "sum": 2000.0}])"));
  auto names = c.get("/jobs/" + job + "/vertices/" + vid + "/subtasks/metrics").body;
  EXPECT_THAT(names.dump(), HasSubstr(R"({"id":"sink.numRecordsIn"})"));
  auto bp = c.get("/jobs/" + job + "/vertices/" + vid + "/backpressure").body;
  EXPECT_EQ(bp["status"], "ok");
  EXPECT_EQ(bp["subtasks"].size(), 2u);
  // The finished job's subtasks saw the final watermark of their bounded input.
  EXPECT_EQ(c.get("/jobs/" + job + "/vertices/" + vid + "/watermarks").body,
            json::parse(R"([{"id": "0.currentInputWatermark", "value": "9223372036854775807"},
                            {"id": "1.currentInputWatermark", "value": "9223372036854775807"}])"));
  EXPECT_EQ(c.get("/jobs/" + job + "/vertices/" + std::string(32, 'f')).status, 404);
  EXPECT_EQ(c.get("/jobs/" + job + "/exceptions").body,
            json::parse(R"({"exceptionHistory": {"entries": [], "truncated": false}})"));
  auto stats = c.get("/jobs/" + job + "/checkpoints").body;  // checkpointing is off: nothing
  EXPECT_EQ(stats["counts"], json::parse(R"({"restored": 0, "total": 0, "in_progress": 0, "completed": 0, "failed": 0})"));
  EXPECT_EQ(stats["history"], json::array());
  EXPECT_EQ(stats["summary"]["state_size"],
            json::parse(R"({"min": 0, "max": 0, "avg": 0, "p50": "NaN", "p90": "NaN", "p95": "NaN", "p99": "NaN", "p999": "NaN"})"));
  EXPECT_EQ(c.get("/jobs/" + job + "/checkpoints/config").body["interval"], std::numeric_limits<std::int64_t>::max());

  EXPECT_EQ(c.get("/jobs").body, json::parse(R"({"jobs": [{"id": ")" + job + R"(", "status": "FINISHED"}]})"));
  auto overview = c.get("/jobs/overview").body["jobs"][0];
  EXPECT_EQ(overview["jid"], job);
  EXPECT_EQ(overview["state"], "FINISHED");
  EXPECT_EQ(overview["tasks"]["total"], 3);
  EXPECT_EQ(overview["tasks"]["finished"], 3);
  EXPECT_EQ(c.get("/overview").body["jobs-finished"], 1);

  // The same job again: new job id, the same vertex ids (derived from operator uids).
  auto again = submit(spec, "--set events.rows_per_second=0");
  ASSERT_EQ(again.size(), 1u);
  EXPECT_NE(again[0], job);
  auto d2 = c.get("/jobs/" + again[0]).body;
  EXPECT_EQ(d2["vertices"][0]["id"], source["id"]);
  EXPECT_EQ(d2["vertices"][1]["id"], vid);
}

// `clink run script.sql --coordinator`: the script is planned by the client, its INSERT
// runs on the coordinator; `clink list` and `clink cancel` as `flink list` / `flink cancel`.
TEST_F(RestApi, ASqlScriptSubmittedListedAndCancelled) {
  auto& c = start();
  auto ids = submit(write_sql_job(dir_), "-p 2");
  ASSERT_EQ(ids.size(), 1u);
  const std::string job = ids[0];
  EXPECT_EQ(c.wait_for_state(job, "RUNNING"), "RUNNING");
  auto d = c.get("/jobs/" + job).body;
  EXPECT_EQ(d["name"], "insert-into_snk");
  ASSERT_EQ(d["vertices"].size(), 2u);
  EXPECT_EQ(d["vertices"][0]["parallelism"], 2) << "-p travels in the options";

  auto list = clink("list --coordinator " + c.address());
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const std::regex line(R"(\d\d\.\d\d\.\d{4} \d\d:\d\d:\d\d : )" + job + R"( : insert-into_snk \(RUNNING\))");
  std::istringstream in(list.out);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(std::regex_match(l, line) ? "<job line>" : l);
  EXPECT_THAT(lines, ElementsAre("------------------ Running/Restarting Jobs -------------------", "<job line>",
                                 "--------------------------------------------------------------", "No scheduled jobs."));

  auto cancel = clink("cancel " + job + " --coordinator " + c.address());
  ASSERT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_EQ(cancel.out, "Cancelled job " + job + ".\n");
  EXPECT_EQ(c.wait_for_state(job, "CANCELED"), "CANCELED");
  auto all = clink("list --all --coordinator " + c.address());
  EXPECT_THAT(all.out, HasSubstr("No running jobs.\nNo scheduled jobs.\n---------------------- Terminated Jobs -----------------------\n"));
  EXPECT_THAT(all.out, HasSubstr(" : " + job + " : insert-into_snk (CANCELED)\n"));
  EXPECT_EQ(c.get("/overview").body["jobs-cancelled"], 1);

  // A SELECT has nowhere to show its rows from a detached job.
  auto p = dir_ / "select.sql";
  std::ofstream(p) << "SELECT 1;\n";
  auto select = clink("run " + p.string() + " --coordinator " + c.address());
  EXPECT_EQ(select.exit_code, 1);
  EXPECT_THAT(select.err, HasSubstr("a SELECT's rows cannot be shown from a job submitted to a coordinator"));
}

// Savepoints over REST: trigger, poll to COMPLETED with the location, a second one into
// the same directory, an unknown trigger, and a savepoint of an ended job failing.
TEST_F(RestApi, SavepointTriggerAndPoll) {
  auto& c = start();
  auto ids = submit(write_counts_spec(dir_, 1'000'000, 500), "--checkpoint-dir " + (dir_ / "ck").string());
  ASSERT_EQ(ids.size(), 1u);
  const std::string job = ids[0];
  ASSERT_EQ(c.wait_for_state(job, "RUNNING"), "RUNNING");
  auto target = dir_ / "savepoints";
  auto poll = [&](const std::string& trigger) {
    json r;
    for (int i = 0; i < 600; ++i) {
      r = c.get("/v1/jobs/" + job + "/savepoints/" + trigger).body;
      if (r["status"]["id"] != "IN_PROGRESS") break;
      EXPECT_EQ(r["operation"], nullptr);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return r;
  };
  std::vector<std::string> locations;
  for (int i = 0; i < 2; ++i) {
    auto t = c.post("/v1/jobs/" + job + "/savepoints",
                    R"({"target-directory": ")" + target.string() + R"(", "cancel-job": false, "formatType": "CANONICAL", "triggerId": null})");
    ASSERT_EQ(t.status, 202) << t.error;
    std::string trigger = t.body["request-id"];
    EXPECT_TRUE(is_hex32(trigger));
    auto r = poll(trigger);
    ASSERT_EQ(r["status"]["id"], "COMPLETED");
    std::string location = r["operation"]["location"];
    EXPECT_TRUE(std::regex_match(location, std::regex(target.string() + "/savepoint-" + job.substr(0, 6) + "-[0-9a-f]{12}")))
        << location;
    EXPECT_TRUE(fs::exists(fs::path(location) / "_metadata"));
    locations.push_back(location);
  }
  EXPECT_NE(locations[0], locations[1]);
  EXPECT_EQ(c.get("/jobs/" + job).body["state"], "RUNNING") << "a savepoint leaves the job running";
  auto stats = c.get("/jobs/" + job + "/checkpoints").body;
  EXPECT_EQ(stats["latest"]["savepoint"]["external_path"], locations[1]);
  EXPECT_EQ(stats["latest"]["savepoint"]["checkpoint_type"], "SAVEPOINT");
  EXPECT_EQ(stats["counts"]["completed"], 2);

  auto unknown = c.get("/jobs/" + job + "/savepoints/" + std::string(32, '1'));
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.body["errors"][0], "There is no savepoint operation with triggerId=" + std::string(32, '1') +
                                           " for job " + job + ".");
  auto bad = c.post("/jobs/" + job + "/savepoints", R"({"target-directory": 5})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(c.post("/jobs/" + job + "/savepoints", "{}").status, 400) << "no directory given and none configured";

  // A savepoint that fails while the job runs: COMPLETED with a failure cause.
  auto file = dir_ / "a-file";
  std::ofstream(file) << "not a directory\n";
  auto doomed = c.post("/jobs/" + job + "/savepoints", R"({"target-directory": ")" + file.string() + R"("})");
  ASSERT_EQ(doomed.status, 202);
  auto failed = poll(doomed.body["request-id"]);
  EXPECT_EQ(failed["status"]["id"], "COMPLETED");
  EXPECT_EQ(failed["operation"]["failure-cause"]["class"], "clink.SavepointFailure");
  EXPECT_THAT(failed["operation"]["failure-cause"]["stack-trace"].get<std::string>(),
              HasSubstr("savepoint of job " + job + " into " + file.string() + ": "));
  EXPECT_EQ(c.get("/jobs/" + job).body["state"], "RUNNING");

  auto cancel = c.patch("/v1/jobs/" + job + "?mode=cancel");
  EXPECT_EQ(cancel.status, 202);
  EXPECT_EQ(cancel.body, json::object());
  EXPECT_EQ(c.wait_for_state(job, "CANCELED"), "CANCELED");
  auto late = c.post("/jobs/" + job + "/savepoints", R"({"target-directory": ")" + target.string() + R"("})");
  EXPECT_EQ(late.status, 400);
  EXPECT_EQ(late.body["errors"][0], "job " + job + " is CANCELED: a savepoint needs a running job");
}

// Checkpoint statistics of a checkpointing job, Flink's shapes.
TEST_F(RestApi, CheckpointStatisticsConfigAndDetails) {
  auto& c = start();
  auto ids = submit(write_counts_spec(dir_, 1'000'000, 2000),
                    "--checkpoint-dir " + (dir_ / "ck").string() + " --checkpoint-interval 100");
  ASSERT_EQ(ids.size(), 1u);
  const std::string job = ids[0];
  json stats;
  for (int i = 0; i < 600; ++i) {
    stats = c.get("/jobs/" + job + "/checkpoints").body;
    if (stats.value("counts", json::object()).value("completed", 0) >= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GE(stats["counts"]["completed"].get<int>(), 2) << stats.dump();
  EXPECT_EQ(stats["counts"]["restored"], 0);
  EXPECT_EQ(stats["latest"]["restored"], nullptr);
  const auto& latest = stats["latest"]["completed"];
  EXPECT_EQ(latest["className"], "completed");
  EXPECT_EQ(latest["status"], "COMPLETED");
  EXPECT_EQ(latest["is_savepoint"], false);
  EXPECT_EQ(latest["num_subtasks"], 3);
  EXPECT_EQ(latest["num_acknowledged_subtasks"], 3);
  // Each job checkpoints into <checkpoint dir>/<job id>, as Flink's.
  EXPECT_EQ(latest["external_path"], (dir_ / "ck" / job / ("chk-" + std::to_string(latest["id"].get<int>()))).string());
  EXPECT_EQ(stats["history"][0]["id"], latest["id"]) << "newest first";
  for (const char* k : {"checkpointed_size", "state_size", "end_to_end_duration", "alignment_buffered", "processed_data", "persisted_data"})
    EXPECT_TRUE(stats["summary"].contains(k)) << k;
  // Every task of this job reads one channel (the source, or one count subtask fed by the
  // one source subtask): no barrier to wait for, nothing aligned.
  for (const auto& h : stats["history"]) EXPECT_EQ(h["alignment_duration"], 0) << h.dump();

  auto config = c.get("/jobs/" + job + "/checkpoints/config").body;
  EXPECT_EQ(config["mode"], "exactly_once");
  EXPECT_EQ(config["interval"], 100);
  EXPECT_EQ(config["state_backend"], "HashMapStateBackend");
  auto details = c.get("/jobs/" + job + "/checkpoints/details/" + std::to_string(latest["id"].get<int>())).body;
  EXPECT_EQ(details["id"], latest["id"]);
  std::vector<std::string> task_ids;
  for (const auto& [k, v] : details["tasks"].items()) task_ids.push_back(k);
  auto d = c.get("/jobs/" + job).body;
  EXPECT_THAT(task_ids, ::testing::UnorderedElementsAre(d["vertices"][0]["id"], d["vertices"][1]["id"]));
  // The source's position, the counts of its keys (test_metrics checks the sizes exactly).
  for (const auto& [vid, task] : details["tasks"].items()) {
    EXPECT_GT(task["state_size"].get<std::int64_t>(), 0) << vid;
    EXPECT_EQ(task["checkpointed_size"], task["state_size"]) << vid << ": the heap backend shares nothing";
  }
  EXPECT_EQ(c.get("/jobs/" + job + "/checkpoints/details/999999").status, 404);
  EXPECT_EQ(c.get("/jobs/" + job + "/checkpoints/details/x").status, 400);
  EXPECT_EQ(c.stop(), 0) << "SIGTERM cancels the running job and exits";
}

// `clink stop --savepoint` on the coordinator, then an embedded `clink run
// --from-savepoint` finishes the job: the file output has no gap and no repeat.
TEST_F(RestApi, StopWithSavepointThenResumeEmbedded) {
  auto& c = start();
  const int n = 20000;
  std::string spec = write_counts_spec(dir_, n, 2000);  // about 10 s unless stopped
  auto ids = submit(spec, "--checkpoint-dir " + (dir_ / "ck").string());
  ASSERT_EQ(ids.size(), 1u);
  const std::string job = ids[0];
  ASSERT_EQ(c.wait_for_state(job, "RUNNING"), "RUNNING");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto stop = clink("stop " + job + " --savepoint " + (dir_ / "sp").string() + " --coordinator " + c.address());
  ASSERT_EQ(stop.exit_code, 0) << stop.err;
  std::string path = stop.out.substr(0, stop.out.find('\n'));
  EXPECT_EQ(stop.out, path + "\n");
  EXPECT_TRUE(std::regex_match(path, std::regex((dir_ / "sp").string() + "/savepoint-" + job.substr(0, 6) + "-[0-9a-f]{12}")));
  EXPECT_EQ(c.wait_for_state(job, "FINISHED"), "FINISHED") << "a stopped job is FINISHED, as in Flink";
  auto first = committed_lines(dir_ / "out");
  EXPECT_GT(first.size(), 0u);
  EXPECT_LT(first.size(), static_cast<std::size_t>(n)) << "stopped before the end";

  // At another parallelism: the counts' key groups move.
  auto resumed = clink("run " + spec + " -p 3 --from-savepoint " + path + " --set events.rows_per_second=0");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(committed_lines(dir_ / "out"), running_counts(n, 4));
}

// The reverse: an embedded run stopped with a savepoint (SIGTERM, --savepoint-on-stop)
// resumes on the coordinator at another parallelism, with no gap and no repeat; the
// job's checkpoint statistics name what it restored.
TEST_F(RestApi, EmbeddedSavepointResumedOnTheCoordinator) {
  auto& c = start();
  const int n = 20000;
  std::string spec = write_counts_spec(dir_, n, 2000);  // about 10 s unless stopped
  auto savepoint = dir_ / "embedded-sp";
  pid_t pid = spawn_clink({"run", spec, "--savepoint-on-stop", savepoint.string()}, dir_);
  ASSERT_GT(pid, 0);
  // Under way once its task threads run (the signal handlers are installed before the
  // job starts), plus half a second of progress; without checkpoints its part files
  // stay empty until the savepoint flushes them.
  auto threads_of = [](pid_t p) {
    int n = 0;
    std::error_code ec;
    for (auto it = fs::directory_iterator("/proc/" + std::to_string(p) + "/task", ec); !ec && it != fs::directory_iterator();
         it.increment(ec))
      ++n;
    return n;
  };
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline && threads_of(pid) < 3)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  ASSERT_EQ(wait_exit(pid), 0) << slurp_file(dir_ / "bg.err");
  ASSERT_TRUE(fs::exists(savepoint / "_metadata"));
  EXPECT_LT(committed_lines(dir_ / "out").size(), static_cast<std::size_t>(n)) << "stopped before the end";

  auto ids = submit(spec, "-p 3 --from-savepoint " + savepoint.string() + " --set events.rows_per_second=0");
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(c.wait_for_state(ids[0], "FINISHED"), "FINISHED");
  EXPECT_EQ(committed_lines(dir_ / "out"), running_counts(n, 4));
  auto d = c.get("/jobs/" + ids[0]).body;
  EXPECT_EQ(d["vertices"][1]["parallelism"], 3);
  auto stats = c.get("/jobs/" + ids[0] + "/checkpoints").body;
  EXPECT_EQ(stats["counts"]["restored"], 1);
  EXPECT_EQ(stats["latest"]["restored"]["is_savepoint"], true);
  EXPECT_EQ(stats["latest"]["restored"]["external_path"], savepoint.string());
}

// A job that fails after a restart: both failures in its exception history, newest
// first; FAILED in the overviews.
TEST_F(RestApi, AFailingJobsExceptionHistory) {
  auto& c = start();
  auto input = dir_ / "bad.jsonl";
  std::ofstream(input) << "not json\n";
  auto spec = dir_ / "bad.json";
  std::ofstream(spec) << R"({"name": "bad_input", "ops": [
    {"id": "read", "type": "file_source", "params": {"path": ")" << input.string() << R"(", "format": "json", "type": "int64"}},
    {"id": "sink", "type": "blackhole", "inputs": [{"from": "read"}]}]})";
  auto ids = submit(spec.string(), "--restart-attempts 1 --restart-delay 100");
  ASSERT_EQ(ids.size(), 1u);
  const std::string job = ids[0];
  ASSERT_EQ(c.wait_for_state(job, "FAILED"), "FAILED");
  const std::string cause = "read (1/1) failed: malformed JSON in " + input.string() + " line 1: expected an integer";
  auto history = c.get("/jobs/" + job + "/exceptions").body["exceptionHistory"];
  EXPECT_EQ(history["truncated"], false);
  ASSERT_EQ(history["entries"].size(), 2u) << history.dump();
  std::int64_t end = c.get("/jobs/" + job).body["end-time"];
  for (const auto& e : history["entries"]) {
    EXPECT_EQ(e["exceptionName"], "clink.JobFailure");
    EXPECT_EQ(e["stacktrace"], cause);
    EXPECT_LE(e["timestamp"].get<std::int64_t>(), end);
  }
  EXPECT_EQ(history["entries"][0]["timestamp"], end) << "the final failure first";
  EXPECT_EQ(c.get("/overview").body["jobs-failed"], 1);
  EXPECT_EQ(c.get("/jobs/overview").body["jobs"][0]["tasks"]["failed"], 1);
}

// `clink savepoint JOB DIR` prints the path; the job keeps running.
TEST_F(RestApi, ClinkSavepointCommand) {
  auto& c = start();
  auto ids = submit(write_counts_spec(dir_, 1'000'000, 500), "--checkpoint-dir " + (dir_ / "ck").string());
  ASSERT_EQ(ids.size(), 1u);
  ASSERT_EQ(c.wait_for_state(ids[0], "RUNNING"), "RUNNING");
  auto r = clink("savepoint " + ids[0] + " " + (dir_ / "sp").string() + " --coordinator " + c.address());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string path = r.out.substr(0, r.out.find('\n'));
  EXPECT_TRUE(fs::exists(fs::path(path) / "_metadata")) << r.out;
  EXPECT_EQ(c.get("/jobs/" + ids[0]).body["state"], "RUNNING");
}

// --config: Flink's config.yaml gives the REST address and port, the default
// savepoint directory and the checkpointing every job starts from.
TEST_F(RestApi, CoordinatorReadsFlinksConfigYaml) {
  auto conf = dir_ / "config.yaml";
  std::ofstream(conf) << "# a Flink config\nrest:\n  address: 127.0.0.1\n  port: 0  # any\n"
                         "execution.checkpointing.savepoint-dir: " << (dir_ / "default-sp").string() << "\n"
                      << "execution:\n  checkpointing:\n    interval: 200 ms\n    dir: " << (dir_ / "cluster-ck").string() << "\n";
  auto& c = start({"--config", conf.string()});
  ASSERT_TRUE(c.running()) << c.stderr_text();
  std::map<std::string, std::string> keys;
  for (const auto& e : c.get("/jobmanager/config").body) keys[e["key"]] = e["value"];
  EXPECT_EQ(keys["execution.checkpointing.savepoint-dir"], (dir_ / "default-sp").string());
  auto ids = submit(write_counts_spec(dir_, 1'000'000, 500), "--checkpoint-dir " + (dir_ / "ck").string());
  ASSERT_EQ(ids.size(), 1u);
  ASSERT_EQ(c.wait_for_state(ids[0], "RUNNING"), "RUNNING");
  // The cluster's checkpointing applies to the job; its own flags win.
  auto config = c.get("/jobs/" + ids[0] + "/checkpoints/config").body;
  EXPECT_EQ(config["interval"], 200);
  EXPECT_TRUE(fs::exists(dir_ / "ck")) << "the job's --checkpoint-dir, not the cluster's";
  auto r = clink("stop " + ids[0] + " --coordinator " + c.address());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind((dir_ / "default-sp").string() + "/savepoint-", 0), 0u) << r.out;
}

}  // namespace
}  // namespace clink::test

namespace clink::test {
namespace {

// Every committed line of a SQL filesystem sink's directory (in-progress files start
// with '.'), sorted.
std::vector<std::string> sql_sink_lines(const fs::path& dir) {
  std::vector<std::string> lines;
  if (!fs::exists(dir)) return lines;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    auto name = e.path().filename().string();
    if (!e.is_regular_file() || name.empty() || name[0] == '.' || name[0] == '_') continue;
    std::istringstream in(slurp_file(e.path()));
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// `clink stop --drain` (Flink's POST /jobs/:id/stop {"drain": true}): the sources emit
// MAX_WATERMARK before the savepoint, so the open one-day window fires: its count of the
// sequence 1, 2, ... equals its largest id (no row lost or counted twice), and the job
// is FINISHED. Stopped without --drain, the window stays open and nothing is written.
TEST_F(RestApi, StopWithDrainFiresTheOpenWindows) {
  auto& c = start();
  for (bool drain : {true, false}) {
    const fs::path out = dir_ / (drain ? "drained" : "stopped");
    auto script = dir_ / (drain ? "drained.sql" : "stopped.sql");
    std::ofstream(script)
        << "CREATE TABLE nums (id BIGINT NOT NULL, ts AS TO_TIMESTAMP_LTZ(id * 10, 3), "
           "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen', 'rows-per-second' = '400', "
           "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '100000000');\n"
           "CREATE TABLE days (ws TIMESTAMP(3), c BIGINT, m BIGINT) WITH ('connector' = 'filesystem', 'path' = '"
        << (out / "days").string()
        << "', 'format' = 'csv');\n"
           "INSERT INTO days SELECT window_start, COUNT(*), MAX(id) FROM TABLE(TUMBLE(TABLE nums, DESCRIPTOR(ts), "
           "INTERVAL '1' DAY)) GROUP BY window_start, window_end;\n";
    auto ids = submit(script.string(), "--checkpoint-dir " + (out / "ck").string());
    ASSERT_EQ(ids.size(), 1u);
    const std::string job = ids[0];
    ASSERT_EQ(c.wait_for_state(job, "RUNNING"), "RUNNING");
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    auto stop = clink("stop " + job + (drain ? " --drain" : "") + " --savepoint " + (out / "sp").string() +
                      " --coordinator " + c.address());
    ASSERT_EQ(stop.exit_code, 0) << stop.err;
    EXPECT_EQ(c.wait_for_state(job, "FINISHED"), "FINISHED");
    auto days = sql_sink_lines(out / "days");
    if (drain) {
      ASSERT_EQ(days.size(), 1u);
      EXPECT_THAT(days[0], ::testing::StartsWith("1970-01-01 00:00:00"));
      auto fields = days[0].substr(days[0].find(',') + 1);
      const std::string count = fields.substr(0, fields.find(','));
      EXPECT_GT(std::stoll(count), 0);
      EXPECT_EQ(fields, count + "," + count) << "count and largest id of the sequence";
    } else {
      EXPECT_THAT(days, ElementsAre()) << "without drain the window stays open";
    }
  }
}

}  // namespace
}  // namespace clink::test
