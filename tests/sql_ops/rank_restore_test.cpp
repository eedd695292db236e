// The ranking operators in real jobs: an append-only Top-N, a Top-N over a retracting GROUP
// BY, row-time deduplication keep-last and keep-first, and a window Top-N, each run
// failure-free at parallelism 1 and 2, stopped with a savepoint and resumed (1 -> 1, 1 -> 2,
// 2 -> 1), and with an injected failure, on the memory and the RocksDB backends. The
// exactly-once output must equal the failure-free one: insert-only results exactly (sorted),
// updating ones as their applied changelog (applying fails on a retraction of a row that is
// not there, so lost or duplicated state shows).
#include <gtest/gtest.h>

#include <chrono>
#include <map>

#include "clink/runtime/executor.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "sql_ops_test_support.hpp"

#include "../support/checkpoint_support.hpp"
#include "../support/print_form.hpp"

namespace clink::sqltest {
namespace {

namespace fs = std::filesystem;
using namespace testsupport;

const char* const kKeys[] = {"a", "b", "c", "d", "e", "f"};

SchemaPtr kv_schema() {
  return sql::make_schema({{"t", LogicalType::timestamp(3)}, {"k", LogicalType::string()}, {"v", LogicalType::bigint()}});
}
// Key i gets v * (i + 1) at time t (ms).
ColumnBatch spread(std::int64_t v, std::int64_t t) {
  std::vector<Row> rows;
  for (int i = 0; i < 6; ++i) rows.push_back(Row{{Value(t * 1000), Value(kKeys[i]), Value(v * (i + 1))}, RowKind::kInsert, t});
  return batch(kv_schema(), rows);
}
// Per key: (t, v) = (1, 1), (12, 2), (15, 4), (21, 8), (29, 16) times the key's factor; watermarks between.
std::vector<ScriptStep> steps() {
  return {{spread(1, 1), 5}, {spread(2, 12), 14}, {spread(4, 15), 16}, {spread(8, 21), 25}, {spread(16, 29), std::nullopt}};
}

json edge(const std::string& from, const std::string& key) {
  return {{"from", from}, {"partitioning", "hash"}, {"key", key}};
}

// The sink runs at the parallelism of `last` when that is pinned to 1 (a global Top-N), so its
// changelog reaches one sink subtask in order.
json job_spec(const std::string& script, std::vector<json> ops, const std::string& last, int parallelism) {
  json src = {{"id", "src"}, {"type", "sql_test_source"}, {"parallelism", 1},
              {"params", {{"script", script}, {"schema", schema_json(kv_schema())}}}};
  json inj = {{"id", "inj"}, {"type", "sql_test_injector"}, {"parallelism", 1},
              {"params", {{"script", script}, {"schema", schema_json(kv_schema())}}},
              {"inputs", json::array({{{"from", "src"}}})}};
  json sink = {{"id", "sink"}, {"type", "sql_test_sink"}, {"params", {{"script", script}}},
               {"inputs", json::array({{{"from", last}}})}};
  json all = json::array({src, inj});
  for (auto& o : ops) {
    if (o["id"] == last && o.contains("parallelism")) sink["parallelism"] = o["parallelism"];
    all.push_back(o);
  }
  all.push_back(sink);
  return {{"name", "rank"}, {"config", {{"parallelism", parallelism}}}, {"ops", all}};
}

SchemaPtr with_rank(const SchemaPtr& s) {
  std::vector<sql::RowField> f = s->fields();
  f.push_back({"rn", LogicalType::bigint().not_null()});
  return sql::make_schema(f);
}

json order_desc(std::size_t column) { return json::array({{{"column", column}, {"descending", true}}}); }

// The top 2 values per key with their rank.
std::vector<json> append_topn_ops() {
  return {{{"id", "rank"},
           {"type", "sql_rank"},
           {"params",
            {{"input_schemas", json::array({schema_json(kv_schema())})},
             {"schema", schema_json(with_rank(kv_schema()))},
             {"keys", {1}},
             {"order", order_desc(2)},
             {"rank_end", 2},
             {"output_rank_number", true},
             {"strategy", "append"}}},
           {"inputs", json::array({edge("inj", "sql_columns:1")})}}};
}

// SELECT k, SUM(v) GROUP BY k, then the global top 3 sums (Retract strategy, parallelism 1).
std::vector<json> retract_topn_ops() {
  SchemaPtr sums = sql::make_schema({{"k", LogicalType::string()}, {"s", LogicalType::bigint()}});
  json agg = {{"id", "agg"},
              {"type", "sql_group_aggregate"},
              {"params",
               {{"input_schemas", json::array({schema_json(kv_schema())})},
                {"schema", schema_json(sums)},
                {"keys", {1}},
                {"aggregates", json::array({{{"function", "SUM"}, {"args", {2}}}})}}},
              {"inputs", json::array({edge("inj", "sql_columns:1")})}};
  json rank = {{"id", "rank"},
               {"type", "sql_rank"},
               {"parallelism", 1},
               {"params",
                {{"input_schemas", json::array({schema_json(sums)})},
                 {"schema", schema_json(with_rank(sums))},
                 {"keys", json::array()},
                 {"order", order_desc(1)},
                 {"rank_end", 3},
                 {"output_rank_number", true},
                 {"strategy", "retract"}}},
               {"inputs", json::array({edge("agg", "sql_columns:")})}};
  return {agg, rank};
}

std::vector<json> dedup_ops(bool keep_last) {
  return {{{"id", "dedup"},
           {"type", "sql_deduplicate"},
           {"params",
            {{"input_schemas", json::array({schema_json(kv_schema())})},
             {"schema", schema_json(kv_schema())},
             {"keys", {1}},
             {"time_column", 0},
             {"keep_last", keep_last},
             {"rowtime", true}}},
           {"inputs", json::array({edge("inj", "sql_columns:1")})}}};
}

// TUMBLE(10 ms), then the highest value per key and window with its rank.
std::vector<json> window_topn_ops() {
  std::vector<sql::RowField> windowed = kv_schema()->fields();
  for (const char* n : {"window_start", "window_end", "window_time"}) windowed.push_back({n, LogicalType::timestamp(3).not_null()});
  SchemaPtr ws = sql::make_schema(windowed);
  json assign = {{"id", "assign"},
                 {"type", "sql_window_assign"},
                 {"params",
                  {{"input_schemas", json::array({schema_json(kv_schema())})},
                   {"schema", schema_json(ws)},
                   {"window", {{"kind", "tumble"}, {"time_column", 0}, {"size_ms", 10}, {"offset_ms", 0}}}}},
                 {"inputs", json::array({{{"from", "inj"}}})}};
  json rank = {{"id", "rank"},
               {"type", "sql_window_rank"},
               {"params",
                {{"input_schemas", json::array({schema_json(ws)})},
                 {"schema", schema_json(with_rank(ws))},
                 {"keys", {1, 3, 4}},
                 {"order", order_desc(2)},
                 {"rank_end", 1},
                 {"output_rank_number", true},
                 {"window_end", 4}}},
               {"inputs", json::array({edge("assign", "sql_columns:1,3,4")})}};
  return {assign, rank};
}

// The changelog applied: the remaining rows as "+I[...]", sorted; a retraction of a row
// that is not there is reported as "missing: <row>".
std::vector<std::string> materialize(const std::vector<std::string>& changelog) {
  std::map<std::string, int> rows;
  std::vector<std::string> out;
  for (const auto& line : changelog) {
    std::string row = line.substr(2);
    bool add = line.rfind("+I", 0) == 0 || line.rfind("+U", 0) == 0;
    if (add) {
      ++rows[row];
    } else if (rows[row] > 0) {
      --rows[row];
    } else {
      out.push_back("missing: " + line);
    }
  }
  for (const auto& [row, n] : rows)
    for (int i = 0; i < n; ++i) out.push_back("+I" + row);
  return sorted(out);
}
std::vector<std::string> as_sorted(std::vector<std::string> v) { return sorted(v); }

class SqlRankRestore : public BackendTest {
 protected:
  std::shared_ptr<Script> fresh() {
    auto s = std::make_shared<Script>();
    s->steps = steps();
    put_script(name_, s);
    return s;
  }
  JobGraph graph(const std::vector<json>& ops, const std::string& last, int p) {
    return from_spec(job_spec(name_, ops, last, p), test_registry());
  }

  std::vector<std::string> failure_free(const std::vector<json>& ops, const std::string& last, int p) {
    TempDir dir;
    auto s = fresh();
    auto h = execute_async(graph(ops, last, p), checkpointing(dir.path, 0));
    h.wait();
    EXPECT_EQ(h.status(), JobStatus::kFinished) << h.error();
    return s->sink->values();
  }
  std::vector<std::string> with_savepoint(const std::vector<json>& ops, const std::string& last, std::size_t at, int p1,
                                          int p2) {
    TempDir dir;
    auto s = fresh();
    fs::path savepoint;
    {
      s->pause_at = at;
      auto h = execute_async(graph(ops, last, p1), checkpointing(dir.path, 0));
      while (s->emitted.load() < at && !h.wait_for(std::chrono::milliseconds(1))) {
      }
      EXPECT_EQ(h.status(), JobStatus::kRunning) << h.error();
      savepoint = h.stop_with_savepoint(dir.path / "sp");
    }
    s->pause_at = static_cast<std::size_t>(-1);
    auto o = checkpointing(dir.path, 0);
    o.restore = RestoreSettings{savepoint};
    auto h = execute_async(graph(ops, last, p2), o);
    h.wait();
    EXPECT_EQ(h.status(), JobStatus::kFinished) << h.error();
    return s->sink->values();
  }
  std::vector<std::string> with_failure(const std::vector<json>& ops, const std::string& last, std::size_t at, int p) {
    TempDir dir;
    auto s = fresh();
    s->pause_at = at;
    auto h = execute_async(graph(ops, last, p), checkpointing(dir.path, 10));
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
    return s->sink->values();
  }

  template <class F>
  void expect_restores(const std::vector<json>& ops, const std::string& last, const std::vector<std::string>& expected,
                       F result) {
    EXPECT_EQ(result(failure_free(ops, last, 1)), expected) << "parallelism 1";
    EXPECT_EQ(result(failure_free(ops, last, 2)), expected) << "parallelism 2";
    for (auto [p1, p2] : {std::pair{1, 1}, {1, 2}, {2, 1}})
      EXPECT_EQ(result(with_savepoint(ops, last, 3, p1, p2)), expected) << "savepoint " << p1 << " -> " << p2;
    EXPECT_EQ(result(with_failure(ops, last, 3, 2)), expected) << "injected failure";
  }

  std::string name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
};
INSTANTIATE_TEST_SUITE_P(Backends, SqlRankRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

std::string ts(int ms) { return clink::test::print_timestamp_ms(ms); }
std::string row(int t, int key, std::int64_t v) {
  return ts(t) + ", " + kKeys[key] + ", " + std::to_string(v * (key + 1));
}

TEST_P(SqlRankRestore, AppendOnlyTopN) {
  std::vector<std::string> expected;
  for (int k = 0; k < 6; ++k) {
    expected.push_back("+I[" + row(29, k, 16) + ", 1]");
    expected.push_back("+I[" + row(21, k, 8) + ", 2]");
  }
  expect_restores(append_topn_ops(), "rank", sorted(expected), materialize);
}

TEST_P(SqlRankRestore, RetractTopNOverAGroupBy) {
  // Every key sums to 31 times its factor: f, e, d lead.
  const std::vector<std::string> expected =
      sorted(std::vector<std::string>{"+I[d, 124, 3]", "+I[e, 155, 2]", "+I[f, 186, 1]"});
  expect_restores(retract_topn_ops(), "rank", expected, materialize);
}

TEST_P(SqlRankRestore, RowTimeDeduplicateKeepLast) {
  std::vector<std::string> expected;
  for (int k = 0; k < 6; ++k) expected.push_back("+I[" + row(29, k, 16) + "]");
  expect_restores(dedup_ops(true), "dedup", sorted(expected), materialize);
}

TEST_P(SqlRankRestore, RowTimeDeduplicateKeepFirstIsInsertOnly) {
  std::vector<std::string> expected;
  for (int k = 0; k < 6; ++k) expected.push_back("+I[" + row(1, k, 1) + "]");
  expect_restores(dedup_ops(false), "dedup", sorted(expected), as_sorted);
}

// Windows of 10 ms: per key the highest value of [0, 10) is at 1, of [10, 20) at 15, of [20, 30) at 29.
TEST_P(SqlRankRestore, WindowTopN) {
  std::vector<std::string> expected;
  for (int k = 0; k < 6; ++k)
    for (auto [t, v] : {std::pair{1, 1}, {15, 4}, {29, 16}}) {
      const int start = t - t % 10;
      expected.push_back("+I[" + row(t, k, v) + ", " + ts(start) + ", " + ts(start + 10) + ", " + ts(start + 9) + ", 1]");
    }
  expect_restores(window_topn_ops(), "rank", sorted(expected), as_sorted);
}

}  // namespace
}  // namespace clink::sqltest
