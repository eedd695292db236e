// The ranking operators run directly (OpHarness): state TTL (table.exec.state.ttl) expiring a
// Top-N partition and a deduplicated key, late rows of row-time keep-first deduplication and
// of a window Top-N, and the exact changelogs around them.
#include <gtest/gtest.h>

#include "sql_ops_test_support.hpp"
#include "../support/print_form.hpp"

namespace clink::test {
namespace {

SchemaPtr kv() {
  return sql::make_schema({{"t", LogicalType::timestamp(3)}, {"k", LogicalType::string()}, {"v", LogicalType::bigint()}});
}
SchemaPtr kv_rank() {
  return sql::make_schema({{"t", LogicalType::timestamp(3)}, {"k", LogicalType::string()}, {"v", LogicalType::bigint()},
                           {"rn", LogicalType::bigint().not_null()}});
}
Row r(std::int64_t t_ms, const char* k, std::int64_t v, RowKind kind = RowKind::kInsert) {
  return Row{{Value(t_ms * 1000), Value(k), Value(v)}, kind, t_ms};
}
std::string ts(int ms) { return print_timestamp_ms(ms); }

json rank_params(const std::string& strategy, std::int64_t ttl) {
  return {{"input_schemas", json::array({schema_json(kv())})},
          {"schema", schema_json(kv_rank())},
          {"keys", {1}},
          {"order", json::array({{{"column", 2}, {"descending", true}}})},
          {"rank_end", 1},
          {"output_rank_number", true},
          {"strategy", strategy},
          {"state_ttl_ms", ttl}};
}

// A partition untouched for the TTL starts over: the new row is inserted, not an update.
TEST(SqlRankOps, AppendTopNStateExpiresAfterTheTtl) {
  ManualClock clock{1000};
  OpHarness h("sql_rank", rank_params("append", 100), 1, clock);
  h.push(batch(kv(), {r(1, "a", 5)}));
  clock.now += 50;
  h.push(batch(kv(), {r(2, "a", 3)}));  // does not rank, and does not refresh the TTL
  clock.now += 60;
  h.push(batch(kv(), {r(3, "a", 1)}));
  EXPECT_EQ(h.lines, (std::vector<std::string>{"+I[" + ts(1) + ", a, 5, 1]", "+I[" + ts(3) + ", a, 1, 1]"}));
}

TEST(SqlRankOps, RetractTopNFollowsRetractionsAndExpires) {
  ManualClock clock{1000};
  OpHarness h("sql_rank", rank_params("retract", 100), 1, clock);
  h.push(batch(kv(), {r(1, "a", 5), r(2, "a", 7), r(1, "a", 5, RowKind::kUpdateBefore)}));
  clock.now += 200;  // a 7 expired: a 2 ranks first (without the TTL it would not rank)
  h.push(batch(kv(), {r(3, "a", 2)}));
  // A top-1 runs without its (constant) rank number, as Flink: a new top row is -D / +I.
  EXPECT_EQ(h.lines, (std::vector<std::string>{"+I[" + ts(1) + ", a, 5, 1]", "-D[" + ts(1) + ", a, 5, 1]",
                                               "+I[" + ts(2) + ", a, 7, 1]", "+I[" + ts(3) + ", a, 2, 1]"}));
}

json dedup_params(bool keep_last, bool rowtime, std::int64_t ttl) {
  return {{"input_schemas", json::array({schema_json(kv())})},
          {"schema", schema_json(kv())},
          {"keys", {1}},
          {"time_column", 0},
          {"keep_last", keep_last},
          {"rowtime", rowtime},
          {"state_ttl_ms", ttl}};
}

// Processing-time keep-first: once the key's marker expired, the next row is a first row again.
TEST(SqlRankOps, KeepFirstMarkerExpires) {
  ManualClock clock{1000};
  OpHarness h("sql_deduplicate", dedup_params(false, false, 100), 1, clock);
  h.push(batch(kv(), {r(1, "a", 1), r(2, "a", 2), r(3, "b", 3)}));
  clock.now += 150;
  h.push(batch(kv(), {r(4, "a", 4)}));
  EXPECT_EQ(h.lines, (std::vector<std::string>{"+I[" + ts(1) + ", a, 1]", "+I[" + ts(3) + ", b, 3]", "+I[" + ts(4) + ", a, 4]"}));
}

// Processing-time keep-last: an equal row changes nothing without TTL.
TEST(SqlRankOps, KeepLastSkipsAnEqualRowWithoutTtl) {
  OpHarness h("sql_deduplicate", dedup_params(true, false, 0));
  h.push(batch(kv(), {r(1, "a", 1), r(1, "a", 1), r(2, "a", 2)}));
  EXPECT_EQ(h.lines, (std::vector<std::string>{"+I[" + ts(1) + ", a, 1]", "-U[" + ts(1) + ", a, 1]", "+U[" + ts(2) + ", a, 2]"}));
}

// Row-time keep-first: the earliest row waits for the watermark; a row below the watermark is
// late and dropped; once emitted, a key ignores later rows.
TEST(SqlRankOps, RowTimeKeepFirstEmitsOnTheWatermark) {
  OpHarness h("sql_deduplicate", dedup_params(false, true, 0));
  h.push(batch(kv(), {r(10, "a", 1), r(8, "a", 2), r(9, "a", 3), r(20, "b", 4)}));
  h.watermark(9);
  h.push(batch(kv(), {r(5, "b", 5), r(7, "a", 6), r(15, "b", 7)}));
  h.watermark(30);
  h.push(batch(kv(), {r(40, "a", 8)}));
  h.finish();
  EXPECT_EQ(h.lines, (std::vector<std::string>{"+I[" + ts(8) + ", a, 2]", "WM 9", "+I[" + ts(15) + ", b, 7]", "WM 30",
                                               "WM 9223372036854775807"}));
  EXPECT_EQ(h.context().metrics().late_records_dropped.load(), 2);
}

// A window Top-N row whose window already fired is late: dropped and counted.
TEST(SqlRankOps, WindowTopNDropsLateRows) {
  std::vector<sql::RowField> windowed = kv()->fields();
  for (const char* n : {"window_start", "window_end", "window_time"}) windowed.push_back({n, LogicalType::timestamp(3).not_null()});
  SchemaPtr ws = sql::make_schema(windowed);
  std::vector<sql::RowField> out = windowed;
  out.push_back({"rn", LogicalType::bigint().not_null()});
  OpHarness h("sql_window_rank", {{"input_schemas", json::array({schema_json(ws)})},
                                  {"schema", schema_json(sql::make_schema(out))},
                                  {"keys", {3, 4}},
                                  {"order", json::array({{{"column", 2}, {"descending", true}}})},
                                  {"rank_end", 2},
                                  {"output_rank_number", true},
                                  {"window_end", 4}});
  auto row = [](int t, const char* k, std::int64_t v) {
    const std::int64_t start = t - t % 10;
    return Row{{Value(std::int64_t{t} * 1000), Value(k), Value(v), Value(start * 1000), Value((start + 10) * 1000),
                Value((start + 9) * 1000)},
               RowKind::kInsert, t};
  };
  h.push(batch(ws, {row(1, "a", 1), row(2, "b", 3), row(3, "c", 2), row(12, "d", 9)}));
  h.watermark(9);
  h.push(batch(ws, {row(4, "e", 7), row(13, "f", 1)}));
  h.finish();
  auto w = [](int start) { return ", " + ts(start) + ", " + ts(start + 10) + ", " + ts(start + 9); };
  EXPECT_EQ(h.lines, (std::vector<std::string>{"+I[" + ts(2) + ", b, 3" + w(0) + ", 1]", "+I[" + ts(3) + ", c, 2" + w(0) + ", 2]",
                                               "WM 9", "+I[" + ts(12) + ", d, 9" + w(10) + ", 1]",
                                               "+I[" + ts(13) + ", f, 1" + w(10) + ", 2]", "WM 9223372036854775807"}));
  EXPECT_EQ(h.context().metrics().late_records_dropped.load(), 1);
}

}  // namespace
}  // namespace clink::test
