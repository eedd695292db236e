// CEP throughput and memory on one core, the CepOperator driven directly (batches of
// 1024 records, a watermark after each batch), as window_bench.cpp does for windows.
//
//   BM_CepFollowedBy: a followed_by b followed_by c within 10 s, 10 k keys (int64),
//     event types uniformly a/b/c/d, event time advancing 1 ms every `per_ms` records,
//     matches selected into a small struct. Target: >= 2 M events/s.
//   BM_CepMemoryPerPartial: one key, pattern p{8} (consecutive) followed_by_any m
//     followed_by end; input 8 p's then N m's, so N + 1 partial matches share the 8-event
//     prefix. Reports the heap bytes held per live partial match (counted by replacing
//     global operator new/delete in this binary; includes the slack of growing vectors)
//     and the events / nodes stored per partial (a copying design stores 9 events per
//     partial) for N = 10 .. 3 000: flat. (The run time grows as N^2: every event visits
//     every partial, as in any NFA.)
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#include "clink/cep/cep.hpp"

// ---- heap accounting (this binary only) ----
namespace {
std::atomic<std::int64_t> g_live_bytes{0};
std::atomic<std::int64_t> g_allocations{0};
constexpr std::size_t kHeader = 16;  // keeps alignment; holds the size
}  // namespace
void* operator new(std::size_t n) {
  auto* p = static_cast<char*>(std::malloc(n + kHeader));
  if (!p) throw std::bad_alloc();
  *reinterpret_cast<std::size_t*>(p) = n;
  g_live_bytes.fetch_add(static_cast<std::int64_t>(n), std::memory_order_relaxed);
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return p + kHeader;
}
void operator delete(void* p) noexcept {
  if (!p) return;
  char* base = static_cast<char*>(p) - kHeader;
  g_live_bytes.fetch_sub(static_cast<std::int64_t>(*reinterpret_cast<std::size_t*>(base)), std::memory_order_relaxed);
  std::free(base);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }

namespace clink::cep {
namespace {

struct Ev {
  std::int64_t key = 0;
  std::int64_t id = 0;
  char type = 'd';
};
struct Alert {
  std::int64_t key, a, b, c;
};

constexpr std::int64_t kKeys = 10'000;

const std::vector<std::uint64_t>& randoms() {
  static const std::vector<std::uint64_t> r = [] {
    std::vector<std::uint64_t> v(1 << 20);
    std::uint64_t x = 88172645463325252ull;
    for (auto& e : v) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      e = x;
    }
    return v;
  }();
  return r;
}

class CountingOutput final : public Output {
 public:
  void emit(BatchPtr batch) override { records += static_cast<std::int64_t>(batch->size()); }
  void emit_watermark(Watermark) override {}
  void emit_side(const std::string&, BatchPtr) override {}
  std::int64_t records = 0;
};

auto is(char t) {
  return [t](const Ev& e) { return e.type == t; };
}

void BM_CepFollowedBy(benchmark::State& state) {
  const std::int64_t total = state.range(0);
  const std::int64_t per_ms = state.range(1);
  const auto pattern = Pattern<Ev>::begin("a").where(is('a')).followed_by("b").where(is('b'))
                           .followed_by("c").where(is('c')).within(10'000);
  auto select = [](const Match<Ev>& m) {
    return Alert{m.at("a")[0].key, m.at("a")[0].id, m.at("b")[0].id, m.at("c")[0].id};
  };
  using Fn = function_detail::SelectFunction<Ev, Alert, decltype(select)>;
  std::int64_t results = 0, heap_bytes = 0, allocations = 0;
  std::size_t partials = 0;
  for (auto _ : state) {
    randoms();
    const std::int64_t heap_before = g_live_bytes.load();
    const std::int64_t allocations_before = g_allocations.load();
    CepOperator<Ev, Alert, std::int64_t> op(pattern, [](const Ev& e) { return e.key; }, std::make_shared<Fn>(select),
                                            CepOptions<Ev>{});
    CountingOutput out;
    RuntimeContext ctx("cep", "CEP", 0, 1, kDefaultMaxParallelism, &out, std::make_shared<OperatorMetrics>(),
                       SystemClock::instance());
    op.open(ctx);
    const auto& rnd = randoms();
    std::int64_t i = 0;
    while (i < total) {
      auto batch = std::make_unique<Batch<Ev>>();
      batch->records.resize(static_cast<std::size_t>(std::min<std::int64_t>(kDefaultBatchSize, total - i)));
      for (auto& r : batch->records) {
        const std::uint64_t x = rnd[static_cast<std::size_t>(i) & (rnd.size() - 1)];
        r.value = Ev{static_cast<std::int64_t>(x % kKeys), i, static_cast<char>('a' + (x >> 32) % 4)};
        r.event_time = i / per_ms;
        ++i;
      }
      op.process_batch(0, std::move(batch));
      op.process_watermark(Watermark::at((i - 1) / per_ms - 1));
    }
    state.PauseTiming();
    partials = op.live_partial_matches();
    heap_bytes = g_live_bytes.load() - heap_before;
    allocations = g_allocations.load() - allocations_before;
    op.close();
    state.ResumeTiming();
    results = out.records;
  }
  state.SetItemsProcessed(state.iterations() * total);
  state.counters["matches"] = static_cast<double>(results);
  state.counters["live_partials_at_end"] = static_cast<double>(partials);
  // Heap held by the operator at the end (operator new only: tables of 2 MiB and more are
  // mapped on huge pages and not counted here).
  state.counters["heap_MB_at_end"] = static_cast<double>(heap_bytes) / 1e6;
  // operator new calls per record (the input batches included: 1 per 1024 records).
  state.counters["allocs_per_record"] = static_cast<double>(allocations) / static_cast<double>(total);
}
BENCHMARK(BM_CepFollowedBy)
    ->ArgNames({"records", "per_ms"})
    ->Args({20'000'000, 1000})
    ->Args({20'000'000, 100})
    ->Args({2'000'000, 1000})
    ->Args({200'000, 1000})  // small: for valgrind --tool=callgrind
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_CepMemoryPerPartial(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  constexpr int kPrefix = 8;
  const auto pattern = Pattern<Ev>::begin("p").where(is('p')).times(kPrefix).consecutive()
                           .followed_by_any("m").where(is('m')).followed_by("end").where(is('e'));
  auto select = [](const Match<Ev>& m) { return Alert{m.at("p")[0].key, 0, 0, 0}; };
  using Fn = function_detail::SelectFunction<Ev, Alert, decltype(select)>;
  double per_partial = 0, events_per_partial = 0, nodes_per_partial = 0;
  std::size_t partials = 0;
  for (auto _ : state) {
    state.PauseTiming();
    CountingOutput out;
    RuntimeContext ctx("cep", "CEP", 0, 1, kDefaultMaxParallelism, &out, std::make_shared<OperatorMetrics>(),
                       SystemClock::instance());
    auto op = std::make_unique<CepOperator<Ev, Alert, std::int64_t>>(
        pattern, [](const Ev& e) { return e.key; }, std::make_shared<Fn>(select), CepOptions<Ev>{});
    op->open(ctx);
    // One event first, so the key's table entry and fixed-size structures exist.
    auto feed = [&](char type, std::int64_t id) {
      auto b = std::make_unique<Batch<Ev>>();
      b->push(Ev{1, id, type}, id + 1);
      op->process_batch(0, std::move(b));
      op->process_watermark(Watermark::at(id + 1));
    };
    feed('x', 0);
    const std::int64_t before = g_live_bytes.load();
    state.ResumeTiming();
    for (int i = 0; i < kPrefix; ++i) feed('p', 1 + i);
    for (std::int64_t i = 0; i < n; ++i) feed('m', 1 + kPrefix + i);
    state.PauseTiming();
    partials = op->live_partial_matches();
    per_partial = static_cast<double>(g_live_bytes.load() - before) / static_cast<double>(partials);
    events_per_partial = static_cast<double>(op->stored_events()) / static_cast<double>(partials);
    nodes_per_partial = static_cast<double>(op->stored_nodes()) / static_cast<double>(partials);
    op.reset();
    state.ResumeTiming();
  }
  state.counters["partials"] = static_cast<double>(partials);
  state.counters["bytes_per_partial"] = per_partial;
  state.counters["stored_events_per_partial"] = events_per_partial;  // a copying design: kPrefix + 1
  state.counters["stored_nodes_per_partial"] = nodes_per_partial;
}
BENCHMARK(BM_CepMemoryPerPartial)->Arg(10)->Arg(100)->Arg(1000)->Arg(3000)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace clink::cep

BENCHMARK_MAIN();
