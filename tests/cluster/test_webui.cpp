// The web UI (docs/web-ui.md) in a real headless Chromium: a `clink coordinator` with a
// running SQL job; tests/cluster/webui_check.py (Selenium, Debian's chromium and
// chromedriver) opens its pages and checks what a person would see, saving screenshots
// under <build>/test-artifacts/webui/. A missing browser or venv fails the test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clink/cluster/rest/rest_server.hpp"
#include "coordinator_process.hpp"

namespace clink::test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The venv tests/flink/setup makes (Selenium is installed into it).
fs::path venv_python() {
  const char* env = std::getenv("CLINK_FLINK_VENV");
  const char* home = std::getenv("HOME");
  fs::path venv = env ? fs::path(env) : fs::path(home ? home : "/root") / ".cache/clink/flink-venv";
  return venv / "bin/python";
}

// Runs webui_check.py with `args`; its output is printed (what it checked, the
// screenshots' paths).
CommandResult run_browser_check(const std::string& args, const fs::path& scratch) {
  fs::path python = venv_python();
  if (!fs::exists(python)) {
    ADD_FAILURE() << "no Python venv at " << python << ": run tests/flink/setup (scripts/setup --services)";
    return {};
  }
  auto r = run_command("'" + python.string() + "' '" + CLINK_SOURCE_DIR + "/tests/cluster/webui_check.py' " + args, scratch);
  std::printf("%s%s", r.out.c_str(), r.err.c_str());
  return r;
}

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

fs::path artifacts(const std::string& name) {
  fs::path dir = fs::path(CLINK_WEBUI_ARTIFACTS) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::printf("screenshots: %s\n", dir.c_str());
  return dir;
}

// A slow unbounded SQL job: datagen at 200 rows/s, a keyed count and sum into blackhole.
constexpr const char* kDdl =
    "CREATE TABLE orders (id BIGINT, k INT, amount DOUBLE, ts AS LOCALTIMESTAMP,\n"
    "  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)\n"
    "  WITH ('connector' = 'datagen', 'rows-per-second' = '200', 'fields.k.min' = '1', 'fields.k.max' = '5');\n"
    "CREATE TABLE totals (k INT, n BIGINT, total DOUBLE) WITH ('connector' = 'blackhole');\n";
constexpr const char* kInsert = "INSERT INTO totals SELECT k, COUNT(*), SUM(amount) FROM orders GROUP BY k";

class WebUi : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = scratch_dir("clink_webui_test_"); }
  void TearDown() override {
    coordinator_.reset();
    fs::remove_all(dir_);
  }
  // A coordinator with a default savepoint directory (the page's "Trigger savepoint"
  // names none).
  CoordinatorProcess& start() {
    auto conf = dir_ / "config.yaml";
    std::ofstream(conf) << "rest:\n  address: 127.0.0.1\n  port: 0\n"
                        << "execution:\n  checkpointing:\n    savepoint-dir: " << (dir_ / "savepoints").string()
                        << "\n    dir: " << (dir_ / "checkpoints").string() << "\n";
    coordinator_ = std::make_unique<CoordinatorProcess>(dir_, std::vector<std::string>{"--config", conf.string()});
    return *coordinator_;
  }

  fs::path dir_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
};

TEST_F(WebUi, TheCoordinatorServesThePagesAndTheRestApiAlongside) {
  auto& c = start();
  ASSERT_TRUE(c.running()) << c.stderr_text();
  cluster::RestClient client(c.address());
  auto index = client.get("/");
  ASSERT_EQ(index.status, 200);
  EXPECT_THAT(index.body, HasSubstr("<title>clink</title>"));
  EXPECT_THAT(index.body, HasSubstr("<script src=\"app.js\"></script>"));
  for (const char* file : {"/style.css", "/api.js", "/graph.js", "/pages.js", "/job.js", "/app.js"}) {
    auto r = client.get(file);
    EXPECT_EQ(r.status, 200) << file;
    EXPECT_GT(r.body.size(), 500u) << file;
  }
  // The REST paths keep answering, with and without /v1; unknown paths are still Flink's 404.
  EXPECT_EQ(c.get("/overview").body["taskmanagers"], 1);
  EXPECT_EQ(c.get("/v1/jobs/overview").body["jobs"].size(), 0u);
  auto missing = c.get("/no-such-page");
  EXPECT_EQ(missing.status, 404);
  EXPECT_THAT(missing.body["errors"][0].get<std::string>(), HasSubstr("/no-such-page"));
}

// GET /jobs/:id/sql: a SQL job's statement and optimised plan; a JobGraphSpec job has none.
TEST_F(WebUi, SqlOfAJobIsItsStatementAndPlan) {
  auto& c = start();
  ASSERT_TRUE(c.running()) << c.stderr_text();
  auto sql = c.post("/api/v1/jobs/sql", nlohmann::json{{"script", std::string(kDdl) + kInsert + ";"}}.dump());
  ASSERT_EQ(sql.status, 202) << sql.body.dump();
  std::string id = sql.body["jobids"][0];
  auto r = c.get("/jobs/" + id + "/sql");
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["sql"], kInsert);
  std::string plan = r.body["plan"];
  EXPECT_THAT(plan, StartsWith("Sink(table=[totals]"));
  EXPECT_THAT(plan, HasSubstr("GroupAggregate(groupBy=[k]"));
  EXPECT_THAT(plan, HasSubstr("TableSourceScan(table=[orders]"));
  EXPECT_EQ(c.get("/v1/jobs/" + id + "/sql").body, r.body);

  auto spec = c.post("/api/v1/jobs/spec", nlohmann::json{{"spec", nlohmann::json::parse(slurp_file(write_counts_spec(dir_, 10, 1000)))}}.dump());
  ASSERT_EQ(spec.status, 202) << spec.body.dump();
  auto none = c.get("/jobs/" + spec.body["jobid"].get<std::string>() + "/sql");
  EXPECT_EQ(none.status, 404);
  EXPECT_THAT(none.body["errors"][0].get<std::string>(), HasSubstr("was not submitted as SQL"));
}

// The acceptance test: the pages in Chromium against a running job.
TEST_F(WebUi, ChromiumSeesARunningSqlJobItsCheckpointsASavepointAndCancel) {
  auto& c = start();
  ASSERT_TRUE(c.running()) << c.stderr_text();
  nlohmann::json body{{"script", std::string(kDdl) + kInsert + ";"},
                      {"options", {{"execution.checkpointing.interval", "300 ms"}, {"parallelism.default", "2"}}}};
  auto submitted = c.post("/api/v1/jobs/sql", body.dump());
  ASSERT_EQ(submitted.status, 202) << submitted.body.dump();
  std::string id = submitted.body["jobids"][0];
  // A second one, for "Stop with savepoint" (its tables are in the coordinator's catalog).
  auto second = c.post("/api/v1/jobs/sql", nlohmann::json{{"script", std::string(kInsert) + ";"}}.dump());
  ASSERT_EQ(second.status, 202) << second.body.dump();
  std::string stop_id = second.body["jobids"][0];
  // A third that fails (malformed input) after one restart, for the exceptions tab.
  auto input = dir_ / "bad.jsonl";
  std::ofstream(input) << "not json\n";
  nlohmann::json bad_spec = nlohmann::json::parse(R"({"name": "bad_input", "ops": [
    {"id": "read", "type": "file_source", "params": {"path": ")" + input.string() + R"(", "format": "json", "type": "int64"}},
    {"id": "sink", "type": "blackhole", "inputs": [{"from": "read"}]}]})");
  nlohmann::json restart_once{{"restart-strategy.type", "fixed-delay"},
                              {"restart-strategy.fixed-delay.attempts", "1"},
                              {"restart-strategy.fixed-delay.delay", "100 ms"}};
  auto failing = c.post("/api/v1/jobs/spec", nlohmann::json{{"spec", bad_spec}, {"options", restart_once}}.dump());
  ASSERT_EQ(failing.status, 202) << failing.body.dump();
  std::string failed_id = failing.body["jobid"];
  ASSERT_EQ(c.wait_for_state(id, "RUNNING"), "RUNNING");
  ASSERT_EQ(c.wait_for_state(stop_id, "RUNNING"), "RUNNING");
  ASSERT_EQ(c.wait_for_state(failed_id, "FAILED"), "FAILED");

  auto shots = artifacts("coordinator");
  auto r = run_browser_check("--url http://" + c.address() + " --job " + id + " --sql " + quoted(kInsert) +
                                 " --vertices datagen_source,group_aggregate --parallelism 2 --worker local --stop-job " + stop_id +
                                 " --failed-job " + failed_id + " --failure 'malformed JSON in " + input.string() +
                                 " line 1' --screenshots '" +
                                 shots.string() + "'",
                             dir_);
  ASSERT_EQ(r.exit_code, 0) << "the browser check failed (screenshots in " << shots << "):\n" << r.out << r.err;

  // What the page did, seen through the REST API: the savepoints exist, the job was
  // cancelled, the other stopped, and the job the submit page started ran.
  for (const char* which : {"\nsavepoint: (\\S+)", "\nstop savepoint: (\\S+)"}) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex(which))) << which << " in " << r.out;
    EXPECT_TRUE(fs::exists(fs::path(m[1].str()) / "_metadata")) << m[1];
    EXPECT_THAT(m[1].str(), StartsWith((dir_ / "savepoints").string()));
  }
  EXPECT_EQ(c.get("/jobs/" + id).body["state"], "CANCELED");
  EXPECT_EQ(c.get("/jobs/" + stop_id).body["state"], "FINISHED");
  EXPECT_EQ(c.get("/jobs/overview").body["jobs"].size(), 4u);
  for (const char* shot : {"01-jobs.png", "02-job-graph.png", "04-checkpoints.png", "06-workers.png", "08-canceled.png"})
    EXPECT_TRUE(fs::exists(shots / shot)) << shot;
}

// `clink run --web-ui`: the same pages for an embedded SQL job, served by the run itself;
// the savepoint goes into the directory typed on the page, and cancel ends the run.
TEST_F(WebUi, ClinkRunWebUiServesItsEmbeddedJob) {
  auto script = dir_ / "job.sql";
  std::ofstream(script) << kDdl << kInsert << ";\n";
  pid_t pid = spawn_clink({"run", script.string(), "--web-ui", "--rest-port", "0", "-p", "2", "--checkpoint-interval",
                           "300", "--checkpoint-dir", (dir_ / "checkpoints").string()},
                          dir_);
  // Killed if the test ends before the run did.
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      if (pid <= 0) return;
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  } reaper{pid};
  std::smatch m;
  std::string err;
  static const std::regex line(R"(web UI: http://127\.0\.0\.1:(\d+)/\n)");
  for (int i = 0; i < 300 && !std::regex_search(err, m, line); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    err = slurp_file(dir_ / "bg.err");
  }
  ASSERT_TRUE(std::regex_search(err, m, line)) << "no web UI address on stderr: " << err;
  std::string address = "127.0.0.1:" + m[1].str();
  cluster::RestClient client(address);
  std::string id;
  for (int i = 0; i < 300 && id.empty(); ++i) {
    auto jobs = nlohmann::json::parse(client.get("/jobs/overview").body, nullptr, false);
    if (jobs.is_object() && jobs["jobs"].size() == 1 && jobs["jobs"][0]["state"] == "RUNNING") id = jobs["jobs"][0]["jid"];
    else std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(id.empty()) << "the run's job did not show as RUNNING; stderr: " << slurp_file(dir_ / "bg.err");

  auto shots = artifacts("embedded");
  auto r = run_browser_check("--url http://" + address + " --job " + id + " --sql " + quoted(kInsert) +
                                 " --vertices datagen_source,group_aggregate --parallelism 2 --worker coordinator --embedded --savepoint-dir '" +
                                 (dir_ / "typed-savepoints").string() + "' --screenshots '" + shots.string() + "'",
                             dir_);
  ASSERT_EQ(r.exit_code, 0) << "the browser check failed (screenshots in " << shots << "):\n" << r.out << r.err;
  std::smatch sp;
  if (std::regex_search(r.out, sp, std::regex("\nsavepoint: (\\S+)"))) {
    EXPECT_THAT(sp[1].str(), StartsWith((dir_ / "typed-savepoints").string()));
    EXPECT_TRUE(fs::exists(fs::path(sp[1].str()) / "_metadata")) << sp[1];
  } else {
    ADD_FAILURE() << "no savepoint in " << r.out;
  }
  // Cancelled from the page, the run ends by itself (after the few seconds it keeps the
  // page up to show that).
  int code = wait_exit(pid);
  reaper.pid = -1;
  EXPECT_NE(code, -1) << "clink run did not end after its job was cancelled";
  EXPECT_THAT(slurp_file(dir_ / "bg.err"), HasSubstr("web UI: http://"));
}

}  // namespace
}  // namespace clink::test
