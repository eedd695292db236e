// SQL expression kernels over 1024-row columnar batches:
//   filter  a > 10 AND b < 5  then projection  a * 2 + b  (BIGINT columns)
//   UPPER(s) and s LIKE '%abc%' over short strings.
// items_per_second is input rows per second.
#include <benchmark/benchmark.h>

#include <random>

#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/expression/expr.hpp"
#include "clink/sql/expression/expr_compiler.hpp"
#include "clink/sql/function/function_registry.hpp"

using namespace clink::sql;

namespace {

constexpr std::size_t kRows = 1024;

ColumnBatch int_batch() {
  auto schema = make_schema({{"a", LogicalType::bigint()}, {"b", LogicalType::bigint()}});
  ColumnBatch b(schema, kRows);
  std::mt19937_64 rng(42);
  for (std::size_t i = 0; i < kRows; ++i) {
    b.column(0).append<std::int64_t>(static_cast<std::int64_t>(rng() % 21));
    b.column(1).append<std::int64_t>(static_cast<std::int64_t>(rng() % 11));
  }
  b.commit_rows(kRows);
  return b;
}

ColumnBatch string_batch() {
  auto schema = make_schema({{"s", LogicalType::string()}});
  ColumnBatch b(schema, kRows);
  std::mt19937_64 rng(7);
  std::string s;
  for (std::size_t i = 0; i < kRows; ++i) {
    s.clear();
    for (int k = 0; k < 16; ++k) s += static_cast<char>('a' + rng() % 26);
    if (i % 8 == 0) s.replace(5, 3, "abc");
    b.column(0).append_string(s);
  }
  b.commit_rows(kRows);
  return b;
}

ExprPtr lit(std::int64_t v) { return expr::literal(Value(v), LogicalType::int_type().not_null()); }
ExprPtr call(std::string_view name, std::vector<ExprPtr> args) {
  return expr::call(FunctionRegistry::builtins(), name, std::move(args));
}

void BM_FilterThenProject(benchmark::State& state) {
  auto batch = int_batch();
  auto a = expr::column(0, LogicalType::bigint(), "a");
  auto b = expr::column(1, LogicalType::bigint(), "b");
  CompiledPredicate pred(expr::and_({call(">", {a, lit(10)}), call("<", {b, lit(5)})}));
  CompiledProjection proj({call("+", {call("*", {a, lit(2)}), b})}, {"x"});
  std::size_t kept = 0;
  for (auto _ : state) {
    auto filtered = pred.filter(batch);
    auto out = proj.project(filtered);
    kept += out.size();
    benchmark::DoNotOptimize(out.column(0).values<std::int64_t>());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kRows));
  state.counters["selectivity"] = static_cast<double>(kept) / static_cast<double>(state.iterations() * kRows);
}
BENCHMARK(BM_FilterThenProject);

void BM_Predicate(benchmark::State& state) {
  auto batch = int_batch();
  auto a = expr::column(0, LogicalType::bigint(), "a");
  auto b = expr::column(1, LogicalType::bigint(), "b");
  CompiledPredicate pred(expr::and_({call(">", {a, lit(10)}), call("<", {b, lit(5)})}));
  std::vector<std::uint64_t> mask;
  for (auto _ : state) {
    pred.select_mask(batch, mask);
    benchmark::DoNotOptimize(mask.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kRows));
}
BENCHMARK(BM_Predicate);

void BM_Projection(benchmark::State& state) {
  auto batch = int_batch();
  auto a = expr::column(0, LogicalType::bigint(), "a");
  auto b = expr::column(1, LogicalType::bigint(), "b");
  CompiledExpr e(call("+", {call("*", {a, lit(2)}), b}));
  for (auto _ : state) benchmark::DoNotOptimize(e.evaluate(batch).values<std::int64_t>());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kRows));
}
BENCHMARK(BM_Projection);

void BM_Upper(benchmark::State& state) {
  auto batch = string_batch();
  CompiledExpr e(call("UPPER", {expr::column(0, LogicalType::string(), "s")}));
  for (auto _ : state) benchmark::DoNotOptimize(e.evaluate(batch).arena().data());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kRows));
}
BENCHMARK(BM_Upper);

void BM_LikeContains(benchmark::State& state) {
  auto batch = string_batch();
  CompiledPredicate p(call("LIKE", {expr::column(0, LogicalType::string(), "s"),
                                    expr::literal(Value("%abc%"), LogicalType::string().not_null())}));
  std::vector<std::uint64_t> mask;
  for (auto _ : state) {
    p.select_mask(batch, mask);
    benchmark::DoNotOptimize(mask.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kRows));
}
BENCHMARK(BM_LikeContains);

}  // namespace

BENCHMARK_MAIN();
