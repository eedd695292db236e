// Window engine throughput on one core: the WindowOperator driven directly (batches of
// 1024 records, a watermark after each batch), and the same window in a whole job.
//
//   tumbling 60 s COUNT per key, 100 k int64 keys
//   sliding 60 s / 1 s SUM per key, 100 k int64 keys (target: >= 5 M/s, within 1.5x of tumbling)
//
// Input: keys uniformly random over 100 k, in event-time order, watermark = last
// timestamp - 1 after every batch; event time advances 1 ms every per_ms records:
// per_ms 1000 gives ~10 records per key per second (a sliding window then fires for
// every key every second: 0.1 results per record), 10000 gives ~100.
// flush 0 leaves the end of input (the final watermark firing every open window: 60
// per key for sliding) out of the timing: the rate of a long-running job.
// warmup_s > 0 also leaves out the first warmup_s seconds of event time (the records
// counted are the rest): the state's growth to its steady size (every key's pane ring,
// the huge pages the kernel zeroes on first touch) happens once per job, in its first
// window size of event time.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "clink/api/windowed_stream.hpp"
#include "clink/connectors/blackhole_sink.hpp"
#include "clink/state/keyed_state_backend.hpp"

namespace clink {
namespace {

constexpr std::int64_t kKeys = 100'000;
constexpr std::int64_t kRecordsPerMs = 1000;

struct Identity {
  std::int64_t operator()(std::int64_t v) const { return v; }
};
struct CountAgg final : AggregateFunction<std::int64_t, std::int64_t, std::int64_t> {
  std::int64_t create_accumulator() const override { return 0; }
  void add(const std::int64_t&, std::int64_t& acc) const override { ++acc; }
  std::int64_t get_result(const std::int64_t& acc) const override { return acc; }
  void merge(std::int64_t& acc, const std::int64_t& o) const override { acc += o; }
  void retract(std::int64_t& acc, const std::int64_t& o) const { acc -= o; }  // invertible: subtract-on-evict
};
struct SumAgg final : AggregateFunction<std::int64_t, std::int64_t, std::int64_t> {
  std::int64_t create_accumulator() const override { return 0; }
  void add(const std::int64_t& v, std::int64_t& acc) const override { acc += v; }
  std::int64_t get_result(const std::int64_t& acc) const override { return acc; }
  void merge(std::int64_t& acc, const std::int64_t& o) const override { acc += o; }
  void retract(std::int64_t& acc, const std::int64_t& o) const { acc -= o; }  // invertible: subtract-on-evict
};

const std::vector<std::int64_t>& random_keys() {
  static const std::vector<std::int64_t> keys = [] {
    std::vector<std::int64_t> k(1 << 20);
    std::uint64_t x = 88172645463325252ull;
    for (auto& v : k) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      v = static_cast<std::int64_t>(x % kKeys);
    }
    return k;
  }();
  return keys;
}

class CountingOutput final : public Output {
 public:
  void emit(BatchPtr batch) override { records += static_cast<std::int64_t>(batch->size()); }
  void emit_watermark(Watermark) override {}
  void emit_side(const std::string&, BatchPtr) override {}
  std::int64_t records = 0;
};

// Runs `total` records through the operator. Without `flush` the final watermark (which
// fires every still-open window: 60 per key for sliding 60 s / 1 s) and the teardown are
// not timed: the steady-state rate of a long-running job.
template <class Agg>
std::int64_t drive(benchmark::State& state, WindowAssignerPtr assigner, bool slicing, std::int64_t total, bool flush,
                   std::int64_t per_ms, std::int64_t warmup_records = 0) {
  using Policy = IncrementalPolicy<std::int64_t, Agg, EmitWindowResult<std::int64_t, std::int64_t>>;
  WindowConfig<std::int64_t> cfg;
  cfg.assigner = std::move(assigner);
  cfg.allow_slicing = slicing;
  auto op_ptr = std::make_unique<WindowOperator<std::int64_t, std::int64_t, Identity, Policy>>(cfg, Identity{},
                                                                                               Policy(Agg{}, {}));
  auto& op = *op_ptr;
  CountingOutput out;
  RuntimeContext ctx("window", "Window", 0, 1, kDefaultMaxParallelism, &out, std::make_shared<OperatorMetrics>(),
                     SystemClock::instance());
  op.open(ctx);
  const auto& keys = random_keys();
  std::int64_t i = 0;
  bool warming = warmup_records > 0;
  if (warming) state.PauseTiming();
  while (i < total) {
    if (warming && i >= warmup_records) {
      state.ResumeTiming();
      warming = false;
    }
    auto batch = std::make_unique<Batch<std::int64_t>>();
    batch->records.resize(static_cast<std::size_t>(std::min<std::int64_t>(kDefaultBatchSize, total - i)));
    for (auto& r : batch->records) {
      r.value = keys[static_cast<std::size_t>(i) & (keys.size() - 1)];
      r.event_time = i / per_ms;
      ++i;
    }
    EventTime wm = (i - 1) / per_ms - 1;
    op.process_batch(0, std::move(batch));
    op.process_watermark(Watermark::at(wm));
  }
  if (!flush) state.PauseTiming();
  op.process_watermark(Watermark::max());
  op.close();
  op_ptr.reset();
  if (!flush) state.ResumeTiming();
  return out.records;
}

std::int64_t warmup_records(const benchmark::State& state) { return state.range(4) * 1000 * state.range(3); }

void report(benchmark::State& state, std::int64_t total, std::int64_t results, std::int64_t warmup = 0) {
  state.SetItemsProcessed(state.iterations() * (total - warmup));
  state.counters["results"] = static_cast<double>(results);
}

void BM_TumblingCount60s(benchmark::State& state) {
  const std::int64_t total = state.range(0);
  std::int64_t results = 0;
  for (auto _ : state)
    results = drive<CountAgg>(state, std::make_shared<TumblingEventTimeWindows>(60'000), state.range(1), total,
                              state.range(2), state.range(3), warmup_records(state));
  report(state, total, results, warmup_records(state));
}
BENCHMARK(BM_TumblingCount60s)
    ->ArgNames({"records", "sliced", "flush", "per_ms", "warmup_s"})
    ->Args({50'000'000, 1, 0, 1000, 0})
    ->Args({50'000'000, 1, 1, 1000, 0})
    ->Args({50'000'000, 1, 0, 10000, 0})
    ->Args({150'000'000, 1, 0, 1000, 0})  // 150 s of event time: the sliding comparison's steady state
    ->Args({210'000'000, 1, 0, 1000, 60})  // the same after a first minute untimed
    ->Args({1'500'000'000, 1, 0, 10000, 0})  // the same 150 s at 100 records per key per second
    ->Args({20'000'000, 0, 1, 1000, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_SlidingSum60s1s(benchmark::State& state) {
  const std::int64_t total = state.range(0);
  std::int64_t results = 0;
  for (auto _ : state)
    results = drive<SumAgg>(state, std::make_shared<SlidingEventTimeWindows>(60'000, 1'000), state.range(1), total,
                            state.range(2), state.range(3), warmup_records(state));
  report(state, total, results, warmup_records(state));
}
BENCHMARK(BM_SlidingSum60s1s)
    ->ArgNames({"records", "sliced", "flush", "per_ms", "warmup_s"})
    ->Args({50'000'000, 1, 0, 1000, 0})
    ->Args({50'000'000, 1, 1, 1000, 0})
    ->Args({50'000'000, 1, 0, 10000, 0})
    // 150 s of event time at 10 records per key per second: past the first 60 s every
    // second retires a pane per key, the steady state of a long-running job (50 s never
    // leaves the first window).
    ->Args({150'000'000, 1, 0, 1000, 0})
    ->Args({210'000'000, 1, 0, 1000, 60})  // the same 150 s after a first minute untimed (state at its size)
    ->Args({1'500'000'000, 1, 0, 10000, 0})  // 100 records per key per second: 0.01 results per record
    ->Args({1'000'000, 0, 1, 1000, 0})  // the generic path: 60 windows per record
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Incremental window checkpoints: sliding 60 s / 1 s SUM over 100 k keys on the memory
// backend, 10 records per key per second. After 60 s (6 M panes) a checkpoint every
// second of event time (1 M records). Times only the operator's snapshot_state (its
// writes into the keyed state backend): the first checkpoint writes everything
// (first_ms), each later one what changed in its second (later_ms, later_changes:
// listed keys and removals; every key fires and gets a new pane every second here).
void BM_SlidingCheckpointEverySecond(benchmark::State& state) {
  using Policy = IncrementalPolicy<std::int64_t, SumAgg, EmitWindowResult<std::int64_t, std::int64_t>>;
  const std::int64_t seconds = state.range(0);
  double first_ms = 0, later_ms = 0, later_changes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    WindowConfig<std::int64_t> cfg;
    cfg.assigner = std::make_shared<SlidingEventTimeWindows>(60'000, 1'000);
    auto op = std::make_unique<WindowOperator<std::int64_t, std::int64_t, Identity, Policy>>(cfg, Identity{},
                                                                                           Policy(SumAgg{}, {}));
    CountingOutput out;
    RuntimeContext ctx("window", "Window", 0, 1, kDefaultMaxParallelism, &out, std::make_shared<OperatorMetrics>(),
                       SystemClock::instance());
    ctx.set_keyed_state_backend(make_keyed_state_backend(StateBackendConfig{}, "window", 0, ctx.key_groups(),
                                                         kDefaultMaxParallelism, SystemClock::instance()));
    op->open(ctx);
    const auto& keys = random_keys();
    std::int64_t i = 0;
    for (std::int64_t sec = 0; sec < seconds; ++sec) {
      const std::int64_t end = (sec + 1) * 1000 * kRecordsPerMs;
      while (i < end) {
        auto batch = std::make_unique<Batch<std::int64_t>>();
        batch->records.resize(static_cast<std::size_t>(std::min<std::int64_t>(kDefaultBatchSize, end - i)));
        for (auto& r : batch->records) {
          r.value = keys[static_cast<std::size_t>(i) & (keys.size() - 1)];
          r.event_time = i / kRecordsPerMs;
          ++i;
        }
        op->process_batch(0, std::move(batch));
        op->process_watermark(Watermark::at((i - 1) / kRecordsPerMs - 1));
      }
      if (sec < 59) continue;  // windows fill up for 60 s; then a checkpoint every second
      const auto changes = static_cast<double>(op->pending_changes());
      const auto t0 = std::chrono::steady_clock::now();
      state.ResumeTiming();
      op->snapshot_state(sec + 1);
      state.PauseTiming();
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (sec == 59) {
        first_ms = ms;
      } else {
        later_ms += ms / static_cast<double>(seconds - 60);
        later_changes += changes / static_cast<double>(seconds - 60);
      }
    }
    op->close();
    op.reset();
    state.ResumeTiming();
  }
  state.counters["first_ms"] = first_ms;
  state.counters["later_ms"] = later_ms;
  state.counters["later_changes"] = later_changes;
}
BENCHMARK(BM_SlidingCheckpointEverySecond)->Arg(64)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

// The whole job: a source of the same records, hash exchange, window, blackhole.
class KeyedSource final : public Source<std::int64_t> {
 public:
  explicit KeyedSource(std::int64_t total) : total_(total) {}
  std::string factory_name() const override { return "bench_keys"; }
  std::unique_ptr<SourceReader<std::int64_t>> create_reader(int, int) const override {
    return std::make_unique<Reader>(total_);
  }

 private:
  class Reader final : public SourceReader<std::int64_t> {
   public:
    explicit Reader(std::int64_t total) : total_(total) {}
    Status poll(Batch<std::int64_t>& out, std::size_t) override {
      const auto& keys = random_keys();
      auto n = std::min<std::int64_t>(kDefaultBatchSize, total_ - i_);
      for (std::int64_t k = 0; k < n; ++k, ++i_)
        out.records.push_back(
            Record<std::int64_t>{keys[static_cast<std::size_t>(i_) & (keys.size() - 1)], i_ / kRecordsPerMs, kNoPartition});
      return i_ < total_ ? Status::kMore : Status::kEnd;
    }

   private:
    std::int64_t total_;
    std::int64_t i_ = 0;
  };
  std::int64_t total_;
};

void BM_JobTumblingCount60s(benchmark::State& state) {
  const std::int64_t total = state.range(0);
  for (auto _ : state) {
    StreamExecutionEnvironment env;
    env.from_source<std::int64_t>(std::make_shared<KeyedSource>(total))
        .assign_timestamps_and_watermarks(MonotonicWatermarkStrategy<std::int64_t>())
        .key_by(Identity{})
        .window(TumblingEventTimeWindows::of(60'000))
        .aggregate_with_info(CountAgg{})
        .sink_to(std::make_shared<BlackholeSink<WindowResult<std::int64_t, std::int64_t>>>());
    env.execute();
  }
  state.SetItemsProcessed(state.iterations() * total);
}
BENCHMARK(BM_JobTumblingCount60s)->Arg(20'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace clink

BENCHMARK_MAIN();
