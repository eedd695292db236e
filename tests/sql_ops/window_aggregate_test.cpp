// sql_window_aggregate and sql_window_assign on Flink's window TVF documentation
// examples (the Bid table: TUMBLE, HOP, CUMULATE, window offsets, GROUPING SETS),
// sessions, lateness and dead letters; run directly and as jobs from a spec.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clink/core/error.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "sql_ops_test_support.hpp"

namespace clink::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

SchemaPtr bid_schema() {
  return sql::make_schema({{"bidtime", LogicalType::timestamp(3)},
                           {"price", LogicalType::decimal(10, 2)},
                           {"item", LogicalType::string()},
                           {"supplier_id", LogicalType::string()}});
}

// Flink's Bid table (docs: Queries > Window TVF / Window Aggregation).
ColumnBatch bids() {
  auto row = [](const char* t, int cents, const char* item, const char* sup) {
    return Row{{Value(ts(std::string("2020-04-15 ") + t)), Value::decimal(cents), Value(item), Value(sup)}};
  };
  return batch(bid_schema(), {row("08:05", 400, "C", "supplier1"), row("08:07", 200, "A", "supplier1"),
                              row("08:09", 500, "D", "supplier2"), row("08:11", 300, "B", "supplier2"),
                              row("08:13", 100, "E", "supplier1"), row("08:17", 600, "F", "supplier2")});
}

std::vector<sql::RowField> window_fields() {
  return {{"window_start", LogicalType::timestamp(3).not_null()},
          {"window_end", LogicalType::timestamp(3).not_null()},
          {"window_time", LogicalType::timestamp(3).not_null()}};
}

// SELECT [keys,] window_start, window_end, window_time, SUM(price) FROM TABLE(<window>) GROUP BY ...
json sum_price_params(json window, json keys = json::array(), json sets = nullptr) {
  std::vector<sql::RowField> out;
  for (const auto& k : keys) {
    auto f = bid_schema()->field(k.get<std::size_t>());
    if (!sets.is_null()) f.type = f.type.with_nullable(true);
    out.push_back(f);
  }
  for (auto& f : window_fields()) out.push_back(f);
  out.push_back({"total_price", LogicalType::decimal(38, 2)});
  json p = {{"input_schemas", json::array({schema_json(bid_schema())})},
            {"schema", schema_json(sql::make_schema(out))},
            {"window", window},
            {"keys", keys},
            {"aggregates", json::array({{{"function", "SUM"}, {"args", {1}}}})}};
  if (!sets.is_null()) p["grouping_sets"] = sets;
  return p;
}

std::vector<std::string> run(const json& params, const std::vector<ColumnBatch>& input) {
  OpHarness h("sql_window_aggregate", params);
  for (const auto& b : input) h.push(b);
  h.finish();
  std::vector<std::string> rows;
  for (auto& l : h.lines)
    if (l.rfind("WM", 0) != 0) rows.push_back(l);
  return rows;
}

constexpr std::int64_t kMinute = 60000;

TEST(SqlWindowAggregate, TumbleFlinkDocs) {
  auto p = sum_price_params({{"kind", "tumble"}, {"time_column", 0}, {"size_ms", 10 * kMinute}});
  EXPECT_THAT(run(p, {bids()}),
              ElementsAre("+I[2020-04-15T08:00, 2020-04-15T08:10, 2020-04-15T08:09:59.999, 11.00]",
                          "+I[2020-04-15T08:10, 2020-04-15T08:20, 2020-04-15T08:19:59.999, 10.00]"));
}

TEST(SqlWindowAggregate, HopFlinkDocs) {
  auto p = sum_price_params({{"kind", "hop"}, {"time_column", 0}, {"size_ms", 10 * kMinute}, {"slide_ms", 5 * kMinute}});
  EXPECT_THAT(run(p, {bids()}),
              ElementsAre("+I[2020-04-15T08:00, 2020-04-15T08:10, 2020-04-15T08:09:59.999, 11.00]",
                          "+I[2020-04-15T08:05, 2020-04-15T08:15, 2020-04-15T08:14:59.999, 15.00]",
                          "+I[2020-04-15T08:10, 2020-04-15T08:20, 2020-04-15T08:19:59.999, 10.00]",
                          "+I[2020-04-15T08:15, 2020-04-15T08:25, 2020-04-15T08:24:59.999, 6.00]"));
}

TEST(SqlWindowAggregate, CumulateFlinkDocs) {
  auto p = sum_price_params({{"kind", "cumulate"}, {"time_column", 0}, {"size_ms", 10 * kMinute}, {"step_ms", 2 * kMinute}});
  EXPECT_THAT(run(p, {bids()}),
              ElementsAre("+I[2020-04-15T08:00, 2020-04-15T08:06, 2020-04-15T08:05:59.999, 4.00]",
                          "+I[2020-04-15T08:00, 2020-04-15T08:08, 2020-04-15T08:07:59.999, 6.00]",
                          "+I[2020-04-15T08:00, 2020-04-15T08:10, 2020-04-15T08:09:59.999, 11.00]",
                          "+I[2020-04-15T08:10, 2020-04-15T08:12, 2020-04-15T08:11:59.999, 3.00]",
                          "+I[2020-04-15T08:10, 2020-04-15T08:14, 2020-04-15T08:13:59.999, 4.00]",
                          "+I[2020-04-15T08:10, 2020-04-15T08:16, 2020-04-15T08:15:59.999, 4.00]",
                          "+I[2020-04-15T08:10, 2020-04-15T08:18, 2020-04-15T08:17:59.999, 10.00]",
                          "+I[2020-04-15T08:10, 2020-04-15T08:20, 2020-04-15T08:19:59.999, 10.00]"));
}

TEST(SqlWindowAggregate, TumbleWithOffsetFlinkDocs) {
  auto p = sum_price_params({{"kind", "tumble"}, {"time_column", 0}, {"size_ms", 10 * kMinute}, {"offset_ms", kMinute}});
  EXPECT_THAT(run(p, {bids()}),
              ElementsAre("+I[2020-04-15T08:01, 2020-04-15T08:11, 2020-04-15T08:10:59.999, 11.00]",
                          "+I[2020-04-15T08:11, 2020-04-15T08:21, 2020-04-15T08:20:59.999, 10.00]"));
}

// GROUP BY window_start, window_end, GROUPING SETS ((supplier_id), ()): Flink's docs list
// the same six rows; within a window clink emits groups in key order (the supplier set
// first, the grand total last).
TEST(SqlWindowAggregate, GroupingSetsFlinkDocs) {
  auto p = sum_price_params({{"kind", "tumble"}, {"time_column", 0}, {"size_ms", 10 * kMinute}}, json::array({3}),
                            json::array({json::array({0}), json::array()}));
  EXPECT_THAT(run(p, {bids()}),
              ElementsAre("+I[supplier1, 2020-04-15T08:00, 2020-04-15T08:10, 2020-04-15T08:09:59.999, 6.00]",
                          "+I[supplier2, 2020-04-15T08:00, 2020-04-15T08:10, 2020-04-15T08:09:59.999, 5.00]",
                          "+I[null, 2020-04-15T08:00, 2020-04-15T08:10, 2020-04-15T08:09:59.999, 11.00]",
                          "+I[supplier1, 2020-04-15T08:10, 2020-04-15T08:20, 2020-04-15T08:19:59.999, 1.00]",
                          "+I[supplier2, 2020-04-15T08:10, 2020-04-15T08:20, 2020-04-15T08:19:59.999, 9.00]",
                          "+I[null, 2020-04-15T08:10, 2020-04-15T08:20, 2020-04-15T08:19:59.999, 10.00]"));
}

TEST(SqlWindowAggregate, KeyedTumbleFiresOnWatermarksWithWindowTimeAsEventTime) {
  auto p = sum_price_params({{"kind", "tumble"}, {"time_column", 0}, {"size_ms", 10 * kMinute}}, json::array({3}));
  OpHarness h("sql_window_aggregate", p);
  h.push(bids());
  h.watermark(ms_of("2020-04-15 08:09:59.998"));
  h.watermark(ms_of("2020-04-15 08:09:59.999"));
  h.finish();
  EXPECT_THAT(h.lines,
              ElementsAre("WM " + std::to_string(ms_of("2020-04-15 08:09:59.998")),
                          "+I[supplier1, 2020-04-15T08:00, 2020-04-15T08:10, 2020-04-15T08:09:59.999, 6.00]",
                          "+I[supplier2, 2020-04-15T08:00, 2020-04-15T08:10, 2020-04-15T08:09:59.999, 5.00]",
                          "WM " + std::to_string(ms_of("2020-04-15T08:09:59.999")),
                          "+I[supplier1, 2020-04-15T08:10, 2020-04-15T08:20, 2020-04-15T08:19:59.999, 1.00]",
                          "+I[supplier2, 2020-04-15T08:10, 2020-04-15T08:20, 2020-04-15T08:19:59.999, 9.00]",
                          "WM " + std::to_string(kMaxEventTime)));
  EXPECT_EQ(h.times[0], ms_of("2020-04-15 08:09:59.999"));
  EXPECT_EQ(h.times[3], ms_of("2020-04-15 08:19:59.999"));
}

// COUNT(*), COUNT(x), AVG, MIN, MAX, COUNT DISTINCT and FILTER in one window.
TEST(SqlWindowAggregate, AggregateFunctions) {
  SchemaPtr in = sql::make_schema({{"t", LogicalType::timestamp(3)},
                                   {"k", LogicalType::bigint()},
                                   {"v", LogicalType::int_type()},
                                   {"s", LogicalType::string()},
                                   {"f", LogicalType::boolean()}});
  std::vector<sql::RowField> out = {{"k", LogicalType::bigint()}};
  for (auto& f : window_fields()) out.push_back(f);
  out.push_back({"c", LogicalType::bigint().not_null()});
  out.push_back({"cv", LogicalType::bigint().not_null()});
  out.push_back({"a", LogicalType::int_type()});
  out.push_back({"mn", LogicalType::string()});
  out.push_back({"mx", LogicalType::int_type()});
  out.push_back({"cd", LogicalType::bigint().not_null()});
  out.push_back({"sf", LogicalType::int_type()});
  json p = {{"input_schemas", json::array({schema_json(in)})},
            {"schema", schema_json(sql::make_schema(out))},
            {"window", {{"kind", "tumble"}, {"time_column", 0}, {"size_ms", 10}}},
            {"keys", {1}},
            {"aggregates",
             json::array({{{"function", "COUNT"}},
                          {{"function", "COUNT"}, {"args", {2}}},
                          {{"function", "AVG"}, {"args", {2}}},
                          {{"function", "MIN"}, {"args", {3}}},
                          {{"function", "MAX"}, {"args", {2}}},
                          {{"function", "COUNT"}, {"args", {3}}, {"distinct", true}},
                          {{"function", "SUM"}, {"args", {2}}, {"filter", 4}}})}};
  auto r = [](std::int64_t t, std::int64_t k, Value v, Value s, Value f) {
    return Row{{Value(t * 1000), Value(k), v, s, f}};
  };
  auto b = batch(in, {r(1, 1, 10, "b", true), r(2, 1, Value(), "a", false), r(3, 1, 5, "b", Value()),
                      r(4, 2, 7, Value(), true), r(12, 1, 1, "z", false)});
  EXPECT_THAT(run(p, {b}),
              ElementsAre("+I[1, 1970-01-01T00:00, 1970-01-01T00:00:00.010, 1970-01-01T00:00:00.009, 3, 2, 7, a, 10, 2, 10]",
                          "+I[2, 1970-01-01T00:00, 1970-01-01T00:00:00.010, 1970-01-01T00:00:00.009, 1, 1, 7, null, 7, 0, 7]",
                          "+I[1, 1970-01-01T00:00:00.010, 1970-01-01T00:00:00.020, 1970-01-01T00:00:00.019, 1, 1, 1, z, 1, 1, null]"));
}

SchemaPtr kv_schema() {
  return sql::make_schema({{"t", LogicalType::timestamp(3)}, {"k", LogicalType::string()}, {"v", LogicalType::bigint()}});
}
Row kv(std::int64_t t_ms, const char* k, std::int64_t v) { return Row{{Value(t_ms * 1000), Value(k), Value(v)}}; }

json kv_sum_params(json window, std::int64_t lateness = 0, bool dlq = false) {
  std::vector<sql::RowField> out = {{"k", LogicalType::string()}};
  for (auto& f : window_fields()) out.push_back(f);
  out.push_back({"s", LogicalType::bigint()});
  return {{"input_schemas", json::array({schema_json(kv_schema())})},
          {"schema", schema_json(sql::make_schema(out))},
          {"window", window},
          {"keys", {1}},
          {"aggregates", json::array({{{"function", "SUM"}, {"args", {2}}}})},
          {"allowed_lateness_ms", lateness},
          {"late_records_to_dlq", dlq}};
}

// SEMANTICS.md: sessions of gap 3 s over records at 1, 2, 10, 7, 20 s give [1,5) [7,13) [20,23).
TEST(SqlWindowAggregate, Sessions) {
  auto p = kv_sum_params({{"kind", "session"}, {"time_column", 0}, {"gap_ms", 3000}});
  auto b = batch(kv_schema(), {kv(1000, "a", 1), kv(2000, "a", 2), kv(10000, "a", 10), kv(7000, "a", 7), kv(20000, "a", 20)});
  EXPECT_THAT(run(p, {b}),
              ElementsAre("+I[a, 1970-01-01T00:00:01, 1970-01-01T00:00:05, 1970-01-01T00:00:04.999, 3]",
                          "+I[a, 1970-01-01T00:00:07, 1970-01-01T00:00:13, 1970-01-01T00:00:12.999, 17]",
                          "+I[a, 1970-01-01T00:00:20, 1970-01-01T00:00:23, 1970-01-01T00:00:22.999, 20]"));
}

// allowed_lateness_ms (the seed's rule): the window fires once, when the watermark passes
// end - 1 + L, with the rows late within the band; a row after that is a dead letter.
TEST(SqlWindowAggregate, AllowedLatenessFiresOnceAfterTheBandAndLateRowsGoToTheDeadLetters) {
  auto p = kv_sum_params({{"kind", "tumble"}, {"time_column", 0}, {"size_ms", 10}}, 5, true);
  OpHarness h("sql_window_aggregate", p);
  h.push(batch(kv_schema(), {kv(1, "a", 1), kv(3, "a", 2)}));
  h.watermark(9);  // the window's end - 1: no firing yet (L = 5)
  h.push(batch(kv_schema(), {kv(4, "a", 4)}));  // late, within the band: folded in
  h.watermark(14);  // end - 1 + L: fires once
  h.push(batch(kv_schema(), {kv(5, "a", 8), kv(15, "a", 16)}));  // 5 is too late now
  h.finish();
  EXPECT_THAT(h.lines,
              ElementsAre("WM 9", "+I[a, 1970-01-01T00:00, 1970-01-01T00:00:00.010, 1970-01-01T00:00:00.009, 7]",
                          "WM 14",
                          "DL(dead-letter) +I[late record, op, event time 5 ms, watermark 14 ms, "
                          "+I[1970-01-01T00:00:00.005, a, 8]]",
                          "+I[a, 1970-01-01T00:00:00.010, 1970-01-01T00:00:00.020, 1970-01-01T00:00:00.019, 16]",
                          "WM " + std::to_string(kMaxEventTime)));
  EXPECT_EQ(h.context().metrics().dead_letters.load(), 1);
}

TEST(SqlWindowAggregate, LateRowsWithoutDeadLettersAreCountedAsDropped) {
  auto p = kv_sum_params({{"kind", "tumble"}, {"time_column", 0}, {"size_ms", 10}});
  OpHarness h("sql_window_aggregate", p);
  h.push(batch(kv_schema(), {kv(1, "a", 1)}));
  h.watermark(20);
  h.push(batch(kv_schema(), {kv(2, "a", 2)}));
  h.finish();
  EXPECT_THAT(h.lines, ElementsAre("+I[a, 1970-01-01T00:00, 1970-01-01T00:00:00.010, 1970-01-01T00:00:00.009, 1]",
                                   "WM 20", "WM " + std::to_string(kMaxEventTime)));
  EXPECT_EQ(h.context().metrics().late_records_dropped.load(), 1);
}

TEST(SqlWindowAggregate, ParamErrorsNameTheOpAndTheParam) {
  auto p = kv_sum_params({{"kind", "tumble"}, {"time_column", 1}, {"size_ms", 10}});
  try {
    OpHarness h("sql_window_aggregate", p);
    FAIL() << "expected an error";
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), HasSubstr("op 'op' (sql_window_aggregate): param 'window'.time_column: column 1 ('k') is STRING"));
  }
  p = kv_sum_params({{"kind", "tumble"}, {"time_column", 0}, {"size_ms", 10}});
  p["aggregates"][0]["function"] = "MEDIAN";
  try {
    OpHarness h("sql_window_aggregate", p);
    FAIL() << "expected an error";
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), HasSubstr("param 'aggregates'[0]: unknown aggregate function 'MEDIAN' (not registered in this process"));
  }
  p = kv_sum_params({{"kind", "tumble"}, {"time_column", 0}, {"size_ms", 10}});
  p["schema"][4]["type"] = "INT";
  try {
    OpHarness h("sql_window_aggregate", p);
    FAIL() << "expected an error";
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), HasSubstr("param 'schema': field 4 ('s') is INT, the operator produces BIGINT"));
  }
}

// Over a TIMESTAMP_LTZ time attribute Flink aligns windows in the session time zone:
// window_start / window_end are wall-clock times there, window_time the instant of
// end - 1 ms, and the (UTC) watermark fires the window at that instant.
TEST(SqlWindowAggregate, TimestampLtzWindowsAlignInTheSessionTimeZone) {
  SchemaPtr in = sql::make_schema({{"t", LogicalType::timestamp_ltz(3)}, {"v", LogicalType::bigint()}});
  json p = {{"input_schemas", json::array({schema_json(in)})},
            {"schema", schema_json(sql::make_schema({{"window_start", LogicalType::timestamp(3).not_null()},
                                                     {"window_end", LogicalType::timestamp(3).not_null()},
                                                     {"window_time", LogicalType::timestamp_ltz(3).not_null()},
                                                     {"s", LogicalType::bigint()}}))},
            {"window", {{"kind", "tumble"}, {"time_column", 0}, {"size_ms", 86'400'000}}},
            {"aggregates", json::array({{{"function", "SUM"}, {"args", {1}}}})},
            {"session", {{"table.local-time-zone", "+08:00"}}}};
  OpHarness h("sql_window_aggregate", p);
  // 2020-04-14 16:30 UTC is 2020-04-15 00:30 in UTC+8; 2020-04-15 15:00 UTC is 23:00 there.
  h.push(batch(in, {Row{{Value(ts("2020-04-14 16:30")), Value(1)}}, Row{{Value(ts("2020-04-15 15:00")), Value(2)}},
                    Row{{Value(ts("2020-04-15 16:00")), Value(4)}}}));
  h.watermark(ms_of("2020-04-15 15:59:59.998"));
  h.watermark(ms_of("2020-04-15 15:59:59.999"));
  EXPECT_THAT(h.lines, ElementsAre("WM " + std::to_string(ms_of("2020-04-15 15:59:59.998")),
                                   "+I[2020-04-15T00:00, 2020-04-16T00:00, 2020-04-15T15:59:59.999Z, 3]",
                                   "WM " + std::to_string(ms_of("2020-04-15 15:59:59.999"))));
  EXPECT_THAT(h.times, ElementsAre(ms_of("2020-04-15 15:59:59.999")));
}

// The window TVF without aggregation: each row once per window, three columns appended.
TEST(SqlWindowAssign, HopRowsPerWindow) {
  std::vector<sql::RowField> out = kv_schema()->fields();
  for (auto& f : window_fields()) out.push_back(f);
  json p = {{"input_schemas", json::array({schema_json(kv_schema())})},
            {"schema", schema_json(sql::make_schema(out))},
            {"window", {{"kind", "hop"}, {"time_column", 0}, {"size_ms", 10}, {"slide_ms", 5}}}};
  OpHarness h("sql_window_assign", p);
  auto b = batch(kv_schema(), {kv(3, "a", 1), kv(7, "b", 2)});
  b.event_times() = {3, 7};
  h.push(b);
  EXPECT_THAT(h.lines,
              ElementsAre("+I[1970-01-01T00:00:00.003, a, 1, 1970-01-01T00:00, 1970-01-01T00:00:00.010, 1970-01-01T00:00:00.009]",
                          "+I[1970-01-01T00:00:00.003, a, 1, 1969-12-31T23:59:59.995, 1970-01-01T00:00:00.005, 1970-01-01T00:00:00.004]",
                          "+I[1970-01-01T00:00:00.007, b, 2, 1970-01-01T00:00:00.005, 1970-01-01T00:00:00.015, 1970-01-01T00:00:00.014]",
                          "+I[1970-01-01T00:00:00.007, b, 2, 1970-01-01T00:00, 1970-01-01T00:00:00.010, 1970-01-01T00:00:00.009]"));
  EXPECT_THAT(h.times, ElementsAre(3, 3, 7, 7));
}

}  // namespace
}  // namespace clink::test
