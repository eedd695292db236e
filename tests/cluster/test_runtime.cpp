// The cluster runtime in one process: a ClusterRuntime (the coordinator's control plane
// and slots) and workers, each with its own gRPC stream and TCP data port, run SQL and
// MATCH_RECOGNIZE (CEP) jobs at parallelism 4 and must give exactly the embedded
// runtime's output; a worker lost mid-job restarts the job from its latest checkpoint
// with nothing lost or repeated; a savepoint taken on the cluster resumes embedded.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../support/local_cluster.hpp"
#include "windows_and_cep_job.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/handler/statement_runner.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("clink_cluster_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// The job spec of a script's one INSERT or statement set (${out} is `out`).
nlohmann::json plan(std::string script, const fs::path& out) {
  for (auto p = script.find("${out}"); p != std::string::npos; p = script.find("${out}", p))
    script.replace(p, 6, out.string());
  sql::Catalog catalog;
  sql::StatementRunner runner(catalog);
  nlohmann::json spec;
  runner.on_job([&](const nlohmann::json& s, const sql::ast::Statement&) { spec = s; });
  runner.run(script);
  return spec;
}

std::string script(long long rows, long long rows_per_second) {
  return "SET 'parallelism.default' = '4';\n" + windows_and_cep_script("${out}", rows, rows_per_second);
}

struct Outputs {
  std::vector<std::string> win, cep;
};

Outputs run_embedded(const nlohmann::json& spec, const fs::path& out, ExecutionOptions options = {}) {
  execute(from_spec(spec, builtin_registry()), options);
  return {committed_output(out / "win"), committed_output(out / "cep")};
}

TEST(ClusterRuntime, SqlAndCepJobsOnThreeWorkersGiveTheEmbeddedOutput) {
  fs::path dir = fresh_dir("match");
  Outputs expected = run_embedded(plan(script(60000, 10'000'000), dir / "embedded"), dir / "embedded");
  ASSERT_EQ(expected.win.size(), 7801u);  // 600 windows x 13 keys, and one window of the last row
  ASSERT_EQ(expected.cep.size(), 1089u);

  LocalCluster cluster(3);
  auto spec = plan(script(60000, 10'000'000), dir / "cluster");
  JobGraph graph = from_spec(spec, builtin_registry());
  JobHandle job = cluster.runtime().launch("0123456789abcdef0123456789abcdef", graph, {});
  ASSERT_TRUE(job.wait_for(60s));
  job.wait();
  EXPECT_EQ(committed_output(dir / "cluster" / "win"), expected.win);
  EXPECT_EQ(committed_output(dir / "cluster" / "cep"), expected.cep);
  // The job released its slots.
  for (const auto& w : cluster.runtime().workers()) EXPECT_EQ(w.free_slots, 2) << w.id;
  // The workers' heartbeats bring their operators' counters into the job's registry.
  std::int64_t sources = 0;  // both INSERTs of the statement set read one scan, as Flink reuses it
  for (const auto& node : graph.nodes) sources += node.num_inputs == 0;
  ASSERT_EQ(sources, 1);
  auto source_rows = [&] {
    std::int64_t n = 0;
    for (const auto& node : graph.nodes)
      if (node.num_inputs == 0) n += job.metrics().total(node.id).records_out;
    return n;
  };
  for (int i = 0; i < 300 && source_rows() != 60000; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(source_rows(), 60000);
}

TEST(ClusterRuntime, ALostWorkerRestartsTheJobFromItsLatestCheckpointExactlyOnce) {
  fs::path dir = fresh_dir("failover");
  Outputs expected = run_embedded(plan(script(40000, 10'000'000), dir / "embedded"), dir / "embedded");

  LocalCluster cluster(3);
  auto spec = plan(script(40000, 20'000), dir / "cluster");  // about 2 s of input
  JobGraph graph = from_spec(spec, builtin_registry());
  ExecutionOptions o;
  o.checkpoints.interval_ms = 100;
  o.checkpoints.directory = dir / "checkpoints";
  o.restart = RestartStrategy::fixed_delay(3, 100);
  JobHandle job = cluster.runtime().launch("00000000000000000000000000000001", graph, o);
  for (int i = 0; i < 1000 && job.checkpoint_counts().completed < 2; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_GE(job.checkpoint_counts().completed, 2);
  // Lose worker w1 (its stream ends), and bring a new one for its slots.
  cluster.workers()[1].reset();
  cluster.add_worker(2, "w3");
  ASSERT_TRUE(job.wait_for(60s));
  job.wait();
  EXPECT_EQ(job.checkpoint_counts().restarts, 1);
  ASSERT_EQ(job.restart_causes().size(), 1u);
  EXPECT_NE(job.restart_causes()[0].find("worker w1 was lost"), std::string::npos) << job.restart_causes()[0];
  EXPECT_EQ(committed_output(dir / "cluster" / "win"), expected.win);
  EXPECT_EQ(committed_output(dir / "cluster" / "cep"), expected.cep);
}

TEST(ClusterRuntime, ASavepointOfTheClusterResumesEmbeddedAtAnotherParallelism) {
  fs::path dir = fresh_dir("savepoint");
  Outputs expected = run_embedded(plan(script(40000, 10'000'000), dir / "embedded"), dir / "embedded");

  LocalCluster cluster(2);
  auto spec = plan(script(40000, 20'000), dir / "out");
  JobGraph graph = from_spec(spec, builtin_registry());
  ExecutionOptions o;
  o.checkpoints.interval_ms = 100;
  o.checkpoints.directory = dir / "checkpoints";
  JobHandle job = cluster.runtime().launch("00000000000000000000000000000002", graph, o);
  for (int i = 0; i < 1000 && job.checkpoint_counts().completed < 2; ++i) std::this_thread::sleep_for(10ms);
  fs::path savepoint = job.stop_with_savepoint(dir / "savepoint");
  ASSERT_EQ(job.status(), JobStatus::kCanceled);
  auto partial = committed_output(dir / "out" / "win");
  EXPECT_LT(partial.size(), expected.win.size());  // stopped mid-way

  // Resume in this process at parallelism 2.
  auto resumed = spec;
  resumed["config"]["parallelism"] = 2;
  for (auto& op : resumed["ops"])
    if (op.value("parallelism", 0) == 4) op["parallelism"] = 2;
  ExecutionOptions r;
  r.restore = RestoreSettings{savepoint, false};
  execute(from_spec(resumed, builtin_registry()), r);
  EXPECT_EQ(committed_output(dir / "out" / "win"), expected.win);
  EXPECT_EQ(committed_output(dir / "out" / "cep"), expected.cep);
}

// A job submitted before any worker registered waits for slots without blocking its
// submission, runs once workers come, and a job waiting for slots cancels at once.
TEST(ClusterRuntime, AJobWaitsForSlotsWithoutBlockingItsSubmission) {
  fs::path dir = fresh_dir("slots");
  Outputs expected = run_embedded(plan(script(20000, 10'000'000), dir / "embedded"), dir / "embedded");
  LocalCluster cluster(0);
  JobGraph graph = from_spec(plan(script(20000, 10'000'000), dir / "cluster"), builtin_registry());
  auto started = std::chrono::steady_clock::now();
  JobHandle job = cluster.runtime().launch("00000000000000000000000000000003", graph, {});
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1s);
  EXPECT_FALSE(job.wait_for(300ms));  // no slots yet
  cluster.add_worker(4, "late");
  ASSERT_TRUE(job.wait_for(60s));
  job.wait();
  EXPECT_EQ(committed_output(dir / "cluster" / "win"), expected.win);
  EXPECT_EQ(committed_output(dir / "cluster" / "cep"), expected.cep);

  auto wide_spec = plan(script(20000, 10'000'000), dir / "other");
  wide_spec["config"]["parallelism"] = 8;  // more slots than the cluster has
  for (auto& op : wide_spec["ops"])
    if (op.value("parallelism", 0) == 4) op["parallelism"] = 8;
  JobGraph wide = from_spec(wide_spec, builtin_registry());
  JobHandle waiting = cluster.runtime().launch("00000000000000000000000000000004", wide, {});
  EXPECT_FALSE(waiting.wait_for(200ms));
  started = std::chrono::steady_clock::now();
  waiting.cancel();
  ASSERT_TRUE(waiting.wait_for(5s));
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1s);
  EXPECT_EQ(waiting.status(), JobStatus::kCanceled);
}

}  // namespace
}  // namespace clink::test
