// sql_over_aggregate run directly with an injected clock: processing-time frames (RANGE
// rows wait for their arrival millisecond to pass, ROWS and UNBOUNDED emit at once; the
// rows' own time values are never read), table.exec.state.ttl (state TTL for unbounded
// processing-time frames, Flink's cleanup timers for the others, which keep rows still
// waiting for the watermark), the event-time RANGE cleanup timer, and late rows counted
// (bounded frames: a row late in its channel judged at its watermark).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <set>

#include "../support/print_form.hpp"
#include "clink/runtime/lateness.hpp"
#include "sql_ops_test_support.hpp"

namespace clink::test {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

SchemaPtr in_schema(bool proctime) {
  return sql::make_schema({{"t", proctime ? LogicalType::timestamp_ltz(3) : LogicalType::timestamp(3)},
                           {"k", LogicalType::string()},
                           {"v", LogicalType::bigint()}});
}

json params(bool proctime, bool rows, std::optional<std::int64_t> preceding, std::int64_t ttl_ms = 0) {
  std::vector<sql::RowField> out = in_schema(proctime)->fields();
  out.push_back({"s", LogicalType::bigint()});
  return {{"input_schemas", json::array({schema_json(in_schema(proctime))})},
          {"schema", schema_json(sql::make_schema(out))},
          {"partition_keys", {1}},
          {"order_column", 0},
          {"proctime", proctime},
          {"rows", rows},
          {"preceding", preceding ? json(*preceding) : json()},
          {"state_ttl_ms", ttl_ms},
          {"aggregates", json::array({{{"function", "SUM"}, {"args", {2}}}})}};
}

// Processing-time rows: their time column holds a value far from the clock.
ColumnBatch proc_rows(std::initializer_list<std::pair<const char*, std::int64_t>> kv) {
  std::vector<Row> out;
  for (const auto& [k, v] : kv) out.push_back(Row{{Value(std::int64_t{999'000'000}), Value(k), Value(v)}, RowKind::kInsert});
  return batch(in_schema(true), out);
}
ColumnBatch event_rows(std::initializer_list<std::tuple<std::int64_t, const char*, std::int64_t>> rows) {
  std::vector<Row> out;
  for (const auto& [t, k, v] : rows) out.push_back(Row{{Value(t * 1000), Value(k), Value(v)}, RowKind::kInsert, t});
  return batch(in_schema(false), out);
}

std::string p(const char* k, std::int64_t v, std::int64_t s) {
  return "+I[" + print_instant_ms(999000) + ", " + std::string(k) + ", " + std::to_string(v) + ", " +
         std::to_string(s) + "]";
}
std::string e(std::int64_t t, const char* k, std::int64_t v, std::int64_t s) {
  return "+I[" + print_timestamp_ms(t) + ", " + k + ", " + std::to_string(v) + ", " + std::to_string(s) + "]";
}

TEST(SqlOverAggregate, ProcTimeRangeEmitsOnceTheArrivalMillisecondPassed) {
  ManualClock clock;
  OpHarness h("sql_over_aggregate", params(true, false, 100), 1, clock);
  clock.now = 1000;
  h.push(proc_rows({{"x", 1}, {"y", 2}, {"x", 4}}));
  h.processing_time(1000);
  EXPECT_THAT(h.lines, IsEmpty());
  h.processing_time(1001);  // peers: both x rows with the same sum
  EXPECT_THAT(h.lines, ElementsAre(p("x", 1, 5), p("x", 4, 5), p("y", 2, 2)));
  h.lines.clear();
  clock.now = 1050;
  h.push(proc_rows({{"x", 8}}));
  h.processing_time(1051);  // [950, 1050] still holds the rows of 1000
  clock.now = 1200;
  h.push(proc_rows({{"x", 16}}));
  h.processing_time(1201);  // [1100, 1200]: the rows of 1000 and 1050 are retracted
  EXPECT_THAT(h.lines, ElementsAre(p("x", 8, 13), p("x", 16, 16)));
  h.lines.clear();
  clock.now = 5000;
  h.push(proc_rows({{"x", 32}}));
  h.finish();  // the end of the input fires no processing-time timer (as Flink)
  EXPECT_THAT(h.lines, ElementsAre("WM " + std::to_string(kMaxEventTime)));
}

TEST(SqlOverAggregate, ProcTimeRowsAndUnboundedEmitEachRowAtOnce) {
  ManualClock clock;
  OpHarness rows("sql_over_aggregate", params(true, true, 1), 1, clock);
  OpHarness unbounded("sql_over_aggregate", params(true, false, std::nullopt), 1, clock);
  for (auto* h : {&rows, &unbounded}) {
    clock.now = 10;
    h->push(proc_rows({{"x", 1}, {"x", 2}, {"y", 4}}));
    clock.now = 20;
    h->push(proc_rows({{"x", 8}, {"y", 16}}));
  }
  EXPECT_THAT(rows.lines, ElementsAre(p("x", 1, 1), p("x", 2, 3), p("y", 4, 4), p("x", 8, 10), p("y", 16, 20)));
  EXPECT_THAT(unbounded.lines, ElementsAre(p("x", 1, 1), p("x", 2, 3), p("y", 4, 4), p("x", 8, 11), p("y", 16, 20)));
}

TEST(SqlOverAggregate, ProcTimeUnboundedAccumulatorsExpireByStateTtl) {
  ManualClock clock;
  OpHarness h("sql_over_aggregate", params(true, false, std::nullopt, 1000), 1, clock);
  h.push(proc_rows({{"x", 1}}));
  clock.now = 500;
  h.push(proc_rows({{"x", 2}}));
  clock.now = 1499;
  h.push(proc_rows({{"y", 4}}));
  clock.now = 1500;  // x last written at 500
  h.push(proc_rows({{"x", 8}}));
  EXPECT_THAT(h.lines, ElementsAre(p("x", 1, 1), p("x", 2, 3), p("y", 4, 4), p("x", 8, 8)));
}

TEST(SqlOverAggregate, ProcTimeRowsStateIsDroppedByTheCleanupTimer) {
  ManualClock clock;
  OpHarness h("sql_over_aggregate", params(true, true, 2, 1000), 1, clock);
  h.push(proc_rows({{"x", 1}}));  // cleanup timer at 0 + 1.5 s
  clock.now = 400;
  h.push(proc_rows({{"x", 2}}));  // 400 + 1 s does not pass 1500: the timer stays
  h.processing_time(1499);
  clock.now = 1499;
  h.push(proc_rows({{"x", 4}}));  // moves the timer to 1499 + 1.5 s
  h.processing_time(2998);
  clock.now = 2998;
  h.push(proc_rows({{"x", 8}}));
  h.processing_time(4498);  // fires: x's frame is dropped
  clock.now = 4498;
  h.push(proc_rows({{"x", 16}}));
  EXPECT_THAT(h.lines, ElementsAre(p("x", 1, 1), p("x", 2, 3), p("x", 4, 7), p("x", 8, 14), p("x", 16, 16)));
  EXPECT_EQ(h.context().timer_service().processing_time_timer_count(), 1u);
}

TEST(SqlOverAggregate, EventTimeCleanupTimerKeepsRowsWaitingForTheWatermark) {
  ManualClock clock;
  OpHarness h("sql_over_aggregate", params(false, true, 1, 1000), 1, clock);
  h.push(event_rows({{1000, "x", 1}}));
  h.watermark(1000);
  h.push(event_rows({{2000, "x", 2}}));  // waits for the watermark
  h.processing_time(1500);               // x still has a row to fire: kept, timer moved
  h.watermark(2000);
  h.processing_time(3000);  // nothing waits: x is dropped (its frame and last fired time)
  h.push(event_rows({{1500, "x", 4}}));  // not late any more: x starts over
  h.watermark(2500);
  EXPECT_THAT(h.lines, ElementsAre(e(1000, "x", 1, 1), "WM 1000", e(2000, "x", 2, 3), "WM 2000", e(1500, "x", 4, 4),
                                   "WM 2500"));
}

TEST(SqlOverAggregate, EventTimeRangeCleanupTimerDropsAnIdleKey) {
  OpHarness h("sql_over_aggregate", params(false, false, 1000));
  h.push(event_rows({{1000, "x", 1}, {1200, "x", 2}}));
  h.watermark(1200);
  h.push(event_rows({{1100, "x", 4}}));  // late: 1200 fired already
  h.watermark(2701);                     // passes the cleanup timer at 1000 + 1.5 s + 1
  h.push(event_rows({{1100, "x", 8}}));  // accepted again after the cleanup, as in Flink
  h.watermark(3000);
  EXPECT_THAT(h.lines, ElementsAre(e(1000, "x", 1, 1), e(1200, "x", 2, 3), "WM 1200", "WM 2701", e(1100, "x", 8, 8),
                                   "WM 3000"));
  EXPECT_EQ(h.context().metrics().late_records_dropped.load(), 1);
}

// A bounded-frame row behind its channel's watermark W (1600) while the operator's (the
// minimum over the channels) is at 1000 is judged when the operator's watermark reaches
// W, as if it had come then: x's row at 1500 is late (x fired 1550, a row of another
// channel, by then); y's at 1200 is not (y fired nothing), and fires at once. The rows
// waiting to be judged, their timers and the keys' headers come back from a snapshot.
TEST(SqlOverAggregate, EventTimeBoundedRowsLateInTheirChannelAreJudgedAtItsWatermark) {
  std::vector<KeyedStateHandle> handles;
  std::set<Timer> timers;
  auto dir = std::filesystem::temp_directory_path() / ("clink-over-test-" + std::to_string(::getpid()));
  {
    OpHarness h("sql_over_aggregate", params(false, true, 1));
    h.push(event_rows({{1000, "x", 1}}));
    h.watermark(1000);
    {
      ChannelWatermarkScope channel(h.context(), 1600);
      h.push(event_rows({{1500, "x", 2}, {1200, "y", 16}}));
    }
    {
      ChannelWatermarkScope channel(h.context(), 1000);
      h.push(event_rows({{1550, "x", 4}, {1700, "x", 8}}));
    }
    EXPECT_THAT(h.lines, ElementsAre(e(1000, "x", 1, 1), "WM 1000"));
    h.snapshot_state(1);
    handles.push_back(h.context().keyed_state_backend()->snapshot(1, dir));
    timers = h.context().timer_service().event_time_timers();
  }
  OpHarness h("sql_over_aggregate", params(false, true, 1), 1, SystemClock::instance(), {}, handles);
  for (const auto& t : timers) h.context().timer_service().register_event_time_timer(t.time, t.key, t.ns);
  h.watermark(2000);
  EXPECT_THAT(h.lines, ElementsAre(e(1550, "x", 4, 5), e(1200, "y", 16, 16), e(1700, "x", 8, 12), "WM 2000"));
  EXPECT_EQ(h.context().metrics().late_records_dropped.load(), 1);
  std::filesystem::remove_all(dir);
}

// Unbounded event-time frames with a state TTL: the cleanup timer keeps a key whose row
// waits for the watermark, and drops it once nothing waits.
TEST(SqlOverAggregate, EventTimeUnboundedCleanupTimerKeepsRowsWaitingForTheWatermark) {
  ManualClock clock;
  OpHarness h("sql_over_aggregate", params(false, true, std::nullopt, 1000), 1, clock);
  h.push(event_rows({{1000, "x", 1}}));
  h.processing_time(1500);  // x's row still waits: kept
  h.watermark(1000);
  h.processing_time(3000);  // nothing waits: x is dropped (its accumulators)
  h.push(event_rows({{2000, "x", 2}}));
  h.watermark(2000);
  EXPECT_THAT(h.lines, ElementsAre(e(1000, "x", 1, 1), "WM 1000", e(2000, "x", 2, 2), "WM 2000"));
}

TEST(SqlOverAggregate, RejectsUpdatesAndNullTimes) {
  OpHarness h("sql_over_aggregate", params(false, true, 1));
  ColumnBatch upd = batch(in_schema(false), {Row{{Value(std::int64_t{1000}), Value("x"), Value(std::int64_t{1})}, RowKind::kUpdateBefore}});
  EXPECT_THROW(
      {
        try {
          h.push(std::move(upd));
        } catch (const std::exception& ex) {
          EXPECT_STREQ(ex.what(), "op 'op' (sql_over_aggregate): an OVER aggregate takes insert-only input, got a -U row (row 0 of a batch)");
          throw;
        }
      },
      std::exception);
  ColumnBatch null_time = batch(in_schema(false), {Row{{Value(), Value("x"), Value(std::int64_t{1})}, RowKind::kInsert}});
  EXPECT_THROW(
      {
        try {
          h.push(std::move(null_time));
        } catch (const std::exception& ex) {
          EXPECT_STREQ(ex.what(), "op 'op' (sql_over_aggregate): the time attribute 't' is NULL");
          throw;
        }
      },
      std::exception);
}

}  // namespace
}  // namespace clink::test
