// sql_over_nontime in real jobs: an OVER aggregate ordered by v (not a time attribute),
// where each row arrives before the rows it precedes in that order (v = 16, 8, 4, 2, 1 per
// key), so every row updates all the rows after it, and a last step deletes the row v = 4.
// Run failure-free at parallelism 1 and 2, stopped with a savepoint after steps 2 and 3
// and resumed (1 -> 1, 1 -> 2, 2 -> 1), and with an injected failure, on the memory and
// the RocksDB backends. Each key's changelog must equal the expected one line for line
// (the rows and the aggregate values stored before the savepoint are what the -U lines
// after it retract).
#include <gtest/gtest.h>

#include <algorithm>

#include "restore_harness.hpp"

#include "../support/print_form.hpp"

namespace clink::test {
namespace {

std::string ts(int ms) { return print_timestamp_ms(ms); }

// (t, v) per key: the order key falls as time rises; then (15, 4) is deleted.
std::vector<BatchStep> falling_steps() {
  const std::pair<std::int64_t, std::int64_t> rows[] = {{1, 16}, {12, 8}, {15, 4}, {21, 2}, {29, 1}};
  std::vector<BatchStep> steps;
  for (const auto& [t, v] : rows) steps.push_back({spread(v, t), std::nullopt});
  std::vector<Row> deletes;
  for (const char* k : kRestoreKeys) deletes.push_back(Row{{Value(15 * 1000), Value(k), Value(4)}, RowKind::kDelete, 15});
  steps.push_back({batch(kv_schema(), deletes), std::nullopt});
  return steps;
}

json nontime_op(bool rows, const json& aggregates, const SchemaPtr& out) {
  return keyed_op("over", "sql_over_nontime", out,
                  {{"partition_keys", {1}}, {"order_column", 2}, {"rows", rows}, {"aggregates", aggregates}});
}

// Each key's lines in arrival order (keys interleave across subtasks; one key's changelog
// comes from one subtask, in order).
std::vector<std::string> by_key(std::vector<std::string> lines) {
  auto key = [](const std::string& l) {
    const std::size_t at = l.find(", ") + 2;
    return l.substr(at, l.find(", ", at) - at);
  };
  std::stable_sort(lines.begin(), lines.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  return lines;
}

// The lines of `per_key` (with K for the key, T<ms> for a time) for every key.
std::vector<std::string> for_each_key(const std::vector<std::string>& per_key) {
  std::vector<std::string> out;
  for (std::string k : kRestoreKeys)
    for (std::string l : per_key) {
      l.replace(l.find('K'), 1, k);
      const std::size_t at = l.find('T'), end = l.find(',', at);
      l.replace(at, end - at, ts(std::stoi(l.substr(at + 1, end - at - 1))));
      out.push_back(l);
    }
  return out;
}

// (t, v) per key rising (each row after every stored one: the operator reads only the
// partition's last entry), then (30, 3), which goes between them.
std::vector<BatchStep> rising_then_between_steps() {
  std::vector<BatchStep> steps = rising_steps({std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt});
  steps.push_back({spread(3, 30), std::nullopt});
  return steps;
}

class SqlOverNonTimeRestore : public SqlRestoreHarness {
 protected:
  void expect_restores(const json& op, const std::vector<std::string>& expected,
                       std::vector<BatchStep> steps = falling_steps()) {
    SqlRestoreHarness::expect_restores(single_op_job("over", op, std::move(steps), by_key), {.savepoint_steps = {2, 3}},
                                       expected);
  }
};
INSTANTIATE_TEST_SUITE_P(Backends, SqlOverNonTimeRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

// RANGE (no peers here): SUM and COUNT(*) of the rows with v up to the row's.
TEST_P(SqlOverNonTimeRestore, RangeSumAndCount) {
  SchemaPtr out = sql::make_schema({{"t", LogicalType::timestamp(3)}, {"k", LogicalType::string()}, {"v", LogicalType::bigint()},
                                    {"s", LogicalType::bigint()}, {"n", LogicalType::bigint().not_null()}});
  json aggs = json::array({{{"function", "SUM"}, {"args", {2}}}, {{"function", "COUNT"}, {"args", json::array()}}});
  expect_restores(nontime_op(false, aggs, out),
                  for_each_key({
                      "+I[T1, K, 16, 16, 1]",
                      "+I[T12, K, 8, 8, 1]", "-U[T1, K, 16, 16, 1]", "+U[T1, K, 16, 24, 2]",
                      "+I[T15, K, 4, 4, 1]", "-U[T12, K, 8, 8, 1]", "+U[T12, K, 8, 12, 2]",
                      "-U[T1, K, 16, 24, 2]", "+U[T1, K, 16, 28, 3]",
                      "+I[T21, K, 2, 2, 1]", "-U[T15, K, 4, 4, 1]", "+U[T15, K, 4, 6, 2]",
                      "-U[T12, K, 8, 12, 2]", "+U[T12, K, 8, 14, 3]", "-U[T1, K, 16, 28, 3]", "+U[T1, K, 16, 30, 4]",
                      "+I[T29, K, 1, 1, 1]", "-U[T21, K, 2, 2, 1]", "+U[T21, K, 2, 3, 2]",
                      "-U[T15, K, 4, 6, 2]", "+U[T15, K, 4, 7, 3]", "-U[T12, K, 8, 14, 3]", "+U[T12, K, 8, 15, 4]",
                      "-U[T1, K, 16, 30, 4]", "+U[T1, K, 16, 31, 5]",
                      "-D[T15, K, 4, 7, 3]", "-U[T12, K, 8, 15, 4]", "+U[T12, K, 8, 11, 3]",
                      "-U[T1, K, 16, 31, 5]", "+U[T1, K, 16, 27, 4]",
                  }));
}

// ROWS: ROW_NUMBER() as Flink plans it without a filter (COUNT(*) over ROWS).
TEST_P(SqlOverNonTimeRestore, RowsRowNumber) {
  SchemaPtr out = sql::make_schema({{"t", LogicalType::timestamp(3)}, {"k", LogicalType::string()}, {"v", LogicalType::bigint()},
                                    {"n", LogicalType::bigint().not_null()}});
  json aggs = json::array({{{"function", "COUNT"}, {"args", json::array()}}});
  expect_restores(nontime_op(true, aggs, out),
                  for_each_key({
                      "+I[T1, K, 16, 1]",
                      "+I[T12, K, 8, 1]", "-U[T1, K, 16, 1]", "+U[T1, K, 16, 2]",
                      "+I[T15, K, 4, 1]", "-U[T12, K, 8, 1]", "+U[T12, K, 8, 2]", "-U[T1, K, 16, 2]", "+U[T1, K, 16, 3]",
                      "+I[T21, K, 2, 1]", "-U[T15, K, 4, 1]", "+U[T15, K, 4, 2]", "-U[T12, K, 8, 2]", "+U[T12, K, 8, 3]",
                      "-U[T1, K, 16, 3]", "+U[T1, K, 16, 4]",
                      "+I[T29, K, 1, 1]", "-U[T21, K, 2, 1]", "+U[T21, K, 2, 2]", "-U[T15, K, 4, 2]", "+U[T15, K, 4, 3]",
                      "-U[T12, K, 8, 3]", "+U[T12, K, 8, 4]", "-U[T1, K, 16, 4]", "+U[T1, K, 16, 5]",
                      "-D[T15, K, 4, 3]", "-U[T12, K, 8, 4]", "+U[T12, K, 8, 3]", "-U[T1, K, 16, 5]", "+U[T1, K, 16, 4]",
                  }));
}

// Appends through the partition's last entry (kept in state across the savepoint), then a
// row between stored ones updates the rows after it.
TEST_P(SqlOverNonTimeRestore, AppendsThenARowBetween) {
  SchemaPtr out = sql::make_schema({{"t", LogicalType::timestamp(3)}, {"k", LogicalType::string()}, {"v", LogicalType::bigint()},
                                    {"s", LogicalType::bigint()}});
  json aggs = json::array({{{"function", "SUM"}, {"args", {2}}}});
  expect_restores(nontime_op(false, aggs, out),
                  for_each_key({
                      "+I[T1, K, 1, 1]", "+I[T12, K, 2, 3]", "+I[T15, K, 4, 7]", "+I[T21, K, 8, 15]", "+I[T29, K, 16, 31]",
                      "+I[T30, K, 3, 6]", "-U[T15, K, 4, 7]", "+U[T15, K, 4, 10]", "-U[T21, K, 8, 15]",
                      "+U[T21, K, 8, 18]", "-U[T29, K, 16, 31]", "+U[T29, K, 16, 34]",
                  }),
                  rising_then_between_steps());
}

}  // namespace
}  // namespace clink::test
