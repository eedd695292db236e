// Throughput of a keyed job (hash exchange + a counter in keyed state per key) without
// checkpoints and with a checkpoint every second: the budget is a cost of
// at most 10 % in steady state.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "clink/api/data_stream.hpp"
#include "clink/connectors/datagen.hpp"
#include "clink/state/keyed_state.hpp"

namespace clink {
namespace {

struct Count final : KeyedProcessFunction<std::int64_t, std::int64_t, std::int64_t> {
  void process_element(const std::int64_t&, Context& ctx, Collector<std::int64_t>&) override {
    auto& count = ctx.state().get_state(ValueStateDescriptor<std::int64_t>{"count"});
    count.update(count.value().value_or(0) + 1);
  }
};

void BM_KeyedCounting(benchmark::State& state) {
  const std::int64_t records = state.range(0);
  const std::int64_t interval_ms = state.range(1);
  const bool rocksdb = state.range(2) != 0;
  auto dir = std::filesystem::temp_directory_path() / ("clink-bench-ckpt-" + std::to_string(::getpid()));
  std::int64_t completed = 0;
  for (auto _ : state) {
    std::filesystem::remove_all(dir);
    StreamExecutionEnvironment env;
    env.set_parallelism(2);
    env.from_source<std::int64_t>(DatagenSource<std::int64_t>::sequence(0, records - 1))
        .set_parallelism(1)
        .key_by([](std::int64_t v) { return v % 100'000; })
        .process(Count{});
    ExecutionOptions options;
    options.checkpoints.interval_ms = interval_ms;
    options.checkpoints.directory = dir;
    options.checkpoints.state_backend.kind = rocksdb ? "rocksdb" : "memory";
    options.checkpoints.state_backend.working_dir = dir / "working";
    auto handle = execute_async(env.graph(), options);
    handle.wait();
    completed += handle.checkpoint_counts().completed;
  }
  std::filesystem::remove_all(dir);
  state.SetItemsProcessed(state.iterations() * records);
  state.counters["checkpoints"] = static_cast<double>(completed) / static_cast<double>(state.iterations());
}
// records, checkpoint interval (0: none), rocksdb
BENCHMARK(BM_KeyedCounting)
    ->Args({10'000'000, 0, 0})
    ->Args({10'000'000, 1000, 0})
    ->Args({3'000'000, 0, 1})
    ->Args({3'000'000, 1000, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(2);

}  // namespace
}  // namespace clink

BENCHMARK_MAIN();
