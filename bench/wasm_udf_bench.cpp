// WebAssembly scalar UDFs (docs/udf-wasm.md) over 1024-row columnar batches, against the
// built-in kernels doing the same work: add(a, b) on BIGINT (one i64 call per row) and
// shout(s) on 16-byte strings (alloc + copy in, the call, copy out + dealloc per row).
// `per_call` is the time per row, i.e. per guest call (the batch set-up amortised).
#include <benchmark/benchmark.h>

#include <random>

#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/expression/expr.hpp"
#include "clink/sql/expression/expr_compiler.hpp"
#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/function/wasm_udf.hpp"

using namespace clink::sql;

namespace {

constexpr std::size_t kRows = 1024;

// The same functions as tests/wasm/udfs.wat (add, shout and the allocator).
constexpr const char* kModule = R"((module
  (memory (export "memory") 1)
  (global $top (mut i32) (i32.const 1024))
  (global $live (mut i32) (i32.const 0))
  (func $alloc (export "alloc") (param $n i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $top))
    (global.set $top (i32.add (local.get $p) (i32.and (i32.add (local.get $n) (i32.const 7)) (i32.const -8))))
    (global.set $live (i32.add (global.get $live) (i32.const 1)))
    (local.get $p))
  (func (export "dealloc") (param $p i32) (param $n i32)
    (global.set $live (i32.sub (global.get $live) (i32.const 1)))
    (if (i32.eqz (global.get $live)) (then (global.set $top (i32.const 1024)))))
  (func (export "add") (param $a i64) (param $b i64) (result i64)
    (i64.add (local.get $a) (local.get $b)))
  (func (export "shout") (param $p i32) (param $n i32) (result i64)
    (local $out i32) (local $i i32) (local $c i32)
    (local.set $out (call $alloc (i32.add (local.get $n) (i32.const 1))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $c (i32.load8_u (i32.add (local.get $p) (local.get $i))))
        (if (i32.and (i32.ge_u (local.get $c) (i32.const 97)) (i32.le_u (local.get $c) (i32.const 122)))
          (then (local.set $c (i32.sub (local.get $c) (i32.const 32)))))
        (i32.store8 (i32.add (local.get $out) (local.get $i)) (local.get $c))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.store8 (i32.add (local.get $out) (local.get $n)) (i32.const 33))
    (i64.or (i64.shl (i64.extend_i32_u (local.get $out)) (i64.const 32))
            (i64.extend_i32_u (i32.add (local.get $n) (i32.const 1))))))
)";

void register_module() {
  static bool done = [] {
    WasmUdfDecl add{"wasm_add", false, true, {LogicalType::bigint(), LogicalType::bigint()}, LogicalType::bigint(),
                    "add", kModule};
    register_wasm_udf(add);
    WasmUdfDecl shout{"wasm_shout", false, true, {LogicalType::string()}, LogicalType::string(), "shout", kModule};
    register_wasm_udf(shout);
    return true;
  }();
  (void)done;
}

ColumnBatch int_batch() {
  auto schema = make_schema({{"a", LogicalType::bigint()}, {"b", LogicalType::bigint()}});
  ColumnBatch b(schema, kRows);
  std::mt19937_64 rng(42);
  for (std::size_t i = 0; i < kRows; ++i) {
    b.column(0).append<std::int64_t>(static_cast<std::int64_t>(rng() % 1000));
    b.column(1).append<std::int64_t>(static_cast<std::int64_t>(rng() % 1000));
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
    b.column(0).append_string(s);
  }
  b.commit_rows(kRows);
  return b;
}

void run(benchmark::State& state, const ColumnBatch& batch, ExprPtr e) {
  CompiledProjection proj({std::move(e)}, {"x"});
  for (auto _ : state) {
    auto out = proj.project(batch);
    benchmark::DoNotOptimize(out);
  }
  state.counters["per_call"] =
      benchmark::Counter(kRows, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_WasmAddI64(benchmark::State& state) {
  register_module();
  auto batch = int_batch();
  auto a = expr::column(0, LogicalType::bigint(), "a");
  auto b = expr::column(1, LogicalType::bigint(), "b");
  run(state, batch, expr::call(FunctionRegistry::process(), "wasm_add", {a, b}));
}
BENCHMARK(BM_WasmAddI64);

void BM_BuiltinAddI64(benchmark::State& state) {
  auto batch = int_batch();
  auto a = expr::column(0, LogicalType::bigint(), "a");
  auto b = expr::column(1, LogicalType::bigint(), "b");
  run(state, batch, expr::call(FunctionRegistry::process(), "+", {a, b}));
}
BENCHMARK(BM_BuiltinAddI64);

void BM_WasmShoutString(benchmark::State& state) {
  register_module();
  auto batch = string_batch();
  auto s = expr::column(0, LogicalType::string(), "s");
  run(state, batch, expr::call(FunctionRegistry::process(), "wasm_shout", {s}));
}
BENCHMARK(BM_WasmShoutString);

void BM_BuiltinUpperString(benchmark::State& state) {
  auto batch = string_batch();
  auto s = expr::column(0, LogicalType::string(), "s");
  run(state, batch, expr::call(FunctionRegistry::process(), "UPPER", {s}));
}
BENCHMARK(BM_BuiltinUpperString);

}  // namespace

BENCHMARK_MAIN();
