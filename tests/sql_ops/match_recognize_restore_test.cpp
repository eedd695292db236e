// sql_match_recognize in real jobs: PATTERN (A B C) with B.v > A.v and C.v > B.v per key
// (AFTER MATCH SKIP TO NEXT ROW), run failure-free at parallelism 1 and 2, stopped with a
// savepoint and resumed (1 -> 1, 1 -> 2, 2 -> 1) while partial matches live in the CEP
// state and rows wait for the watermark (the watermark lags the rows by one step), and
// with an injected failure, on the memory and the RocksDB backends. The exactly-once
// output must equal the failure-free one row for row (sorted: keys interleave across
// subtasks).
#include <gtest/gtest.h>

#include "restore_harness.hpp"

#include "../support/print_form.hpp"

namespace clink::test {
namespace {

// The extended row of a condition / the measures: [t, k, v] (current / last row),
// [rowtime, proctime, classifier], then per navigation [t, k, v].
json match_op() {
  SchemaPtr out = sql::make_schema({{"k", LogicalType::string()}, {"a", LogicalType::bigint()},
                                    {"c", LogicalType::bigint()}, {"mt", LogicalType::timestamp(3).not_null()}});
  auto last = [](const char* v) { return json{{"kind", "LAST"}, {"variable", v}, {"offset", 0}}; };
  auto greater_than_nav = json{{"call", ">"}, {"args", json::array({{{"col", 2}}, {{"col", 8}}})}};
  json pattern = json::array();
  for (const char* v : {"A", "B", "C"}) pattern.push_back({{"variable", v}, {"min", 1}, {"max", 1}, {"reluctant", false}});
  return keyed_op("match", "sql_match_recognize", out,
                  {{"partition_keys", {1}},
                   {"order_column", 0},
                   {"pattern", pattern},
                   {"skip", "TO_NEXT_ROW"},
                   {"defines", json::array({{{"variable", "B"}, {"condition", greater_than_nav}, {"navs", json::array({last("A")})},
                                             {"aggregates", json::array()}},
                                            {{"variable", "C"}, {"condition", greater_than_nav}, {"navs", json::array({last("B")})},
                                             {"aggregates", json::array()}}})},
                   {"measure_navs", json::array({last("A"), last("C")})},
                   {"measure_aggregates", json::array()},
                   {"outputs", json::array({{{"col", 1}}, {{"col", 8}}, {{"col", 11}}, {{"col", 3}}})}});
}

class SqlMatchRestore : public SqlRestoreHarness {};
INSTANTIATE_TEST_SUITE_P(Backends, SqlMatchRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

std::string ts(int ms) { return print_timestamp_ms(ms); }

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

// Savepoints after steps 2 and 3 hold rows waiting for the watermark and partial matches
// in the NFA.
TEST_P(SqlMatchRestore, RisingTriplesSkipToNextRow) {
  expect_restores(single_op_job("match", match_op(), rising_steps(watermarks_one_step_behind())),
                  {.savepoint_steps = {2, 3}}, expected());
}

}  // namespace
}  // namespace clink::test
