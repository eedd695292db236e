// sql_over_aggregate in real jobs: event-time ROWS and RANGE bounded frames and an
// unbounded frame, each run failure-free at parallelism 1 and 2, stopped with a savepoint
// and resumed (1 -> 1, 1 -> 2, 2 -> 1) while rows wait in state for the watermark (the
// watermark lags the rows by one step), and with an injected failure, on the memory and
// the RocksDB backends. The exactly-once output must equal the failure-free one row for
// row (sorted: keys interleave in no fixed order across subtasks).
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
// waiting (and the rows still in the frames).
std::vector<ScriptStep> steps() {
  return {{spread(1, 1), std::nullopt}, {spread(2, 12), 5}, {spread(4, 15), 12}, {spread(8, 21), 16}, {spread(16, 29), std::nullopt}};
}

json over_op(bool rows, std::optional<std::int64_t> preceding) {
  SchemaPtr out = sql::make_schema({{"t", LogicalType::timestamp(3)}, {"k", LogicalType::string()}, {"v", LogicalType::bigint()},
                                    {"s", LogicalType::bigint()}, {"n", LogicalType::bigint().not_null()}});
  return {{"id", "over"},
          {"type", "sql_over_aggregate"},
          {"params",
           {{"input_schemas", json::array({schema_json(kv_schema())})},
            {"schema", schema_json(out)},
            {"partition_keys", {1}},
            {"order_column", 0},
            {"rows", rows},
            {"preceding", preceding ? json(*preceding) : json()},
            {"aggregates", json::array({{{"function", "SUM"}, {"args", {2}}}, {{"function", "COUNT"}, {"args", json::array()}}})}}},
          {"inputs", json::array({{{"from", "inj"}, {"partitioning", "hash"}, {"key", "sql_columns:1"}}})}};
}

json job_spec(const std::string& script, const json& op, int parallelism) {
  json src = {{"id", "src"}, {"type", "sql_test_source"}, {"parallelism", 1},
              {"params", {{"script", script}, {"schema", schema_json(kv_schema())}}}};
  json inj = {{"id", "inj"}, {"type", "sql_test_injector"}, {"parallelism", 1},
              {"params", {{"script", script}, {"schema", schema_json(kv_schema())}}},
              {"inputs", json::array({{{"from", "src"}}})}};
  json sink = {{"id", "sink"}, {"type", "sql_test_sink"}, {"params", {{"script", script}}},
               {"inputs", json::array({{{"from", "over"}}})}};
  return {{"name", "over"}, {"config", {{"parallelism", parallelism}}}, {"ops", json::array({src, inj, op, sink})}};
}

class SqlOverRestore : public BackendTest {
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
INSTANTIATE_TEST_SUITE_P(Backends, SqlOverRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

std::string ts(int ms) { return clink::test::print_timestamp_ms(ms); }

// Per key the rows (t, v) with the frame's SUM and COUNT.
std::vector<std::string> expected(const std::vector<std::pair<std::int64_t, std::int64_t>>& sums_counts) {
  const std::pair<int, int> rows[] = {{1, 1}, {12, 2}, {15, 4}, {21, 8}, {29, 16}};
  std::vector<std::string> out;
  for (std::string k : {"a", "b", "c", "d", "e", "f"})
    for (std::size_t i = 0; i < 5; ++i)
      out.push_back("+I[" + ts(rows[i].first) + ", " + k + ", " + std::to_string(rows[i].second) + ", " +
                    std::to_string(sums_counts[i].first) + ", " + std::to_string(sums_counts[i].second) + "]");
  return sorted(out);
}

TEST_P(SqlOverRestore, RowsBetweenOnePrecedingAndCurrentRow) {
  expect_restores(over_op(true, 1), expected({{1, 1}, {3, 2}, {6, 2}, {12, 2}, {24, 2}}));
}

// RANGE 10 ms: the frame of t is [t - 10, t].
TEST_P(SqlOverRestore, RangeTenMillisecondsPreceding) {
  expect_restores(over_op(false, 10), expected({{1, 1}, {2, 1}, {6, 2}, {14, 3}, {24, 2}}));
}

TEST_P(SqlOverRestore, RangeUnboundedPreceding) {
  expect_restores(over_op(false, std::nullopt), expected({{1, 1}, {3, 2}, {7, 3}, {15, 4}, {31, 5}}));
}

// The list accumulators of Flink's retracting FIRST_VALUE / LAST_VALUE / LISTAGG /
// ARRAY_AGG and the Welford state of VAR_POP, in a ROWS frame that retracts its oldest row:
// a savepoint taken while frames hold rows must bring the lists back in arrival order.
TEST_P(SqlOverRestore, ListAccumulatorsInRowsFrame) {
  SchemaPtr out = sql::make_schema({{"t", LogicalType::timestamp(3)}, {"k", LogicalType::string()}, {"v", LogicalType::bigint()},
                                    {"arr", LogicalType::array(LogicalType::bigint())}, {"l", LogicalType::string()},
                                    {"f", LogicalType::bigint()}, {"lv", LogicalType::bigint()}, {"vp", LogicalType::bigint()}});
  json op = over_op(true, 1);
  op["params"]["schema"] = schema_json(out);
  op["params"]["aggregates"] = json::array({{{"function", "ARRAY_AGG"}, {"args", {2}}},
                                            {{"function", "LISTAGG"}, {"args", {1}}},
                                            {{"function", "FIRST_VALUE"}, {"args", {2}}},
                                            {{"function", "LAST_VALUE"}, {"args", {2}}},
                                            {{"function", "VAR_POP"}, {"args", {2}}}});
  const char* frames[] = {"[1], K, 1, 1, 0", "[1, 2], K,K, 1, 2, 0", "[2, 4], K,K, 2, 4, 1", "[4, 8], K,K, 4, 8, 4",
                          "[8, 16], K,K, 8, 16, 16"};
  const std::pair<int, int> rows[] = {{1, 1}, {12, 2}, {15, 4}, {21, 8}, {29, 16}};
  std::vector<std::string> want;
  for (std::string k : {"a", "b", "c", "d", "e", "f"})
    for (std::size_t i = 0; i < 5; ++i) {
      std::string aggs = frames[i];
      for (std::size_t at; (at = aggs.find('K')) != std::string::npos;) aggs.replace(at, 1, k);
      want.push_back("+I[" + ts(rows[i].first) + ", " + k + ", " + std::to_string(rows[i].second) + ", " + aggs + "]");
    }
  expect_restores(op, sorted(want));
}

}  // namespace
}  // namespace clink::sqltest
