// Keyed state benchmarks.
//   BM_MemoryPutCounters/1000000       put 1 M int64 counters (ns per put)
//   BM_MemorySnapshot/1000000          full checkpoint of 1 M counters; counters: bytes_per_key
//   BM_ValueStateUpdate                ValueState<int64> read-modify-write over 100 K keys (items/s)
//   BM_RocksDbCheckpoints/N            full checkpoint of N counters, then 1 % changed and an
//                                      incremental checkpoint; counters: full_bytes,
//                                      incremental_bytes, incremental_percent
// Run: build/release/bench/state_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "clink/state/keyed_state.hpp"

namespace {

using namespace clink;
namespace fs = std::filesystem;

struct Tmp {
  fs::path path;
  explicit Tmp(const std::string& name) {
    path = fs::temp_directory_path() / ("clink-state-bench-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Tmp() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::unique_ptr<KeyedStateBackend> backend(const std::string& kind, const fs::path& work) {
  StateBackendConfig c;
  c.kind = kind;
  c.working_dir = work;
  return make_keyed_state_backend(c, "bench", 0, {0, 127}, 128, SystemClock::instance());
}

void put_counters(KeyedStateBackend& b, StateId id, std::int64_t n, std::int64_t step, std::int64_t add) {
  std::string k, v;
  for (std::int64_t i = 0; i < n; i += step) {
    k.clear();
    KeyCodec<std::int64_t>::encode(i, k);
    b.set_current_key(k);
    v.clear();
    StateCodec<std::int64_t>::encode(i + add, v);
    b.put(id, v);
  }
}

std::uint64_t bytes_of(const std::map<std::string, std::uint64_t>& files) {
  std::uint64_t n = 0;
  for (const auto& [p, s] : files) n += s;
  return n;
}
std::map<std::string, std::uint64_t> files_under(const fs::path& dir) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[e.path().string()] = e.file_size();
  return out;
}

void BM_MemoryPutCounters(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Tmp tmp("put");
  for (auto _ : state) {
    state.PauseTiming();
    auto b = backend("memory", tmp.path);
    auto id = b->register_state("counter", StateKind::kValue);
    state.ResumeTiming();
    put_counters(*b, id, n, 1, 0);
    state.PauseTiming();
    b.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_MemoryPutCounters)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_MemorySnapshot(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Tmp tmp("snapshot");
  auto b = backend("memory", tmp.path);
  auto id = b->register_state("counter", StateKind::kValue);
  put_counters(*b, id, n, 1, 1000);
  std::int64_t cp = 0;
  std::uint64_t size = 0;
  for (auto _ : state) {
    ++cp;
    auto h = b->snapshot(cp, tmp.path / ("chk-" + std::to_string(cp)));
    size = h.description->at("size").get<std::uint64_t>();
    state.PauseTiming();
    fs::remove_all(tmp.path / ("chk-" + std::to_string(cp)));
    state.ResumeTiming();
  }
  state.counters["bytes_per_key"] = static_cast<double>(size) / static_cast<double>(n);
  state.counters["snapshot_MB"] = static_cast<double>(size) / 1e6;
}
BENCHMARK(BM_MemorySnapshot)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_ValueStateUpdate(benchmark::State& state) {
  Tmp tmp("value");
  auto b = backend(state.range(0) ? "rocksdb" : "memory", tmp.path);
  KeyedStateStore store(*b);
  auto& count = store.get_state(ValueStateDescriptor<std::int64_t>{"count"});
  constexpr std::int64_t kKeys = 100'000;
  std::string k;
  std::int64_t i = 0;
  for (auto _ : state) {
    k.clear();
    KeyCodec<std::int64_t>::encode(i++ % kKeys, k);
    b->set_current_key(k);
    count.update(count.value().value_or(0) + 1);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(state.range(0) ? "rocksdb" : "memory");
}
BENCHMARK(BM_ValueStateUpdate)->Arg(0)->Arg(1);

void BM_RocksDbCheckpoints(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  for (auto _ : state) {
    Tmp tmp("rocksdb");
    auto b = backend("rocksdb", tmp.path / "work");
    auto id = b->register_state("counter", StateKind::kValue);
    put_counters(*b, id, n, 1, 0);
    const fs::path root = tmp.path / "checkpoints";
    auto t0 = std::chrono::steady_clock::now();
    b->snapshot(1, root / "chk-1");
    auto t1 = std::chrono::steady_clock::now();
    b->notify_checkpoint_complete(1);
    auto before = files_under(root);
    put_counters(*b, id, n, 100, 7);  // 1 % of the keys
    auto t2 = std::chrono::steady_clock::now();
    b->snapshot(2, root / "chk-2");
    auto t3 = std::chrono::steady_clock::now();
    auto after = files_under(root);
    std::uint64_t incremental = 0;
    for (const auto& [p, s] : after)
      if (!before.count(p)) incremental += s;
    std::uint64_t full = bytes_of(before);
    state.counters["full_MB"] = static_cast<double>(full) / 1e6;
    state.counters["incremental_MB"] = static_cast<double>(incremental) / 1e6;
    state.counters["incremental_percent"] = 100.0 * static_cast<double>(incremental) / static_cast<double>(full);
    state.counters["full_ms"] = std::chrono::duration<double, std::milli>(t1 - t0).count();
    state.counters["incremental_ms"] = std::chrono::duration<double, std::milli>(t3 - t2).count();
  }
}
BENCHMARK(BM_RocksDbCheckpoints)->Arg(1'000'000)->Arg(10'000'000)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
