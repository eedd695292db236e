// Events/s of the Nexmark generator on one core (Flink's Nexmark generator does about
// 1-2 M events/s per core): the generator alone, the generator with every `extra`
// materialised (what a query selecting `extra` pays), and the source reader's batches.
#include <benchmark/benchmark.h>

#include <string>

#include "clink/connectors/nexmark/nexmark_generator.hpp"
#include "clink/connectors/nexmark/nexmark_source.hpp"

namespace {

using namespace clink;
using namespace clink::nexmark;

GeneratorConfig bench_config() {
  GeneratorConfig c;
  c.base_time = 1600000000000;
  return c;
}

void BM_NexmarkGenerate(benchmark::State& state) {
  NexmarkGenerator g(bench_config());
  NexmarkEvent e;
  std::int64_t n = 0;
  for (auto _ : state) {
    g.generate(n++, e);
    benchmark::DoNotOptimize(e);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_NexmarkGenerate);

void BM_NexmarkGenerateWithExtra(benchmark::State& state) {
  NexmarkGenerator g(bench_config());
  NexmarkEvent e;
  std::string extra;
  extra.reserve(4096);
  std::int64_t n = 0;
  for (auto _ : state) {
    g.generate(n++, e);
    extra.clear();
    e.extra().append_to(extra);
    benchmark::DoNotOptimize(extra.data());
    benchmark::DoNotOptimize(e);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_NexmarkGenerateWithExtra);

// The reader at max-emit-speed, 1024-event batches (the batch is reused, as a
// downstream operator hands its buffer back).
void BM_NexmarkSourcePoll(benchmark::State& state) {
  auto source = NexmarkSource::from_options({{"max-emit-speed", "true"}, {"events.base-time", "1600000000000"}});
  auto reader = source->create_reader(0, 1);
  Batch<NexmarkEvent> batch;
  batch.records.reserve(kDefaultBatchSize);
  std::int64_t events = 0;
  for (auto _ : state) {
    batch.records.clear();
    reader->poll(batch, kDefaultBatchSize);
    events += static_cast<std::int64_t>(batch.records.size());
    benchmark::DoNotOptimize(batch.records.data());
  }
  state.SetItemsProcessed(events);
}
BENCHMARK(BM_NexmarkSourcePoll);

}  // namespace

BENCHMARK_MAIN();
