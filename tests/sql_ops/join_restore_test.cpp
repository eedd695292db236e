// The SQL joins in real jobs: a regular LEFT JOIN, a semi and an anti join of a stream
// with a retracting GROUP BY result, a FULL OUTER interval join, a FULL OUTER window join
// and a LEFT event-time temporal join, each run failure-free at parallelism 1 and 2,
// stopped with a savepoint and resumed (1 -> 1, 1 -> 2, 2 -> 1), and with an injected
// failure, on the memory and the RocksDB backends. The exactly-once output must equal the
// failure-free one: the interval, window and temporal joins' (append-only) rows exactly,
// the regular, semi and anti joins' changelogs applied (the two inputs interleave in no
// fixed order, so the materialised result is what is fixed; applying fails on a
// retraction of a row that is not there).
#include <gtest/gtest.h>

#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "restore_harness.hpp"

#include "../support/print_form.hpp"

namespace clink::test {
namespace {

json edge(const std::string& from, int input, const std::string& key) {
  return {{"from", from}, {"input", input}, {"partitioning", "hash"}, {"key", key}};
}

// The op "join" of `type` over inputs of schemas `left` and `right`, emitting `out`;
// `params` holds the join's own parameters.
json join_op(const std::string& type, const SchemaPtr& left, const SchemaPtr& right, const SchemaPtr& out, json params,
             json inputs) {
  params["input_schemas"] = json::array({schema_json(left), schema_json(right)});
  params["schema"] = schema_json(out);
  return {{"id", "join"}, {"type", type}, {"params", std::move(params)}, {"inputs", std::move(inputs)}};
}

// left's fields, then right's suffixed "0", nullable where an outer join pads the side
// (right always, left when `pad_left`).
SchemaPtr joined_schema(const SchemaPtr& left, const SchemaPtr& right, bool pad_left) {
  std::vector<sql::RowField> out;
  for (const auto& f : left->fields()) out.push_back({f.name, pad_left ? f.type.with_nullable(true) : f.type});
  for (const auto& f : right->fields()) out.push_back({f.name + "0", f.type.with_nullable(true)});
  return sql::make_schema(out);
}

// LEFT JOIN rows ON rows.k = sums.k where sums = SELECT k, SUM(v) GROUP BY k.
std::vector<json> regular_join_ops() {
  SchemaPtr sums = sql::make_schema({{"k", LogicalType::string()}, {"s", LogicalType::bigint()}});
  json agg = {{"id", "agg"},
              {"type", "sql_group_aggregate"},
              {"params",
               {{"input_schemas", json::array({schema_json(kv_schema())})},
                {"schema", schema_json(sums)},
                {"keys", {1}},
                {"aggregates", json::array({{{"function", "SUM"}, {"args", {2}}}})}}},
              {"inputs", json::array({edge("inj", 0, "sql_columns:1")})}};
  SchemaPtr out = sql::make_schema({{"t", LogicalType::timestamp(3)}, {"k", LogicalType::string()}, {"v", LogicalType::bigint()},
                                    {"k0", LogicalType::string()}, {"s", LogicalType::bigint()}});
  json join = join_op("sql_join", kv_schema(), sums, out, {{"join_type", "left"}, {"left_keys", {1}}, {"right_keys", {0}}},
                      json::array({edge("inj", 0, "sql_columns:1"), edge("agg", 1, "sql_columns:0")}));
  return {agg, join};
}

// rows l JOIN (SELECT k FROM rows WHERE v >= 4) r ON l.k = r.k, both inputs declared
// insert-only: both sides keep their rows as lists ("join-left-rows" / "join-right-rows"),
// the right side three equal rows per key (a duplicate is stored twice).
std::vector<json> insert_only_join_ops() {
  using namespace sql;
  const auto& reg = FunctionRegistry::builtins();
  ExprPtr filter = expr::call(reg, ">=", {expr::column(2, LogicalType::bigint()), expr::literal(Value(4), LogicalType::bigint().not_null())});
  SchemaPtr keys = make_schema({{"k", LogicalType::string()}});
  json calc = {{"id", "calc"},
               {"type", "sql_calc"},
               {"params",
                {{"input_schemas", json::array({schema_json(kv_schema())})},
                 {"schema", schema_json(keys)},
                 {"projections", json::array({expr_to_json(*expr::column(1, LogicalType::string()))})},
                 {"filter", expr_to_json(*filter)}}},
               {"inputs", json::array({{{"from", "inj"}}})}};
  json join = join_op("sql_join", kv_schema(), keys, joined_schema(kv_schema(), keys, false),
                      {{"join_type", "inner"},
                       {"left_keys", {1}},
                       {"right_keys", {0}},
                       {"left_insert_only", true},
                       {"right_insert_only", true}},
                      json::array({edge("inj", 0, "sql_columns:1"), edge("calc", 1, "sql_columns:0")}));
  return {calc, join};
}

// rows WHERE [NOT] EXISTS (SELECT 1 FROM sums WHERE sums.k = rows.k AND rows.v * 2 > sums.s)
// where sums = SELECT k, SUM(v) GROUP BY k: a semi / anti join whose right side retracts
// (each new sum replaces the old one, so rows gain and lose their match).
std::vector<json> semi_anti_join_ops(bool anti) {
  using namespace sql;
  std::vector<json> ops = regular_join_ops();
  const auto& reg = FunctionRegistry::builtins();
  ExprPtr doubled = expr::call(reg, "*", {expr::column(2, LogicalType::bigint()), expr::literal(Value(2), LogicalType::bigint().not_null())});
  ExprPtr cond = expr::call(reg, ">", {doubled, expr::column(4, LogicalType::bigint())});
  json& join = ops[1];
  join["type"] = "sql_semi_anti_join";
  join["params"]["join_type"] = anti ? "anti" : "semi";
  join["params"]["schema"] = schema_json(kv_schema());
  join["params"]["condition"] = expr_to_json(*cond);
  return ops;
}

// rows l FULL JOIN (rows WHERE v >= 4) r ON l.k = r.k AND l.t BETWEEN r.t - 5 ms AND r.t.
std::vector<json> interval_join_ops() {
  using namespace sql;
  const auto& reg = FunctionRegistry::builtins();
  ExprPtr filter = expr::call(reg, ">=", {expr::column(2, LogicalType::bigint()), expr::literal(Value(4), LogicalType::bigint().not_null())});
  json proj = json::array();
  for (std::size_t i = 0; i < 3; ++i) proj.push_back(expr_to_json(*expr::column(i, kv_schema()->type(i))));
  json calc = {{"id", "calc"},
               {"type", "sql_calc"},
               {"params",
                {{"input_schemas", json::array({schema_json(kv_schema())})},
                 {"schema", schema_json(kv_schema())},
                 {"projections", proj},
                 {"filter", expr_to_json(*filter)}}},
               {"inputs", json::array({{{"from", "inj"}}})}};
  SchemaPtr out = make_schema({{"t", LogicalType::timestamp(3)}, {"k", LogicalType::string()}, {"v", LogicalType::bigint()},
                               {"t0", LogicalType::timestamp(3)}, {"k0", LogicalType::string()}, {"v0", LogicalType::bigint()}});
  json join = join_op("sql_interval_join", kv_schema(), kv_schema(), out,
                      {{"join_type", "full"},
                       {"left_keys", {1}},
                       {"right_keys", {1}},
                       {"left_time", 0},
                       {"right_time", 0},
                       {"lower_ms", -5},
                       {"upper_ms", 0}},
                      json::array({edge("inj", 0, "sql_columns:1"), edge("calc", 1, "sql_columns:1")}));
  return {calc, join};
}

// TUMBLE(10 ms) over rows l and over (rows WHERE v >= 4) r, FULL JOIN on k and the
// window bounds: a window join.
std::vector<json> window_join_ops() {
  using namespace sql;
  std::vector<RowField> windowed = kv_schema()->fields();
  for (const char* n : {"window_start", "window_end", "window_time"}) windowed.push_back({n, LogicalType::timestamp(3).not_null()});
  SchemaPtr ws = make_schema(windowed);
  json window = {{"kind", "tumble"}, {"time_column", 0}, {"size_ms", 10}, {"offset_ms", 0}};
  auto assign = [&](const std::string& id, const std::string& from, const SchemaPtr& in) {
    return json{{"id", id},
                {"type", "sql_window_assign"},
                {"params", {{"input_schemas", json::array({schema_json(in)})}, {"schema", schema_json(ws)}, {"window", window}}},
                {"inputs", json::array({{{"from", from}}})}};
  };
  std::vector<json> ops = interval_join_ops();  // its calc (v >= 4) feeds the right side
  json calc = ops[0];
  json join = join_op("sql_window_join", ws, ws, joined_schema(ws, ws, true),
                      {{"join_type", "full"},
                       {"left_keys", {1, 3, 4}},
                       {"right_keys", {1, 3, 4}},
                       {"left_window_end", 4},
                       {"right_window_end", 4}},
                      json::array({edge("wl", 0, "sql_columns:1,3,4"), edge("wr", 1, "sql_columns:1,3,4")}));
  return {calc, assign("wl", "inj", kv_schema()), assign("wr", "calc", kv_schema()), join};
}

// rows l LEFT JOIN v FOR SYSTEM_TIME AS OF l.t AS r ON l.k = r.k, v the versioned view
// "the latest row per k of rows WHERE v >= 4" (a row-time keep-last deduplication, so the
// versioned side carries +I, then -U / +U per newer row): an event-time temporal join.
std::vector<json> temporal_join_ops() {
  using namespace sql;
  std::vector<json> ops = interval_join_ops();  // its calc (v >= 4)
  json calc = ops[0];
  // Hash-partitioned by k so each key's rows reach the deduplication in time order (a
  // rebalance would reorder them, and keep-last drops a row older than the one it holds).
  calc["inputs"] = json::array({edge("inj", 0, "sql_columns:1")});
  const SchemaPtr kv = kv_schema();
  json dedup = {{"id", "dedup"},
                {"type", "sql_deduplicate"},
                {"params",
                 {{"input_schemas", json::array({schema_json(kv)})},
                  {"schema", schema_json(kv)},
                  {"keys", {1}},
                  {"time_column", 0},
                  {"keep_last", true},
                  {"rowtime", true}}},
                {"inputs", json::array({edge("calc", 0, "sql_columns:1")})}};
  json join = join_op("sql_temporal_join", kv, kv, joined_schema(kv, kv, false),
                      {{"join_type", "left"}, {"left_keys", {1}}, {"right_keys", {1}}, {"left_time", 0}, {"right_time", 0}},
                      json::array({edge("inj", 0, "sql_columns:1"), edge("dedup", 1, "sql_columns:1")}));
  return {calc, dedup, join};
}

class SqlJoinRestore : public SqlRestoreHarness {
 protected:
  // Watermarks between the steps; a savepoint after step 3.
  void expect_restores(const std::vector<json>& ops, const std::vector<std::string>& expected, SinkView view) {
    SqlRestoreHarness::expect_restores(pipeline_job("join", ops, "join", rising_steps(watermarks_between_steps()), std::move(view)),
                                    {}, expected);
  }
};
INSTANTIATE_TEST_SUITE_P(Backends, SqlJoinRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

std::string ts(int ms) { return print_timestamp_ms(ms); }

TEST_P(SqlJoinRestore, LeftJoinWithARetractingAggregate) {
  std::vector<std::string> expected;
  for (const char* k : {"a", "b", "c", "d", "e", "f"})
    for (auto [t, v] : {std::pair{1, 1}, {12, 2}, {15, 4}, {21, 8}, {29, 16}})
      expected.push_back("+I[" + ts(t) + ", " + k + ", " + std::to_string(v) + ", " + k + ", 31]");
  expect_restores(regular_join_ops(), sorted(expected), materialize);
}

// Per key 5 left rows x 3 equal right rows, each pair once whichever side arrived first.
TEST_P(SqlJoinRestore, InnerJoinOfInsertOnlyInputsKeepsLists) {
  std::vector<std::string> expected;
  for (const char* k : {"a", "b", "c", "d", "e", "f"})
    for (auto [t, v] : {std::pair{1, 1}, {12, 2}, {15, 4}, {21, 8}, {29, 16}})
      for (int r = 0; r < 3; ++r) expected.push_back("+I[" + ts(t) + ", " + k + ", " + std::to_string(v) + ", " + k + "]");
  expect_restores(insert_only_join_ops(), sorted(expected), sorted_rows);
}

// Per key the sums are 1, 3, 7, 15, 31: in the end only v = 16 has 2 * v > 31.
TEST_P(SqlJoinRestore, SemiJoinWithARetractingAggregate) {
  std::vector<std::string> expected;
  for (const char* k : {"a", "b", "c", "d", "e", "f"}) expected.push_back("+I[" + ts(29) + ", " + k + ", 16]");
  expect_restores(semi_anti_join_ops(false), sorted(expected), materialize);
}

TEST_P(SqlJoinRestore, AntiJoinWithARetractingAggregate) {
  std::vector<std::string> expected;
  for (const char* k : {"a", "b", "c", "d", "e", "f"})
    for (auto [t, v] : {std::pair{1, 1}, {12, 2}, {15, 4}, {21, 8}})
      expected.push_back("+I[" + ts(t) + ", " + k + ", " + std::to_string(v) + "]");
  expect_restores(semi_anti_join_ops(true), sorted(expected), materialize);
}

TEST_P(SqlJoinRestore, FullOuterIntervalJoin) {
  std::vector<std::string> expected;
  for (std::string k : {"a", "b", "c", "d", "e", "f"}) {
    auto row = [&](int t, int v) { return ts(t) + ", " + k + ", " + std::to_string(v); };
    expected.push_back("+I[" + row(1, 1) + ", null, null, null]");
    expected.push_back("+I[" + row(12, 2) + ", " + row(15, 4) + "]");
    expected.push_back("+I[" + row(15, 4) + ", " + row(15, 4) + "]");
    expected.push_back("+I[" + row(21, 8) + ", " + row(21, 8) + "]");
    expected.push_back("+I[" + row(29, 16) + ", " + row(29, 16) + "]");
  }
  expect_restores(interval_join_ops(), sorted(expected), sorted_rows);
}

// Windows of 10 ms: per key [0, 10) holds l1 only (padded), [10, 20) l12, l15 x r15,
// [20, 30) l21, l29 x r21, r29.
TEST_P(SqlJoinRestore, FullOuterWindowJoin) {
  auto w = [](int t) {
    int start = t - t % 10;
    return ts(start) + ", " + ts(start + 10) + ", " + ts(start + 9);
  };
  std::vector<std::string> expected;
  for (std::string k : {"a", "b", "c", "d", "e", "f"}) {
    auto row = [&](int t, int v) { return ts(t) + ", " + k + ", " + std::to_string(v) + ", " + w(t); };
    expected.push_back("+I[" + row(1, 1) + ", null, null, null, null, null, null]");
    for (auto [l, lv] : {std::pair{12, 2}, {15, 4}}) expected.push_back("+I[" + row(l, lv) + ", " + row(15, 4) + "]");
    for (auto [l, lv] : {std::pair{21, 8}, {29, 16}})
      for (auto [r, rv] : {std::pair{21, 8}, {29, 16}}) expected.push_back("+I[" + row(l, lv) + ", " + row(r, rv) + "]");
  }
  expect_restores(window_join_ops(), sorted(expected), sorted_rows);
}

// Per key: versions at 15 (v 4), 21 (8), 29 (16); the rows at 1 and 12 precede them all.
TEST_P(SqlJoinRestore, LeftTemporalJoin) {
  std::vector<std::string> expected;
  for (std::string k : {"a", "b", "c", "d", "e", "f"}) {
    auto row = [&](int t, int v) { return ts(t) + ", " + k + ", " + std::to_string(v); };
    expected.push_back("+I[" + row(1, 1) + ", null, null, null]");
    expected.push_back("+I[" + row(12, 2) + ", null, null, null]");
    for (auto [t, v] : {std::pair{15, 4}, {21, 8}, {29, 16}}) expected.push_back("+I[" + row(t, v) + ", " + row(t, v) + "]");
  }
  expect_restores(temporal_join_ops(), sorted(expected), sorted_rows);
}

}  // namespace
}  // namespace clink::test
