// A WebAssembly aggregate (docs/udf-wasm.md; sumsq of tests/wasm/udfs.wat) in a GROUP BY
// keeps its accumulator, opaque guest bytes, across savepoints (resumed at another
// parallelism) and an injected failure, on the memory and RocksDB backends, over insert
// and delete rows (its <p>_retract runs): the exactly-once changelog equals the
// failure-free one.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "restore_harness.hpp"

#include "clink/sql/function/wasm_udf.hpp"

namespace clink::test {
namespace {

void register_sumsq() {
  static bool done = [] {
    std::ifstream in(std::string(CLINK_SOURCE_DIR) + "/tests/wasm/udfs.wat");
    std::stringstream text;
    text << in.rdbuf();
    sql::WasmUdfDecl d{"wasm_sumsq", true, true, {LogicalType::bigint()}, LogicalType::bigint(), "sumsq", text.str()};
    sql::register_wasm_udf(d);
    return true;
  }();
  (void)done;
}

class WasmAggregateRestore : public SqlRestoreHarness {};
INSTANTIATE_TEST_SUITE_P(Backends, WasmAggregateRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

// Per key: +1, +2, -1 (the savepoint or the failure falls here), +4, +1. SUM beside it
// shows the same rows reached the built-in accumulator.
TEST_P(WasmAggregateRestore, GroupByWithRetraction) {
  if (!sql::wasm_udfs_built()) GTEST_SKIP() << "built with -DCLINK_WITH_WASM=OFF";
  register_sumsq();
  json op = keyed_op("agg", "sql_group_aggregate",
                     sql::make_schema({{"k", LogicalType::string()}, {"s", LogicalType::bigint()},
                                       {"q", LogicalType::bigint()}}),
                     {{"keys", {1}},
                      {"aggregates", json::array({{{"function", "SUM"}, {"args", {2}}},
                                                  {{"function", "wasm_sumsq"}, {"args", {2}}}})}});
  auto step = [](std::int64_t v, std::int64_t t, RowKind kind) {
    std::vector<Row> rows;
    for (const char* k : kRestoreKeys) rows.push_back(Row{{Value(t * 1000), Value(k), Value(v)}, kind, t});
    return batch(kv_schema(), rows);
  };
  const std::vector<BatchStep> steps = {{step(1, 1, RowKind::kInsert), 5}, {step(2, 12, RowKind::kInsert), 14},
                                         {step(1, 15, RowKind::kDelete), 16},
                                         // -- interrupted here --
                                         {step(4, 21, RowKind::kInsert), 25}, {step(1, 29, RowKind::kInsert), std::nullopt}};
  std::vector<std::string> expected;
  for (const char* k : kRestoreKeys) {
    std::string key = k;
    expected.push_back("+I[" + key + ", 1, 1]");
    for (auto [before, after] : {std::pair{"1, 1", "3, 5"}, {"3, 5", "2, 4"}, {"2, 4", "6, 20"}, {"6, 20", "7, 21"}}) {
      expected.push_back("-U[" + key + ", " + before + "]");
      expected.push_back("+U[" + key + ", " + after + "]");
    }
  }
  SqlRestoreHarness::expect_restores(single_op_job("wasm", op, steps), RestorePlan{}, sorted(expected));
}

}  // namespace
}  // namespace clink::test
