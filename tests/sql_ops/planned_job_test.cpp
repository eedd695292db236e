// A planned job end to end: the PhysicalPlanner's JobGraphSpec (expressions written by
// expr_json's serialiser) loads through the builtin operator factories and runs to
// completion: filesystem source -> watermarks -> calc (filter + projection) -> tumbling
// window COUNT -> calc -> collect sink.
#include <gtest/gtest.h>

#include <filesystem>
#include <chrono>
#include <fstream>

#include "clink/connectors/sql/sql_sinks.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "clink/runtime/operator_registry.hpp"
#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/handler/statement_runner.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

namespace fs = std::filesystem;

TEST(PlannedJob, FilterProjectionTumblingCountRunsFromTheSpec) {
  fs::path dir = fs::temp_directory_path() / ("clink_planned_job_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream f(dir / "clicks.json");
    f << R"({"url":"a","n":2,"ts":"2024-01-01 00:00:01"})" "\n"
      << R"({"url":"b","n":1,"ts":"2024-01-01 00:00:02"})" "\n"   // filtered out (n > 1)
      << R"({"url":"a","n":5,"ts":"2024-01-01 00:00:04"})" "\n"
      << R"({"url":"b","n":3,"ts":"2024-01-01 00:00:09"})" "\n"
      << R"({"url":"a","n":9,"ts":"2024-01-01 00:00:12"})" "\n";
  }
  Catalog catalog;
  StatementRunner runner(catalog);
  runner.run("CREATE TABLE clicks (url STRING, n INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
             "WITH ('connector' = 'filesystem', 'path' = '" + (dir / "clicks.json").string() + "', 'format' = 'json');"
             "CREATE TABLE counts (ws TIMESTAMP(3), u STRING, c BIGINT) WITH ('connector' = 'collect', 'name' = 'planned-job')");
  auto results = runner.run(
      "INSERT INTO counts SELECT window_start, UPPER(url), COUNT(*) FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), "
      "INTERVAL '10' SECOND)) WHERE n > 1 GROUP BY window_start, window_end, url");
  const nlohmann::json& spec = results.at(0).spec;
  std::string ops;
  for (const auto& op : spec.at("ops")) ops += op.at("type").get<std::string>() + " ";
  EXPECT_EQ(ops, "sql_filesystem_source sql_watermark_assigner sql_calc sql_window_aggregate sql_calc sql_collect_sink ");
  JobGraph graph = from_spec(spec, builtin_registry());
  execute(graph);
  auto collected = SqlCollectResults::get("planned-job");
  EXPECT_EQ(collected->changelog(), (std::vector<std::string>{"+I[2024-01-01T00:00, A, 2]", "+I[2024-01-01T00:00, B, 1]",
                                                              "+I[2024-01-01T00:00:10, A, 1]"}));
  SqlCollectResults::drop("planned-job");
  fs::remove_all(dir);
}

// Found by the SQL test matrix: a keyed op without keys (a global window aggregate,
// GROUP BY, Top-N) read a rebalanced input, so it had no keyed backend: a window
// aggregate's checkpoint failed ("no keyed state backend (its input is not keyed)") and a
// GROUP BY's state, in a private backend, could not be restored ("it has keyed state but
// is not keyed now"). Now it reads the empty key: the query stops with a savepoint while
// it holds state and resumes from it with nothing lost.
class GlobalOpRestore : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "in");
    std::ofstream(dir_ / "in" / "a.csv") << "a,2024-01-01 00:00:01\nb,2024-01-01 00:00:04\na,2024-01-01 00:00:12\n";
  }
  void TearDown() override {
    SqlCollectResults::drop("global");
    fs::remove_all(dir_);
  }

  // Plans `query` into the collect table `global` over a directory source that keeps
  // looking for new files.
  nlohmann::json plan(const std::string& columns, const std::string& query) {
    Catalog catalog;
    StatementRunner runner(catalog);
    runner.run("CREATE TABLE clicks (url STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = "
               "'filesystem', 'path' = '" + (dir_ / "in").string() + "', 'format' = 'csv', "
               "'source.monitor-interval' = '5 ms');"
               "CREATE TABLE global (" + columns + ") WITH ('connector' = 'collect', 'name' = 'global')");
    return runner.run("INSERT INTO global " + query).at(0).spec;
  }

  ExecutionOptions checkpointing() const {
    ExecutionOptions o;
    o.checkpoints.interval_ms = 10;
    o.checkpoints.directory = dir_ / "checkpoints";
    return o;
  }

  // Runs until the materialised results are `rows` (or 10 s passed); returns them.
  static std::vector<std::string> run_until(JobHandle& h, const std::vector<std::string>& rows) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (SqlCollectResults::get("global")->rows() != rows && std::chrono::steady_clock::now() < deadline &&
           !h.wait_for(std::chrono::milliseconds(5))) {
    }
    EXPECT_EQ(h.status(), JobStatus::kRunning) << h.error();
    return SqlCollectResults::get("global")->rows();
  }

  // Runs the query until it shows `before`, stops it with a savepoint, adds a file with
  // the row (c, `late_time`) and resumes from the savepoint until it shows `after`.
  void expect_restores(const nlohmann::json& spec, const std::vector<std::string>& before, const std::string& late_time,
                       const std::vector<std::string>& after) {
    fs::path savepoint;
    {
      JobHandle h = execute_async(from_spec(spec, builtin_registry()), checkpointing());
      EXPECT_EQ(run_until(h, before), before);
      savepoint = h.stop_with_savepoint(dir_ / "savepoint");
    }
    std::ofstream(dir_ / "in" / "b.csv") << "c," << late_time << "\n";
    ExecutionOptions o = checkpointing();
    o.restore = RestoreSettings{savepoint};
    JobHandle h = execute_async(from_spec(spec, builtin_registry()), o);
    EXPECT_EQ(run_until(h, after), after);
    h.cancel();
    h.wait_for(std::chrono::seconds(10));
  }

  fs::path dir_ = fs::temp_directory_path() / ("clink_planned_global_" + std::to_string(::getpid()));
};

TEST_F(GlobalOpRestore, AWindowAggregateWithoutKeys) {
  auto spec = plan("ws TIMESTAMP(3), c BIGINT",
                   "SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
                   "GROUP BY window_start, window_end");
  const nlohmann::json& window = spec.at("ops").at(2);
  EXPECT_EQ(window.at("type"), "sql_window_aggregate");
  EXPECT_EQ(window.at("inputs").dump(), R"([{"from":"watermark_assigner_2","key":"sql_columns:","partitioning":"hash"}])");
  // The window [00:00:10, 00:00:20) holds a row at the savepoint; a row at 00:00:25 fires it.
  expect_restores(spec, {"+I[2024-01-01T00:00, 2]"}, "2024-01-01 00:00:25",
                  {"+I[2024-01-01T00:00, 2]", "+I[2024-01-01T00:00:10, 1]"});
}

TEST_F(GlobalOpRestore, AGroupByWithoutKeys) {
  expect_restores(plan("n BIGINT", "SELECT COUNT(*) FROM clicks"), {"+I[3]"}, "2024-01-01 00:00:25", {"+I[4]"});
}

}  // namespace
}  // namespace clink::test
