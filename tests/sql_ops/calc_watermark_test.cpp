// expr_json round trips; sql_calc (filter as a selection, projections, kinds and event
// times kept); sql_watermark_assigner (Flink SQL's watermark rules).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clink/core/error.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "sql_ops_test_support.hpp"

namespace clink::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace ex = sql::expr;

SchemaPtr input() {
  return sql::make_schema({{"a", LogicalType::int_type()},
                           {"s", LogicalType::string()},
                           {"d", LogicalType::decimal(10, 2)},
                           {"t", LogicalType::timestamp(3)}});
}
sql::ExprPtr col(std::size_t i) { return ex::column(i, input()->type(i), input()->name(i)); }
sql::ExprPtr call(const char* name, std::vector<sql::ExprPtr> args) {
  return ex::call(sql::FunctionRegistry::builtins(), name, std::move(args));
}
sql::ExprPtr lit(Value v, LogicalType t) { return ex::literal(std::move(v), std::move(t)); }

TEST(ExprJson, RoundTripsEveryNodeKind) {
  std::vector<sql::ExprPtr> exprs = {
      col(0),
      call("+", {col(0), lit(Value(1), LogicalType::int_type().not_null())}),
      call("UPPER", {col(1)}),
      ex::cast(col(0), LogicalType::bigint()),
      ex::try_cast(col(1), LogicalType::int_type()),
      ex::case_when({{call(">", {col(0), lit(Value(10), LogicalType::int_type().not_null())}), lit(Value("big"), LogicalType::string().not_null())}},
                    lit(Value("small"), LogicalType::string().not_null())),
      ex::and_({call("<", {col(0), lit(Value(5), LogicalType::int_type().not_null())}), call("<>", {col(1), lit(Value("x"), LogicalType::string().not_null())})}),
      ex::or_({call("<", {col(0), lit(Value(5), LogicalType::int_type().not_null())}), lit(Value(), LogicalType::boolean())}),
      ex::coalesce({col(1), lit(Value("none"), LogicalType::string().not_null())}),
      ex::in_list(col(0), {lit(Value(1), LogicalType::int_type().not_null()), lit(Value(2), LogicalType::int_type().not_null())}, true),
      call("*", {col(2), lit(Value::decimal(150), LogicalType::decimal(3, 2).not_null())}),
      call("<", {col(3), lit(Value(ts("2020-04-15 08:05:00.123")), LogicalType::timestamp(3).not_null())}),
      lit(Value(2.5), LogicalType::double_type().not_null()),
      lit(Value(std::string("\x01\xff", 2)), LogicalType::bytes().not_null()),
      // MOD has its divisor's type: MOD(BIGINT, INT) is INT, also after a reload.
      call("MOD", {ex::cast(col(0), LogicalType::bigint()), lit(Value(123), LogicalType::int_type().not_null())}),
      call("%", {col(0), lit(Value(7), LogicalType::bigint().not_null())}),
  };
  for (const auto& e : exprs) {
    nlohmann::json j = sql::expr_to_json(*e);
    sql::ExprPtr back = sql::expr_from_json(j, *input());
    EXPECT_EQ(back->to_string(), e->to_string()) << j.dump();
    EXPECT_EQ(back->type, e->type) << j.dump();
    EXPECT_EQ(sql::expr_to_json(*back), j);
  }
  EXPECT_EQ(sql::expr_to_json(*exprs[11])["args"][1]["lit"], "2020-04-15 08:05:00.123");
  EXPECT_EQ(sql::expr_to_json(*exprs[10])["args"][1]["lit"], "1.50");
  EXPECT_EQ(sql::expr_to_json(*exprs[13])["lit"], "01ff");
  EXPECT_EQ(exprs[14]->type.to_string(), "INT");
  EXPECT_EQ(exprs[15]->type.to_string(), "BIGINT");
}

TEST(ExprJson, ErrorsNameThePath) {
  try {
    sql::expr_from_json({{"call", "+"}, {"args", json::array({{{"col", 0}}, {{"col", 9}}})}}, *input());
    FAIL();
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), HasSubstr("expression at /args/1: column 9 is not in the input schema"));
  }
  try {
    sql::expr_from_json({{"col", 0}, {"type", "BIGINT"}}, *input());
    FAIL();
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), HasSubstr("declared type BIGINT differs from the derived type INT"));
  }
}

json calc_params(std::vector<sql::ExprPtr> projections, std::vector<sql::RowField> out, sql::ExprPtr filter) {
  json p = {{"input_schemas", json::array({schema_json(input())})}, {"schema", schema_json(sql::make_schema(out))}};
  p["projections"] = json::array();
  for (const auto& e : projections) p["projections"].push_back(sql::expr_to_json(*e));
  p["filter"] = filter ? sql::expr_to_json(*filter) : json(nullptr);
  return p;
}

ColumnBatch rows() {
  auto r = [](Value a, Value s, RowKind k, EventTime t) {
    return Row{{a, s, Value::decimal(100), Value(ts("2020-01-01 00:00"))}, k, t};
  };
  return batch(input(), {r(1, "x", RowKind::kInsert, 10), r(20, "y", RowKind::kUpdateBefore, 11),
                         r(Value(), "z", RowKind::kInsert, 12), r(3, Value(), RowKind::kDelete, 13)});
}

// SELECT a + 1, UPPER(s) WHERE a < 10: NULL drops a row as FALSE does.
TEST(SqlCalc, FilterThenProjectKeepsKindsAndTimes) {
  auto p = calc_params({call("+", {col(0), lit(Value(1), LogicalType::int_type().not_null())}), call("UPPER", {col(1)})},
                       {{"a1", LogicalType::int_type()}, {"u", LogicalType::string()}},
                       call("<", {col(0), lit(Value(10), LogicalType::int_type().not_null())}));
  OpHarness h("sql_calc", p);
  h.push(rows());
  EXPECT_THAT(h.lines, ElementsAre("+I[2, X]", "-D[4, null]"));
  EXPECT_THAT(h.times, ElementsAre(10, 13));
}

TEST(SqlCalc, ProjectionOnlyAndSchemaErrors) {
  auto p = calc_params({col(1)}, {{"s", LogicalType::string()}}, nullptr);
  OpHarness h("sql_calc", p);
  h.push(rows());
  EXPECT_THAT(h.lines, ElementsAre("+I[x]", "-U[y]", "+I[z]", "-D[null]"));
  auto bad = calc_params({col(1)}, {{"s", LogicalType::int_type()}}, nullptr);
  try {
    OpHarness h2("sql_calc", bad);
    FAIL();
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), HasSubstr("op 'op' (sql_calc): param 'schema': field 0 ('s') is INT, projection 0"));
  }
}

// CURRENT_WATERMARK(t): NULL before the operator saw a watermark, then the last one.
TEST(SqlCalc, CurrentWatermarkIsTheLastWatermarkSeen) {
  auto p = calc_params({col(1), call("CURRENT_WATERMARK", {col(3)})},
                       {{"s", LogicalType::string()}, {"w", LogicalType::timestamp(3)}}, nullptr);
  OpHarness h("sql_calc", p);
  auto one = [](const char* s) {
    return batch(input(), {Row{{Value(1), Value(s), Value::decimal(100), Value(ts("2020-01-01 00:00"))}, RowKind::kInsert, 1}});
  };
  h.push(one("before"));
  h.watermark(5000);
  h.push(one("after"));
  h.watermark(7250);
  h.push(one("later"));
  EXPECT_THAT(h.lines, ElementsAre("+I[before, null]", "WM 5000", "+I[after, 1970-01-01T00:00:05]", "WM 7250",
                                   "+I[later, 1970-01-01T00:00:07.250]"));
}

// ---- watermarks ----

SchemaPtr wm_schema() { return sql::make_schema({{"ts", LogicalType::timestamp(3)}, {"wm", LogicalType::timestamp(3)}}); }
Row wrow(std::int64_t t, std::int64_t w) { return Row{{Value(t * 1000), Value(w * 1000)}}; }

json wm_params(const std::string& emit, std::int64_t interval = -1) {
  json p = {{"input_schemas", json::array({schema_json(wm_schema())})},
            {"schema", schema_json(wm_schema())},
            {"rowtime", 0},
            {"watermark", sql::expr_to_json(*ex::column(1, LogicalType::timestamp(3), "wm"))},
            {"emit", emit}};
  if (interval >= 0) p["interval_ms"] = interval;
  return p;
}

// on-event: the max of the expression (no "- 1"), after the rows; an out-of-order row at or
// below a watermark emitted before it in Flink's per-row order starts a new batch after it.
TEST(SqlWatermarkAssigner, OnEventMaxOfTheExpressionAndCutsBeforeRowsItMakesLate) {
  OpHarness h("sql_watermark_assigner", wm_params("on-event"));
  h.push(batch(wm_schema(), {wrow(10, 5), wrow(12, 7), wrow(11, 6)}));  // in order for the watermark: one batch
  h.push(batch(wm_schema(), {wrow(20, 15), wrow(6, 1), wrow(30, 25)}));  // 6 <= 15: cut before it
  h.finish();
  EXPECT_THAT(h.lines, ElementsAre("+I[1970-01-01T00:00:00.010, 1970-01-01T00:00:00.005]",
                                   "+I[1970-01-01T00:00:00.012, 1970-01-01T00:00:00.007]",
                                   "+I[1970-01-01T00:00:00.011, 1970-01-01T00:00:00.006]", "WM 7",
                                   "+I[1970-01-01T00:00:00.020, 1970-01-01T00:00:00.015]", "WM 15",
                                   "+I[1970-01-01T00:00:00.006, 1970-01-01T00:00:00.001]",
                                   "+I[1970-01-01T00:00:00.030, 1970-01-01T00:00:00.025]", "WM 25",
                                   "WM " + std::to_string(kMaxEventTime)));
  EXPECT_THAT(h.times, ElementsAre(10, 12, 11, 20, 6, 30));
}

// on-periodic: eager only when the watermark jumps by more than the interval (Flink
// compares the event-time jump with the processing-time interval); otherwise the timer.
TEST(SqlWatermarkAssigner, OnPeriodicEmitsEagerlyOnlyOnLargeJumps) {
  OpHarness h("sql_watermark_assigner", wm_params("on-periodic", 100));
  h.push(batch(wm_schema(), {wrow(60, 50)}));   // 50 - 0 <= 100: held for the timer
  h.push(batch(wm_schema(), {wrow(210, 200)}));  // 200 - 0 > 100: eager
  h.push(batch(wm_schema(), {wrow(260, 250)}));  // 250 - 200 <= 100: held
  EXPECT_THAT(h.lines, ElementsAre("+I[1970-01-01T00:00:00.060, 1970-01-01T00:00:00.050]",
                                   "+I[1970-01-01T00:00:00.210, 1970-01-01T00:00:00.200]", "WM 200",
                                   "+I[1970-01-01T00:00:00.260, 1970-01-01T00:00:00.250]"));
  h.lines.clear();
  h.processing_time(h.context().timer_service().current_processing_time() + 101);  // the periodic timer
  EXPECT_THAT(h.lines, ElementsAre("WM 250"));
}

// data_driven (over a bounded source): no emission by the timer, only the eager one, so
// which rows a watermark precedes depends on the rows alone. The same input with the
// timer firing between two batches (as a slow read would): without data_driven the row
// 230 after it is behind the watermark 250; with it, nothing was emitted and it is not.
TEST(SqlWatermarkAssigner, DataDrivenEmitsOnlyByTheRowsNotByTheTimer) {
  for (bool data_driven : {false, true}) {
    SCOPED_TRACE(data_driven);
    json p = wm_params("on-periodic", 100);
    if (data_driven) p["data_driven"] = true;
    OpHarness h("sql_watermark_assigner", p);
    h.push(batch(wm_schema(), {wrow(210, 200)}));  // 200 - 0 > 100: eager
    h.push(batch(wm_schema(), {wrow(260, 250)}));  // 250 - 200 <= 100: held
    h.processing_time(h.context().timer_service().current_processing_time() + 101);
    h.push(batch(wm_schema(), {wrow(230, 220)}));
    h.push(batch(wm_schema(), {wrow(400, 390)}));  // 390 - 200 > 100: eager either way
    const std::vector<std::string> timer = {"+I[1970-01-01T00:00:00.210, 1970-01-01T00:00:00.200]", "WM 200",
                                            "+I[1970-01-01T00:00:00.260, 1970-01-01T00:00:00.250]", "WM 250",
                                            "+I[1970-01-01T00:00:00.230, 1970-01-01T00:00:00.220]",
                                            "+I[1970-01-01T00:00:00.400, 1970-01-01T00:00:00.390]", "WM 390"};
    const std::vector<std::string> rows = {"+I[1970-01-01T00:00:00.210, 1970-01-01T00:00:00.200]", "WM 200",
                                           "+I[1970-01-01T00:00:00.260, 1970-01-01T00:00:00.250]",
                                           "+I[1970-01-01T00:00:00.230, 1970-01-01T00:00:00.220]",
                                           "+I[1970-01-01T00:00:00.400, 1970-01-01T00:00:00.390]", "WM 390"};
    EXPECT_EQ(h.lines, data_driven ? rows : timer);
  }
}

// The expression's time functions read the task's processing-time clock, once per batch
// (as in sql_calc), not the system clock; CURRENT_WATERMARK the last upstream watermark
// (NULL before one), as Flink's operator-level current watermark.
TEST(SqlWatermarkAssigner, TimeFunctionsInTheExpressionReadTheTasksClockAndWatermark) {
  ManualClock clock{0};
  clock.now = 5000;
  json p = wm_params("on-event");
  p["watermark"] = sql::expr_to_json(*call("LOCALTIMESTAMP", {}));
  OpHarness h("sql_watermark_assigner", p, 1, clock);
  h.push(batch(wm_schema(), {wrow(10, 1)}));
  clock.now = 7250;
  h.push(batch(wm_schema(), {wrow(20, 1)}));
  EXPECT_THAT(h.lines, ElementsAre("+I[1970-01-01T00:00:00.010, 1970-01-01T00:00:00.001]", "WM 5000",
                                   "+I[1970-01-01T00:00:00.020, 1970-01-01T00:00:00.001]", "WM 7250"));

  // wm - 1 s, but never below the upstream watermark: COALESCE(GREATEST(...)) over CURRENT_WATERMARK.
  auto wm = ex::column(1, LogicalType::timestamp(3), "wm");
  json q = wm_params("on-event");
  q["watermark"] = sql::expr_to_json(
      *call("COALESCE", {call("GREATEST", {wm, call("CURRENT_WATERMARK", {ex::column(0, LogicalType::timestamp(3), "ts")})}),
                         wm}));
  OpHarness g("sql_watermark_assigner", q, 1, clock);
  g.push(batch(wm_schema(), {wrow(10, 2)}));   // no upstream watermark: NULL -> wm
  g.watermark(9);                              // not forwarded, but read by the expression
  g.push(batch(wm_schema(), {wrow(11, 3)}));   // GREATEST(3, 9)
  EXPECT_THAT(g.lines, ElementsAre("+I[1970-01-01T00:00:00.010, 1970-01-01T00:00:00.002]", "WM 2",
                                   "+I[1970-01-01T00:00:00.011, 1970-01-01T00:00:00.003]", "WM 9"));
}

// source_bounded: upstream watermarks are the source's bound (the minimum over its splits,
// sent before a batch and including it), and the watermark never passes it, row by row.
// Lane A's rows (to 20) come first while lane B has none: nothing goes out; B's rows are
// then not late. Without the bound the watermark was 20 after A's batch.
TEST(SqlWatermarkAssigner, SourceBoundedNeverPassesTheSourcesSlowestSplit) {
  json p = wm_params("on-event");
  p["source_bounded"] = true;
  OpHarness h("sql_watermark_assigner", p);
  h.push(batch(wm_schema(), {wrow(11, 10), wrow(21, 20)}));  // lane A; B has no rows: no bound yet
  h.watermark(8);                                            // min(A 20, B 8): B's batch follows
  h.push(batch(wm_schema(), {wrow(6, 5), wrow(9, 8)}));
  h.watermark(15);
  h.push(batch(wm_schema(), {wrow(16, 15)}));
  h.finish();
  EXPECT_THAT(h.lines, ElementsAre("+I[1970-01-01T00:00:00.011, 1970-01-01T00:00:00.010]",
                                   "+I[1970-01-01T00:00:00.021, 1970-01-01T00:00:00.020]",
                                   "+I[1970-01-01T00:00:00.006, 1970-01-01T00:00:00.005]",
                                   "+I[1970-01-01T00:00:00.009, 1970-01-01T00:00:00.008]", "WM 8",
                                   "+I[1970-01-01T00:00:00.016, 1970-01-01T00:00:00.015]", "WM 15",
                                   "WM " + std::to_string(kMaxEventTime)));
}

TEST(SqlWatermarkAssigner, NullRowtimeFails) {
  OpHarness h("sql_watermark_assigner", wm_params("on-event"));
  try {
    h.push(batch(wm_schema(), {Row{{Value(), Value(1000)}}}));
    FAIL();
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), HasSubstr("op 'op' (sql_watermark_assigner): RowTime field should not be null (row 0)"));
  }
}

}  // namespace
}  // namespace clink::test
