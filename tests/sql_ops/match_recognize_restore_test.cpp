// sql_match_recognize in real jobs: PATTERN (A B C) with B.v > A.v and C.v > B.v per key
// (AFTER MATCH SKIP TO NEXT ROW), run failure-free at parallelism 1 and 2, stopped with a
// savepoint and resumed (1 -> 1, 1 -> 2, 2 -> 1) while partial matches live in the CEP
// state and rows wait for the watermark (the watermark lags the rows by one step), and
// with an injected failure, on the memory and the RocksDB backends. The exactly-once
// output must equal the failure-free one row for row (sorted: keys interleave across
// subtasks).
#include <gtest/gtest.h>

#include <chrono>

#include "clink/runtime/executor.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "sql_ops_test_support.hpp"

#include "../support/checkpoint_support.hpp"
#include "../support/print_form.hpp"

namespace clink::sqltest {
namespace {

namespace fs = std::filesystem;
using namespace testsupport;

SchemaPtr kv_schema() {
  return sql::make_schema({{"t", LogicalType::timestamp(3)}, {"k", LogicalType::string()}, {"v", LogicalType::bigint()}});
}
ColumnBatch spread(std::int64_t v, std::int64_t t) {
  std::vector<Row> rows;
  for (const char* k : {"a", "b", "c", "d", "e", "f"}) rows.push_back(Row{{Value(t * 1000), Value(k), Value(v)}, RowKind::kInsert, t});
  return batch(kv_schema(), rows);
}
// Per key: rows (t, v) = (1, 1), (12, 2), (15, 4), (21, 8), (29, 16); each step's
// watermark stays behind its rows, so a savepoint after step 3 holds the rows at 15
// waiting and partial matches in the NFA.
std::vector<ScriptStep> steps() {
  return {{spread(1, 1), std::nullopt}, {spread(2, 12), 5}, {spread(4, 15), 12}, {spread(8, 21), 16}, {spread(16, 29), std::nullopt}};
}

// The extended row of a condition / the measures: [t, k, v] (current / last row),
// [rowtime, proctime, classifier], then per navigation [t, k, v].
json match_op() {
  SchemaPtr out = sql::make_schema({{"k", LogicalType::string()}, {"a", LogicalType::bigint()},
                                    {"c", LogicalType::bigint()}, {"mt", LogicalType::timestamp(3).not_null()}});
  auto last = [](const char* v) { return json{{"kind", "LAST"}, {"variable", v}, {"offset", 0}}; };
  auto greater_than_nav = json{{"call", ">"}, {"args", json::array({{{"col", 2}}, {{"col", 8}}})}};
  json pattern = json::array();
  for (const char* v : {"A", "B", "C"}) pattern.push_back({{"variable", v}, {"min", 1}, {"max", 1}, {"reluctant", false}});
  return {{"id", "match"},
          {"type", "sql_match_recognize"},
          {"params",
           {{"input_schemas", json::array({schema_json(kv_schema())})},
            {"schema", schema_json(out)},
            {"partition_keys", {1}},
            {"order_column", 0},
            {"pattern", pattern},
            {"skip", "TO_NEXT_ROW"},
            {"defines", json::array({{{"variable", "B"}, {"condition", greater_than_nav}, {"navs", json::array({last("A")})},
                                      {"aggregates", json::array()}},
                                     {{"variable", "C"}, {"condition", greater_than_nav}, {"navs", json::array({last("B")})},
                                      {"aggregates", json::array()}}})},
            {"measure_navs", json::array({last("A"), last("C")})},
            {"measure_aggregates", json::array()},
            {"outputs", json::array({{{"col", 1}}, {{"col", 8}}, {{"col", 11}}, {{"col", 3}}})}}},
          {"inputs", json::array({{{"from", "inj"}, {"partitioning", "hash"}, {"key", "sql_columns:1"}}})}};
}

json job_spec(const std::string& script, const json& op, int parallelism) {
  json src = {{"id", "src"}, {"type", "sql_test_source"}, {"parallelism", 1},
              {"params", {{"script", script}, {"schema", schema_json(kv_schema())}}}};
  json inj = {{"id", "inj"}, {"type", "sql_test_injector"}, {"parallelism", 1},
              {"params", {{"script", script}, {"schema", schema_json(kv_schema())}}},
              {"inputs", json::array({{{"from", "src"}}})}};
  json sink = {{"id", "sink"}, {"type", "sql_test_sink"}, {"params", {{"script", script}}},
               {"inputs", json::array({{{"from", "match"}}})}};
  return {{"name", "match"}, {"config", {{"parallelism", parallelism}}}, {"ops", json::array({src, inj, op, sink})}};
}

class SqlMatchRestore : public BackendTest {
 protected:
  std::shared_ptr<Script> fresh() {
    auto s = std::make_shared<Script>();
    s->steps = steps();
    put_script(name_, s);
    return s;
  }
  JobGraph graph(const json& op, int p) { return from_spec(job_spec(name_, op, p), test_registry()); }

  std::vector<std::string> failure_free(const json& op, int p) {
    TempDir dir;
    auto s = fresh();
    auto h = execute_async(graph(op, p), checkpointing(dir.path, 0));
    h.wait();
    EXPECT_EQ(h.status(), JobStatus::kFinished) << h.error();
    return sorted(s->sink->values());
  }
  std::vector<std::string> with_savepoint(const json& op, std::size_t at, int p1, int p2) {
    TempDir dir;
    auto s = fresh();
    fs::path savepoint;
    {
      s->pause_at = at;
      auto h = execute_async(graph(op, p1), checkpointing(dir.path, 0));
      while (s->emitted.load() < at && !h.wait_for(std::chrono::milliseconds(1))) {
      }
      EXPECT_EQ(h.status(), JobStatus::kRunning) << h.error();
      savepoint = h.stop_with_savepoint(dir.path / "sp");
    }
    s->pause_at = static_cast<std::size_t>(-1);
    auto o = checkpointing(dir.path, 0);
    o.restore = RestoreSettings{savepoint};
    auto h = execute_async(graph(op, p2), o);
    h.wait();
    EXPECT_EQ(h.status(), JobStatus::kFinished) << h.error();
    return sorted(s->sink->values());
  }
  std::vector<std::string> with_failure(const json& op, std::size_t at, int p) {
    TempDir dir;
    auto s = fresh();
    s->pause_at = at;
    auto h = execute_async(graph(op, p), checkpointing(dir.path, 10));
    while (s->emitted.load() < at && !h.wait_for(std::chrono::milliseconds(1))) {
    }
    const auto done = h.checkpoint_counts().completed;
    while (h.checkpoint_counts().completed < done + 2 && !h.wait_for(std::chrono::milliseconds(1))) {
    }
    EXPECT_EQ(h.status(), JobStatus::kRunning) << h.error();
    s->armed = true;
    s->pause_at = static_cast<std::size_t>(-1);
    h.wait();
    EXPECT_EQ(h.status(), JobStatus::kFinished) << h.error();
    EXPECT_EQ(h.checkpoint_counts().restarts, 1);
    return sorted(s->sink->values());
  }

  void expect_restores(const json& op, const std::vector<std::string>& expected) {
    EXPECT_EQ(failure_free(op, 1), expected) << "parallelism 1";
    EXPECT_EQ(failure_free(op, 2), expected) << "parallelism 2";
    for (std::size_t at : {2, 3})
      for (auto [p1, p2] : {std::pair{1, 1}, {1, 2}, {2, 1}})
        EXPECT_EQ(with_savepoint(op, at, p1, p2), expected) << "savepoint after step " << at << ", " << p1 << " -> " << p2;
    EXPECT_EQ(with_failure(op, 3, 2), expected) << "injected failure";
  }

  std::string name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
};
INSTANTIATE_TEST_SUITE_P(Backends, SqlMatchRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

std::string ts(int ms) { return clink::test::print_timestamp_ms(ms); }

// Per key the rising triples (1, 2, 4) at 15, (2, 4, 8) at 21, (4, 8, 16) at 29.
std::vector<std::string> expected() {
  std::vector<std::string> out;
  for (std::string k : {"a", "b", "c", "d", "e", "f"}) {
    out.push_back("+I[" + k + ", 1, 4, " + ts(15) + "]");
    out.push_back("+I[" + k + ", 2, 8, " + ts(21) + "]");
    out.push_back("+I[" + k + ", 4, 16, " + ts(29) + "]");
  }
  return sorted(out);
}

TEST_P(SqlMatchRestore, RisingTriplesSkipToNextRow) { expect_restores(match_op(), expected()); }

}  // namespace
}  // namespace clink::sqltest
