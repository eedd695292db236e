// The ranking operators in real jobs: an append-only Top-N, a Top-N over a retracting GROUP
// BY, row-time deduplication keep-last and keep-first, a window Top-N over TUMBLE and over SESSION windows, each run
// failure-free at parallelism 1 and 2, stopped with a savepoint and resumed (1 -> 1, 1 -> 2,
// 2 -> 1), and with an injected failure, on the memory and the RocksDB backends. The
// exactly-once output must equal the failure-free one: insert-only results exactly (sorted),
// updating ones as their applied changelog (applying fails on a retraction of a row that is
// not there, so lost or duplicated state shows).
#include <gtest/gtest.h>

#include "restore_harness.hpp"

#include "../support/print_form.hpp"

namespace clink::test {
namespace {

const auto& kKeys = kRestoreKeys;

json edge(const std::string& from, const std::string& key) {
  return {{"from", from}, {"partitioning", "hash"}, {"key", key}};
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

// upsert-kafka's normaliser keyed by k: each step's row of a key replaces the last one.
std::vector<json> normalize_ops() {
  return {{{"id", "normalize"},
           {"type", "sql_changelog_normalize"},
           {"params",
            {{"input_schemas", json::array({schema_json(kv_schema())})},
             {"schema", schema_json(kv_schema())},
             {"keys", {1}}}},
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

// SESSION(PARTITION BY k, gap 5 ms) without aggregation (sql_window_session), then the
// highest value per key and session: the session op keeps rows until the watermark closes
// their session, so savepoints and failures meet rows waiting in merging sessions.
std::vector<json> session_topn_ops() {
  std::vector<sql::RowField> windowed = kv_schema()->fields();
  for (const char* n : {"window_start", "window_end", "window_time"}) windowed.push_back({n, LogicalType::timestamp(3).not_null()});
  SchemaPtr ws = sql::make_schema(windowed);
  json session = {{"id", "session"},
                  {"type", "sql_window_session"},
                  {"params",
                   {{"input_schemas", json::array({schema_json(kv_schema())})},
                    {"schema", schema_json(ws)},
                    {"keys", {1}},
                    {"window", {{"kind", "session"}, {"time_column", 0}, {"gap_ms", 5}}}}},
                  {"inputs", json::array({edge("inj", "sql_columns:1")})}};
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
               {"inputs", json::array({edge("session", "sql_columns:1,3,4")})}};
  return {session, rank};
}

class SqlRankRestore : public SqlRestoreHarness {
 protected:
  // Key i gets v * (i + 1), watermarks between the steps; a savepoint after step 3.
  void expect_restores(const std::vector<json>& ops, const std::string& last, const std::vector<std::string>& expected,
                       SinkView view, const std::vector<std::optional<EventTime>>& wms = watermarks_between_steps()) {
    SqlRestoreHarness::expect_restores(pipeline_job("rank", ops, last, rising_steps(wms, true), std::move(view)), {},
                                       expected);
  }
};
INSTANTIATE_TEST_SUITE_P(Backends, SqlRankRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

std::string ts(int ms) { return print_timestamp_ms(ms); }
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

// sql_changelog_normalize (behind an upsert source): its keyed state, the last row per
// key, survives savepoints, rescaling and failures; every -U retracts the row emitted
// before, so the applied changelog is each key's last row.
TEST_P(SqlRankRestore, ChangelogNormalizeKeepsTheLastRowPerKey) {
  std::vector<std::string> expected;
  for (int k = 0; k < 6; ++k) expected.push_back("+I[" + row(29, k, 16) + "]");
  expect_restores(normalize_ops(), "normalize", sorted(expected), materialize);
}

TEST_P(SqlRankRestore, RowTimeDeduplicateKeepFirstIsInsertOnly) {
  std::vector<std::string> expected;
  for (int k = 0; k < 6; ++k) expected.push_back("+I[" + row(1, k, 1) + "]");
  expect_restores(dedup_ops(false), "dedup", sorted(expected), sorted_rows);
}

// Windows of 10 ms: per key the highest value of [0, 10) is at 1, of [10, 20) at 15, of [20, 30) at 29.
TEST_P(SqlRankRestore, WindowTopN) {
  std::vector<std::string> expected;
  for (int k = 0; k < 6; ++k)
    for (auto [t, v] : {std::pair{1, 1}, {15, 4}, {29, 16}}) {
      const int start = t - t % 10;
      expected.push_back("+I[" + row(t, k, v) + ", " + ts(start) + ", " + ts(start + 10) + ", " + ts(start + 9) + ", 1]");
    }
  expect_restores(window_topn_ops(), "rank", sorted(expected), sorted_rows);
}

// Sessions of gap 5 ms per key: {1} [1, 6), {12, 15} [12, 20), {21} [21, 26), {29} [29, 34);
// the watermarks stay a step behind, so rows wait in open (and merging) sessions.
TEST_P(SqlRankRestore, WindowTopNOverSessionWindows) {
  std::vector<std::string> expected;
  for (int k = 0; k < 6; ++k)
    for (auto [t, v, start, end] : {std::tuple{1, 1, 1, 6}, {15, 4, 12, 20}, {21, 8, 21, 26}, {29, 16, 29, 34}})
      expected.push_back("+I[" + row(t, k, v) + ", " + ts(start) + ", " + ts(end) + ", " + ts(end - 1) + ", 1]");
  expect_restores(session_topn_ops(), "rank", sorted(expected), sorted_rows, watermarks_one_step_behind());
}

// ORDER BY t, k without LIMIT: Flink's temporal sort (sql_sort 'temporal' rowtime, one
// subtask). The watermarks stay a step behind, so a savepoint holds rows waiting for the
// watermark; the output is the rows in (t, k) order, in that order after every restore.
TEST_P(SqlRankRestore, RowtimeTemporalSortKeepsItsBufferAndOrder) {
  json sort = {{"id", "sort"},
               {"type", "sql_sort"},
               {"parallelism", 1},
               {"params",
                {{"input_schemas", json::array({schema_json(kv_schema())})},
                 {"schema", schema_json(kv_schema())},
                 {"keys", json::array({{{"column", 0}}, {{"column", 1}}})},
                 {"limit", nullptr},
                 {"temporal", "rowtime"}}},
               {"inputs", json::array({edge("inj", "sql_columns:")})}};
  std::vector<std::string> expected;
  for (auto [t, v] : {std::pair{1, 1}, {12, 2}, {15, 4}, {21, 8}, {29, 16}})
    for (int k = 0; k < 6; ++k) expected.push_back("+I[" + row(t, k, v) + "]");
  auto in_order = [](std::vector<std::string> lines) { return lines; };
  expect_restores({sort}, "sort", expected, in_order, watermarks_one_step_behind());
}

}  // namespace
}  // namespace clink::test
