// sql_group_aggregate: Flink's non-windowed GROUP BY changelog (docs: Concepts > Dynamic
// Tables, the clicks example), retracting input (MIN / MAX with retraction, -D when a
// group empties), GROUPING SETS and DISTINCT; sql_limit and sql_sort.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clink/core/error.hpp"
#include "sql_ops_test_support.hpp"

#include "../support/example_udafs.hpp"
#include "../support/temp_dir.hpp"

namespace clink::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

SchemaPtr clicks_schema() {
  return sql::make_schema({{"user", LogicalType::string()}, {"cTime", LogicalType::timestamp(3)}, {"url", LogicalType::string()}});
}
Row click(const char* user, const char* time, const char* url) {
  return Row{{Value(user), Value(ts(std::string("2020-01-01 ") + time)), Value(url)}};
}

json params(const SchemaPtr& in, std::vector<sql::RowField> out, json keys, json aggs, json sets = nullptr) {
  json p = {{"input_schemas", json::array({schema_json(in)})},
            {"schema", schema_json(sql::make_schema(std::move(out)))},
            {"keys", keys},
            {"aggregates", aggs}};
  if (!sets.is_null()) p["grouping_sets"] = sets;
  return p;
}

// SELECT user, COUNT(url) AS cnt FROM clicks GROUP BY user
TEST(SqlGroupAggregate, ClicksChangelogFlinkDocs) {
  auto p = params(clicks_schema(), {{"user", LogicalType::string()}, {"cnt", LogicalType::bigint().not_null()}}, {0},
                  json::array({{{"function", "COUNT"}, {"args", {2}}}}));
  OpHarness h("sql_group_aggregate", p);
  h.push(batch(clicks_schema(), {click("Mary", "12:00:00", "./home"), click("Bob", "12:00:00", "./cart"),
                                 click("Mary", "12:00:05", "./prod?id=1")}));
  h.push(batch(clicks_schema(), {click("Liz", "12:01:00", "./home"), click("Bob", "12:01:30", "./prod?id=3"),
                                 click("Mary", "12:01:45", "./prod?id=7")}));
  EXPECT_THAT(h.lines, ElementsAre("+I[Mary, 1]", "+I[Bob, 1]", "-U[Mary, 1]", "+U[Mary, 2]", "+I[Liz, 1]",
                                   "-U[Bob, 1]", "+U[Bob, 2]", "-U[Mary, 2]", "+U[Mary, 3]"));
  EXPECT_THAT(h.times, ::testing::Each(kNoEventTime));
}

SchemaPtr kv_schema() { return sql::make_schema({{"k", LogicalType::string()}, {"v", LogicalType::bigint()}}); }
Row kv(const char* k, Value v, RowKind kind = RowKind::kInsert) { return Row{{Value(k), v}, kind}; }

// Retractions: MIN / MAX fall back to the next value, SUM of no rows is NULL, an
// unchanged result emits nothing, the last row's retraction deletes the group, and a
// retraction of an unknown group is ignored (Flink's GroupAggFunction).
TEST(SqlGroupAggregate, RetractingInput) {
  auto p = params(kv_schema(),
                  {{"k", LogicalType::string()},
                   {"mn", LogicalType::bigint()},
                   {"mx", LogicalType::bigint()},
                   {"s", LogicalType::bigint()},
                   {"c", LogicalType::bigint().not_null()}},
                  {0},
                  json::array({{{"function", "MIN"}, {"args", {1}}},
                               {{"function", "MAX"}, {"args", {1}}},
                               {{"function", "SUM"}, {"args", {1}}},
                               {{"function", "COUNT"}}}));
  OpHarness h("sql_group_aggregate", p);
  h.push(batch(kv_schema(), {kv("a", 5), kv("a", 1), kv("a", 9)}));
  h.push(batch(kv_schema(), {kv("a", 1, RowKind::kUpdateBefore), kv("a", 9, RowKind::kDelete), kv("x", 3, RowKind::kDelete),
                             kv("a", Value()), kv("a", Value(), RowKind::kDelete)}));
  h.push(batch(kv_schema(), {kv("a", 5, RowKind::kDelete), kv("a", 4, RowKind::kUpdateAfter)}));
  EXPECT_THAT(h.lines,
              ElementsAre("+I[a, 5, 5, 5, 1]", "-U[a, 5, 5, 5, 1]", "+U[a, 1, 5, 6, 2]", "-U[a, 1, 5, 6, 2]",
                          "+U[a, 1, 9, 15, 3]",
                          // -U 1: min back to 5; -D 9: max back to 5
                          "-U[a, 1, 9, 15, 3]", "+U[a, 5, 9, 14, 2]", "-U[a, 5, 9, 14, 2]", "+U[a, 5, 5, 5, 1]",
                          // +I NULL: only COUNT(*) changes; -D NULL back
                          "-U[a, 5, 5, 5, 1]", "+U[a, 5, 5, 5, 2]", "-U[a, 5, 5, 5, 2]", "+U[a, 5, 5, 5, 1]",
                          // the last row goes: -D; then a new group
                          "-D[a, 5, 5, 5, 1]", "+I[a, 4, 4, 4, 1]"));
}

// GROUPING SETS ((k), ()) and COUNT DISTINCT; rows apply to every set in order.
TEST(SqlGroupAggregate, GroupingSetsAndCountDistinct) {
  auto p = params(kv_schema(), {{"k", LogicalType::string()}, {"d", LogicalType::bigint().not_null()}}, {0},
                  json::array({{{"function", "COUNT"}, {"args", {1}}, {"distinct", true}}}),
                  json::array({json::array({0}), json::array()}));
  OpHarness h("sql_group_aggregate", p);
  h.push(batch(kv_schema(), {kv("a", 1), kv("b", 1), kv("a", 1), kv("a", 2)}));
  EXPECT_THAT(h.lines, ElementsAre("+I[a, 1]", "+I[null, 1]", "+I[b, 1]", "-U[a, 1]", "+U[a, 2]", "-U[null, 1]",
                                   "+U[null, 2]"));
}

// COUNT(DISTINCT v), SUM(DISTINCT v) under retraction across batches: a value counts
// while its multiplicity is positive; an emptied group (-D) drops its distinct values, a
// group re-created in the same batch starts afresh, and a value retracted without being
// seen (b's 9) does not linger past its group's deletion.
TEST(SqlGroupAggregate, DistinctValuesUnderRetraction) {
  auto p = params(kv_schema(),
                  {{"k", LogicalType::string()}, {"c", LogicalType::bigint().not_null()}, {"s", LogicalType::bigint()}},
                  {0},
                  json::array({{{"function", "COUNT"}, {"args", {1}}, {"distinct", true}},
                               {{"function", "SUM"}, {"args", {1}}, {"distinct", true}}}));
  OpHarness h("sql_group_aggregate", p);
  h.push(batch(kv_schema(), {kv("a", 1), kv("a", 1), kv("a", 2)}));
  h.push(batch(kv_schema(), {kv("a", 1, RowKind::kDelete), kv("a", 1, RowKind::kDelete)}));
  h.push(batch(kv_schema(), {kv("a", 2, RowKind::kDelete), kv("a", 2), kv("a", Value())}));
  h.push(batch(kv_schema(), {kv("a", 2), kv("a", 5)}));
  h.push(batch(kv_schema(), {kv("b", 1), kv("b", 9, RowKind::kDelete)}));
  h.push(batch(kv_schema(), {kv("b", 9)}));
  EXPECT_THAT(h.lines, ElementsAre("+I[a, 1, 1]", "-U[a, 1, 1]", "+U[a, 2, 3]",  // the second 1 changes nothing
                                   "-U[a, 2, 3]", "+U[a, 1, 2]",                 // 1 gone after its second -D
                                   "-D[a, 1, 2]", "+I[a, 1, 2]",                 // NULL: no change
                                   "-U[a, 1, 2]", "+U[a, 2, 7]",                 // 2 seen again: only 5 counts
                                   "+I[b, 1, 1]", "-D[b, 1, 1]", "+I[b, 1, 9]"));
}

// COUNT(DISTINCT v) and COUNT(DISTINCT v) FILTER (WHERE big) (one slot) on insert-only
// input: a value counts once however often it comes (its stored count stops at 1, so a
// repeat is only read), per call as its filter passes; the seen values survive a snapshot
// and restore on both backends.
TEST(SqlGroupAggregate, InsertOnlyDistinctValuesSurviveRestore) {
  auto schema = sql::make_schema({{"k", LogicalType::string()}, {"v", LogicalType::bigint()}, {"big", LogicalType::boolean()}});
  auto p = params(schema,
                  {{"k", LogicalType::string()},
                   {"c", LogicalType::bigint().not_null()},
                   {"cbig", LogicalType::bigint().not_null()}},
                  {0},
                  json::array({{{"function", "COUNT"}, {"args", {1}}, {"distinct", true}},
                               {{"function", "COUNT"}, {"args", {1}}, {"distinct", true}, {"filter", 2}}}));
  p["input_retracts"] = false;
  auto row = [](std::int64_t v, bool big) { return Row{{Value("a"), Value(v), Value(big)}}; };
  for (const char* kind : {"memory", "rocksdb"}) {
    TempDir dir;
    StateBackendConfig backend;
    backend.kind = kind;
    KeyedStateHandle handle;
    {
      backend.working_dir = dir.path / "work-1";
      OpHarness h("sql_group_aggregate", p, 1, SystemClock::instance(), backend);
      h.push(batch(schema, {row(1, false), row(1, false), row(2, true)}));
      h.push(batch(schema, {row(1, true), row(1, false), row(2, true)}));
      handle = h.context().keyed_state_backend()->snapshot(1, dir.path / "chk-1");
      EXPECT_THAT(h.lines, ElementsAre("+I[a, 1, 0]", "-U[a, 1, 0]", "+U[a, 2, 1]", "-U[a, 2, 1]", "+U[a, 2, 2]"))
          << kind;
    }
    backend.working_dir = dir.path / "work-2";
    OpHarness r("sql_group_aggregate", p, 1, SystemClock::instance(), backend, {handle});
    r.push(batch(schema, {row(1, true), row(2, false), row(3, false), row(3, true), row(3, false)}));
    EXPECT_THAT(r.lines, ElementsAre("-U[a, 2, 2]", "+U[a, 3, 2]", "-U[a, 3, 2]", "+U[a, 3, 3]")) << kind;
  }
}

// MAX / MIN over strings on insert-only input keep the best value alone (bytewise order,
// NULLs skipped), through a snapshot and restore.
TEST(SqlGroupAggregate, InsertOnlyStringMaxMinSurviveRestore) {
  auto schema = sql::make_schema({{"k", LogicalType::string()}, {"s", LogicalType::string()}});
  auto p = params(schema,
                  {{"k", LogicalType::string()}, {"mx", LogicalType::string()}, {"mn", LogicalType::string()}}, {0},
                  json::array({{{"function", "MAX"}, {"args", {1}}}, {{"function", "MIN"}, {"args", {1}}}}));
  p["input_retracts"] = false;
  auto row = [](const char* k, Value v) { return Row{{Value(k), std::move(v)}}; };
  TempDir dir;
  KeyedStateHandle handle;
  {
    OpHarness h("sql_group_aggregate", p);
    h.push(batch(schema, {row("a", Value("b")), row("a", Value()), row("a", Value("ab")), row("a", Value("c")),
                          row("n", Value())}));
    handle = h.context().keyed_state_backend()->snapshot(1, dir.path / "chk-1");
    EXPECT_THAT(h.lines, ElementsAre("+I[a, b, b]", "-U[a, b, b]", "+U[a, b, ab]", "-U[a, b, ab]", "+U[a, c, ab]",
                                     "+I[n, null, null]"));
  }
  OpHarness r("sql_group_aggregate", p, 1, SystemClock::instance(), {}, {handle});
  r.push(batch(schema, {row("a", Value("bb")), row("a", Value("a")), row("n", Value("x"))}));
  EXPECT_THAT(r.lines, ElementsAre("-U[a, c, ab]", "+U[a, c, a]", "-U[n, null, null]", "+U[n, x, x]"));
}

// SELECT DISTINCT k: no aggregates.
TEST(SqlGroupAggregate, Distinct) {
  auto p = params(kv_schema(), {{"k", LogicalType::string()}}, {0}, json::array());
  OpHarness h("sql_group_aggregate", p);
  h.push(batch(kv_schema(), {kv("a", 1), kv("b", 1), kv("a", 2), kv("b", 1, RowKind::kDelete), kv("a", 1, RowKind::kDelete)}));
  EXPECT_THAT(h.lines, ElementsAre("+I[a]", "+I[b]", "-D[b]"));
}

// User aggregates (tests/support/example_udafs.hpp) under retraction: weighted_avg(v, w)
// retracts exactly (a row with a NULL argument is skipped both ways), tally() counts
// rows, tally() FILTER (WHERE big) only the flagged ones; a UDAF that cannot retract is
// refused when the input retracts.
TEST(SqlGroupAggregate, UserAggregatesRetract) {
  register_example_udafs();
  auto schema = sql::make_schema({{"k", LogicalType::string()},
                                  {"v", LogicalType::double_type()},
                                  {"w", LogicalType::double_type()},
                                  {"big", LogicalType::boolean()}});
  auto p = params(schema,
                  {{"k", LogicalType::string()},
                   {"wavg", LogicalType::double_type()},
                   {"n", LogicalType::bigint()},
                   {"nbig", LogicalType::bigint()}},
                  {0},
                  json::array({{{"function", "weighted_avg"}, {"args", {1, 2}}},
                               {{"function", "tally"}},
                               {{"function", "TALLY"}, {"filter", 3}}}));
  OpHarness h("sql_group_aggregate", p);
  auto row = [](Value v, Value w, bool big, RowKind kind = RowKind::kInsert) {
    return Row{{Value("a"), std::move(v), std::move(w), Value(big)}, kind};
  };
  h.push(batch(schema, {row(10.0, 1.0, false), row(30.0, 3.0, true), row(Value(), 5.0, true)}));
  h.push(batch(schema, {row(10.0, 1.0, false, RowKind::kUpdateBefore), row(30.0, 3.0, true, RowKind::kDelete)}));
  EXPECT_THAT(h.lines, ElementsAre("+I[a, 10.0, 1, 0]", "-U[a, 10.0, 1, 0]", "+U[a, 25.0, 2, 1]", "-U[a, 25.0, 2, 1]",
                                   "+U[a, 25.0, 3, 2]", "-U[a, 25.0, 3, 2]", "+U[a, 30.0, 2, 2]", "-U[a, 30.0, 2, 2]",
                                   "+U[a, null, 1, 1]"));

  auto bad = params(kv_schema(), {{"k", LogicalType::string()}, {"ks", LogicalType::string()}}, {0},
                    json::array({{{"function", "concat_agg"}, {"args", {0}}}}));
  try {
    OpHarness h2("sql_group_aggregate", bad);
    FAIL() << "expected an error";
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), HasSubstr("param 'aggregates'[0]: CONCAT_AGG cannot retract, and this aggregation consumes "
                                    "retractions"));
  }
}

TEST(SqlGroupAggregate, SeveralGroupingSetsNeedParallelismOne) {
  auto p = params(kv_schema(), {{"k", LogicalType::string()}}, {0}, json::array(), json::array({json::array({0}), json::array()}));
  try {
    OpHarness h("sql_group_aggregate", p, 2);
    FAIL() << "expected an error";
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), HasSubstr("op 'op' (sql_group_aggregate): several grouping sets runs at parallelism 1, got 2"));
  }
}

json same_schema(const SchemaPtr& s) { return {{"input_schemas", json::array({schema_json(s)})}, {"schema", schema_json(s)}}; }

TEST(SqlLimit, OffsetAndLimitAcrossBatches) {
  json p = same_schema(kv_schema());
  p["limit"] = 3;
  p["offset"] = 2;
  OpHarness h("sql_limit", p);
  h.push(batch(kv_schema(), {kv("a", 1), kv("b", 2), kv("c", 3)}));
  h.push(batch(kv_schema(), {kv("d", 4), kv("e", 5), kv("f", 6)}));
  EXPECT_THAT(h.lines, ElementsAre("+I[c, 3]", "+I[d, 4]", "+I[e, 5]"));
}

// ORDER BY v DESC NULLS FIRST, k (ASC: NULLS FIRST by default) LIMIT 4
TEST(SqlSort, OrderByWithNullsAndLimitAtEndOfInput) {
  json p = same_schema(kv_schema());
  p["keys"] = json::array({{{"column", 1}, {"descending", true}, {"nulls_first", true}}, {{"column", 0}}});
  p["limit"] = 4;
  OpHarness h("sql_sort", p);
  h.push(batch(kv_schema(), {kv("b", 1), kv("a", 3), kv("c", Value())}));
  h.push(batch(kv_schema(), {Row{{Value(), Value(3)}}, kv("d", 1), kv("e", 2)}));
  EXPECT_TRUE(h.lines.empty());
  h.finish();
  EXPECT_THAT(h.lines, ElementsAre("WM " + std::to_string(kMaxEventTime), "+I[c, null]", "+I[null, 3]", "+I[a, 3]", "+I[e, 2]"));
}

TEST(SqlSort, DescendingDefaultsToNullsLast) {
  json p = same_schema(kv_schema());
  p["keys"] = json::array({{{"column", 1}, {"descending", true}}});
  OpHarness h("sql_sort", p);
  h.push(batch(kv_schema(), {kv("a", Value()), kv("b", 1), kv("c", 2)}));
  h.finish();
  EXPECT_THAT(h.lines, ElementsAre("WM " + std::to_string(kMaxEventTime), "+I[c, 2]", "+I[b, 1]", "+I[a, null]"));
}

// Flink's RowTimeSortOperator (ORDER BY t, k DESC without LIMIT): the rows a watermark
// passes leave sorted by the time, then k; a row not after the last time emitted is late
// and dropped, one behind the watermark but after that time leaves at the next watermark.
TEST(SqlSort, RowtimeTemporalSortEmitsPerWatermark) {
  SchemaPtr s = sql::make_schema({{"k", LogicalType::string()}, {"t", LogicalType::timestamp(3)}});
  auto row = [](const char* k, const char* t) { return Row{{Value(k), Value(ts(std::string("2024-01-01 ") + t))}}; };
  json p = same_schema(s);
  p["keys"] = json::array({{{"column", 1}}, {{"column", 0}, {"descending", true}}});
  p["temporal"] = "rowtime";
  OpHarness h("sql_sort", p);
  h.push(batch(s, {row("b", "10:00:03"), row("a", "10:00:01"), row("c", "10:00:03")}));
  EXPECT_TRUE(h.lines.empty());
  h.watermark(ms_of("2024-01-01 10:00:02"));
  h.push(batch(s, {row("late", "10:00:01"), row("y", "10:00:02"), row("d", "10:00:05")}));
  h.watermark(ms_of("2024-01-01 10:00:03"));
  h.finish();
  EXPECT_THAT(h.lines, ElementsAre("+I[a, 2024-01-01T10:00:01]", "WM " + std::to_string(ms_of("2024-01-01 10:00:02")),
                                   "+I[y, 2024-01-01T10:00:02]", "+I[c, 2024-01-01T10:00:03]",
                                   "+I[b, 2024-01-01T10:00:03]", "WM " + std::to_string(ms_of("2024-01-01 10:00:03")),
                                   "+I[d, 2024-01-01T10:00:05]", "WM " + std::to_string(kMaxEventTime)));
}

TEST(SqlSort, TemporalNeedsAnAscendingTimeFirstAndNoLimit) {
  json p = same_schema(kv_schema());
  p["keys"] = json::array({{{"column", 1}}});
  p["temporal"] = "rowtime";
  EXPECT_THROW(
      {
        try {
          OpHarness h("sql_sort", p);
        } catch (const ClinkError& e) {
          EXPECT_THAT(e.what(), HasSubstr("param 'temporal': the first key must be an ascending TIMESTAMP"));
          throw;
        }
      },
      ClinkError);
}

}  // namespace
}  // namespace clink::test
