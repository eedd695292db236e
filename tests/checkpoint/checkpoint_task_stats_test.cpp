// Each task's part in a completed checkpoint (CheckpointStats::tasks, what the REST API's
// per-subtask checkpoint details show): when it acknowledged, how long it held its
// inputs back for the barrier and how long its snapshot's synchronous and asynchronous
// parts took. A union of a fast source and one whose snapshot takes 300 ms: the merging
// task waits for the slow source's barrier with the fast one's channel blocked, the
// sources align nothing. And a keyed operator with many keys on the memory backend,
// whose state is written after the barrier.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>

#include "clink/api/data_stream.hpp"
#include "clink/state/keyed_state.hpp"
#include "clink/api/source.hpp"
#include "clink/connectors/blackhole_sink.hpp"
#include "../support/temp_dir.hpp"

namespace clink::test {
namespace {

using Clock = std::chrono::steady_clock;

// One number a millisecond, forever; its snapshot takes `snapshot_delay`.
class TickSource final : public Source<std::int64_t> {
 public:
  explicit TickSource(std::chrono::milliseconds snapshot_delay) : delay_(snapshot_delay) {}
  std::unique_ptr<SourceReader<std::int64_t>> create_reader(int, int) const override {
    return std::make_unique<Reader>(delay_);
  }
  std::string factory_name() const override { return "ticks"; }

 private:
  struct Reader final : SourceReader<std::int64_t> {
    explicit Reader(std::chrono::milliseconds d) : delay(d) {}
    std::chrono::milliseconds delay;
    std::int64_t next = 0;
    Clock::time_point due{};
    Status poll(Batch<std::int64_t>& out, std::size_t) override {
      if (Clock::now() < due) return Status::kNothingAvailable;
      due = Clock::now() + std::chrono::milliseconds(1);
      out.records.push_back({next++, kNoEventTime, kNoPartition});
      return Status::kMore;
    }
    std::int64_t wait_hint_ms() const override { return 1; }
    std::optional<std::vector<std::string>> snapshot_splits() const override {
      std::this_thread::sleep_for(delay);
      return std::vector<std::string>{std::to_string(next)};
    }
    void restore_splits(std::vector<std::string> s) override { next = std::stoll(s.at(0)); }
  };
  std::chrono::milliseconds delay_;
};

TEST(CheckpointTaskStats, EachTasksAckAndAlignmentTime) {
  TempDir dir;
  StreamExecutionEnvironment env;
  env.set_parallelism(1);
  auto fast = env.from_source<std::int64_t>(std::make_shared<TickSource>(std::chrono::milliseconds(0)), "Fast");
  fast.uid("fast");
  auto slow = env.from_source<std::int64_t>(std::make_shared<TickSource>(std::chrono::milliseconds(300)), "Slow");
  slow.uid("slow");
  fast.union_with(slow).map([](std::int64_t v) { return v; }, "Merge").uid("merge").sink_to(
      std::make_shared<BlackholeSink<std::int64_t>>(), "Sink");
  ExecutionOptions o;
  o.checkpoints.interval_ms = 200;
  o.checkpoints.directory = dir.path;
  auto handle = execute_async(env.graph(), o);
  while (handle.checkpoint_counts().completed < 2 && !handle.wait_for(std::chrono::milliseconds(5))) {
  }
  handle.cancel();
  handle.wait();

  // The task heads: each source, and the merge (its sink chained to it).
  std::map<std::string, std::string> head_of;
  for (const auto& n : env.graph().nodes) head_of[n.uid] = n.id;
  int completed = 0;
  for (const auto& s : handle.checkpoint_history()) {
    if (s.status != CheckpointStats::Status::kCompleted) continue;
    ++completed;
    ASSERT_EQ(s.tasks.size(), 3u) << "checkpoint " << s.id;
    std::map<std::string, CheckpointTaskStats> by_head;
    std::int64_t most = 0;
    for (const auto& t : s.tasks) {
      EXPECT_EQ(t.subtask, 0);
      EXPECT_GE(t.ack_ms, 0);
      EXPECT_LE(t.ack_ms, s.duration_ms) << "acknowledged before the checkpoint completed";
      by_head[t.head] = t;
      most = std::max(most, t.alignment_ns);
    }
    ASSERT_EQ(by_head.size(), 3u);
    const auto& fast_ack = by_head.at(head_of.at("fast"));
    const auto& slow_ack = by_head.at(head_of.at("slow"));
    const auto& merge_ack = by_head.at(head_of.at("merge"));
    EXPECT_EQ(fast_ack.alignment_ns, 0) << "a source has no inputs to align";
    EXPECT_EQ(slow_ack.alignment_ns, 0);
    EXPECT_GE(slow_ack.ack_ms, 300) << "its snapshot takes 300 ms";
    // The merge saw the fast source's barrier at once and the slow one's 300 ms later.
    EXPECT_GE(merge_ack.alignment_ns, 150'000'000) << "checkpoint " << s.id;
    EXPECT_EQ(s.alignment_ms, most / 1'000'000) << "the checkpoint's is its longest";
    // The slow source's snapshot (its split positions) is taken at the barrier; nothing
    // here has keyed state to write afterwards.
    EXPECT_GE(slow_ack.sync_ms, 300) << "checkpoint " << s.id;
    EXPECT_LE(slow_ack.sync_ms, slow_ack.ack_ms);
    for (const auto& t : s.tasks) {
      EXPECT_GE(t.sync_ms, 0);
      EXPECT_EQ(t.async_ms, 0) << t.head << ": no keyed state";
    }
  }
  EXPECT_GE(completed, 2);
}

// Emits the keys 0 .. n-1 once each, then nothing (it runs until cancelled).
class KeysOnce final : public Source<std::int64_t> {
 public:
  KeysOnce(std::int64_t n, std::shared_ptr<std::atomic<bool>> done) : n_(n), done_(std::move(done)) {}
  std::unique_ptr<SourceReader<std::int64_t>> create_reader(int, int) const override {
    return std::make_unique<Reader>(n_, done_);
  }
  std::string factory_name() const override { return "keys_once"; }

 private:
  struct Reader final : SourceReader<std::int64_t> {
    Reader(std::int64_t n, std::shared_ptr<std::atomic<bool>> d) : n(n), done(std::move(d)) {}
    std::int64_t n, next = 0;
    std::shared_ptr<std::atomic<bool>> done;
    Status poll(Batch<std::int64_t>& out, std::size_t max) override {
      if (next == n) {
        done->store(true);
        return Status::kNothingAvailable;
      }
      for (std::size_t i = 0; i < max && next < n; ++i) out.records.push_back({next++, kNoEventTime, kNoPartition});
      return Status::kMore;
    }
    std::int64_t wait_hint_ms() const override { return 5; }
    std::optional<std::vector<std::string>> snapshot_splits() const override {
      return std::vector<std::string>{std::to_string(next)};
    }
    void restore_splits(std::vector<std::string> s) override { next = std::stoll(s.at(0)); }
  };
  std::int64_t n_;
  std::shared_ptr<std::atomic<bool>> done_;
};

struct Remember final : KeyedProcessFunction<std::int64_t, std::int64_t, std::int64_t> {
  void process_element(const std::int64_t& v, Context& ctx, Collector<std::int64_t>&) override {
    ctx.state().get_state(ValueStateDescriptor<std::int64_t>{"seen"}).update(v);
  }
};

TEST(CheckpointTaskStats, MemoryBackendWritesManyKeysAfterTheBarrier) {
  TempDir dir;
  StreamExecutionEnvironment env;
  env.set_parallelism(1);
  auto done = std::make_shared<std::atomic<bool>>(false);
  env.from_source<std::int64_t>(std::make_shared<KeysOnce>(500'000, done), "Keys")
      .uid("keys")
      .key_by([](std::int64_t v) { return v; })
      .process(Remember{}, "Remember")
      .uid("remember")
      .sink_to(std::make_shared<BlackholeSink<std::int64_t>>(), "Sink");
  ExecutionOptions o;
  o.checkpoints.interval_ms = 100;
  o.checkpoints.directory = dir.path;
  o.checkpoints.state_backend.kind = "memory";
  auto handle = execute_async(env.graph(), o);
  // Two checkpoints completed after all keys were emitted: the last one holds them all.
  std::int64_t wanted = -1;
  while (!handle.wait_for(std::chrono::milliseconds(5))) {
    const auto counts = handle.checkpoint_counts();
    if (wanted < 0 && done->load()) wanted = counts.last_completed_id + 2;
    if (wanted >= 0 && counts.last_completed_id >= wanted) break;
  }
  handle.cancel();
  handle.wait();

  std::string keyed_head;
  for (const auto& n : env.graph().nodes)
    if (n.uid == "remember") keyed_head = n.id;
  bool seen = false;
  for (const auto& s : handle.checkpoint_history()) {
    if (s.status != CheckpointStats::Status::kCompleted || s.id != wanted) continue;
    seen = true;
    for (const auto& t : s.tasks) {
      if (t.head != keyed_head) continue;
      // 500 000 keys: the barrier only starts a snapshot epoch, the writer thread writes them.
      EXPECT_GT(t.async_ms, 0) << "checkpoint " << s.id;
      EXPECT_LT(t.sync_ms, t.async_ms) << "checkpoint " << s.id;
      EXPECT_LE(t.sync_ms + t.async_ms, t.ack_ms + 1) << "both before its acknowledgement";
    }
  }
  EXPECT_TRUE(seen) << "checkpoint " << wanted;
}

}  // namespace
}  // namespace clink::test
