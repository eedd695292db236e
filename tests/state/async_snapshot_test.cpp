// Asynchronous snapshots: the memory backend's checkpoints (copy-on-write per state and
// key group) and RocksDB's savepoints (a full scan of a RocksDB snapshot, which ran at the
// barrier before): the task changes, adds and removes keys of value, list and map states
// while the snapshot's writer runs on another thread; the snapshot restores exactly the
// state at begin_snapshot and the live state has every change.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

#include "clink/core/error.hpp"
#include "clink/state/state_codec.hpp"
#include "clink/state/state_ttl.hpp"
#include "state_test_util.hpp"

namespace clink::test {
namespace {

using ::testing::HasSubstr;


struct States {
  StateId value, list, map;
  std::vector<std::pair<std::string, StateId>> all() const { return {{"v", value}, {"l", list}, {"m", map}}; }
};

States register_states(KeyedStateBackend& b) {
  return {b.register_state("v", StateKind::kValue), b.register_state("l", StateKind::kList),
          b.register_state("m", StateKind::kMap)};
}

constexpr int kKeys = 6000;

void fill(KeyedStateBackend& b, const States& s) {
  char buf[32];
  for (int k = 0; k < kKeys; ++k) {
    b.set_current_key(key(k));
    b.set_current_namespace(k % 7 == 0 ? "w" : "");
    std::snprintf(buf, sizeof buf, "v%07d", k);
    b.put(s.value, buf);
    b.append(s.list, "e1");
    b.append(s.list, "e2");
    b.map_put(s.map, "a", "1");
    b.map_put(s.map, "b", "2");
    if (k % 2 == 0) b.map_put(s.map, "c", "3");  // a third entry: a B-tree
  }
}

// One round of changes of every kind; the same on any backend gives the same state.
void mutate(KeyedStateBackend& b, const States& s, int round) {
  char buf[32];
  for (int k = 0; k < kKeys; ++k) {
    b.set_current_key(key(k));
    b.set_current_namespace(k % 7 == 0 ? "w" : "");
    switch (k % 6) {
      case 0: b.put(s.value, "round " + std::to_string(round) + " of " + std::to_string(k)); break;
      case 1:  // same length: overwritten in place
        std::snprintf(buf, sizeof buf, "w%07d", k + round);
        b.put(s.value, buf);
        b.map_put(s.map, "a", std::to_string(round % 10));
        break;
      case 2:
        b.remove(s.value);
        b.map_remove(s.map, "a");
        break;
      case 3:
        b.map_put(s.map, "r" + std::to_string(round), "x");
        b.map_update(s.map, "b", [&](bool present, std::string_view current, std::string& next) {
          next = std::string(present ? current : "") + "+";
          return true;
        });
        break;
      case 4:
        b.map_clear(s.map);
        b.append(s.list, "e" + std::to_string(round));
        break;
      default: b.remove(s.list); break;
    }
  }
  for (int i = 0; i < 500; ++i) {  // new keys
    b.set_current_key(key(1'000'000 + round * 1000 + i));
    b.set_current_namespace("");
    b.put(s.value, "new");
    b.map_put(s.map, "n", std::to_string(round));
  }
}

class AsyncSnapshotTest : public ::testing::Test {
 protected:
  AsyncSnapshotTest() { maker.kind = "memory"; }
  std::unique_ptr<KeyedStateBackend> make() { return maker.make({0, kDefaultMaxParallelism - 1}); }
  Dump restored(const KeyedStateHandle& h) {
    auto r = make();
    States s = register_states(*r);
    r->restore({h});
    return dump(*r, s.all());
  }
  BackendMaker maker;
  TempDir dir;
};

// The writers that run while the task goes on: memory checkpoints, RocksDB savepoints.
struct Mode {
  const char* backend;
  bool savepoint;
};
class AsyncSnapshotModes : public AsyncSnapshotTest, public ::testing::WithParamInterface<Mode> {
 protected:
  AsyncSnapshotModes() { maker.kind = GetParam().backend; }
  KeyedStateBackend::SnapshotWriter begin(KeyedStateBackend& b, std::int64_t id, const std::filesystem::path& to) {
    return b.begin_snapshot(id, to, GetParam().savepoint);
  }
};
INSTANTIATE_TEST_SUITE_P(Writers, AsyncSnapshotModes,
                         ::testing::Values(Mode{"memory", false}, Mode{"rocksdb", true}),
                         [](const auto& info) { return std::string(info.param.backend) + (info.param.savepoint ? "Savepoint" : "Checkpoint"); });

// The writer stops before chosen key groups (its cancel poll comes once per group) and
// the task changes everything meanwhile: some groups were written before a change (the
// task writes them in place), some not (the task copies them first).
TEST_P(AsyncSnapshotModes, ChangesWhileTheWriterRunsDoNotReachTheSnapshot) {
  auto b = make();
  States s = register_states(*b);
  fill(*b, s);
  const Dump at_barrier = dump(*b, s.all());
  auto model = make();  // the same changes without a snapshot
  States ms = register_states(*model);
  fill(*model, ms);

  auto write = begin(*b, 1, dir.path);
  // Groups 0-39 are written before the first change (changed in place after), the rest
  // copied on the first change.
  const std::vector<int> pauses = {40, 41, 100, 127};  // before these key groups
  std::mutex mu;
  std::condition_variable cv;
  int paused_at = -1, released = -1;
  KeyedStateHandle handle;
  std::thread writer([&] {
    int kg = 0;
    handle = write([&] {
      if (std::find(pauses.begin(), pauses.end(), kg) != pauses.end()) {
        std::unique_lock lock(mu);
        paused_at = kg;
        cv.notify_all();
        cv.wait(lock, [&] { return released == kg; });
      }
      ++kg;
      return false;
    });
  });
  int round = 0;
  for (int at : pauses) {
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return paused_at == at; });
    }
    mutate(*b, s, round);
    mutate(*model, ms, round);
    ++round;
    std::lock_guard lock(mu);
    released = at;
    cv.notify_all();
  }
  writer.join();
  write = nullptr;

  EXPECT_EQ(restored(handle), at_barrier);
  EXPECT_EQ(dump(*b, s.all()), dump(*model, ms.all()));
  EXPECT_NE(dump(*b, s.all()), at_barrier);

  // The next snapshot has the changes.
  EXPECT_EQ(restored(b->snapshot(2, dir.path / "2")), dump(*model, ms.all()));
}

// No pauses: the task changes state as fast as it can while the writer runs (what
// ASan / TSan runs of this test look at).
TEST_P(AsyncSnapshotModes, FreeRunningWriterAndTask) {
  auto b = make();
  States s = register_states(*b);
  fill(*b, s);
  auto model = make();
  States ms = register_states(*model);
  fill(*model, ms);
  for (int checkpoint = 1; checkpoint <= 3; ++checkpoint) {
    const Dump at_barrier = dump(*b, s.all());
    auto write = begin(*b, checkpoint, dir.path / std::to_string(checkpoint));
    std::atomic<bool> done{false};
    KeyedStateHandle handle;
    std::thread writer([&] {
      handle = write([] { return false; });
      done = true;
    });
    int round = checkpoint * 10;
    do {
      mutate(*b, s, round);
      mutate(*model, ms, round);
      ++round;
    } while (!done);
    writer.join();
    write = nullptr;
    EXPECT_EQ(restored(handle), at_barrier) << "checkpoint " << checkpoint;
    EXPECT_EQ(dump(*b, s.all()), dump(*model, ms.all())) << "checkpoint " << checkpoint;
  }
}

// The incremental TTL cleanup removes entries the snapshot still has to write (live at
// the barrier, expired by the time of the sweep): the snapshot keeps them.
TEST_P(AsyncSnapshotModes, TtlSweepsAfterTheBarrierDoNotReachTheSnapshot) {
  auto b = make();
  StateId id = b->register_state("t", StateKind::kValue, 1000);
  auto put = [&](int k) {
    std::string value;
    put_ttl_timestamp(maker.clock.now_ms(), value);
    value += "x" + std::to_string(k);
    b->set_current_key(key(k));
    b->put(id, value);
  };
  maker.clock.set(500);
  for (int k = 0; k < kKeys; ++k) put(k);
  maker.clock.set(1000);  // the barrier: every entry is live (until 1500)
  const Dump at_barrier = dump(*b, {{"t", id}});
  ASSERT_EQ(at_barrier.size(), static_cast<std::size_t>(kKeys));
  auto write = begin(*b, 1, dir.path);
  maker.clock.set(2000);
  for (int k = kKeys; k < 5 * kKeys; ++k) put(k);  // sweeps every key group
  if (GetParam().backend == std::string("memory")) {
    EXPECT_EQ(dump(*b, {{"t", id}}).size(), static_cast<std::size_t>(4 * kKeys));  // the old ones swept
  }
  const KeyedStateHandle handle = write([] { return false; });
  write = nullptr;
  auto r = make();
  StateId rid = r->register_state("t", StateKind::kValue, 1000);
  r->restore({handle});
  EXPECT_EQ(dump(*r, {{"t", rid}}), at_barrier);
}

TEST_F(AsyncSnapshotTest, OneSnapshotAtATime) {
  auto b = make();
  States s = register_states(*b);
  fill(*b, s);
  auto first = b->begin_snapshot(1, dir.path / "1", false);
  try {
    b->begin_snapshot(2, dir.path / "2", false);
    FAIL() << "a second snapshot began while the first was not written";
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), HasSubstr("previous one was still being written"));
  }
  // Dropped unwritten (an aborted checkpoint): the next one may begin.
  first = nullptr;
  const Dump now = dump(*b, s.all());
  auto second = b->begin_snapshot(3, dir.path / "3", false);
  EXPECT_EQ(restored(second([] { return false; })), now);
}

TEST_F(AsyncSnapshotTest, CancelledWriterStopsAndReleasesTheVersion) {
  auto b = make();
  States s = register_states(*b);
  fill(*b, s);
  auto write = b->begin_snapshot(1, dir.path / "1", false);
  int polls = 0;
  EXPECT_THROW(write([&] { return ++polls > 3; }), TaskCancelled);
  EXPECT_EQ(polls, 4);
  write = nullptr;
  mutate(*b, s, 1);
  const Dump now = dump(*b, s.all());
  EXPECT_EQ(restored(b->snapshot(2, dir.path / "2")), now);
}

// A RocksDB savepoint scanned the whole state at the barrier (2.6 s for 3 M keys): now
// the barrier takes a RocksDB snapshot and writes nothing; the writer scans it.
TEST(RocksDbSavepoint, TheBarrierWritesNothing) {
  BackendMaker maker;
  maker.kind = "rocksdb";
  TempDir dir;
  auto b = maker.make({0, kDefaultMaxParallelism - 1});
  States s = register_states(*b);
  fill(*b, s);
  auto write = b->begin_snapshot(1, dir.path, true);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path));
  int polls = 0;
  EXPECT_THROW(write([&] { return ++polls > 3; }), TaskCancelled);  // polled once per key group
  EXPECT_EQ(polls, 4);
  write = b->begin_snapshot(2, dir.path / "2", true);
  const KeyedStateHandle h = write([] { return false; });
  write = nullptr;  // releases the RocksDB snapshot
  EXPECT_FALSE(std::filesystem::is_empty(dir.path / "2"));
  auto r = maker.make({0, kDefaultMaxParallelism - 1});
  States rs = register_states(*r);
  r->restore({h});
  EXPECT_EQ(dump(*r, rs.all()), dump(*b, s.all()));
}

}  // namespace
}  // namespace clink::test
