// sql_values_source in real jobs: its rows in order, a checkpoint-restore across a failure
// on both state backends (every row exactly once), and the spec checks of its factory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../support/checkpoint_support.hpp"
#include "clink/runtime/executor.hpp"
#include "sql_job_support.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

using ::testing::HasSubstr;

json row_schema() { return schema_json({{"id", "BIGINT NOT NULL"}, {"name", "STRING"}}); }

// n rows (i, 'r<i>') as the planner writes VALUES rows; every seventh name is NULL.
json values_rows(int n) {
  json rows = json::array();
  for (int i = 0; i < n; ++i) {
    json name = i % 7 == 6 ? json{{"lit", nullptr}, {"type", "STRING"}}
                           : json{{"lit", "r" + std::to_string(i)}, {"type", "STRING NOT NULL"}};
    rows.push_back(json::array({json{{"lit", i}, {"type", "BIGINT NOT NULL"}}, name}));
  }
  return rows;
}

std::vector<std::string> expected_lines(int n) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back(std::to_string(i) + "," + (i % 7 == 6 ? "" : "r" + std::to_string(i)));
  std::sort(v.begin(), v.end());
  return v;
}

JobGraph values_job(int n, const fs::path& out, std::shared_ptr<FailOnce> fail) {
  JobGraph g;
  g.add_node(registry_node("values", "sql_values_source", {{"schema", row_schema()}, {"rows", values_rows(n)}}));
  g.add_node(failing_node("pass", std::move(fail)));
  g.add_node(registry_node("sink", "sql_filesystem_sink", {{"path", out.string()}, {"format", "csv"}, {"schema", row_schema()}}));
  g.add_edge(forward("values", "pass"));
  g.add_edge(forward("pass", "sink"));
  return g;
}

class SqlValuesSourceRestore : public BackendTest {};

TEST_P(SqlValuesSourceRestore, EveryRowExactlyOnceAcrossAFailure) {
  TempDir dir;
  const int n = 12000;  // 12 batches of 1024 rows, 15 ms apart: several checkpoints
  auto fail = std::make_shared<FailOnce>();
  fail->fail_at = 6000;
  fail->pause_ms = 15;
  auto handle = execute_async(values_job(n, dir.path / "out", fail), checkpointing(dir.path / "ckpt", 30));
  handle.wait();
  auto causes = handle.restart_causes();
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_THAT(causes[0], HasSubstr("injected failure"));
  EXPECT_GT(handle.checkpoint_counts().completed, 0);
  EXPECT_EQ(committed_lines(dir.path / "out"), expected_lines(n));
}

INSTANTIATE_TEST_SUITE_P(Backends, SqlValuesSourceRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

TEST(SqlValuesSource, EmitsItsRowsInOrder) {
  TempDir dir;
  execute_async(values_job(3000, dir.path / "out", std::make_shared<FailOnce>()), {}).wait();
  // One subtask, one part file: the lines are in VALUES order.
  std::vector<std::string> lines;
  for (const auto& e : fs::recursive_directory_iterator(dir.path / "out")) {
    if (!e.is_regular_file() || e.path().filename().string()[0] == '.') continue;
    std::istringstream in(slurp(e.path()));
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  ASSERT_EQ(lines.size(), 3000u);
  for (int i = 0; i < 3000; ++i)
    ASSERT_EQ(lines[static_cast<std::size_t>(i)], std::to_string(i) + "," + (i % 7 == 6 ? "" : "r" + std::to_string(i)));
}

std::string factory_error(json params) {
  try {
    registry_node("v", "sql_values_source", std::move(params));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(SqlValuesSource, RejectsRowsThatDoNotMatchTheSchema) {
  json schema = schema_json({{"a", "INT"}});
  EXPECT_THAT(factory_error({{"schema", schema}, {"rows", json::array({json::array({{{"lit", "x"}, {"type", "STRING"}}})})}}),
              HasSubstr("param 'rows'[0][0] is STRING but column 0 ('a') is INT"));
  EXPECT_THAT(factory_error({{"schema", schema}, {"rows", json::array({json::array()})}}),
              HasSubstr("param 'rows'[0] must be an array of 1 expressions"));
  EXPECT_THAT(factory_error({{"schema", schema}, {"rows", json::array({json::array({{{"col", 0}}})})}}),
              HasSubstr("param 'rows'[0][0]"));
  EXPECT_THAT(factory_error({{"schema", schema}}), HasSubstr("rows"));
}

TEST(SqlValuesSource, ANullInANotNullColumnFailsTheJob) {
  TempDir dir;
  json schema = schema_json({{"a", "INT NOT NULL"}});
  JobGraph g;
  g.add_node(registry_node("values", "sql_values_source",
                           {{"schema", schema}, {"rows", json::array({json::array({{{"lit", nullptr}, {"type", "INT"}}})})}}));
  g.add_node(registry_node("sink", "sql_blackhole_sink", {{"schema", schema}}));
  g.add_edge(forward("values", "sink"));
  std::string error;
  try {
    execute_async(g, {}).wait();
  } catch (const std::exception& e) {
    error = e.what();
  }
  EXPECT_THAT(error, HasSubstr("VALUES row 1: column 0 ('a') is NOT NULL but the value is NULL"));
}

}  // namespace
}  // namespace clink::test
