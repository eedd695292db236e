// sql_join and sql_interval_join run directly, one input batch at a time in a fixed order:
// the exact changelog of every join type (Flink's StreamingJoinOperator /
// RowTimeIntervalJoin transitions), retracting inputs, duplicates, NULL keys, residual
// conditions, watermark-driven cleanup and the held-back output watermark.
#include <gtest/gtest.h>

#include <filesystem>

#include "../support/print_form.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "join_harness.hpp"
#include "sql_ops_test_support.hpp"

namespace clink::test {
namespace {

using Lines = std::vector<std::string>;

SchemaPtr left_schema() { return sql::make_schema({{"k", LogicalType::bigint()}, {"lv", LogicalType::string()}}); }
SchemaPtr right_schema() { return sql::make_schema({{"k", LogicalType::bigint()}, {"rv", LogicalType::string()}}); }

json join_params(const std::string& type, const json& condition = nullptr) {
  SchemaPtr out = sql::make_schema(
      {{"k", LogicalType::bigint()}, {"lv", LogicalType::string()}, {"k0", LogicalType::bigint()}, {"rv", LogicalType::string()}});
  return {{"schema", schema_json(out)},
          {"input_schemas", json::array({schema_json(left_schema()), schema_json(right_schema())})},
          {"join_type", type},
          {"left_keys", {0}},
          {"right_keys", {0}},
          {"condition", condition}};
}

Row ins(Value k, const char* v, RowKind kind = RowKind::kInsert) { return Row{{std::move(k), Value(v)}, kind}; }
ColumnBatch L(std::vector<Row> rows) { return batch(left_schema(), rows); }
ColumnBatch R(std::vector<Row> rows) { return batch(right_schema(), rows); }

TEST(SqlJoin, InnerJoinPassesInputKindsAndNeverMatchesNullKeys) {
  JoinHarness h("sql_join", join_params("inner"));
  EXPECT_EQ(h.push(0, L({ins(1, "a1")})), Lines{});
  EXPECT_EQ(h.push(1, R({ins(1, "b1")})), Lines{"+I[1, a1, 1, b1]"});
  EXPECT_EQ(h.push(0, L({ins(1, "a2")})), Lines{"+I[1, a2, 1, b1]"});
  EXPECT_EQ(h.push(1, R({ins(1, "b1", RowKind::kUpdateBefore), ins(1, "b2", RowKind::kUpdateAfter)})),
            (Lines{"-U[1, a1, 1, b1]", "-U[1, a2, 1, b1]", "+U[1, a1, 1, b2]", "+U[1, a2, 1, b2]"}));
  EXPECT_EQ(h.push(0, L({ins(1, "a1", RowKind::kDelete)})), Lines{"-D[1, a1, 1, b2]"});
  EXPECT_EQ(h.push(0, L({ins(Value(), "x"), ins(2, "c")})), Lines{});
  EXPECT_EQ(h.push(1, R({ins(Value(), "y"), ins(2, "d")})), Lines{"+I[2, c, 2, d]"});
}

// Both inputs insert-only: each side's rows are a list, a duplicate stored twice, the
// other side's rows joined in arrival order (the map kept them in byte order).
json insert_only_params(const std::string& type) {
  json p = join_params(type);
  p["left_insert_only"] = true;
  p["right_insert_only"] = true;
  return p;
}

TEST(SqlJoin, InsertOnlyInnerSidesKeepListsInArrivalOrder) {
  JoinHarness h("sql_join", insert_only_params("inner"));
  EXPECT_EQ(h.push(0, L({ins(1, "a2"), ins(1, "a1"), ins(1, "a2"), ins(Value(), "x")})), Lines{});
  EXPECT_EQ(h.push(1, R({ins(1, "b1"), ins(Value(), "y")})),
            (Lines{"+I[1, a2, 1, b1]", "+I[1, a1, 1, b1]", "+I[1, a2, 1, b1]"}));
  EXPECT_EQ(h.push(0, L({ins(1, "a3")})), Lines{"+I[1, a3, 1, b1]"});
  EXPECT_THROW(h.push(0, L({ins(1, "a1", RowKind::kDelete)})), ClinkError);
}

// A LEFT join keeps the preserved (left) side's match counts in the map; the right side
// is a list.
TEST(SqlJoin, InsertOnlyLeftJoinKeepsTheMapForThePreservedSide) {
  JoinHarness h("sql_join", insert_only_params("left"));
  EXPECT_EQ(h.push(0, L({ins(1, "a"), ins(1, "a")})), (Lines{"+I[1, a, null, null]", "+I[1, a, null, null]"}));
  EXPECT_EQ(h.push(1, R({ins(1, "b2"), ins(1, "b1")})),
            (Lines{"-D[1, a, null, null]", "-D[1, a, null, null]", "+I[1, a, 1, b2]", "+I[1, a, 1, b2]",
                   "+I[1, a, 1, b1]", "+I[1, a, 1, b1]"}));
  EXPECT_EQ(h.push(0, L({ins(1, "c")})), (Lines{"+I[1, c, 1, b2]", "+I[1, c, 1, b1]"}));
}

// A snapshot of the map layout restored where the plan keeps a list fails, naming both
// states, rather than joining without the restored rows; the list layout restores.
TEST(SqlJoin, ListAndMapLayoutsRestore) {
  auto dir = std::filesystem::temp_directory_path() / ("clink-join-layout-test-" + std::to_string(::getpid()));
  std::vector<KeyedStateHandle> map_form, list_form;
  {
    JoinHarness h("sql_join", join_params("inner"));
    h.push(0, L({ins(1, "a")}));
    map_form.push_back(h.context().keyed_state_backend()->snapshot(1, dir / "map"));
  }
  {
    JoinHarness h("sql_join", insert_only_params("inner"));
    h.push(0, L({ins(1, "a"), ins(1, "a")}));
    list_form.push_back(h.context().keyed_state_backend()->snapshot(1, dir / "list"));
  }
  try {
    JoinHarness h("sql_join", insert_only_params("inner"), SystemClock::instance(), map_form);
    ADD_FAILURE() << "restored the map layout into the list layout";
  } catch (const ClinkError& e) {
    EXPECT_NE(std::string(e.what()).find("'join-left' (a map), this plan in 'join-left-rows'"), std::string::npos)
        << e.what();
  }
  JoinHarness h("sql_join", insert_only_params("inner"), SystemClock::instance(), list_form);
  EXPECT_EQ(h.push(1, R({ins(1, "b")})), (Lines{"+I[1, a, 1, b]", "+I[1, a, 1, b]"}));
  std::filesystem::remove_all(dir);
}

TEST(SqlJoin, LeftJoinRetractsPaddedRowsOfDuplicatesWhenTheFirstMatchArrives) {
  JoinHarness h("sql_join", join_params("left"));
  EXPECT_EQ(h.push(0, L({ins(1, "a"), ins(1, "a")})), (Lines{"+I[1, a, null, null]", "+I[1, a, null, null]"}));
  EXPECT_EQ(h.push(1, R({ins(1, "b1")})),
            (Lines{"-D[1, a, null, null]", "-D[1, a, null, null]", "+I[1, a, 1, b1]", "+I[1, a, 1, b1]"}));
  EXPECT_EQ(h.push(1, R({ins(1, "b2")})), (Lines{"+I[1, a, 1, b2]", "+I[1, a, 1, b2]"}));
  EXPECT_EQ(h.push(1, R({ins(1, "b1", RowKind::kDelete), ins(1, "b2", RowKind::kDelete)})),
            (Lines{"-D[1, a, 1, b1]", "-D[1, a, 1, b1]", "-D[1, a, 1, b2]", "-D[1, a, 1, b2]", "+I[1, a, null, null]",
                   "+I[1, a, null, null]"}));
}

TEST(SqlJoin, LeftJoinChangelog) {
  JoinHarness h("sql_join", join_params("left"));
  EXPECT_EQ(h.push(1, R({ins(1, "b1")})), Lines{});
  EXPECT_EQ(h.push(0, L({ins(1, "a1")})), Lines{"+I[1, a1, 1, b1]"});
  EXPECT_EQ(h.push(0, L({ins(2, "a2"), ins(Value(), "n")})), (Lines{"+I[2, a2, null, null]", "+I[null, n, null, null]"}));
  EXPECT_EQ(h.push(1, R({ins(1, "b1", RowKind::kDelete)})), (Lines{"-D[1, a1, 1, b1]", "+I[1, a1, null, null]"}));
  EXPECT_EQ(h.push(0, L({ins(1, "a1", RowKind::kUpdateBefore), ins(1, "a3", RowKind::kUpdateAfter)})),
            (Lines{"-D[1, a1, null, null]", "+I[1, a3, null, null]"}));
}

TEST(SqlJoin, RightJoinChangelog) {
  JoinHarness h("sql_join", join_params("right"));
  EXPECT_EQ(h.push(1, R({ins(2, "b")})), Lines{"+I[null, null, 2, b]"});
  EXPECT_EQ(h.push(0, L({ins(2, "a")})), (Lines{"-D[null, null, 2, b]", "+I[2, a, 2, b]"}));
  EXPECT_EQ(h.push(0, L({ins(2, "a2")})), (Lines{"+I[2, a2, 2, b]"}));
  EXPECT_EQ(h.push(0, L({ins(2, "a", RowKind::kUpdateBefore)})), (Lines{"-U[2, a, 2, b]"}));
  EXPECT_EQ(h.push(0, L({ins(2, "a2", RowKind::kDelete)})), (Lines{"-D[2, a2, 2, b]", "+I[null, null, 2, b]"}));
  EXPECT_EQ(h.push(1, R({ins(2, "b", RowKind::kDelete)})), (Lines{"-D[null, null, 2, b]"}));
}

TEST(SqlJoin, FullJoinWithResidualCondition) {
  // lv < rv (STRING) over the joined row.
  json cond = sql::expr_to_json(*sql::expr::call(sql::FunctionRegistry::builtins(), "<",
                                                 {sql::expr::column(1, LogicalType::string()),
                                                  sql::expr::column(3, LogicalType::string())}));
  JoinHarness h("sql_join", join_params("full", cond));
  EXPECT_EQ(h.push(0, L({ins(1, "m")})), Lines{"+I[1, m, null, null]"});
  EXPECT_EQ(h.push(1, R({ins(1, "a")})), Lines{"+I[null, null, 1, a]"}) << "m < a is false: no match";
  EXPECT_EQ(h.push(1, R({ins(1, "z")})), (Lines{"-D[1, m, null, null]", "+I[1, m, 1, z]"}));
  EXPECT_EQ(h.push(1, R({ins(1, "y")})), (Lines{"+I[1, m, 1, y]"}));
  EXPECT_EQ(h.push(0, L({ins(1, "b")})), (Lines{"+I[1, b, 1, y]", "+I[1, b, 1, z]"})) << "b < a is false";
  EXPECT_EQ(h.push(0, L({ins(1, "m", RowKind::kDelete)})), (Lines{"-D[1, m, 1, y]", "-D[1, m, 1, z]"}));
  EXPECT_EQ(h.push(0, L({ins(1, "b", RowKind::kDelete)})),
            (Lines{"-D[1, b, 1, y]", "-D[1, b, 1, z]", "+I[null, null, 1, y]", "+I[null, null, 1, z]"}));
}

TEST(SqlJoin, ResidualOnAnInnerJoinWithoutKeys) {
  json p = join_params("inner", sql::expr_to_json(*sql::expr::call(
                                    sql::FunctionRegistry::builtins(), ">",
                                    {sql::expr::column(0, LogicalType::bigint()), sql::expr::column(2, LogicalType::bigint())})));
  p["left_keys"] = json::array();
  p["right_keys"] = json::array();
  JoinHarness h("sql_join", p);
  EXPECT_EQ(h.push(0, L({ins(5, "a"), ins(1, "b")})), Lines{});
  EXPECT_EQ(h.push(1, R({ins(3, "c"), ins(0, "d")})), (Lines{"+I[5, a, 3, c]", "+I[1, b, 0, d]", "+I[5, a, 0, d]"}));
}

// table.exec.state.ttl: a row expires `ttl` of processing time after it was last written.
TEST(SqlJoin, StateTtlExpiresRowsOfBothSides) {
  ManualClock clock{1000};
  json p = join_params("inner");
  p["state_ttl_ms"] = 100;
  JoinHarness h("sql_join", p, clock);
  EXPECT_EQ(h.push(0, L({ins(1, "a")})), Lines{});
  clock.now = 1050;
  EXPECT_EQ(h.push(1, R({ins(1, "b")})), Lines{"+I[1, a, 1, b]"});
  clock.now = 1100;
  EXPECT_EQ(h.push(1, R({ins(1, "c")})), Lines{}) << "a expired at 1000 + 100";
  clock.now = 1149;
  EXPECT_EQ(h.push(0, L({ins(1, "d")})), (Lines{"+I[1, d, 1, b]", "+I[1, d, 1, c]"}));
  clock.now = 1150;
  EXPECT_EQ(h.push(0, L({ins(1, "e")})), (Lines{"+I[1, e, 1, c]"})) << "b expired at 1050 + 100";
}

// 300 x 100 candidate pairs exceed the 16K pairs evaluated at once: the batch is
// processed in chunks of rows (54 then 46), with the output of one pass.
TEST(SqlJoin, AHotKeyIsJoinedInChunksOfPairs) {
  json cond = sql::expr_to_json(*sql::expr::call(sql::FunctionRegistry::builtins(), "<>",
                                                 {sql::expr::column(1, LogicalType::string()),
                                                  sql::expr::column(3, LogicalType::string())}));
  JoinHarness h("sql_join", join_params("left", cond));
  std::vector<std::string> names, rvs;
  std::vector<Row> left, right;
  for (int i = 0; i < 300; ++i) names.push_back("l" + std::to_string(1000 + i));
  for (int i = 0; i < 100; ++i) rvs.push_back(i == 70 ? std::string("l1005") : "r" + std::to_string(i));
  for (const auto& v : names) left.push_back(Row{{Value(1), Value(v)}, RowKind::kInsert});
  for (const auto& v : rvs) right.push_back(Row{{Value(1), Value(v)}, RowKind::kInsert});
  EXPECT_EQ(h.push(0, L(left)).size(), 300u);
  Lines expected;
  for (const auto& l : names) expected.push_back("-D[1, " + l + ", null, null]");  // their first match: r0
  for (const auto& r : rvs)
    for (const auto& l : names)
      if (l != r) expected.push_back("+I[1, " + l + ", 1, " + r + "]");
  EXPECT_EQ(h.push(1, R(right)), expected);
}

TEST(SqlJoin, SpecErrorsNameTheProblem) {
  json p = join_params("inner");
  p["right_keys"] = {1};
  try {
    JoinHarness h("sql_join", p);
    FAIL() << "expected an error";
  } catch (const ClinkError& e) {
    EXPECT_EQ(std::string(e.what()),
              "op 'join' (sql_join): join key 0: left column 'k' is BIGINT, right column 'rv' is STRING (keys must have one "
              "type so equal values route and match alike)");
  }
  p = join_params("sideways");
  EXPECT_THROW(JoinHarness("sql_join", p), ClinkError);
}

// ---- interval join ----

SchemaPtr tl_schema() {
  return sql::make_schema({{"k", LogicalType::bigint()}, {"lt", LogicalType::timestamp(3)}, {"lv", LogicalType::string()}});
}
SchemaPtr tr_schema() {
  return sql::make_schema({{"k", LogicalType::bigint()}, {"rt", LogicalType::timestamp(3)}, {"rv", LogicalType::string()}});
}
json interval_params(const std::string& type) {
  std::vector<sql::RowField> out;
  SchemaPtr l = tl_schema(), r = tr_schema();
  for (const auto& f : l->fields()) out.push_back(f);
  for (const auto& f : r->fields()) out.push_back({f.name == "k" ? "k0" : f.name, f.type});
  // lt BETWEEN rt - INTERVAL '10' MILLISECOND AND rt
  return {{"schema", schema_json(sql::make_schema(out))},
          {"input_schemas", json::array({schema_json(tl_schema()), schema_json(tr_schema())})},
          {"join_type", type}, {"left_keys", {0}}, {"right_keys", {0}},
          {"left_time", 1}, {"right_time", 1}, {"lower_ms", -10}, {"upper_ms", 0}};
}
ColumnBatch TL(std::int64_t k, std::int64_t t, const char* v) {
  return batch(tl_schema(), {Row{{Value(k), Value(t * 1000), Value(v)}, RowKind::kInsert, t}});
}
ColumnBatch TR(std::int64_t k, std::int64_t t, const char* v) {
  return batch(tr_schema(), {Row{{Value(k), Value(t * 1000), Value(v)}, RowKind::kInsert, t}});
}
const char* T(int ms) {
  static std::string s[64];
  static int next = 0;
  std::string& out = s[next++ % 64];
  out = print_timestamp_ms(ms);
  return out.c_str();
}

TEST(SqlIntervalJoin, InnerJoinWithinBoundsAndCleanupByWatermark) {
  JoinHarness h("sql_interval_join", interval_params("inner"));
  EXPECT_EQ(h.push(0, TL(1, 5, "a")), Lines{});
  EXPECT_EQ(h.push(1, TR(1, 12, "b")), Lines{std::string("+I[1, ") + T(5) + ", a, 1, " + T(12) + ", b]"});
  EXPECT_EQ(h.push(1, TR(1, 16, "c")), Lines{}) << "5 is not in [16 - 10, 16]";
  EXPECT_EQ(h.push(0, TL(1, 14, "d")), (Lines{std::string("+I[1, ") + T(14) + ", d, 1, " + T(16) + ", c]"}))
      << "14 is in [16 - 10, 16], not in [12 - 10, 12]";
  // The output watermark is held back by max(10, 0).
  EXPECT_EQ(h.watermark(20), Lines{"WM 10"});
  // Right rows at or before 20 - 0 - 1 are gone: a left row at 10 ([10, 20]) finds nothing.
  EXPECT_EQ(h.push(0, TL(1, 10, "e")), Lines{}) << "right rows 12 and 16 expired at watermark 20";
}

TEST(SqlIntervalJoin, OuterJoinEmitsUnmatchedRowsWhenTheyExpire) {
  JoinHarness h("sql_interval_join", interval_params("full"));
  EXPECT_EQ(h.push(0, TL(1, 5, "a")), Lines{});
  EXPECT_EQ(h.push(0, TL(2, 6, "u")), Lines{});
  EXPECT_EQ(h.push(1, TR(1, 12, "b")), Lines{std::string("+I[1, ") + T(5) + ", a, 1, " + T(12) + ", b]"});
  EXPECT_EQ(h.push(1, TR(3, 13, "r")), Lines{});
  // Left cleanup timers at t + 10 + 5 + 1 (a: 21, u: 22), right ones at t + 0 + 5 + 1 (b: 18, r: 19).
  EXPECT_EQ(h.watermark(19), (Lines{std::string("+I[null, null, null, 3, ") + T(13) + ", r]", "WM 9"}));
  EXPECT_EQ(h.watermark(30), (Lines{std::string("+I[2, ") + T(6) + ", u, null, null, null]", "WM 20"}));
  // Too late to be cached (the watermark passed 8 + 10): padded at once.
  EXPECT_EQ(h.push(0, TL(4, 8, "late")), Lines{std::string("+I[4, ") + T(8) + ", late, null, null, null]"});
}

TEST(SqlIntervalJoin, AHotKeyIsJoinedInChunksOfPairs) {
  JoinHarness h("sql_interval_join", interval_params("inner"));
  std::vector<Row> left, right;
  for (int i = 0; i < 200; ++i) left.push_back(Row{{Value(1), Value(std::int64_t{5000}), Value("l" + std::to_string(100 + i))}});
  for (int i = 0; i < 100; ++i) right.push_back(Row{{Value(1), Value(std::int64_t{10000}), Value("r" + std::to_string(100 + i))}});
  EXPECT_EQ(h.push(0, batch(tl_schema(), left)), Lines{});
  Lines expected;
  for (int r = 0; r < 100; ++r)
    for (int l = 0; l < 200; ++l)
      expected.push_back(std::string("+I[1, ") + T(5) + ", l" + std::to_string(100 + l) + ", 1, " + T(10) + ", r" +
                         std::to_string(100 + r) + "]");
  EXPECT_EQ(h.push(1, batch(tr_schema(), right)), expected);
}

// A left row late in its channel (t = 100, its channel's watermark 105) is cached with
// that watermark, which comes back from a snapshot: it joins a right row at 106 (105 <
// 106 + 0) but not one at 104 (its channel passed 104 before the left row came), which
// is padded. The right rows' channel is at 0: 0 < 100 + 10.
TEST(SqlIntervalJoin, ALateRowKeepsItsChannelWatermarkThroughASnapshot) {
  std::vector<KeyedStateHandle> handles;
  std::set<Timer> timers;
  auto dir = std::filesystem::temp_directory_path() / ("clink-interval-join-test-" + std::to_string(::getpid()));
  {
    JoinHarness h("sql_interval_join", interval_params("full"));
    EXPECT_EQ(h.push(0, TL(1, 100, "late"), 105), Lines{});
    handles.push_back(h.context().keyed_state_backend()->snapshot(1, dir));
    timers = h.context().timer_service().event_time_timers();
  }
  JoinHarness h("sql_interval_join", interval_params("full"), SystemClock::instance(), handles, timers);
  EXPECT_EQ(h.push(1, TR(1, 106, "y1"), 0), Lines{std::string("+I[1, ") + T(100) + ", late, 1, " + T(106) + ", y1]"});
  EXPECT_EQ(h.push(1, TR(1, 104, "y2"), 0), Lines{});
  EXPECT_EQ(h.watermark(200), (Lines{std::string("+I[null, null, null, 1, ") + T(104) + ", y2]", "WM 190"}));
  std::filesystem::remove_all(dir);
}

// ---- window join ----

SchemaPtr w_schema(const char* value) {
  return sql::make_schema({{"k", LogicalType::bigint()},
                           {"ws", LogicalType::timestamp(3).not_null()},
                           {"we", LogicalType::timestamp(3).not_null()},
                           {value, LogicalType::string()}});
}
json window_join_params(const std::string& type) {
  std::vector<sql::RowField> out;
  SchemaPtr l = w_schema("lv"), r = w_schema("rv");
  bool pad_left = type == "right" || type == "full", pad_right = type == "left" || type == "full";
  for (const auto& f : l->fields()) out.push_back({f.name, pad_left ? f.type.with_nullable(true) : f.type});
  for (const auto& f : r->fields()) out.push_back({f.name + "0", pad_right ? f.type.with_nullable(true) : f.type});
  return {{"schema", schema_json(sql::make_schema(out))},
          {"input_schemas", json::array({schema_json(l), schema_json(r)})},
          {"join_type", type}, {"left_keys", {0, 1, 2}}, {"right_keys", {0, 1, 2}},
          {"left_window_end", 2}, {"right_window_end", 2}};
}
// Rows of window [0, 10) ms.
ColumnBatch WL(std::vector<std::pair<Value, const char*>> rows, const char* col = "lv") {
  std::vector<Row> out;
  for (auto& [k, v] : rows) out.push_back(Row{{k, Value(std::int64_t{0}), Value(std::int64_t{10000}), Value(v)}});
  return batch(w_schema(col), out);
}
std::string W(const std::string& k, const std::string& v) {
  return k + ", 1970-01-01T00:00, 1970-01-01T00:00:00.010, " + v;
}
const std::string kNulls = "null, null, null, null";

TEST(SqlWindowJoin, InnerAndLeftJoinsIterateLeftRowsFirst) {
  for (std::string type : {"inner", "left"}) {
    JoinHarness h("sql_window_join", window_join_params(type));
    EXPECT_EQ(h.push(0, WL({{Value(1), "a1"}, {Value(1), "a2"}, {Value(2), "b"}})), Lines{});
    EXPECT_EQ(h.push(1, WL({{Value(1), "x1"}, {Value(1), "x2"}}, "rv")), Lines{});
    EXPECT_EQ(h.watermark(8), Lines{"WM 8"}) << "the window fires at its end - 1 = 9";
    Lines expected = {"+I[" + W("1", "a1") + ", " + W("1", "x1") + "]", "+I[" + W("1", "a1") + ", " + W("1", "x2") + "]",
                      "+I[" + W("1", "a2") + ", " + W("1", "x1") + "]", "+I[" + W("1", "a2") + ", " + W("1", "x2") + "]"};
    if (type == "left") expected.push_back("+I[" + W("2", "b") + ", " + kNulls + "]");
    expected.push_back("WM 9");
    EXPECT_EQ(h.watermark(9), expected) << type;
    EXPECT_EQ(h.push(0, WL({{Value(2), "late"}})), Lines{}) << "its window fired: dropped";
    EXPECT_EQ(h.watermark(30), Lines{"WM 30"});
  }
}

TEST(SqlWindowJoin, RightJoinIteratesRightRowsFirstAndFullPadsBothSides) {
  JoinHarness right("sql_window_join", window_join_params("right"));
  right.push(0, WL({{Value(1), "a1"}, {Value(1), "a2"}}));
  right.push(1, WL({{Value(1), "x1"}, {Value(1), "x2"}, {Value(3), "y"}}, "rv"));
  EXPECT_EQ(right.watermark(9),
            (Lines{"+I[" + W("1", "a1") + ", " + W("1", "x1") + "]", "+I[" + W("1", "a2") + ", " + W("1", "x1") + "]",
                   "+I[" + W("1", "a1") + ", " + W("1", "x2") + "]", "+I[" + W("1", "a2") + ", " + W("1", "x2") + "]",
                   "+I[" + kNulls + ", " + W("3", "y") + "]", "WM 9"}));
  JoinHarness full("sql_window_join", window_join_params("full"));
  full.push(0, WL({{Value(), "n"}, {Value(1), "a"}, {Value(2), "b"}}));
  full.push(1, WL({{Value(), "m"}, {Value(1), "x"}, {Value(3), "y"}}, "rv"));
  // Keys in byte order (NULL first); NULL keys never match.
  EXPECT_EQ(full.watermark(9), (Lines{"+I[" + W("null", "n") + ", " + kNulls + "]", "+I[" + kNulls + ", " + W("null", "m") + "]",
                                      "+I[" + W("1", "a") + ", " + W("1", "x") + "]", "+I[" + W("2", "b") + ", " + kNulls + "]",
                                      "+I[" + kNulls + ", " + W("3", "y") + "]", "WM 9"}));
}

}  // namespace
}  // namespace clink::test
