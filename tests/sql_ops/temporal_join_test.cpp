// sql_temporal_join run directly, one batch at a time in a fixed order: the version each
// left row joins (Flink's TemporalRowTimeJoinHelper.latestRightRowToJoin example: updates
// and a delete), arrival-order emission once the watermark passes, the timer re-armed for
// rows still ahead of it, version cleanup and its effect on a late left row, residual
// conditions, NULL keys and the output times.
#include <gtest/gtest.h>

#include <filesystem>

#include "../support/print_form.hpp"
#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "join_harness.hpp"
#include "sql_ops_test_support.hpp"

namespace clink::test {
namespace {

using Lines = std::vector<std::string>;

SchemaPtr left_schema() {
  return sql::make_schema({{"t", LogicalType::timestamp(3)}, {"k", LogicalType::bigint()}, {"lv", LogicalType::string()}});
}
SchemaPtr right_schema() {
  return sql::make_schema({{"t", LogicalType::timestamp(3)}, {"k", LogicalType::bigint()}, {"rv", LogicalType::string()}});
}

json temporal_params(const std::string& type, const json& condition = nullptr) {
  const bool left = type == "left";
  auto r = [&](LogicalType t) { return left ? t.with_nullable(true) : t; };
  SchemaPtr out = sql::make_schema({{"t", LogicalType::timestamp(3)}, {"k", LogicalType::bigint()}, {"lv", LogicalType::string()},
                                    {"t0", r(LogicalType::timestamp(3))}, {"k0", r(LogicalType::bigint())},
                                    {"rv", r(LogicalType::string())}});
  return {{"schema", schema_json(out)},
          {"input_schemas", json::array({schema_json(left_schema()), schema_json(right_schema())})},
          {"join_type", type},
          {"left_keys", {1}},
          {"right_keys", {1}},
          {"left_time", 0},
          {"right_time", 0},
          {"condition", condition}};
}

Row row(std::int64_t t, Value k, const char* v, RowKind kind = RowKind::kInsert) {
  return Row{{Value(t * 1000), std::move(k), Value(v)}, kind, t};
}
ColumnBatch L(std::vector<Row> rows) { return batch(left_schema(), rows); }
ColumnBatch R(std::vector<Row> rows) { return batch(right_schema(), rows); }
std::string ts(std::int64_t ms) { return print_timestamp_ms(ms); }
std::string joined(std::int64_t lt, const char* lv, std::int64_t rt, const char* rv) {
  return "+I[" + ts(lt) + ", 1, " + lv + ", " + ts(rt) + ", 1, " + rv + "]";
}
std::string padded(std::int64_t lt, const char* lv, const char* key = "1") {
  return "+I[" + ts(lt) + ", " + key + ", " + lv + ", null, null, null]";
}

// Versions of key 1: 1 (+I a), 3 (-U, skipped: the versioned side is read as upserts),
// 4 (+U b), 7 (+U c), 9 (-D), 12 (+I e). Left rows arrive out of time order.
void feed_versions_and_probes(JoinHarness& h) {
  EXPECT_EQ(h.push(1, R({row(1, Value(1), "a"), row(3, Value(1), "a", RowKind::kUpdateBefore),
                         row(4, Value(1), "b", RowKind::kUpdateAfter), row(7, Value(1), "c", RowKind::kUpdateAfter),
                         row(9, Value(1), "c", RowKind::kDelete), row(12, Value(1), "e")})),
            Lines{});
  EXPECT_EQ(h.push(0, L({row(10, Value(1), "l10"), row(1, Value(1), "l1"), row(13, Value(1), "l13"), row(6, Value(1), "l6"),
                         row(0, Value(1), "l0"), row(8, Value(1), "l8"), row(3, Value(1), "l3")})),
            Lines{});
}

TEST(SqlTemporalJoin, LeftJoinsTheVersionValidAtEachRowInArrivalOrder) {
  JoinHarness h("sql_temporal_join", temporal_params("left"));
  feed_versions_and_probes(h);
  EXPECT_EQ(h.watermark(20), (Lines{padded(10, "l10"), joined(1, "l1", 1, "a"), joined(13, "l13", 12, "e"),
                                    joined(6, "l6", 4, "b"), padded(0, "l0"), joined(8, "l8", 7, "c"),
                                    joined(3, "l3", 1, "a"), "WM 20"}));
  EXPECT_EQ(h.times, (std::vector<EventTime>{10, 1, 13, 6, 0, 8, 3}));  // the left rows' times
}

TEST(SqlTemporalJoin, InnerDropsRowsWithoutAVersionOrAfterADelete) {
  JoinHarness h("sql_temporal_join", temporal_params("inner"));
  feed_versions_and_probes(h);
  EXPECT_EQ(h.watermark(20), (Lines{joined(1, "l1", 1, "a"), joined(13, "l13", 12, "e"), joined(6, "l6", 4, "b"),
                                    joined(8, "l8", 7, "c"), joined(3, "l3", 1, "a"), "WM 20"}));
}

TEST(SqlTemporalJoin, RowsWaitForTheWatermarkAndTheTimerIsRearmed) {
  JoinHarness h("sql_temporal_join", temporal_params("left"));
  h.push(1, R({row(2, Value(1), "a")}));
  h.push(0, L({row(15, Value(1), "l15"), row(5, Value(1), "l5"), row(5, Value(2), "other")}));
  EXPECT_EQ(h.watermark(4), Lines{"WM 4"});
  // Key 1's timer (at 2, the version) fires: l5 is ready, l15 re-arms it at 15.
  EXPECT_EQ(h.watermark(10), (Lines{joined(5, "l5", 2, "a"), padded(5, "other", "2"), "WM 10"}));
  h.push(1, R({row(14, Value(1), "b")}));
  EXPECT_EQ(h.watermark(14), Lines{"WM 14"});
  EXPECT_EQ(h.watermark(15), (Lines{joined(15, "l15", 14, "b"), "WM 15"}));
  EXPECT_EQ(h.watermark(100), Lines{"WM 100"});  // nothing left
}

// At watermark 6 version 1 is dropped (version 5 is valid from then on). A left row at 3
// arriving after that is late: it is joined at the next watermark with what is left, as
// Flink does, and finds no version at or before 3.
TEST(SqlTemporalJoin, OldVersionsAreCleanedAndALateRowFindsNone) {
  JoinHarness h("sql_temporal_join", temporal_params("left"));
  h.push(1, R({row(1, Value(1), "a"), row(5, Value(1), "b")}));
  h.push(0, L({row(2, Value(1), "on time")}));
  EXPECT_EQ(h.watermark(6), (Lines{joined(2, "on time", 1, "a"), "WM 6"}));
  h.push(0, L({row(3, Value(1), "late"), row(6, Value(1), "at wm")}));
  EXPECT_EQ(h.watermark(7), (Lines{padded(3, "late"), joined(6, "at wm", 5, "b"), "WM 7"}));
}

// Lateness by the rows' channels, across a snapshot: version b (at 5, its channel at 8)
// takes effect from 9; l3 (its channel at 6) finds no version taking effect in (3, 6] and
// joins a; l2 (its channel at 12) would have needed b not to exist: padded.
TEST(SqlTemporalJoin, RowsLateInTheirChannelFollowTheirChannelsWatermark) {
  std::vector<KeyedStateHandle> handles;
  std::set<Timer> timers;
  auto dir = std::filesystem::temp_directory_path() / ("clink-temporal-join-test-" + std::to_string(::getpid()));
  {
    JoinHarness h("sql_temporal_join", temporal_params("left"));
    h.push(1, R({row(1, Value(1), "a")}), 0);
    h.push(1, R({row(5, Value(1), "b")}), 8);
    h.push(0, L({row(7, Value(1), "l7")}), 0);
    h.push(0, L({row(3, Value(1), "l3")}), 6);
    h.push(0, L({row(2, Value(1), "l2")}), 12);
    h.push(0, L({row(10, Value(1), "l10")}), 0);
    handles.push_back(h.context().keyed_state_backend()->snapshot(1, dir));
    timers = h.context().timer_service().event_time_timers();
  }
  JoinHarness h("sql_temporal_join", temporal_params("left"), SystemClock::instance(), handles, timers);
  EXPECT_EQ(h.watermark(20), (Lines{joined(7, "l7", 1, "a"), joined(3, "l3", 1, "a"), padded(2, "l2"),
                                    joined(10, "l10", 5, "b"), "WM 20"}));
  std::filesystem::remove_all(dir);
  // INNER drops l2 and counts it as late.
  JoinHarness inner("sql_temporal_join", temporal_params("inner"));
  inner.push(1, R({row(1, Value(1), "a"), row(5, Value(1), "b")}), 0);
  inner.push(0, L({row(2, Value(1), "l2")}), 12);
  EXPECT_EQ(inner.watermark(20), Lines{"WM 20"});
  EXPECT_EQ(inner.context().metrics().late_records_dropped.load(), 1);
}

TEST(SqlTemporalJoin, ResidualConditionAndNullKeys) {
  // lv <> rv over the joined row (left ++ right).
  const auto& reg = sql::FunctionRegistry::builtins();
  sql::ExprPtr cond = sql::expr::call(reg, "<>", {sql::expr::column(2, LogicalType::string()), sql::expr::column(5, LogicalType::string())});
  JoinHarness h("sql_temporal_join", temporal_params("left", sql::expr_to_json(*cond)));
  h.push(1, R({row(1, Value(1), "x"), row(1, Value(), "n")}));
  h.push(0, L({row(2, Value(1), "x"), row(3, Value(1), "y"), row(4, Value(), "n")}));
  EXPECT_EQ(h.watermark(10), (Lines{padded(2, "x"), joined(3, "y", 1, "x"), padded(4, "n", "null"), "WM 10"}));
}

TEST(SqlTemporalJoin, RejectsRightAndFullJoins) {
  EXPECT_THROW(JoinHarness("sql_temporal_join", temporal_params("right")), std::exception);
}

}  // namespace
}  // namespace clink::test
