// The cluster as users deploy it: `clink coordinator` and `clink worker` processes on
// loopback, jobs submitted with `clink run --coordinator`. A SQL + MATCH_RECOGNIZE job at
// parallelism 4 on three workers gives the embedded output; workers killed with SIGKILL
// at ten checkpoints in turn, and (under ZooKeeper HA) the leading coordinator killed
// three times, leave exactly the failure-free output of an exactly-once sink.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../support/clink_process.hpp"
#include "clink/cluster/rest/rest_server.hpp"
#include "coordinator_process.hpp"
#include "windows_and_cep_job.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Checkpoints every 100 ms, restarts at once, workers lost within 2 s.
std::string failover_config(const fs::path& dir) {
  return "execution.checkpointing.interval: 100 ms\n"
         "execution.checkpointing.dir: " + (dir / "checkpoints").string() + "\n"
         "restart-strategy.type: fixed-delay\n"
         "restart-strategy.fixed-delay.attempts: 30\n"
         "restart-strategy.fixed-delay.delay: 100 ms\n"
         "heartbeat.interval: 200 ms\nheartbeat.timeout: 2 s\n"
         "slot.request.timeout: 60 s\n";
}

struct Expected {
  std::vector<std::string> win, cep;
};

// The failure-free output, from an embedded `clink run`.
Expected embedded(const fs::path& dir, long long rows) {
  fs::create_directories(dir);
  std::ofstream(dir / "job.sql") << "SET 'parallelism.default' = '4';\n" << windows_and_cep_script(dir / "out", rows, 100'000'000);
  ClinkProcess run({"run", (dir / "job.sql").string()}, dir);
  EXPECT_EQ(run.wait_for(120'000), 0) << run.err();
  return {committed_output(dir / "out" / "win"), committed_output(dir / "out" / "cep")};
}

std::unique_ptr<ClinkProcess> start_worker(const fs::path& dir, const std::vector<std::string>& how, int slots) {
  fs::create_directories(dir);
  std::vector<std::string> args{"worker", "--slots", std::to_string(slots)};
  args.insert(args.end(), how.begin(), how.end());
  auto w = std::make_unique<ClinkProcess>(args, dir);
  EXPECT_TRUE(w->wait_for_output("data port", 10'000)) << w->err();
  return w;
}

// Submits the script with `clink run --coordinator`: the job id.
std::string submit(const fs::path& dir, const std::string& rest, const std::string& sql, int parallelism = 4) {
  fs::create_directories(dir);
  std::ofstream(dir / "job.sql") << sql;
  std::vector<std::string> args{"run", (dir / "job.sql").string(), "--coordinator", rest, "-p",
                                std::to_string(parallelism)};
  ClinkProcess run(args, dir);
  EXPECT_EQ(run.wait_for(30'000), 0) << run.err();
  std::smatch m;
  std::string out = run.out();
  static const std::regex id(R"(([0-9a-f]{32}))");
  return std::regex_search(out, m, id) ? m[1].str() : "";
}

int completed_checkpoints(CoordinatorProcess& c, const std::string& job) {
  auto r = c.get("/jobs/" + job + "/checkpoints");
  if (r.status != 200) return -1;
  return r.body["counts"].value("completed", 0);
}

TEST(ClusterDeployment, SqlAndCepJobOnThreeWorkerProcessesGivesTheEmbeddedOutput) {
  fs::path dir = scratch_dir("clink_deploy_");
  Expected expected = embedded(dir / "embedded", 60000);
  ASSERT_EQ(expected.win.size(), 7801u);
  ASSERT_EQ(expected.cep.size(), 1089u);

  fs::create_directories(dir / "coordinator");
  CoordinatorProcess c(dir / "coordinator", {"--local-slots", "0"});
  ASSERT_TRUE(c.running()) << c.stderr_text();
  std::vector<std::unique_ptr<ClinkProcess>> workers;
  for (int i = 0; i < 3; ++i)
    workers.push_back(start_worker(dir / ("w" + std::to_string(i)), {"--coordinator", c.address()}, 2));
  const std::string job = submit(dir / "client", c.address(), windows_and_cep_script(dir / "out", 60000, 100'000'000));
  ASSERT_EQ(job.size(), 32u);
  EXPECT_EQ(c.wait_for_state(job, "FINISHED", 120), "FINISHED") << c.stderr_text();
  EXPECT_EQ(committed_output(dir / "out" / "win"), expected.win);
  EXPECT_EQ(committed_output(dir / "out" / "cep"), expected.cep);
  // The REST API shows the three workers and the job's vertices with their parallelism.
  auto tms = c.get("/taskmanagers").body["taskmanagers"];
  EXPECT_EQ(tms.size(), 3u);
  auto details = c.get("/jobs/" + job).body;
  int parallel_vertices = 0;
  for (const auto& v : details["vertices"]) parallel_vertices += v["parallelism"] == 4;
  EXPECT_GE(parallel_vertices, 2);
  // Every vertex's subtasks saw the final watermark of their bounded input (Flink's
  // currentInputWatermark, reported by the workers' heartbeats).
  for (const auto& v : details["vertices"]) {
    nlohmann::json wms;
    for (int i = 0; i < 300; ++i) {
      wms = c.get("/jobs/" + job + "/vertices/" + v["id"].get<std::string>() + "/watermarks").body;
      bool all_final = wms.is_array() && !wms.empty();
      for (const auto& w : wms) all_final = all_final && w["value"] == "9223372036854775807";
      if (all_final) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_EQ(wms.size(), static_cast<std::size_t>(v["parallelism"].get<int>())) << v.dump();
    for (const auto& w : wms) EXPECT_EQ(w["value"], "9223372036854775807") << v["name"] << " " << w.dump();
  }
}

// SIGKILL one of three workers each time the job completed a checkpoint of its current
// attempt, ten times; a new worker takes the dead one's place. The job restarts from
// its latest checkpoint each time, and the committed output is exactly the
// failure-free one.
TEST(ClusterDeployment, WorkersKilledAtTenCheckpointsLoseNothingAndRepeatNothing) {
  fs::path dir = scratch_dir("clink_deploy_");
  const long long rows = 60000;
  Expected expected = embedded(dir / "embedded", rows);

  std::ofstream(dir / "config.yaml") << failover_config(dir);
  fs::create_directories(dir / "coordinator");
  CoordinatorProcess c(dir / "coordinator", {"--config", (dir / "config.yaml").string(), "--rest-port", "0",
                                             "--local-slots", "0"});
  ASSERT_TRUE(c.running()) << c.stderr_text();
  std::vector<std::unique_ptr<ClinkProcess>> workers;
  int started = 0;
  auto add_worker = [&] {
    workers.push_back(start_worker(dir / ("w" + std::to_string(started++)), {"--coordinator", c.address()}, 2));
  };
  for (int i = 0; i < 3; ++i) add_worker();
  // About 6 s of input at 10,000 rows/s: long enough for ten kills.
  const std::string job = submit(dir / "client", c.address(), windows_and_cep_script(dir / "out", rows, 10'000));
  ASSERT_EQ(job.size(), 32u);

  std::mt19937 rng(0xc1a5);
  std::vector<double> recovery_s;
  int kills = 0;
  for (; kills < 10; ++kills) {
    // Wait for a checkpoint of the running attempt.
    int before = completed_checkpoints(c, job);
    auto deadline = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < deadline && completed_checkpoints(c, job) <= before &&
           c.get("/jobs/" + job).body.value("state", "") == "RUNNING")
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (c.get("/jobs/" + job).body.value("state", "") != "RUNNING") break;
    std::size_t victim = std::uniform_int_distribution<std::size_t>(0, workers.size() - 1)(rng);
    workers[victim]->kill(SIGKILL);
    workers.erase(workers.begin() + static_cast<long>(victim));
    auto killed_at = Clock::now();
    add_worker();
    // Recovered: a checkpoint completed after the restart.
    int at_kill = completed_checkpoints(c, job);
    while (Clock::now() < killed_at + std::chrono::seconds(30) && completed_checkpoints(c, job) <= at_kill &&
           c.get("/jobs/" + job).body.value("state", "") != "FINISHED")
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    recovery_s.push_back(std::chrono::duration<double>(Clock::now() - killed_at).count());
  }
  EXPECT_EQ(c.wait_for_state(job, "FINISHED", 120), "FINISHED") << c.stderr_text();
  EXPECT_GE(kills, 8) << "the job ended before most kills";
  auto exceptions = c.get("/jobs/" + job + "/exceptions").body;
  std::size_t restarts = exceptions["exceptionHistory"]["entries"].size();
  EXPECT_GE(restarts, static_cast<std::size_t>(kills));
  double worst = recovery_s.empty() ? 0 : *std::max_element(recovery_s.begin(), recovery_s.end());
  std::printf("kills %d, restarts %zu, recovery to the next completed checkpoint: worst %.2f s\n", kills, restarts,
              worst);
  EXPECT_EQ(committed_output(dir / "out" / "win"), expected.win);
  EXPECT_EQ(committed_output(dir / "out" / "cep"), expected.cep);
}

// Peak resident memory of a process, from /proc (VmHWM, KiB).
long peak_rss_kib(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  for (std::string l; std::getline(f, l);)
    if (l.rfind("VmHWM:", 0) == 0) return std::stol(l.substr(6));
  return -1;
}

// A worker whose stdout is a pipe nobody reads: once the pipe is full its print sink
// blocks, as a slow sink does.
struct StalledWorker {
  pid_t pid = -1;
  int pipe_read = -1;
  StalledWorker(const std::string& coordinator, const fs::path& dir) {
    int fds[2];
    if (::pipe(fds) != 0) return;
    std::string err = (dir / "worker.err").string();
    std::vector<std::string> args{CLINK_BINARY, "worker", "--coordinator", coordinator, "--slots", "1"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid = ::fork();
    if (pid == 0) {
      int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fds[1], 1);
      ::dup2(e, 2);
      ::close(fds[0]);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    pipe_read = fds[0];
  }
  ~StalledWorker() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    if (pipe_read >= 0) ::close(pipe_read);
  }
};

// Backpressure across workers: an unbounded source at full speed on two workers feeds a
// GROUP BY whose print sink on one worker is stalled. Credits stop at the stalled
// subtask's gate, the senders block, and the sources stop: what they emit stops growing
// and no process's memory grows with the input.
TEST(ClusterDeployment, AStalledSinkOnOneWorkerStopsTheSourcesWithBoundedMemory) {
  fs::path dir = scratch_dir("clink_deploy_");
  std::ofstream(dir / "config.yaml") << "heartbeat.interval: 200 ms\nheartbeat.timeout: 5 s\n";
  fs::create_directories(dir / "coordinator");
  CoordinatorProcess c(dir / "coordinator", {"--config", (dir / "config.yaml").string(), "--rest-port", "0",
                                             "--local-slots", "0"});
  ASSERT_TRUE(c.running()) << c.stderr_text();
  auto free_worker = start_worker(dir / "w0", {"--coordinator", c.address()}, 1);
  StalledWorker stalled(c.address(), dir);
  for (int i = 0; i < 500 && c.get("/taskmanagers").body["taskmanagers"].size() < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const std::string job = submit(
      dir / "client", c.address(),
      "CREATE TABLE nums (id BIGINT NOT NULL) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', "
      "'fields.id.start' = '1', 'fields.id.end' = '9000000000000', 'rows-per-second' = '1000000000');\n"
      "CREATE TABLE out (k BIGINT, c BIGINT) WITH ('connector' = 'print');\n"
      "INSERT INTO out SELECT MOD(id, 1000), COUNT(*) FROM nums GROUP BY MOD(id, 1000);\n",
      2);
  ASSERT_EQ(job.size(), 32u);
  ASSERT_EQ(c.wait_for_state(job, "RUNNING", 30), "RUNNING");
  auto source_out = [&] {
    auto d = c.get("/jobs/" + job).body;
    std::int64_t n = 0;
    for (const auto& v : d["vertices"])  // the source vertex reads nothing
      if (v["metrics"]["read-records"].get<std::int64_t>() == 0) n += v["metrics"]["write-records"].get<std::int64_t>();
    return n;
  };
  std::this_thread::sleep_for(std::chrono::seconds(3));  // the pipe fills, the credits run out
  std::int64_t first = source_out();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  std::int64_t second = source_out();
  EXPECT_GT(first, 0);
  // Heartbeats every 200 ms report the counters: stalled sources add (almost) nothing.
  EXPECT_LT(second - first, 20'000) << "the sources kept running: " << first << " then " << second;
  for (pid_t pid : {stalled.pid}) {
    long kib = peak_rss_kib(pid);
    EXPECT_GT(kib, 0);
    EXPECT_LT(kib, 300 * 1024) << "peak RSS of the stalled worker";
  }
  std::printf("stalled: sources emitted %lld records before stopping; stalled worker peak RSS %.1f MiB\n",
              static_cast<long long>(second), peak_rss_kib(stalled.pid) / 1024.0);
  c.patch("/jobs/" + job + "?mode=cancel");
}

// A coordinator process under ZooKeeper HA: it prints "rest: http://HOST:PORT" once it
// leads.
struct HaCoordinator {
  std::unique_ptr<ClinkProcess> process;
  std::string rest;  // "HOST:PORT" once leading

  bool wait_leading(int ms) {
    static const std::regex line(R"(\nrest: http://([^\s]+)\n)");
    auto deadline = Clock::now() + std::chrono::milliseconds(ms);
    while (Clock::now() < deadline) {
      std::smatch m;
      std::string out = "\n" + process->out();
      if (std::regex_search(out, m, line)) {
        rest = m[1];
        return true;
      }
      if (process->wait_for(0)) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
};

nlohmann::json get_json(const std::string& rest, const std::string& path) {
  cluster::RestClient client(rest);
  auto r = client.get(path);
  if (r.status != 200) return nullptr;
  return nlohmann::json::parse(r.body, nullptr, false);
}

std::string job_state(const std::string& rest, const std::string& job) {
  auto j = get_json(rest, "/jobs/" + job);
  return j.is_object() ? j.value("state", "") : "";
}

int checkpoints_of(const std::string& rest, const std::string& job) {
  auto j = get_json(rest, "/jobs/" + job + "/checkpoints");
  return j.is_object() ? j["counts"].value("completed", 0) : -1;
}

// The acceptance run: two coordinators under ZooKeeper HA and three workers that find the
// leader there, a job with exactly-once sinks. Thirteen SIGKILLs, each right after the
// job completed a checkpoint on the current leader: ten of a worker (a new one takes its
// place) and three of the leading coordinator (a new standby is started; the old standby
// takes over, the workers reconnect to it, it resumes the job from the latest checkpoint
// pointer in ZooKeeper). The committed output is exactly the failure-free one.
TEST(ClusterDeployment, TenWorkersAndThreeLeadersKilledUnderHaLoseNothingAndRepeatNothing) {
  const char* quorum = std::getenv("CLINK_ZOOKEEPER_QUORUM");
  if (!quorum) GTEST_SKIP() << "needs CLINK_ZOOKEEPER_QUORUM (ctest's zookeeper fixture sets it)";
  fs::path dir = scratch_dir("clink_deploy_");
  const long long rows = 150000;  // 15 s of input at 10,000 rows/s
  Expected expected = embedded(dir / "embedded", rows);

  std::ofstream(dir / "config.yaml") << failover_config(dir) << "high-availability.type: zookeeper\n"
                                     << "high-availability.zookeeper.quorum: " << quorum << "\n"
                                     << "high-availability.storageDir: " << (dir / "ha").string() << "\n"
                                     << "high-availability.cluster-id: /deploy-" << ::getpid() << "\n"
                                     << "high-availability.zookeeper.client.session-timeout: 2000\n"
                                     << "rest.port: 0\njobmanager.rpc.port: 0\n";
  const std::string config = (dir / "config.yaml").string();
  int coordinators_started = 0, workers_started = 0;
  auto coordinator = [&] {
    fs::path d = dir / ("coordinator" + std::to_string(coordinators_started++));
    fs::create_directories(d);
    return HaCoordinator{std::make_unique<ClinkProcess>(std::vector<std::string>{"coordinator", "--config", config}, d), ""};
  };
  auto worker = [&] {
    return start_worker(dir / ("w" + std::to_string(workers_started++)), {"--config", config}, 2);
  };
  std::vector<HaCoordinator> coordinators;
  coordinators.push_back(coordinator());
  ASSERT_TRUE(coordinators[0].wait_leading(20'000)) << coordinators[0].process->err();
  coordinators.push_back(coordinator());
  std::vector<std::unique_ptr<ClinkProcess>> workers;
  for (int i = 0; i < 3; ++i) workers.push_back(worker());
  const std::string job = submit(dir / "client", coordinators[0].rest, windows_and_cep_script(dir / "out", rows, 10'000));
  ASSERT_EQ(job.size(), 32u);

  std::mt19937 rng(0x4a11);
  const std::string plan = "WWWLWWWLWWLWW";  // W: a worker, L: the leader
  std::vector<double> worker_recovery_s, takeover_s;
  for (std::size_t k = 0; k < plan.size(); ++k) {
    const std::string rest = coordinators.front().rest;
    int before = checkpoints_of(rest, job);
    auto deadline = Clock::now() + std::chrono::seconds(60);
    while (Clock::now() < deadline && checkpoints_of(rest, job) <= std::max(before, 0))
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_EQ(job_state(rest, job), "RUNNING") << "kill " << k << ": the job ended too soon";
    auto killed_at = Clock::now();
    if (plan[k] == 'W') {
      std::size_t victim = std::uniform_int_distribution<std::size_t>(0, workers.size() - 1)(rng);
      workers[victim]->kill(SIGKILL);
      workers.erase(workers.begin() + static_cast<long>(victim));
      workers.push_back(worker());
      int at_kill = checkpoints_of(rest, job);
      deadline = Clock::now() + std::chrono::seconds(60);
      while (Clock::now() < deadline && checkpoints_of(rest, job) <= at_kill && job_state(rest, job) != "FINISHED")
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      worker_recovery_s.push_back(std::chrono::duration<double>(Clock::now() - killed_at).count());
    } else {
      coordinators.front().process->kill(SIGKILL);
      coordinators.erase(coordinators.begin());
      coordinators.push_back(coordinator());  // the next standby
      ASSERT_TRUE(coordinators.front().wait_leading(30'000)) << coordinators.front().process->err();
      // Taken over: the job runs again on the new leader and completed a checkpoint there.
      const std::string next = coordinators.front().rest;
      deadline = Clock::now() + std::chrono::seconds(60);
      while (Clock::now() < deadline && checkpoints_of(next, job) < 1 && job_state(next, job) != "FINISHED")
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      takeover_s.push_back(std::chrono::duration<double>(Clock::now() - killed_at).count());
    }
  }
  const std::string& rest = coordinators.front().rest;
  auto deadline = Clock::now() + std::chrono::seconds(120);
  while (Clock::now() < deadline && job_state(rest, job) != "FINISHED") std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(job_state(rest, job), "FINISHED") << coordinators.front().process->err();
  auto exceptions = get_json(rest, "/jobs/" + job + "/exceptions");
  std::printf("10 worker kills: running again with a new checkpoint after at most %.2f s; 3 leader kills: after %.2f, "
              "%.2f, %.2f s; restarts on the last leader: %zu\n",
              *std::max_element(worker_recovery_s.begin(), worker_recovery_s.end()), takeover_s[0], takeover_s[1],
              takeover_s[2], exceptions.is_object() ? exceptions["exceptionHistory"]["entries"].size() : 0);
  // Each new leader claimed the checkpoint it resumed from (Flink's CLAIM mode): its
  // predecessors' checkpoints were subsumed and deleted; only the newest is retained.
  int chk_dirs = 0;
  for (const auto& e : fs::directory_iterator(dir / "checkpoints" / job))
    chk_dirs += e.path().filename().string().rfind("chk-", 0) == 0;
  EXPECT_EQ(chk_dirs, 1);
  if (exceptions.is_object())
    for (const auto& e : exceptions["exceptionHistory"]["entries"])
      std::printf("  restart cause: %s\n", e.value("stacktrace", std::string()).c_str());
  EXPECT_EQ(committed_output(dir / "out" / "win"), expected.win);
  EXPECT_EQ(committed_output(dir / "out" / "cep"), expected.cep);
}

cluster::RestResponse post_sql(const std::string& rest, const std::string& script) {
  cluster::RestClient client(rest);
  return client.post("/api/v1/jobs/sql", nlohmann::json{{"script", script}}.dump());
}

// Coordinators under ZooKeeper HA (session timeout 2 s, any free ports), each with a
// worker inside (2 slots), in a scratch directory: <dir>/config.yaml, <dir>/<name>/.
struct HaCluster {
  fs::path dir = scratch_dir("clink_deploy_");
  std::string config = (dir / "config.yaml").string();
  HaCluster(const char* quorum, const std::string& name) {
    std::ofstream(config) << "high-availability.type: zookeeper\n"
                          << "high-availability.zookeeper.quorum: " << quorum << "\n"
                          << "high-availability.storageDir: " << (dir / "ha").string() << "\n"
                          << "high-availability.cluster-id: /" << name << "-" << ::getpid() << "\n"
                          << "high-availability.zookeeper.client.session-timeout: 2000\n"
                          << "rest.port: 0\njobmanager.rpc.port: 0\n";
  }
  HaCoordinator coordinator(const std::string& name) const {
    fs::create_directories(dir / name);
    return HaCoordinator{std::make_unique<ClinkProcess>(
                             std::vector<std::string>{"coordinator", "--config", config, "--local-slots", "2"}, dir / name),
                         ""};
  }
};

// POST /api/v1/jobs/sql plans on the coordinator: tables created there are kept in the
// HA catalog store, so after the leader is killed its successor runs a script that uses
// them. Errors name the statement's line and column.
TEST(ClusterDeployment, TheCoordinatorsCatalogSurvivesATakeover) {
  const char* quorum = std::getenv("CLINK_ZOOKEEPER_QUORUM");
  if (!quorum) GTEST_SKIP() << "needs CLINK_ZOOKEEPER_QUORUM (ctest's zookeeper fixture sets it)";
  HaCluster ha(quorum, "catalog");
  const fs::path& dir = ha.dir;
  auto coordinator = [&](const std::string& name) { return ha.coordinator(name); };
  HaCoordinator first = coordinator("first");
  ASSERT_TRUE(first.wait_leading(20'000)) << first.process->err();
  HaCoordinator second = coordinator("second");
  auto r = post_sql(first.rest,
                    "CREATE TABLE nums (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10', "
                    "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '10');\n"
                    "CREATE TABLE doubled (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '" +
                        (dir / "out").string() + "', 'format' = 'csv');\n"
                    "CREATE VIEW evens AS SELECT id * 2 AS id FROM nums;\n");
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(nlohmann::json::parse(r.body)["jobids"].size(), 0u);
  r = post_sql(first.rest, "INSERT INTO doubled SELECT nope FROM nums;");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(nlohmann::json::parse(r.body)["errors"][0], "line 1, column 28: Column 'nope' not found in any table");
  // A running SQL job: the new leader recovers it with its statement and plan (stored
  // with its job graph), for REST's /jobs/:id/sql and the web UI.
  r = post_sql(first.rest,
               "CREATE TABLE slow (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '10');\n"
               "CREATE TABLE gone (id BIGINT) WITH ('connector' = 'blackhole');\n"
               "INSERT INTO gone SELECT id FROM slow WHERE id > 0;\n");
  ASSERT_EQ(r.status, 202) << r.body;
  const std::string running = nlohmann::json::parse(r.body)["jobids"][0];
  const nlohmann::json texts = get_json(first.rest, "/jobs/" + running + "/sql");
  ASSERT_TRUE(texts.is_object());
  EXPECT_NE(texts["sql"].get<std::string>().find("INSERT INTO gone SELECT id FROM slow WHERE id > 0"), std::string::npos)
      << texts;
  EXPECT_FALSE(texts["plan"].get<std::string>().empty());

  first.process->kill(SIGKILL);
  ASSERT_TRUE(second.wait_leading(30'000)) << second.process->err();
  EXPECT_EQ(get_json(second.rest, "/jobs/" + running + "/sql"), texts);
  cluster::RestClient(second.rest).patch("/jobs/" + running, "{}");
  r = post_sql(second.rest, "INSERT INTO doubled SELECT id FROM evens;");
  ASSERT_EQ(r.status, 202) << r.body;
  const std::string job = nlohmann::json::parse(r.body)["jobids"][0];
  auto deadline = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < deadline && job_state(second.rest, job) != "FINISHED")
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(job_state(second.rest, job), "FINISHED");
  EXPECT_EQ(committed_output(dir / "out"),
            (std::vector<std::string>{"10", "12", "14", "16", "18", "2", "20", "4", "6", "8"}));
}

}  // namespace
}  // namespace clink::test

namespace clink::test {
namespace {

// A leader deposed while it lives (paused past its ZooKeeper session) stops serving and
// stands by, as Flink's JobManager does, instead of exiting; when the new leader dies it
// takes over again and serves REST once more.
TEST(ClusterDeployment, ADeposedLeaderStandsByAndLeadsAgain) {
  const char* quorum = std::getenv("CLINK_ZOOKEEPER_QUORUM");
  if (!quorum) GTEST_SKIP() << "needs CLINK_ZOOKEEPER_QUORUM (ctest's zookeeper fixture sets it)";
  HaCluster ha(quorum, "standby");
  auto coordinator = [&](const std::string& name) { return ha.coordinator(name); };
  HaCoordinator first = coordinator("first");
  ASSERT_TRUE(first.wait_leading(20'000)) << first.process->err();
  HaCoordinator second = coordinator("second");
  first.process->kill(SIGSTOP);  // past its session timeout: ZooKeeper gives the lead to the second
  ASSERT_TRUE(second.wait_leading(30'000)) << second.process->err();
  first.process->kill(SIGCONT);
  auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline && first.process->err().find("leadership lost") == std::string::npos)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_NE(first.process->err().find("coordinator: leadership lost, stopping its jobs and standing by"),
            std::string::npos)
      << first.process->err();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(first.process->wait_for(0).has_value()) << "a deposed leader stays, as a standby";

  second.process->kill(SIGKILL);
  auto rest_lines = [&] {
    std::string out = first.process->out();
    std::size_t n = 0;
    for (auto at = out.find("\nrest: http://"); at != std::string::npos; at = out.find("\nrest: http://", at + 1)) ++n;
    return n + (out.rfind("rest: http://", 0) == 0 ? 1 : 0);
  };
  deadline = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < deadline && rest_lines() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(rest_lines(), 2u) << first.process->out() << first.process->err();
  std::string out = first.process->out();
  auto at = out.rfind("rest: http://") + std::string("rest: http://").size();
  const std::string rest = out.substr(at, out.find('\n', at) - at);
  auto overview = get_json(rest, "/overview");
  ASSERT_TRUE(overview.is_object()) << "the leader again serves REST at " << rest;
  EXPECT_EQ(overview["taskmanagers"], 1) << "with its worker inside again";
  first.process->kill(SIGTERM);
  EXPECT_EQ(first.process->wait_for(20'000), 0) << first.process->err();
  fs::remove_all(ha.dir);
}

}  // namespace
}  // namespace clink::test
