// The SQL operators in real jobs built from a JobGraphSpec: hash edges on
// `sql_columns:<i>`, UNION ALL as several edges into one input, and durability: each
// stateful operator's exactly-once output after a savepoint (also rescaled 1 -> 2 and
// 2 -> 1) or an injected failure equals the failure-free run, on the memory and the
// RocksDB backends.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clink/core/error.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "restore_harness.hpp"

#include "../support/example_udafs.hpp"
#include "../support/print_form.hpp"

namespace clink::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<BatchStep> tumbling_steps() {
  // Interrupted after step 3: [10,20) holds 2 + 4.
  return rising_steps(watermarks_between_steps());
}

std::vector<sql::RowField> window_out() {
  return {{"k", LogicalType::string()},
          {"window_start", LogicalType::timestamp(3).not_null()},
          {"window_end", LogicalType::timestamp(3).not_null()},
          {"window_time", LogicalType::timestamp(3).not_null()},
          {"s", LogicalType::bigint()}};
}

json window_agg_op(json window) {
  return keyed_op("agg", "sql_window_aggregate", sql::make_schema(window_out()),
                  {{"window", window}, {"keys", {1}}, {"aggregates", json::array({{{"function", "SUM"}, {"args", {2}}}})}});
}

json group_agg_op() {
  return keyed_op(
      "agg", "sql_group_aggregate",
      sql::make_schema({{"k", LogicalType::string()}, {"s", LogicalType::bigint()}, {"mx", LogicalType::bigint()}}),
      {{"keys", {1}},
       {"aggregates", json::array({{{"function", "SUM"}, {"args", {2}}}, {{"function", "MAX"}, {"args", {2}}}})}});
}

json single_op(const std::string& type, json extra) {
  json params = {{"input_schemas", json::array({schema_json(kv_schema())})}, {"schema", schema_json(kv_schema())}};
  params.update(extra);
  return {{"id", "agg"}, {"type", type}, {"params", params}, {"parallelism", 1}, {"inputs", json::array({{{"from", "inj"}}})}};
}

// source -> injector -> <op> (parallelism p unless set) -> exactly-once sink
json job_spec(const std::string& script, const json& op, int parallelism) {
  return restore_job_spec("sql", script, {op}, "agg", parallelism);
}

class SqlRestore : public SqlRestoreHarness {
 protected:
  using SqlRestoreHarness::expect_restores;
  // A savepoint and the injected failure after step `at`; without `rescale` (an op pinned
  // to parallelism 1) the runs stay at parallelism 1.
  void expect_restores(const std::vector<BatchStep>& steps, const json& op, std::size_t at,
                       const std::vector<std::string>& expected, bool rescale = true) {
    RestorePlan plan{.savepoint_steps = {at}, .failure_step = at};
    if (!rescale) {
      plan.failure_free_parallelisms = {1};
      plan.rescales = {{1, 1}};
      plan.failure_parallelism = 1;
    }
    SqlRestoreHarness::expect_restores(single_op_job("sql", op, steps), plan, expected);
  }
};
INSTANTIATE_TEST_SUITE_P(Backends, SqlRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

std::vector<std::string> tumbling_expected() {
  std::vector<std::string> out;
  for (const char* k : {"a", "b", "c", "d", "e", "f"}) {
    std::string key = k;
    out.push_back("+I[" + key + ", 1970-01-01T00:00, 1970-01-01T00:00:00.010, 1970-01-01T00:00:00.009, 1]");
    out.push_back("+I[" + key + ", 1970-01-01T00:00:00.010, 1970-01-01T00:00:00.020, 1970-01-01T00:00:00.019, 6]");
    out.push_back("+I[" + key + ", 1970-01-01T00:00:00.020, 1970-01-01T00:00:00.030, 1970-01-01T00:00:00.029, 24]");
  }
  return sorted(out);
}

TEST_P(SqlRestore, WindowAggregateTumble) {
  expect_restores(tumbling_steps(), window_agg_op({{"kind", "tumble"}, {"time_column", 0}, {"size_ms", 10}}), 3,
                  tumbling_expected());
}

// Sessions (gap 10): at the interruption each key has the session [12, 26) open; the
// row at 21 extends it, the row at 29 too: one session [12, 39) of 2 + 4 + 8 + 16.
TEST_P(SqlRestore, WindowAggregateSession) {
  std::vector<std::string> expected;
  for (const char* k : {"a", "b", "c", "d", "e", "f"}) {
    std::string key = k;
    expected.push_back("+I[" + key + ", 1970-01-01T00:00:00.001, 1970-01-01T00:00:00.011, 1970-01-01T00:00:00.010, 1]");
    expected.push_back("+I[" + key + ", 1970-01-01T00:00:00.012, 1970-01-01T00:00:00.039, 1970-01-01T00:00:00.038, 30]");
  }
  expect_restores(tumbling_steps(), window_agg_op({{"kind", "session"}, {"time_column", 0}, {"gap_ms", 10}}), 3,
                  sorted(expected));
}

TEST_P(SqlRestore, GroupAggregate) {
  std::vector<std::string> expected;
  for (const char* k : {"a", "b", "c", "d", "e", "f"}) {
    std::string key = k;
    expected.push_back("+I[" + key + ", 1, 1]");
    for (auto [before, after] : {std::pair{"1, 1", "3, 2"}, {"3, 2", "7, 4"}, {"7, 4", "15, 8"}, {"15, 8", "31, 16"}}) {
      expected.push_back("-U[" + key + ", " + before + "]");
      expected.push_back("+U[" + key + ", " + after + "]");
    }
  }
  expect_restores(tumbling_steps(), group_agg_op(), 3, sorted(expected));
}

// COUNT(DISTINCT v) keeps its values in map state (one entry per value): values seen
// before the interruption (1, 2) do not count again after it; SUM(v) moves every step.
TEST_P(SqlRestore, GroupAggregateCountDistinct) {
  json op = group_agg_op();
  op["params"]["schema"] = schema_json(sql::make_schema(
      {{"k", LogicalType::string()}, {"dv", LogicalType::bigint().not_null()}, {"s", LogicalType::bigint()}}));
  op["params"]["aggregates"] = json::array(
      {{{"function", "COUNT"}, {"args", {2}}, {"distinct", true}}, {{"function", "SUM"}, {"args", {2}}}});
  const std::vector<BatchStep> steps = {{spread(1, 1), 5}, {spread(2, 12), 14}, {spread(1, 15), 16},
                                         // -- interrupted here --
                                         {spread(2, 21), 25}, {spread(3, 29), std::nullopt}};
  std::vector<std::string> expected;
  for (const char* k : {"a", "b", "c", "d", "e", "f"}) {
    std::string key = k;
    expected.push_back("+I[" + key + ", 1, 1]");
    for (auto [before, after] : {std::pair{"1, 1", "2, 3"}, {"2, 3", "2, 4"}, {"2, 4", "2, 6"}, {"2, 6", "3, 9"}}) {
      expected.push_back("-U[" + key + ", " + before + "]");
      expected.push_back("+U[" + key + ", " + after + "]");
    }
  }
  expect_restores(steps, op, 3, sorted(expected));
}

// User aggregates (tests/support/example_udafs.hpp) keep their accumulators across
// restores: concat_agg's is a std::string (its own serialize / deserialize), tally's plain
// bytes; over insert-only input (input_retracts false) a UDAF that cannot retract runs.
TEST_P(SqlRestore, GroupAggregateWithUdafs) {
  register_example_udafs();
  json op = group_agg_op();
  op["params"]["schema"] = schema_json(sql::make_schema(
      {{"k", LogicalType::string()}, {"ks", LogicalType::string()}, {"n", LogicalType::bigint()}}));
  op["params"]["aggregates"] =
      json::array({{{"function", "concat_agg"}, {"args", {1}}}, {{"function", "tally"}, {"args", json::array()}}});
  op["params"]["input_retracts"] = false;
  std::vector<std::string> expected;
  for (const char* k : {"a", "b", "c", "d", "e", "f"}) {
    std::string key = k, ks = k;
    expected.push_back("+I[" + key + ", " + ks + ", 1]");
    for (int n = 1; n < 5; ++n) {
      expected.push_back("-U[" + key + ", " + ks + ", " + std::to_string(n) + "]");
      ks += "," + key;
      expected.push_back("+U[" + key + ", " + ks + ", " + std::to_string(n + 1) + "]");
    }
  }
  expect_restores(tumbling_steps(), op, 3, sorted(expected));
}

json udaf_window_op(json window, json aggs, std::vector<sql::RowField> values) {
  json op = window_agg_op(std::move(window));
  std::vector<sql::RowField> out = window_out();
  out.pop_back();
  out.insert(out.end(), values.begin(), values.end());
  op["params"]["schema"] = schema_json(sql::make_schema(out));
  op["params"]["aggregates"] = std::move(aggs);
  return op;
}

// Flink's retracting FIRST_VALUE / LAST_VALUE / ARRAY_AGG / LISTAGG keep every value in
// arrival order; a deletion removes the earliest equal one. Per key: +1, +2, -1 (the
// savepoint or failure falls here), +4, +1: the lists restore in order ([2] then [2, 4, 1]).
TEST_P(SqlRestore, GroupAggregateRetractingListAggregates) {
  json op = group_agg_op();
  op["params"]["schema"] = schema_json(sql::make_schema({{"k", LogicalType::string()},
                                                         {"arr", LogicalType::array(LogicalType::bigint())},
                                                         {"f", LogicalType::bigint()},
                                                         {"l", LogicalType::bigint()},
                                                         {"ks", LogicalType::string()}}));
  op["params"]["aggregates"] = json::array({{{"function", "ARRAY_AGG"}, {"args", {2}}},
                                            {{"function", "FIRST_VALUE"}, {"args", {2}}},
                                            {{"function", "LAST_VALUE"}, {"args", {2}}},
                                            {{"function", "LISTAGG"}, {"args", {1}}}});
  auto step = [](std::int64_t v, std::int64_t t, RowKind kind) {
    std::vector<Row> rows;
    for (const char* k : {"a", "b", "c", "d", "e", "f"}) rows.push_back(Row{{Value(t * 1000), Value(k), Value(v)}, kind, t});
    return batch(kv_schema(), rows);
  };
  const std::vector<BatchStep> steps = {{step(1, 1, RowKind::kInsert), 5}, {step(2, 12, RowKind::kInsert), 14},
                                         {step(1, 15, RowKind::kDelete), 16},
                                         // -- interrupted here --
                                         {step(4, 21, RowKind::kInsert), 25}, {step(1, 29, RowKind::kInsert), std::nullopt}};
  std::vector<std::string> expected;
  for (std::string k : {"a", "b", "c", "d", "e", "f"}) {
    const std::string states[] = {"[1], 1, 1, " + k, "[1, 2], 1, 2, " + k + "," + k, "[2], 2, 2, " + k,
                                  "[2, 4], 2, 4, " + k + "," + k, "[2, 4, 1], 2, 1, " + k + "," + k + "," + k};
    expected.push_back("+I[" + k + ", " + states[0] + "]");
    for (std::size_t i = 1; i < 5; ++i) {
      expected.push_back("-U[" + k + ", " + states[i - 1] + "]");
      expected.push_back("+U[" + k + ", " + states[i] + "]");
    }
  }
  expect_restores(steps, op, 3, sorted(expected));
}

// HOP panes merge LISTAGG's (insert-only: one growing string) and STDDEV_POP's (Welford)
// accumulators in time order, across the restore. Rows v = 1, 2, 4, 8, 16 at 1, 12, 15,
// 21, 29; windows [s, s + 10) every 5.
TEST_P(SqlRestore, WindowAggregateHopWithListAggAndStddev) {
  json op = udaf_window_op({{"kind", "hop"}, {"time_column", 0}, {"size_ms", 10}, {"slide_ms", 5}},
                           json::array({{{"function", "LISTAGG"}, {"args", {1}}}, {{"function", "STDDEV_POP"}, {"args", {2}}}}),
                           {{"ks", LogicalType::string()}, {"sd", LogicalType::bigint()}});
  std::vector<std::string> expected;
  auto time = [](int ms) { return print_timestamp_ms(ms); };
  for (std::string key : {"a", "b", "c", "d", "e", "f"}) {
    for (auto [start, n, sd] : std::vector<std::tuple<int, int, int>>{
             {-5, 1, 0}, {0, 1, 0}, {5, 1, 0}, {10, 2, 1}, {15, 2, 2}, {20, 2, 4}, {25, 1, 0}}) {
      std::string ks = key;
      for (int i = 1; i < n; ++i) ks += "," + key;
      expected.push_back("+I[" + key + ", " + time(start) + ", " + time(start + 10) + ", " + time(start + 9) + ", " + ks +
                         ", " + std::to_string(sd) + "]");
    }
  }
  expect_restores(tumbling_steps(), op, 3, sorted(expected));
}

// TUMBLE keeps pane slicing with aggregates that cannot merge (a window is one pane):
// FIRST_VALUE / LAST_VALUE and concat_agg restore from the sliced path's pane state.
TEST_P(SqlRestore, WindowAggregateTumbleWithUnmergeableAggregates) {
  register_example_udafs();
  json op = udaf_window_op({{"kind", "tumble"}, {"time_column", 0}, {"size_ms", 10}},
                           json::array({{{"function", "FIRST_VALUE"}, {"args", {2}}},
                                        {{"function", "LAST_VALUE"}, {"args", {2}}},
                                        {{"function", "concat_agg"}, {"args", {1}}}}),
                           {{"f", LogicalType::bigint()}, {"l", LogicalType::bigint()}, {"ks", LogicalType::string()}});
  std::vector<std::string> expected;
  auto time = [](int ms) { return print_timestamp_ms(ms); };
  for (std::string key : {"a", "b", "c", "d", "e", "f"})
    for (auto [start, aggs] : std::vector<std::pair<int, std::string>>{
             {0, "1, 1, " + key}, {10, "2, 4, " + key + "," + key}, {20, "8, 16, " + key + "," + key}})
      expected.push_back("+I[" + key + ", " + time(start) + ", " + time(start + 10) + ", " + time(start + 9) + ", " + aggs + "]");
  expect_restores(tumbling_steps(), op, 3, sorted(expected));
}

// Sessions merge: tally() (plain bytes) and COUNT(DISTINCT v) (a value multiset) restore
// through the window engine's state and merge across the restore: [12, 39) is 4 rows.
TEST_P(SqlRestore, WindowAggregateSessionWithUdaf) {
  register_example_udafs();
  json op = udaf_window_op({{"kind", "session"}, {"time_column", 0}, {"gap_ms", 10}},
                           json::array({{{"function", "tally"}}, {{"function", "COUNT"}, {"args", {2}}, {"distinct", true}}}),
                           {{"n", LogicalType::bigint()}, {"dv", LogicalType::bigint().not_null()}});
  std::vector<std::string> expected;
  for (const char* k : {"a", "b", "c", "d", "e", "f"}) {
    std::string key = k;
    expected.push_back("+I[" + key + ", 1970-01-01T00:00:00.001, 1970-01-01T00:00:00.011, 1970-01-01T00:00:00.010, 1, 1]");
    expected.push_back("+I[" + key + ", 1970-01-01T00:00:00.012, 1970-01-01T00:00:00.039, 1970-01-01T00:00:00.038, 4, 4]");
  }
  expect_restores(tumbling_steps(), op, 3, sorted(expected));
}

// HOP with concat_agg, which cannot merge: the engine folds each row into each of its
// windows (no pane slicing) and checkpoints the string accumulators of open windows.
TEST_P(SqlRestore, WindowAggregateHopWithUnmergeableUdaf) {
  register_example_udafs();
  json op = udaf_window_op({{"kind", "hop"}, {"time_column", 0}, {"size_ms", 10}, {"slide_ms", 5}},
                           json::array({{{"function", "concat_agg"}, {"args", {1}}}, {{"function", "tally"}}}),
                           {{"ks", LogicalType::string()}, {"n", LogicalType::bigint()}});
  std::vector<std::string> expected;
  auto time = [](int ms) { return print_timestamp_ms(ms); };
  for (const char* k : {"a", "b", "c", "d", "e", "f"}) {
    std::string key = k;
    // Rows at 1, 12, 15, 21, 29; windows [s, s + 10) every 5.
    for (auto [start, n] : std::vector<std::pair<int, int>>{{0, 1}, {5, 1}, {10, 2}, {15, 2}, {20, 2}, {25, 1}}) {
      std::string ks = key;
      for (int i = 1; i < n; ++i) ks += "," + key;
      expected.push_back("+I[" + key + ", " + time(start) + ", " + time(start + 10) + ", " + time(start + 9) + ", " +
                         ks + ", " + std::to_string(n) + "]");
    }
    expected.push_back("+I[" + key + ", 1969-12-31T23:59:59.995, 1970-01-01T00:00:00.005, 1970-01-01T00:00:00.004, " +
                       key + ", 1]");
  }
  expect_restores(tumbling_steps(), op, 3, sorted(expected));
}

TEST_P(SqlRestore, Limit) {
  expect_restores(tumbling_steps(), single_op("sql_limit", {{"limit", 4}, {"offset", 10}}), 3,
                  sorted(std::vector<std::string>{"+I[1970-01-01T00:00:00.012, e, 2]", "+I[1970-01-01T00:00:00.012, f, 2]",
                                                  "+I[1970-01-01T00:00:00.015, a, 4]", "+I[1970-01-01T00:00:00.015, b, 4]"}),
                  false);
}

TEST_P(SqlRestore, Sort) {
  json keys = json::array({{{"column", 2}, {"descending", true}}, {{"column", 1}}});
  expect_restores(tumbling_steps(), single_op("sql_sort", {{"keys", keys}, {"limit", 3}}), 3,
                  sorted(std::vector<std::string>{"+I[1970-01-01T00:00:00.029, a, 16]", "+I[1970-01-01T00:00:00.029, b, 16]",
                                                  "+I[1970-01-01T00:00:00.029, c, 16]"}),
                  false);
}

// The watermarks come from sql_watermark_assigner (WATERMARK FOR t AS t, on-event) and
// survive restores: its watermark is operator state, so a restored window does not see
// rows it had already fired as on time again. As in Flink, the watermark 29 goes out
// right after the first row at 29 (key a): [20, 30) fires with a's rows only and the
// other keys' rows at 29 are late (dropped): b..f get 8, not 24.
TEST_P(SqlRestore, WatermarkAssignerThenWindowAggregate) {
  json wm = {{"id", "wm"},
             {"type", "sql_watermark_assigner"},
             {"parallelism", 1},
             {"params",
              {{"input_schemas", json::array({schema_json(kv_schema())})},
               {"schema", schema_json(kv_schema())},
               {"rowtime", 0},
               {"watermark", {{"col", 0}, {"type", "TIMESTAMP(3)"}}},
               {"emit", "on-event"}}},
             {"inputs", json::array({{{"from", "inj"}}})}};
  json agg = window_agg_op({{"kind", "tumble"}, {"time_column", 0}, {"size_ms", 10}});
  agg["inputs"][0]["from"] = "wm";
  agg["params"]["input_schemas"] = json::array({schema_json(kv_schema())});
  // Splice the assigner in front of the aggregate: the harness builds src -> inj -> op -> sink.
  auto steps = tumbling_steps();
  for (auto& st : steps) st.watermark.reset();  // only the assigner makes watermarks
  RestoreJob job{[&](const std::string& script, int parallelism) {
                   json spec = job_spec(script, agg, parallelism);
                   spec["ops"].push_back(wm);
                   return spec;
                 },
                 steps};
  std::vector<std::string> expected;
  for (const char* k : {"a", "b", "c", "d", "e", "f"}) {
    std::string key = k;
    expected.push_back("+I[" + key + ", 1970-01-01T00:00, 1970-01-01T00:00:00.010, 1970-01-01T00:00:00.009, 1]");
    expected.push_back("+I[" + key + ", 1970-01-01T00:00:00.010, 1970-01-01T00:00:00.020, 1970-01-01T00:00:00.019, 6]");
    expected.push_back("+I[" + key + ", 1970-01-01T00:00:00.020, 1970-01-01T00:00:00.030, 1970-01-01T00:00:00.029, " +
                       (key == "a" ? "24]" : "8]"));
  }
  // Failure-free at parallelism 1 and 2 and an injected failure after step 3; no savepoints.
  expect_restores(job, {.savepoint_steps = {}}, sorted(expected));
}

// UNION ALL: two edges into the one input of the next op, through the registry.
TEST(SqlJobs, UnionAllIsTwoEdgesIntoOneInput) {
  auto s1 = std::make_shared<Script>();
  s1->steps = {{spread(1, 1), std::nullopt}};
  put_script("union-1", s1);
  auto s2 = std::make_shared<Script>();
  s2->steps = {{spread(2, 3), std::nullopt}};
  s2->sink = s1->sink;
  put_script("union-2", s2);
  json src1 = {{"id", "s1"}, {"type", "sql_test_source"}, {"parallelism", 1}, {"params", {{"script", "union-1"}, {"schema", schema_json(kv_schema())}}}};
  json src2 = {{"id", "s2"}, {"type", "sql_test_source"}, {"parallelism", 1}, {"params", {{"script", "union-2"}, {"schema", schema_json(kv_schema())}}}};
  json op = window_agg_op({{"kind", "tumble"}, {"time_column", 0}, {"size_ms", 10}});
  op["inputs"] = json::array({{{"from", "s1"}, {"partitioning", "hash"}, {"key", "sql_columns:1"}},
                              {{"from", "s2"}, {"partitioning", "hash"}, {"key", "sql_columns:1"}}});
  json sink = {{"id", "sink"}, {"type", "sql_test_sink"}, {"params", {{"script", "union-1"}}}, {"inputs", json::array({{{"from", "agg"}}})}};
  json spec = {{"name", "union"}, {"config", {{"parallelism", 2}}}, {"ops", json::array({src1, src2, op, sink})}};
  auto h = execute_async(from_spec(spec, test_registry()));
  h.wait();
  ASSERT_EQ(h.status(), JobStatus::kFinished) << h.error();
  std::vector<std::string> expected;
  for (const char* k : {"a", "b", "c", "d", "e", "f"})
    expected.push_back(std::string("+I[") + k + ", 1970-01-01T00:00, 1970-01-01T00:00:00.010, 1970-01-01T00:00:00.009, 3]");
  EXPECT_EQ(sorted(s1->sink->values()), expected);
}

TEST(SqlJobs, SpecErrorsNameTheOpAndTheProblem) {
  auto s = std::make_shared<Script>();
  put_script("errors", s);
  json spec = job_spec("errors", window_agg_op({{"kind", "tumble"}, {"time_column", 0}, {"size_ms", 10}}), 1);
  spec["ops"][2]["inputs"][0]["key"] = "sql_columns:7";
  try {
    from_spec(spec, test_registry());
    FAIL() << "expected an error";
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), HasSubstr("op 'agg' input from 'inj': key selector 'sql_columns:7': column 7 is out of range "
                                    "(the upstream schema has 3 columns)"));
  }
  spec = job_spec("errors", window_agg_op({{"kind", "tumble"}, {"time_column", 0}, {"size_ms", 10}}), 1);
  spec["ops"][1]["params"]["schema"][2]["type"] = "INT";
  try {
    from_spec(spec, test_registry());
    FAIL() << "expected an error";
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), HasSubstr("op 'agg' (sql_window_aggregate): input 0: 'input_schemas'[0]"));
    EXPECT_THAT(e.what(), HasSubstr("does not match the schema of upstream op 'inj'"));
  }
}

}  // namespace
}  // namespace clink::test
