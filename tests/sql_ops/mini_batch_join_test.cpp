// sql_join with mini-batch (mini_batch_size; Flink's MiniBatchStreamingJoinOperator) run
// directly: the rows wait for the end of the mini-batch (size reached, allow-latency,
// watermark, barrier, end of input), a row and its retraction in one mini-batch cancel out, the right input's
// rows are joined before the left's (the left's first in a RIGHT JOIN), and a barrier in
// the middle of a mini-batch joins its rows before the state is snapshotted, so a restore
// holds them.
#include <gtest/gtest.h>

#include <filesystem>

#include "../support/print_form.hpp"
#include "join_harness.hpp"
#include "sql_ops_test_support.hpp"

namespace clink::test {
namespace {

using Lines = std::vector<std::string>;

SchemaPtr left_schema() { return sql::make_schema({{"k", LogicalType::bigint()}, {"lv", LogicalType::string()}}); }
SchemaPtr right_schema() { return sql::make_schema({{"k", LogicalType::bigint()}, {"rv", LogicalType::string()}}); }

json params(const std::string& type, std::int64_t size) {
  SchemaPtr out = sql::make_schema(
      {{"k", LogicalType::bigint()}, {"lv", LogicalType::string()}, {"k0", LogicalType::bigint()}, {"rv", LogicalType::string()}});
  return {{"schema", schema_json(out)},
          {"input_schemas", json::array({schema_json(left_schema()), schema_json(right_schema())})},
          {"join_type", type},
          {"left_keys", {0}},
          {"right_keys", {0}},
          {"condition", nullptr},
          {"mini_batch_size", size},
          {"mini_batch_latency_ms", 3600000}};
}

Row row(Value k, const char* v, RowKind kind = RowKind::kInsert) { return Row{{std::move(k), Value(v)}, kind}; }
ColumnBatch L(std::vector<Row> rows) { return batch(left_schema(), rows); }
ColumnBatch R(std::vector<Row> rows) { return batch(right_schema(), rows); }

TEST(SqlMiniBatchJoin, RowsWaitForTheSizeAndTheRightInputGoesFirst) {
  JoinHarness h("sql_join", params("left", 4));
  EXPECT_EQ(h.push(0, L({row(1, "a"), row(2, "c")})), Lines{});
  // The 4th row ends the mini-batch: the right rows first (the left finds them), then the
  // left; the 5th row starts the next one.
  EXPECT_EQ(h.push(1, R({row(1, "b"), row(3, "x"), row(2, "d")})),
            (Lines{"+I[1, a, 1, b]", "+I[2, c, null, null]"}));
  EXPECT_EQ(h.watermark(10), (Lines{"-D[2, c, null, null]", "+I[2, c, 2, d]", "WM 10"}));
  EXPECT_EQ(h.watermark(20), Lines{"WM 20"});
}

// allow-latency (an hour here) after the first buffered row the mini-batch ends; the next
// row starts the next one, with its own timer.
TEST(SqlMiniBatchJoin, AllowLatencyEndsTheMiniBatch) {
  JoinHarness h("sql_join", params("inner", 100));
  const std::int64_t now = h.context().timer_service().current_processing_time();
  EXPECT_EQ(h.push(1, R({row(1, "b")})), Lines{});
  EXPECT_EQ(h.push(0, L({row(1, "a")})), Lines{});
  EXPECT_EQ(h.processing_time(now + 1000), Lines{});
  EXPECT_EQ(h.processing_time(now + 3600000 + 60000), Lines{"+I[1, a, 1, b]"});
  EXPECT_EQ(h.push(0, L({row(1, "a2")})), Lines{});
  EXPECT_EQ(h.processing_time(now + 2 * 3600000 + 120000), Lines{"+I[1, a2, 1, b]"});
}

TEST(SqlMiniBatchJoin, ARightJoinTakesTheLeftInputFirst) {
  JoinHarness h("sql_join", params("right", 100));
  EXPECT_EQ(h.push(1, R({row(1, "b")})), Lines{});
  EXPECT_EQ(h.push(0, L({row(1, "a")})), Lines{});
  EXPECT_EQ(h.finish(), Lines{"+I[1, a, 1, b]"});
}

// Within a mini-batch +I a / -D a cancel, and so do -U a / +U a of an existing row; -U a /
// +U a2 (other values) stay. A retraction that was not folded is joined as usual.
TEST(SqlMiniBatchJoin, ARowAndItsRetractionCancelOut) {
  JoinHarness h("sql_join", params("inner", 100));
  EXPECT_EQ(h.push(1, R({row(1, "b")})), Lines{});
  EXPECT_EQ(h.push(0, L({row(1, "a"), row(1, "x"), row(1, "x", RowKind::kDelete)})), Lines{});
  EXPECT_EQ(h.barrier(1), Lines{"+I[1, a, 1, b]"});
  EXPECT_EQ(h.push(0, L({row(1, "a", RowKind::kUpdateBefore), row(1, "a", RowKind::kUpdateAfter),
                          row(1, "a", RowKind::kUpdateBefore), row(1, "a2", RowKind::kUpdateAfter)})),
            Lines{});
  EXPECT_EQ(h.finish(), (Lines{"-U[1, a, 1, b]", "+U[1, a2, 1, b]"}));
}

// A barrier in the middle of a mini-batch joins its rows first: the snapshot holds them
// (the restored join matches them) and nothing buffered is lost.
TEST(SqlMiniBatchJoin, ABarrierEndsTheMiniBatchBeforeTheSnapshot) {
  auto dir = std::filesystem::temp_directory_path() / ("clink-mini-batch-join-test-" + std::to_string(::getpid()));
  std::vector<KeyedStateHandle> snapshot;
  {
    JoinHarness h("sql_join", params("full", 100));
    EXPECT_EQ(h.push(0, L({row(1, "a"), row(2, "c")})), Lines{});
    EXPECT_EQ(h.push(1, R({row(1, "b")})), Lines{});
    EXPECT_EQ(h.barrier(7), (Lines{"+I[null, null, 1, b]", "-D[null, null, 1, b]", "+I[1, a, 1, b]",
                                   "+I[2, c, null, null]"}));
    snapshot.push_back(h.context().keyed_state_backend()->snapshot(7, dir));
    EXPECT_EQ(h.push(1, R({row(2, "d")})), Lines{});  // lost with the failure: replayed below
  }
  JoinHarness h("sql_join", params("full", 100), SystemClock::instance(), snapshot);
  EXPECT_EQ(h.push(1, R({row(2, "d"), row(1, "b", RowKind::kDelete)})), Lines{});
  EXPECT_EQ(h.finish(), (Lines{"-D[2, c, null, null]", "+I[2, c, 2, d]", "-D[1, a, 1, b]", "+I[1, a, null, null]"}));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace clink::test
