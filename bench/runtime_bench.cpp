// Runtime throughput: chained map -> filter on one core, and a hash exchange between
// two subtasks. Each iteration runs a whole job; items/s is records through the job.
#include <benchmark/benchmark.h>

#include "clink/api/data_stream.hpp"
#include "clink/connectors/blackhole_sink.hpp"

namespace clink {
namespace {

// Emits `total` int64 records from memory: one prepared batch copied per poll.
class MemorySource final : public Source<std::int64_t> {
 public:
  explicit MemorySource(std::int64_t total) : total_(total) {}
  std::string factory_name() const override { return "memory"; }
  std::unique_ptr<SourceReader<std::int64_t>> create_reader(int subtask, int parallelism) const override {
    return std::make_unique<Reader>(total_ / parallelism, subtask);
  }

 private:
  class Reader final : public SourceReader<std::int64_t> {
   public:
    Reader(std::int64_t total, int subtask) : left_(total) {
      for (std::size_t i = 0; i < kDefaultBatchSize; ++i)
        prepared_.push_back(Record<std::int64_t>{static_cast<std::int64_t>(i) + subtask, kNoEventTime, kNoPartition});
    }
    Status poll(Batch<std::int64_t>& out, std::size_t) override {
      auto n = static_cast<std::size_t>(std::min<std::int64_t>(left_, static_cast<std::int64_t>(prepared_.size())));
      out.records.assign(prepared_.begin(), prepared_.begin() + static_cast<std::ptrdiff_t>(n));
      left_ -= static_cast<std::int64_t>(n);
      return left_ > 0 ? Status::kMore : Status::kEnd;
    }

   private:
    std::int64_t left_;
    std::vector<Record<std::int64_t>> prepared_;
  };
  std::int64_t total_;
};

void BM_ChainedMapFilter(benchmark::State& state) {
  const std::int64_t total = state.range(0);
  for (auto _ : state) {
    StreamExecutionEnvironment env;
    env.from_source<std::int64_t>(std::make_shared<MemorySource>(total))
        .map([](std::int64_t x) { return x * 2 + 1; })
        .filter([](std::int64_t x) { return x % 3 != 0; })
        .sink_to(std::make_shared<BlackholeSink<std::int64_t>>());
    env.execute();
  }
  state.SetItemsProcessed(state.iterations() * total);
}
BENCHMARK(BM_ChainedMapFilter)->Arg(20'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_HashExchangeTwoSubtasks(benchmark::State& state) {
  const std::int64_t total = state.range(0);
  for (auto _ : state) {
    StreamExecutionEnvironment env;
    env.set_parallelism(2);
    env.from_source<std::int64_t>(std::make_shared<MemorySource>(total))
        .key_by([](std::int64_t x) { return x; })
        .filter([](std::int64_t x) { return x >= 0; })
        .sink_to(std::make_shared<BlackholeSink<std::int64_t>>());
    env.execute();
  }
  state.SetItemsProcessed(state.iterations() * total);
}
BENCHMARK(BM_HashExchangeTwoSubtasks)->Arg(10'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace clink

BENCHMARK_MAIN();
