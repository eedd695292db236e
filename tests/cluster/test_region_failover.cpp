// Region failover on a cluster (Flink's jobmanager.execution.failover-strategy: region,
// the default): a job of two independent pipelines (two INSERTs of one statement set,
// two pipelined regions) runs on a coordinator with workers. Killing (SIGKILL) the
// worker that runs only region A's tasks restarts region A alone, from its latest
// checkpoint, on a free slot, while region B runs on, never redeployed; a task failure
// in A does the same; with `failover-strategy: full` the whole job restarts. The
// exactly-once output is the failure-free one each time. The tests print the recovery
// times (kill -> the next completed checkpoint) of both strategies.
#include <gtest/gtest.h>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../support/clink_process.hpp"
#include "clink/cluster/coordinator/cluster_runtime.hpp"
#include "clink/cluster/worker/worker.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/handler/statement_runner.hpp"
#include "coordinator_process.hpp"
#include "windows_and_cep_job.hpp"

namespace clink::test {
namespace {

using Clock = std::chrono::steady_clock;

// Region A: 13 keys x 1 s tumbling windows at parallelism 2. Region B: the numbers
// copied, source and sink at parallelism 1 (so they share slot 0 with A's first
// subtasks and A's second subtasks have a slot, and a worker, of their own).
std::string two_regions_script(const fs::path& out, long long rows, long long rows_per_second) {
  const std::string n = std::to_string(rows), rate = std::to_string(rows_per_second);
  const std::string sequence = "'connector' = 'datagen', 'number-of-rows' = '" + n + "', 'rows-per-second' = '" + rate +
                               "', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '" + n + "'";
  return "SET 'parallelism.default' = '2';\n"
         "CREATE TABLE a_src (id BIGINT NOT NULL, ts AS TO_TIMESTAMP_LTZ(id * 10, 3), "
         "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (" + sequence + ");\n"
         "CREATE TABLE b_src (id BIGINT NOT NULL) WITH (" + sequence + ", 'scan.parallelism' = '1');\n"
         "CREATE TABLE a_out (k BIGINT, ws TIMESTAMP(3), c BIGINT, s BIGINT) WITH ('connector' = 'filesystem', "
         "'path' = '" + (out / "a").string() + "', 'format' = 'csv');\n"
         "CREATE TABLE b_out (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '" + (out / "b").string() +
         "', 'format' = 'csv', 'sink.parallelism' = '1');\n"
         "EXECUTE STATEMENT SET BEGIN\n"
         "INSERT INTO a_out SELECT MOD(id, 13), window_start, COUNT(*), SUM(id) FROM TABLE(TUMBLE(TABLE a_src, "
         "DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY MOD(id, 13), window_start, window_end;\n"
         "INSERT INTO b_out SELECT id FROM b_src;\n"
         "END;\n";
}

struct Outputs {
  std::vector<std::string> a, b;
  bool operator==(const Outputs&) const = default;
};
Outputs outputs(const fs::path& out) { return {committed_output(out / "a"), committed_output(out / "b")}; }

// Checkpoints every 100 ms, restarts after 100 ms, workers lost within 2 s.
std::string failover_config(const fs::path& dir, const std::string& strategy) {
  return "execution.checkpointing.interval: 100 ms\n"
         "execution.checkpointing.dir: " + (dir / "checkpoints").string() + "\n"
         "restart-strategy.type: fixed-delay\n"
         "restart-strategy.fixed-delay.attempts: 10\n"
         "restart-strategy.fixed-delay.delay: 100 ms\n"
         "jobmanager.execution.failover-strategy: " + strategy + "\n"
         "heartbeat.interval: 200 ms\nheartbeat.timeout: 2 s\n"
         "slot.request.timeout: 60 s\n";
}

// What the coordinator logged deploying: "attempt N: task(s) 0 3 deployed on worker W".
struct Deployment {
  std::int64_t attempt;
  std::set<int> tasks;
  std::string worker;
};
std::vector<Deployment> deployments(const std::string& log) {
  static const std::regex line(R"(attempt (\d+): task\(s\) ([0-9 ]+) deployed on worker (\S+))");
  std::vector<Deployment> out;
  for (std::sregex_iterator it(log.begin(), log.end(), line), end; it != end; ++it) {
    Deployment d{std::stoll((*it)[1]), {}, (*it)[3]};
    std::istringstream tasks((*it)[2]);
    for (int t; tasks >> t;) d.tasks.insert(t);
    out.push_back(d);
  }
  return out;
}

// How often each task was deployed.
std::map<int, int> deploy_counts(const std::vector<Deployment>& ds) {
  std::map<int, int> n;
  for (const auto& d : ds)
    for (int t : d.tasks) ++n[t];
  return n;
}

int count_matches(const std::string& text, const std::string& pattern) {
  std::regex re(pattern);
  return static_cast<int>(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

int completed_checkpoints(CoordinatorProcess& c, const std::string& job) {
  auto r = c.get("/jobs/" + job + "/checkpoints");
  return r.status == 200 ? r.body["counts"].value("completed", 0) : -1;
}

struct Worker {
  std::unique_ptr<ClinkProcess> process;
  std::string id;  // as it registered
};

Worker start_worker(const fs::path& dir, const std::string& coordinator, int slots) {
  fs::create_directories(dir);
  Worker w;
  w.process = std::make_unique<ClinkProcess>(
      std::vector<std::string>{"worker", "--coordinator", coordinator, "--slots", std::to_string(slots)}, dir);
  EXPECT_TRUE(w.process->wait_for_output("data port", 10'000)) << w.process->err();
  std::smatch m;
  std::string out = w.process->out();
  static const std::regex id(R"(worker (\S+): \d+ slots)");
  if (std::regex_search(out, m, id)) w.id = m[1];
  return w;
}

std::string submit(const fs::path& dir, const std::string& rest, const std::string& sql) {
  fs::create_directories(dir);
  std::ofstream(dir / "job.sql") << sql;
  ClinkProcess run({"run", (dir / "job.sql").string(), "--coordinator", rest}, dir);
  EXPECT_EQ(run.wait_for(30'000), 0) << run.err();
  std::smatch m;
  std::string out = run.out();
  static const std::regex id(R"(([0-9a-f]{32}))");
  return std::regex_search(out, m, id) ? m[1].str() : "";
}

struct KillResult {
  Outputs outputs;
  std::vector<Deployment> before, after;  // deployments before and after the kill
  std::string victim;
  double recovery_s = 0;
  std::string log;
  nlohmann::json exceptions;
};

// Runs the two-region job on two workers of 2 slots, kills the worker that runs only
// region A's tasks (A's second subtasks) after two checkpoints, and lets the job finish.
KillResult kill_region_a_worker(const fs::path& dir, const std::string& strategy, long long rows) {
  KillResult r;
  std::ofstream(dir / "config.yaml") << failover_config(dir, strategy);
  fs::create_directories(dir / "coordinator");
  CoordinatorProcess c(dir / "coordinator", {"--config", (dir / "config.yaml").string(), "--rest-port", "0",
                                             "--local-slots", "0"});
  EXPECT_TRUE(c.running()) << c.stderr_text();
  std::vector<Worker> workers;
  for (int i = 0; i < 2; ++i) workers.push_back(start_worker(dir / ("w" + std::to_string(i)), c.address(), 2));
  const std::string job = submit(dir / "client", c.address(), two_regions_script(dir / "out", rows, 5'000));
  EXPECT_EQ(job.size(), 32u);
  auto deadline = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < deadline && completed_checkpoints(c, job) < 2)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GE(completed_checkpoints(c, job), 2) << c.stderr_text();
  r.before = deployments(c.stderr_text());
  // The worker without task 0's slot (slot 0 holds subtask 0 of every chain, B's
  // tasks among them) runs only region A's tasks.
  std::set<std::string> with_subtask0;
  for (const auto& d : r.before)
    if (d.tasks.count(0)) with_subtask0.insert(d.worker);
  for (const auto& w : workers)
    if (!with_subtask0.count(w.id)) r.victim = w.id;
  EXPECT_FALSE(r.victim.empty()) << c.stderr_text();
  for (auto it = workers.begin(); it != workers.end(); ++it)
    if (it->id == r.victim) {
      it->process->kill(SIGKILL);
      workers.erase(it);
      break;
    }
  const auto killed_at = Clock::now();
  const int at_kill = completed_checkpoints(c, job);
  // Running again: a checkpoint completed after the restart (none starts before).
  while (Clock::now() < killed_at + std::chrono::seconds(30) && completed_checkpoints(c, job) <= at_kill &&
         c.get("/jobs/" + job).body.value("state", "") != "FINISHED")
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  r.recovery_s = std::chrono::duration<double>(Clock::now() - killed_at).count();
  EXPECT_EQ(c.wait_for_state(job, "FINISHED", 120), "FINISHED") << c.stderr_text();
  r.log = c.stderr_text();
  auto all = deployments(r.log);
  r.after.assign(all.begin() + static_cast<long>(r.before.size()), all.end());
  r.exceptions = c.get("/jobs/" + job + "/exceptions").body;
  r.outputs = outputs(dir / "out");
  return r;
}

Outputs embedded(const fs::path& dir, long long rows) {
  fs::create_directories(dir);
  std::ofstream(dir / "job.sql") << two_regions_script(dir / "out", rows, 100'000'000);
  ClinkProcess run({"run", (dir / "job.sql").string()}, dir);
  EXPECT_EQ(run.wait_for(120'000), 0) << run.err();
  return outputs(dir / "out");
}

constexpr long long kRows = 20000;  // 4 s of input at 5,000 rows/s

TEST(ClusterRegionFailover, AKilledWorkerRestartsOnlyTheRegionsThatRanOnIt) {
  fs::path dir = scratch_dir("clink_region_");
  Outputs expected = embedded(dir / "embedded", kRows);
  ASSERT_EQ(expected.b.size(), static_cast<std::size_t>(kRows));
  ASSERT_EQ(expected.a.size(), 2601u);  // 200 windows x 13 keys, and the last row's

  KillResult r = kill_region_a_worker(dir, "region", kRows);
  // Two regions, each deployed as its own attempt: A on both workers, B on one.
  std::map<std::int64_t, std::set<int>> tasks_of;
  for (const auto& d : r.before) tasks_of[d.attempt].insert(d.tasks.begin(), d.tasks.end());
  ASSERT_EQ(tasks_of.size(), 2u);
  std::set<int> region_a, region_b;
  for (const auto& d : r.before)
    if (d.worker == r.victim) region_a = tasks_of[d.attempt];
  for (const auto& [attempt, tasks] : tasks_of)
    if (tasks != region_a) region_b = tasks;
  ASSERT_FALSE(region_a.empty());
  ASSERT_FALSE(region_b.empty());
  // Only region A was deployed again, once, as one attempt, off the killed worker.
  std::set<int> redeployed;
  std::set<std::int64_t> attempts;
  for (const auto& d : r.after) {
    redeployed.insert(d.tasks.begin(), d.tasks.end());
    attempts.insert(d.attempt);
    EXPECT_NE(d.worker, r.victim);
  }
  EXPECT_EQ(redeployed, region_a);
  EXPECT_EQ(attempts.size(), 1u);
  for (const auto& [task, n] : deploy_counts(r.after)) EXPECT_EQ(n, 1) << "task " << task;
  // One failover, of one region: no restart of the whole job.
  EXPECT_EQ(count_matches(r.log, R"(region \d+ restarts in)"), 1) << r.log;
  EXPECT_EQ(count_matches(r.log, R"(restart \d+ in \d+ ms after)"), 0) << r.log;
  // Its cause: the worker's loss, or (when a survivor's task of region A saw its channel
  // to the dead worker break first) that task's failure.
  const auto& entries = r.exceptions["exceptionHistory"]["entries"];
  ASSERT_EQ(entries.size(), 1u) << r.exceptions.dump();
  const std::string cause = entries[0].value("stacktrace", "");
  static const std::regex region_a_task(
      R"(^(datagen_source_1|calc_2|watermark_assigner_3|calc_4|window_aggregate_5|calc_6|filesystem_sink_7) \(\d/2\) failed: )");
  EXPECT_TRUE(cause.find("worker " + r.victim + " was lost") != std::string::npos ||
              std::regex_search(cause, region_a_task))
      << cause;
  // Running again at once: the redeployed region takes part in the next checkpoint
  // (one that reached its tasks before they ran must not stall until the job ends).
  EXPECT_LT(r.recovery_s, 2.5);
  // Exactly once: region A from its checkpoint, region B undisturbed.
  EXPECT_EQ(r.outputs.a, expected.a);
  EXPECT_EQ(r.outputs.b, expected.b);
  std::printf("region failover: recovery (kill to the next completed checkpoint) %.2f s; redeployed %zu of %zu tasks\n",
              r.recovery_s, redeployed.size(), region_a.size() + region_b.size());
}

TEST(ClusterRegionFailover, FullStrategyRestartsEveryTaskOnAWorkerLoss) {
  fs::path dir = scratch_dir("clink_region_");
  Outputs expected = embedded(dir / "embedded", kRows);

  KillResult r = kill_region_a_worker(dir, "full", kRows);
  // One attempt for every task, before and after.
  std::set<std::int64_t> before_attempts, after_attempts;
  std::set<int> all, redeployed;
  for (const auto& d : r.before) before_attempts.insert(d.attempt), all.insert(d.tasks.begin(), d.tasks.end());
  for (const auto& d : r.after) after_attempts.insert(d.attempt), redeployed.insert(d.tasks.begin(), d.tasks.end());
  EXPECT_EQ(before_attempts.size(), 1u);
  EXPECT_EQ(after_attempts.size(), 1u);
  EXPECT_EQ(redeployed, all);  // region B's tasks restarted too
  EXPECT_EQ(count_matches(r.log, R"(region \d+ restarts in)"), 0) << r.log;
  EXPECT_EQ(count_matches(r.log, R"(restart \d+ in \d+ ms after)"), 1) << r.log;
  EXPECT_EQ(r.outputs.a, expected.a);
  EXPECT_EQ(r.outputs.b, expected.b);
  std::printf("full restart: recovery (kill to the next completed checkpoint) %.2f s; redeployed %zu of %zu tasks\n",
              r.recovery_s, redeployed.size(), all.size());
}

// ---- a task failure (not a worker loss), on a cluster inside the test process ----

// A probe beside a source (a second consumer of its output, dropping it): counts its
// deployments (builds, one per subtask each time its region is deployed) and, when
// `fails` and armed, fails its task once.
struct Probes {
  std::mutex mu;
  std::map<std::string, int> builds;  // by probe op id
  std::atomic<bool> armed{false};
  int builds_of(const std::string& id) {
    std::lock_guard lock(mu);
    return builds[id];
  }
};
Probes& probes() {
  static Probes p;
  return p;
}

class ProbeOperator final : public StreamOperator {
 public:
  explicit ProbeOperator(bool fails) : fails_(fails) {}
  void process_batch(int, BatchPtr) override {
    if (fails_ && probes().armed.exchange(false)) throw std::runtime_error("injected task failure in region A");
  }
  void process_watermark(Watermark) override {}

 private:
  bool fails_;
};

OperatorRegistry probing_registry() {
  OperatorRegistry registry = builtin_registry();
  OperatorFactoryInfo probe;
  probe.name = "test_probe";
  probe.description = "counts its deployments; fails once when armed";
  probe.out_type = [](const OperatorSpecContext& ctx) { return ctx.input_types.at(0); };
  probe.make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
    const bool fails = ctx.params->at("fails").get<bool>();
    const std::string id = ctx.id;
    return [fails, id] {
      {
        std::lock_guard lock(probes().mu);
        ++probes().builds[id];
      }
      return std::make_unique<ProbeOperator>(fails);
    };
  };
  registry.add(probe);
  return registry;
}

nlohmann::json plan(const std::string& script) {
  sql::Catalog catalog;
  sql::StatementRunner runner(catalog);
  nlohmann::json spec;
  runner.on_job([&](const nlohmann::json& s, const sql::ast::Statement&) { spec = s; });
  runner.run(script);
  return spec;
}

// Adds a probe beside each source: "probe_a" (fails) beside a_src's, "probe_b" beside b_src's.
void add_probes(nlohmann::json& spec) {
  nlohmann::json added = nlohmann::json::array();
  for (const auto& op : spec["ops"]) {
    if (op.contains("inputs") && !op["inputs"].empty()) continue;
    const bool a = !op.contains("parallelism");  // b_src's scan has parallelism 1
    nlohmann::json probe = {{"id", a ? "probe_a" : "probe_b"},
                            {"type", "test_probe"},
                            {"name", "Probe"},
                            {"uid", a ? "probe-a" : "probe-b"},
                            {"params", {{"fails", a}}},
                            {"inputs", {{{"from", op["id"]}, {"partitioning", "forward"}}}}};
    if (op.contains("parallelism")) probe["parallelism"] = op["parallelism"];
    added.push_back(probe);
  }
  for (auto& p : added) spec["ops"].push_back(p);
}

TEST(ClusterRegionFailover, ATaskFailureRestartsOnlyItsRegion) {
  fs::path dir = scratch_dir("clink_region_");
  const long long rows = 10000;
  const Outputs expected = embedded(dir / "embedded", rows);
  OperatorRegistry registry = probing_registry();
  cluster::ClusterRuntimeConfig config;
  config.heartbeat_interval = std::chrono::milliseconds(200);
  config.heartbeat_timeout = std::chrono::milliseconds(2000);
  cluster::ClusterRuntime runtime(config);
  std::vector<std::unique_ptr<cluster::Worker>> workers;
  for (int i = 0; i < 2; ++i) {
    cluster::WorkerConfig w;
    const std::string address = "127.0.0.1:" + std::to_string(runtime.rpc_port());
    w.coordinator = [address] { return address; };
    w.slots = 2;
    w.worker_id = "w" + std::to_string(i);
    workers.push_back(std::make_unique<cluster::Worker>(w, registry));
  }
  for (int i = 0; i < 500 && runtime.workers().size() != 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));

  nlohmann::json spec = plan(two_regions_script(dir / "cluster", rows, 5'000));
  add_probes(spec);
  JobGraph graph = from_spec(spec, registry);
  ExecutionOptions o;
  o.checkpoints.interval_ms = 100;
  o.checkpoints.directory = dir / "checkpoints";
  o.restart = RestartStrategy::fixed_delay(3, 100);
  JobHandle job = runtime.launch("00000000000000000000000000000a01", graph, o);
  for (int i = 0; i < 1000 && job.checkpoint_counts().completed < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_GE(job.checkpoint_counts().completed, 2);
  probes().armed = true;  // the next batch of region A's source fails its task
  ASSERT_TRUE(job.wait_for(std::chrono::seconds(60)));
  job.wait();
  EXPECT_FALSE(probes().armed.load());
  EXPECT_EQ(job.checkpoint_counts().restarts, 1);
  ASSERT_EQ(job.restart_causes().size(), 1u);
  EXPECT_NE(job.restart_causes()[0].find("injected task failure in region A"), std::string::npos)
      << job.restart_causes()[0];
  EXPECT_EQ(probes().builds_of("probe_a"), 4);  // 2 subtasks, deployed twice
  EXPECT_EQ(probes().builds_of("probe_b"), 1);  // 1 subtask, never redeployed
  EXPECT_EQ(outputs(dir / "cluster"), expected);
}

}  // namespace
}  // namespace clink::test
