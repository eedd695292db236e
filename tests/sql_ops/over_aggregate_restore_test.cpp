// sql_over_aggregate in real jobs: event-time ROWS and RANGE bounded frames and an
// unbounded frame, each run failure-free at parallelism 1 and 2, stopped with a savepoint
// and resumed (1 -> 1, 1 -> 2, 2 -> 1) while rows wait in state for the watermark (the
// watermark lags the rows by one step), and with an injected failure, on the memory and
// the RocksDB backends. The exactly-once output must equal the failure-free one row for
// row (sorted: keys interleave in no fixed order across subtasks).
#include <gtest/gtest.h>

#include "restore_harness.hpp"

#include "../support/print_form.hpp"

namespace clink::test {
namespace {

json over_op(bool rows, std::optional<std::int64_t> preceding) {
  SchemaPtr out = sql::make_schema({{"t", LogicalType::timestamp(3)}, {"k", LogicalType::string()}, {"v", LogicalType::bigint()},
                                    {"s", LogicalType::bigint()}, {"n", LogicalType::bigint().not_null()}});
  return keyed_op(
      "over", "sql_over_aggregate", out,
      {{"partition_keys", {1}},
       {"order_column", 0},
       {"rows", rows},
       {"preceding", preceding ? json(*preceding) : json()},
       {"aggregates", json::array({{{"function", "SUM"}, {"args", {2}}}, {{"function", "COUNT"}, {"args", json::array()}}})}});
}

class SqlOverRestore : public SqlRestoreHarness {
 protected:
  // Savepoints after steps 2 and 3 hold the rows at 12 / 15 waiting (and rows in the frames).
  void expect_restores(const json& op, const std::vector<std::string>& expected) {
    SqlRestoreHarness::expect_restores(single_op_job("over", op, rising_steps(watermarks_one_step_behind())),
                                    {.savepoint_steps = {2, 3}}, expected);
  }
};
INSTANTIATE_TEST_SUITE_P(Backends, SqlOverRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

std::string ts(int ms) { return print_timestamp_ms(ms); }

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
}  // namespace clink::test
