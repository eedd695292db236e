// Window checkpoints are incremental: a checkpoint writes to the keyed state backend
// only the entries that changed since the previous one and removes only those gone.
// Counted exactly at the backend, on the memory and the RocksDB backend, for the
// sliced path (tumbling, sliding) and the generic path; RocksDB's checkpoint then adds
// only small SST files.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>

#include "window_checkpoint_support.hpp"

#include "../support/checkpoint_support.hpp"

namespace clink::test {
namespace {

struct Count final : AggregateFunction<P, std::int64_t, std::int64_t> {
  std::int64_t create_accumulator() const override { return 0; }
  void add(const P&, std::int64_t& acc) const override { ++acc; }
  std::int64_t get_result(const std::int64_t& acc) const override { return acc; }
  void merge(std::int64_t& acc, const std::int64_t& o) const override { acc += o; }
  void retract(std::int64_t& acc, const std::int64_t& o) const { acc -= o; }
};

constexpr std::int64_t kKeys = 10000;

Step records(std::vector<std::pair<std::int64_t, EventTime>> key_times, EventTime watermark) {
  Step s;
  for (auto [k, t] : key_times) s.records.push_back(Record<P>{P{k, 1}, t});
  s.watermark = watermark;
  return s;
}
Step every_key(EventTime t, EventTime watermark) {
  Step s;
  for (std::int64_t k = 0; k < kKeys; ++k) s.records.push_back(Record<P>{P{k, 1}, t});
  s.watermark = watermark;
  return s;
}

std::uintmax_t new_sst_bytes(const std::filesystem::path& shared, int checkpoint) {
  std::uintmax_t bytes = 0;
  if (!std::filesystem::exists(shared)) return 0;
  const std::string tag = "-c" + std::to_string(checkpoint) + "-";
  for (const auto& e : std::filesystem::directory_iterator(shared))
    if (e.path().filename().string().find(tag) != std::string::npos) bytes += e.file_size();
  return bytes;
}

class WindowCheckpointWrites : public ::testing::TestWithParam<std::string> {
 protected:
  StateBackendConfig config(const std::filesystem::path& dir) const {
    StateBackendConfig c;
    c.kind = GetParam();
    c.working_dir = dir;
    return c;
  }
  static WindowConfig<P> window(WindowAssignerPtr a, bool slicing) {
    WindowConfig<P> cfg;
    cfg.assigner = std::move(a);
    cfg.allow_slicing = slicing;
    return cfg;
  }

  // 10 000 keys, one pane / window each, checkpointed; then one key changes.
  // `existing`: the writes of a record into the key's existing pane; `fresh`: of one
  // starting a new pane (a sliced key then also rewrites its side data).
  void expect_one_key_writes_o1(WindowConfig<P> cfg, std::int64_t fresh_puts) {
    TempDir dir;
    Harness<Count> h(std::move(cfg), config(dir.path / "work"));
    h.step(every_key(5, 0));
    h.checkpoint(dir.path / "chk", 1);
    EXPECT_GE(h.backend().puts, kKeys);
    const auto full_bytes = new_sst_bytes(dir.path / "chk" / "shared", 1);

    h.backend().reset_counts();
    h.checkpoint(dir.path / "chk", 2);  // nothing changed: nothing written
    EXPECT_EQ(h.backend().puts, 0);
    EXPECT_EQ(h.backend().removes, 0);

    h.backend().reset_counts();
    h.step(records({{17, 6}}, 1));
    h.checkpoint(dir.path / "chk", 3);
    EXPECT_EQ(h.backend().puts, 1);  // the key's pane / window
    EXPECT_EQ(h.backend().removes, 0);
    const auto one_bytes = new_sst_bytes(dir.path / "chk" / "shared", 3);

    h.backend().reset_counts();
    h.step(records({{17, 25}, {4242, 26}}, 2));
    h.checkpoint(dir.path / "chk", 4);
    EXPECT_EQ(h.backend().puts, 2 * fresh_puts);
    EXPECT_EQ(h.backend().removes, 0);
    if (GetParam() == "rocksdb") {
      std::cout << "RocksDB SST bytes: full checkpoint " << full_bytes << ", after one key changed " << one_bytes
                << "\n";
      EXPECT_GT(one_bytes, 0u);
      EXPECT_LT(one_bytes * 10, full_bytes) << "an incremental RocksDB checkpoint adds small files";
    }
  }
};
INSTANTIATE_TEST_SUITE_P(Backends, WindowCheckpointWrites, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

TEST_P(WindowCheckpointWrites, TumblingSlicedOneKeyOutOf10000) {
  // A new pane: the pane and the key's side data (relative to its newest pane).
  expect_one_key_writes_o1(window(std::make_shared<TumblingEventTimeWindows>(10), true), 2);
}
TEST_P(WindowCheckpointWrites, SlidingSlicedOneKeyOutOf10000) {
  expect_one_key_writes_o1(window(std::make_shared<SlidingEventTimeWindows>(30, 10), true), 2);
}
TEST_P(WindowCheckpointWrites, TumblingGenericOneKeyOutOf10000) {
  // One (key, window) entry per new window.
  expect_one_key_writes_o1(window(std::make_shared<TumblingEventTimeWindows>(10), false), 1);
}

// Firing and cleaning a window removes exactly its entries.
TEST_P(WindowCheckpointWrites, CleanedWindowsAreRemovedExactly) {
  for (bool slicing : {true, false}) {
    SCOPED_TRACE(slicing ? "sliced" : "generic");
    TempDir dir;
    Harness<Count> h(window(std::make_shared<TumblingEventTimeWindows>(10), slicing), config(dir.path / "work"));
    h.step(every_key(5, 0));
    h.step(records({{17, 15}}, 1));
    h.checkpoint(dir.path / "chk", 1);
    h.backend().reset_counts();
    h.step(records({}, 9));  // fires and cleans [0,10) of every key
    EXPECT_EQ(h.emitted().size(), static_cast<std::size_t>(kKeys));
    h.checkpoint(dir.path / "chk", 2);
    if (slicing) {
      // Each key's pane and side data, except key 17's side data (rewritten: it keeps [10,20)).
      EXPECT_EQ(h.backend().removes, 2 * kKeys - 1);
      EXPECT_EQ(h.backend().puts, 1);
    } else {
      EXPECT_EQ(h.backend().removes, kKeys);
      EXPECT_EQ(h.backend().puts, 0);
    }
    // What is left is exactly key 17's window [10,20).
    Harness<Count> fresh(window(std::make_shared<TumblingEventTimeWindows>(10), slicing), config(dir.path / "w2"));
    fresh.step(records({{17, 5}, {17, 15}}, 0));
    fresh.step(records({}, 9));
    fresh.op().snapshot_state(1);
    EXPECT_EQ(h.backend_entries(), fresh.backend_entries());
  }
}

// Without checkpoints the change lists stay in proportion to the live state: keys come
// and go with every window (all 10 000 cleaned, then created again, 60 times).
TEST(WindowChangeLists, StayBoundedWithoutCheckpoints) {
  for (bool slicing : {true, false}) {
    SCOPED_TRACE(slicing ? "sliced" : "generic");
    WindowConfig<P> cfg;
    cfg.assigner = std::make_shared<TumblingEventTimeWindows>(10);
    cfg.allow_slicing = slicing;
    Harness<Count> h(cfg, StateBackendConfig{});
    for (int w = 0; w < 60; ++w) {
      h.step(every_key(10 * w + 5, 10 * w + 9));
      EXPECT_LE(h.op().pending_changes(), static_cast<std::size_t>(3 * kKeys + 4096)) << "window " << w;
    }
    EXPECT_EQ(h.emitted().size(), static_cast<std::size_t>(60 * kKeys));
  }
}

}  // namespace
}  // namespace clink::test
