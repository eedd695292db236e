// sql_group_aggregate with a state TTL (table.exec.state.ttl), run directly on a manual
// processing-time clock: Flink's GroupAggFunction with StateTtlConfig on the accumulator
// and on the DISTINCT map view (GroupAggregateHarnessTest.testAggregateWithRetraction),
// and the TTL times kept through a snapshot and restore on the memory and RocksDB backends.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sql_ops_test_support.hpp"

#include "../support/checkpoint_support.hpp"

namespace clink::test {
namespace {

using ::testing::ElementsAre;

SchemaPtr kv_schema() { return sql::make_schema({{"k", LogicalType::string()}, {"v", LogicalType::bigint()}}); }
Row kv(const char* k, std::int64_t v, RowKind kind = RowKind::kInsert) { return Row{{Value(k), Value(v)}, kind}; }

json params(std::vector<sql::RowField> out, json aggs, std::int64_t ttl) {
  return {{"input_schemas", json::array({schema_json(kv_schema())})},
          {"schema", schema_json(sql::make_schema(std::move(out)))},
          {"keys", {0}},
          {"aggregates", std::move(aggs)},
          {"state_ttl_ms", ttl}};
}
json sum_params(std::int64_t ttl) {
  return params({{"k", LogicalType::string()}, {"s", LogicalType::bigint()}},
                json::array({{{"function", "SUM"}, {"args", {1}}}}), ttl);
}

// Flink's harness test, row for row: after the TTL every group is forgotten; a retraction
// for it is ignored and the next insertion is a fresh +I, with no retraction of the
// expired result.
TEST(SqlGroupAggregateTtl, ExpiredGroupsStartOverAsFlinkHarness) {
  ManualClock clock{1};
  OpHarness h("sql_group_aggregate", sum_params(2000), 1, clock);
  h.push(batch(kv_schema(), {kv("aaa", 1), kv("bbb", 1)}));
  h.push(batch(kv_schema(), {kv("aaa", 2), kv("aaa", 2, RowKind::kDelete), kv("ccc", 3)}));
  clock.now = 3002;  // 1 + 2000 <= 3002: all expired
  h.push(batch(kv_schema(), {kv("ccc", 3, RowKind::kUpdateBefore), kv("aaa", 4), kv("bbb", 2)}));
  h.push(batch(kv_schema(), {kv("aaa", 5), kv("eee", 6), kv("aaa", 7), kv("bbb", 3)}));
  EXPECT_THAT(h.lines, ElementsAre("+I[aaa, 1]", "+I[bbb, 1]", "-U[aaa, 1]", "+U[aaa, 3]", "-U[aaa, 3]", "+U[aaa, 1]",
                                   "+I[ccc, 3]",
                                   // after expiry: -U ccc finds nothing
                                   "+I[aaa, 4]", "+I[bbb, 2]", "-U[aaa, 4]", "+U[aaa, 9]", "+I[eee, 6]",
                                   "-U[aaa, 9]", "+U[aaa, 16]", "-U[bbb, 2]", "+U[bbb, 5]"));
}

// Every row refreshes its group's time (OnCreateAndWrite), expiry is last write + TTL <= now,
// and with a TTL an unchanged result is still emitted as -U/+U (Flink does, so downstream
// state is refreshed too); without one it is not.
TEST(SqlGroupAggregateTtl, RowsRefreshTheGroupAndUnchangedResultsAreEmitted) {
  auto p = [](std::int64_t ttl) {
    return params({{"k", LogicalType::string()}, {"m", LogicalType::bigint()}},
                  json::array({{{"function", "MAX"}, {"args", {1}}}}), ttl);
  };
  ManualClock clock{1};
  OpHarness h("sql_group_aggregate", p(100), 1, clock);
  h.push(batch(kv_schema(), {kv("a", 5)}));
  clock.now = 100;
  h.push(batch(kv_schema(), {kv("a", 3)}));  // MAX unchanged: -U/+U; written at 100
  clock.now = 199;
  h.push(batch(kv_schema(), {kv("a", 4)}));  // 100 + 100 > 199: alive
  clock.now = 299;
  h.push(batch(kv_schema(), {kv("a", 1)}));  // 199 + 100 <= 299: expired
  EXPECT_THAT(h.lines, ElementsAre("+I[a, 5]", "-U[a, 5]", "+U[a, 5]", "-U[a, 5]", "+U[a, 5]", "+I[a, 1]"));

  OpHarness no_ttl("sql_group_aggregate", p(0), 1, clock);
  no_ttl.push(batch(kv_schema(), {kv("a", 5), kv("a", 3)}));
  clock.now = 100000;
  no_ttl.push(batch(kv_schema(), {kv("a", 4)}));
  EXPECT_THAT(no_ttl.lines, ElementsAre("+I[a, 5]"));
}

// COUNT(DISTINCT v), SUM(DISTINCT v): the distinct values expire with their group (a fresh
// group counts a value seen before expiry again, once) and, as Flink's map view with the
// same TTL, a value not seen for the TTL expires on its own while its group lives.
TEST(SqlGroupAggregateTtl, DistinctValuesExpire) {
  ManualClock clock{1};
  OpHarness h("sql_group_aggregate",
              params({{"k", LogicalType::string()}, {"c", LogicalType::bigint().not_null()}, {"s", LogicalType::bigint()}},
                     json::array({{{"function", "COUNT"}, {"args", {1}}, {"distinct", true}},
                                  {{"function", "SUM"}, {"args", {1}}, {"distinct", true}}}),
                     100),
              1, clock);
  h.push(batch(kv_schema(), {kv("a", 1), kv("a", 2), kv("b", 7)}));
  clock.now = 150;  // a and b (written at 1) expired
  h.push(batch(kv_schema(), {kv("a", 2), kv("b", 7, RowKind::kDelete)}));
  h.push(batch(kv_schema(), {kv("a", 1), kv("a", 2)}));  // 1 and 2 count once each
  clock.now = 200;
  h.push(batch(kv_schema(), {kv("a", 3)}));  // group a refreshed at 200; 1 and 2 stay at 150
  clock.now = 260;
  h.push(batch(kv_schema(), {kv("a", 2)}));  // 150 + 100 <= 260: 2 expired, counted anew
  h.push(batch(kv_schema(), {kv("b", 7)}));
  EXPECT_THAT(h.lines, ElementsAre("+I[a, 1, 1]", "-U[a, 1, 1]", "+U[a, 2, 3]", "+I[b, 1, 7]",  //
                                   "+I[a, 1, 2]",                                              // b's -D: nothing
                                   "-U[a, 1, 2]", "+U[a, 2, 3]", "-U[a, 2, 3]", "+U[a, 2, 3]",  //
                                   "-U[a, 2, 3]", "+U[a, 3, 6]",                                //
                                   "-U[a, 3, 6]", "+U[a, 4, 8]",                                //
                                   "+I[b, 1, 7]"));
}

// The group and each distinct value keep their last-write time through a snapshot: after the
// restore a value written before the snapshot expires on time, one written later does not,
// and a group last written before the TTL starts over.
class SqlGroupAggregateTtlRestore : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Backends, SqlGroupAggregateTtlRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

TEST_P(SqlGroupAggregateTtlRestore, TtlTimesSurviveSnapshotAndRestore) {
  const json p =
      params({{"k", LogicalType::string()}, {"c", LogicalType::bigint().not_null()}, {"s", LogicalType::bigint()}},
             json::array({{{"function", "COUNT"}, {"args", {1}}, {"distinct", true}},
                          {{"function", "SUM"}, {"args", {1}}}}),
             100);
  TempDir dir;
  StateBackendConfig backend;
  backend.kind = GetParam();
  ManualClock clock{1};
  clock.now = 1000;
  KeyedStateHandle handle;
  {
    backend.working_dir = dir.path / "work-1";
    OpHarness h("sql_group_aggregate", p, 1, clock, backend);
    h.push(batch(kv_schema(), {kv("a", 1), kv("b", 2)}));
    clock.now = 1050;
    h.push(batch(kv_schema(), {kv("a", 3)}));  // a and its 3 at 1050; a's 1 and b at 1000
    handle = h.context().keyed_state_backend()->snapshot(1, dir.path / "chk-1");
    EXPECT_THAT(h.lines, ElementsAre("+I[a, 1, 1]", "+I[b, 1, 2]", "-U[a, 1, 1]", "+U[a, 2, 4]"));
  }
  backend.working_dir = dir.path / "work-2";
  clock.now = 1120;
  OpHarness r("sql_group_aggregate", p, 1, clock, backend, {handle});
  r.push(batch(kv_schema(), {kv("a", 3), kv("a", 1), kv("b", 2)}));
  EXPECT_THAT(r.lines, ElementsAre("-U[a, 2, 4]", "+U[a, 2, 7]",  // 3 still counted
                                   "-U[a, 2, 7]", "+U[a, 3, 8]",  // 1 expired: counted anew
                                   "+I[b, 1, 2]"));               // b expired
}

}  // namespace
}  // namespace clink::test
