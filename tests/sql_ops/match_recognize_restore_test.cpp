// sql_match_recognize in real jobs: PATTERN (A B C) with B.v > A.v and C.v > B.v per key
// (AFTER MATCH SKIP TO NEXT ROW), run failure-free at parallelism 1 and 2, stopped with a
// savepoint and resumed (1 -> 1, 1 -> 2, 2 -> 1) while partial matches live in the CEP
// state and rows wait for the watermark (the watermark lags the rows by one step), and
// with an injected failure, on the memory and the RocksDB backends. The exactly-once
// output must equal the failure-free one row for row (sorted: keys interleave across
// subtasks). The same with ALL ROWS PER MATCH (RUNNING and FINAL navigations).
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

// ALL ROWS PER MATCH over the same pattern: per row of a match its key, v, CLASSIFIER(), the
// RUNNING LAST(C.v) (null before the C row) and the FINAL LAST(C.v). Extended row: [t, k,
// v], [rowtime, proctime, classifier], LAST(A) [6..8], LAST(C) [9..11], FINAL LAST(C)
// [12..14].
json all_rows_op() {
  json op = match_op();
  op["params"]["schema"] = schema_json(sql::make_schema({{"k", LogicalType::string()},
                                                         {"v", LogicalType::bigint()},
                                                         {"cls", LogicalType::string()},
                                                         {"c", LogicalType::bigint()},
                                                         {"final_c", LogicalType::bigint()}}));
  op["params"]["all_rows"] = true;
  auto nav = [](const char* v, bool final) {
    return json{{"kind", "LAST"}, {"variable", v}, {"offset", 0}, {"final", final}};
  };
  op["params"]["measure_navs"] = json::array({nav("A", false), nav("C", false), nav("C", true)});
  op["params"]["outputs"] =
      json::array({{{"col", 1}}, {{"col", 2}}, {{"col", 5}}, {{"col", 11}}, {{"col", 14}}});
  return op;
}

std::vector<std::string> all_rows_expected() {
  std::vector<std::string> out;
  for (std::string k : {"a", "b", "c", "d", "e", "f"})
    for (int a : {1, 2, 4}) {
      const std::string c = std::to_string(4 * a);
      out.push_back("+I[" + k + ", " + std::to_string(a) + ", A, null, " + c + "]");
      out.push_back("+I[" + k + ", " + std::to_string(2 * a) + ", B, null, " + c + "]");
      out.push_back("+I[" + k + ", " + c + ", C, " + c + ", " + c + "]");
    }
  return sorted(out);
}

// Savepoints after steps 2 and 3 hold partial matches: their rows come out once each.
TEST_P(SqlMatchRestore, AllRowsPerMatchRunningAndFinal) {
  expect_restores(single_op_job("match_all", all_rows_op(), rising_steps(watermarks_one_step_behind())),
                  {.savepoint_steps = {2, 3}}, all_rows_expected());
}

}  // namespace
}  // namespace clink::test
