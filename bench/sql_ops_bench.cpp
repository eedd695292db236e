// SQL operator throughput on one core, the operators built from their spec params
// through the registry and driven directly (batches of 1024 rows):
//   calc: WHERE v < 500 (half the rows) SELECT k, v + 1 over (k BIGINT, v BIGINT)
//   tumbling 60 s COUNT(*) GROUP BY k over 100 k BIGINT keys (sql_window_aggregate on
//   the window engine), event time advancing 1 ms per 1000 rows, a watermark after each
//   batch; the final firing is left out of the timing (the rate of a long-running job);
//   the same with SUM / STDDEV_POP / FIRST_VALUE / LAST_VALUE(k) instead of COUNT(*).
//   over: SUM(v) OVER (PARTITION BY k ORDER BY t ROWS BETWEEN 10 PRECEDING AND CURRENT
//   ROW) over 10 k BIGINT keys (sql_over_aggregate, memory backend): event time as the
//   tumbling benchmark's (rows wait for the watermark after their batch), and processing
//   time (each row at once). items/s is CPU time.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/operator_registry.hpp"
#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/common/types.hpp"
#include "clink/sql/expression/expr.hpp"
#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"

namespace clink::sql {
namespace {

constexpr std::int64_t kKeys = 100'000;
constexpr std::int64_t kRowsPerMs = 1000;

class CountingOutput final : public Output {
 public:
  void emit(BatchPtr batch) override { rows += static_cast<std::int64_t>(batch->size()); }
  void emit_watermark(Watermark) override {}
  void emit_side(const std::string&, BatchPtr) override {}
  std::int64_t rows = 0;
};

std::unique_ptr<StreamOperator> build(const std::string& factory, nlohmann::json params) {
  OperatorSpecContext sc;
  sc.id = "bench";
  sc.params = std::move(params);
  sc.input_types = {kSqlRowType};
  return builtin_registry().get(factory).make(sc)();
}

// Fills two int64 columns of a fresh batch: column 0 from `first`, column 1 from `second`.
template <class F0, class F1>
std::unique_ptr<ColumnBatch> make_batch(const SchemaPtr& schema, std::size_t n, F0 first, F1 second) {
  auto b = std::make_unique<ColumnBatch>(schema, n);
  auto& c0 = b->column(0);
  auto& c1 = b->column(1);
  c0.resize_fixed(n);
  c1.resize_fixed(n);
  c0.set_all_valid();
  c1.set_all_valid();
  for (std::size_t i = 0; i < n; ++i) {
    c0.values<std::int64_t>()[i] = first(i);
    c1.values<std::int64_t>()[i] = second(i);
  }
  b->commit_rows(n);
  return b;
}

void BM_CalcFilterProject(benchmark::State& state) {
  const std::int64_t total = state.range(0);
  SchemaPtr in = make_schema({{"k", LogicalType::bigint()}, {"v", LogicalType::bigint()}});
  const auto& reg = FunctionRegistry::builtins();
  auto k = expr::column(0, LogicalType::bigint(), "k");
  auto v = expr::column(1, LogicalType::bigint(), "v");
  auto plus = expr::call(reg, "+", {v, expr::literal(Value(1), LogicalType::bigint().not_null())});
  auto filter = expr::call(reg, "<", {v, expr::literal(Value(500), LogicalType::bigint().not_null())});
  nlohmann::json p = {{"input_schemas", nlohmann::json::array({schema_to_json(*in)})},
                      {"schema", schema_to_json(*make_schema({{"k", LogicalType::bigint()}, {"v1", plus->type}}))},
                      {"projections", nlohmann::json::array({expr_to_json(*k), expr_to_json(*plus)})},
                      {"filter", expr_to_json(*filter)}};
  std::int64_t out_rows = 0;
  for (auto _ : state) {
    auto op = build("sql_calc", p);
    CountingOutput out;
    RuntimeContext ctx("calc", "calc", 0, 1, kDefaultMaxParallelism, &out, std::make_shared<OperatorMetrics>(),
                       SystemClock::instance());
    op->open(ctx);
    for (std::int64_t i = 0; i < total; i += static_cast<std::int64_t>(kDefaultBatchSize)) {
      op->process_batch(0, make_batch(in, kDefaultBatchSize, [&](std::size_t r) { return i + static_cast<std::int64_t>(r); },
                                      [&](std::size_t r) { return (i + static_cast<std::int64_t>(r)) % 1000; }));
    }
    op->close();
    out_rows = out.rows;
  }
  state.SetItemsProcessed(state.iterations() * total);
  state.counters["out_rows"] = static_cast<double>(out_rows);
}
BENCHMARK(BM_CalcFilterProject)->Arg(20'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();

const std::vector<std::int64_t>& random_keys() {
  static const std::vector<std::int64_t> keys = [] {
    std::vector<std::int64_t> ks(1 << 20);
    std::uint64_t x = 88172645463325252ull;
    for (auto& v : ks) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      v = static_cast<std::int64_t>(x % kKeys);
    }
    return ks;
  }();
  return keys;
}

// The tumbling benchmark with one aggregate call: COUNT(*), or a function of k (BIGINT).
struct TumblingAggregate {
  const char* function;
  bool over_k;
  LogicalType result;
};
const TumblingAggregate kTumblingAggregates[] = {
    {"COUNT", false, LogicalType::bigint().not_null()},
    {"STDDEV_POP", true, LogicalType::bigint()},
    {"FIRST_VALUE", true, LogicalType::bigint()},
    {"LAST_VALUE", true, LogicalType::bigint()},
    {"SUM", true, LogicalType::bigint()},
};

void BM_Tumbling60s(benchmark::State& state, const TumblingAggregate& agg) {
  const std::int64_t total = state.range(0);
  SchemaPtr in = make_schema({{"k", LogicalType::bigint()}, {"t", LogicalType::timestamp(3)}});
  nlohmann::json call = {{"function", agg.function}};
  if (agg.over_k) call["args"] = {0};
  nlohmann::json p = {
      {"input_schemas", nlohmann::json::array({schema_to_json(*in)})},
      {"schema", schema_to_json(*make_schema({{"k", LogicalType::bigint()},
                                              {"window_start", LogicalType::timestamp(3).not_null()},
                                              {"window_end", LogicalType::timestamp(3).not_null()},
                                              {"window_time", LogicalType::timestamp(3).not_null()},
                                              {"c", agg.result}}))},
      {"window", {{"kind", "tumble"}, {"time_column", 1}, {"size_ms", 60'000}}},
      {"keys", {0}},
      {"aggregates", nlohmann::json::array({call})}};
  const auto& keys = random_keys();
  std::int64_t results = 0;
  for (auto _ : state) {
    auto op = build("sql_window_aggregate", p);
    CountingOutput out;
    RuntimeContext ctx("window", "window", 0, 1, kDefaultMaxParallelism, &out, std::make_shared<OperatorMetrics>(),
                       SystemClock::instance());
    op->open(ctx);
    for (std::int64_t i = 0; i < total; i += static_cast<std::int64_t>(kDefaultBatchSize)) {
      op->process_batch(0, make_batch(in, kDefaultBatchSize,
                                      [&](std::size_t r) { return keys[static_cast<std::size_t>(i + static_cast<std::int64_t>(r)) & (keys.size() - 1)]; },
                                      [&](std::size_t r) { return (i + static_cast<std::int64_t>(r)) / kRowsPerMs * 1000; }));
      op->process_watermark(Watermark::at((i + static_cast<std::int64_t>(kDefaultBatchSize) - 1) / kRowsPerMs - 1));
    }
    state.PauseTiming();
    op->process_watermark(Watermark::max());
    op->close();
    op.reset();
    state.ResumeTiming();
    results = out.rows;
  }
  state.SetItemsProcessed(state.iterations() * total);
  state.counters["results"] = static_cast<double>(results);
}
void BM_TumblingCountStar60s(benchmark::State& state) { BM_Tumbling60s(state, kTumblingAggregates[0]); }
BENCHMARK(BM_TumblingCountStar60s)->Arg(20'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();
// The same over k with SUM, STDDEV_POP (Welford, 24 bytes) and FIRST_VALUE / LAST_VALUE
// (insert-only: the value and a flag): fixed-size accumulators, no allocation per row.
void BM_Tumbling60sAggregate(benchmark::State& state) {
  const auto& agg = kTumblingAggregates[state.range(1)];
  state.SetLabel(agg.function);
  BM_Tumbling60s(state, agg);
}
BENCHMARK(BM_Tumbling60sAggregate)
    ->ArgNames({"rows", "agg"})
    ->Args({5'000'000, 4})
    ->Args({5'000'000, 1})
    ->Args({5'000'000, 2})
    ->Args({5'000'000, 3})
    ->Unit(benchmark::kMillisecond);

void BM_OverRowsTenPrecedingSum10kKeys(benchmark::State& state) {
  const bool proctime = state.range(1) != 0;
  const std::int64_t total = state.range(0);
  constexpr std::int64_t kOverKeys = 10'000;
  SchemaPtr in = make_schema({{"k", LogicalType::bigint()},
                              {"t", proctime ? LogicalType::timestamp_ltz(3) : LogicalType::timestamp(3)}});
  // SUM over the key column: the input stays two BIGINT-sized columns wide.
  nlohmann::json p = {{"input_schemas", nlohmann::json::array({schema_to_json(*in)})},
                      {"schema", schema_to_json(*make_schema({{"k", LogicalType::bigint()},
                                                              {"t", in->type(1)},
                                                              {"s", sum_result_type(LogicalType::bigint())}}))},
                      {"partition_keys", {0}},
                      {"order_column", 1},
                      {"proctime", proctime},
                      {"rows", true},
                      {"preceding", 10},
                      {"aggregates", nlohmann::json::array({{{"function", "SUM"}, {"args", {0}}}})}};
  const auto& keys = random_keys();
  std::int64_t results = 0;
  for (auto _ : state) {
    auto op = build("sql_over_aggregate", p);
    CountingOutput out;
    RuntimeContext ctx("over", "over", 0, 1, kDefaultMaxParallelism, &out, std::make_shared<OperatorMetrics>(),
                       SystemClock::instance());
    op->open(ctx);
    for (std::int64_t i = 0; i < total; i += static_cast<std::int64_t>(kDefaultBatchSize)) {
      op->process_batch(0, make_batch(in, kDefaultBatchSize,
                                      [&](std::size_t r) { return keys[static_cast<std::size_t>(i + static_cast<std::int64_t>(r)) & (keys.size() - 1)] % kOverKeys; },
                                      [&](std::size_t r) { return (i + static_cast<std::int64_t>(r)) / kRowsPerMs * 1000; }));
      if (!proctime) op->process_watermark(Watermark::at((i + static_cast<std::int64_t>(kDefaultBatchSize) - 1) / kRowsPerMs - 1));
    }
    state.PauseTiming();
    op->process_watermark(Watermark::max());
    op->close();
    op.reset();
    state.ResumeTiming();
    results = out.rows;
  }
  state.SetItemsProcessed(state.iterations() * total);
  state.counters["results"] = static_cast<double>(results);
}
BENCHMARK(BM_OverRowsTenPrecedingSum10kKeys)
    ->ArgNames({"rows", "proctime"})
    ->Args({2'000'000, 0})
    ->Args({2'000'000, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace clink::sql
BENCHMARK_MAIN();
