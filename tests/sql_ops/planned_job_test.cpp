// A planned job end to end: the PhysicalPlanner's JobGraphSpec (expressions written by
// expr_json's serialiser) loads through the builtin operator factories and runs to
// completion: filesystem source -> watermarks -> calc (filter + projection) -> tumbling
// window COUNT -> calc -> collect sink.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "clink/connectors/sql/sql_sinks.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "clink/runtime/operator_registry.hpp"
#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/handler/statement_runner.hpp"

namespace clink::sql {
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

}  // namespace
}  // namespace clink::sql
