// Checkpoints after tasks finished (Flink's FLIP-147): checkpoints go on when some tasks
// finished, a transactional sink commits its last transaction through the final
// checkpoint, and a restore does not run finished operators again. Every test asserts
// the exact output of an exactly-once sink, on both state backends.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <thread>

#include "clink/api/data_stream.hpp"
#include "clink/api/source.hpp"
#include "clink/checkpoint/checkpoint_metadata.hpp"
#include "clink/connectors/exactly_once_collect_sink.hpp"
#include "clink/core/error.hpp"
#include "../support/checkpoint_support.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Reads ranges of numbers, one split per range ([next, end)); the first run gives range i
// to subtask i % parallelism. Paced ranges emit 20 numbers every 5 ms, the others at once,
// so one subtask can end while another still runs.
class RangeSource final : public Source<std::int64_t> {
 public:
  struct Range {
    std::int64_t begin, end;
    bool paced;
  };
  explicit RangeSource(std::vector<Range> ranges) : ranges_(std::move(ranges)) {}
  std::unique_ptr<SourceReader<std::int64_t>> create_reader(int subtask, int parallelism) const override {
    auto reader = std::make_unique<Reader>();
    for (std::size_t i = 0; i < ranges_.size(); ++i)
      if (static_cast<int>(i % static_cast<std::size_t>(parallelism)) == subtask) reader->splits.push_back(ranges_[i]);
    return reader;
  }
  std::string factory_name() const override { return "ranges"; }

 private:
  struct Reader final : SourceReader<std::int64_t> {
    std::vector<Range> splits;
    Clock::time_point next_paced{};
    Status poll(Batch<std::int64_t>& out, std::size_t) override {
      for (auto& sp : splits) {
        if (sp.begin >= sp.end) continue;
        if (sp.paced) {
          if (Clock::now() < next_paced) return Status::kNothingAvailable;
          next_paced = Clock::now() + std::chrono::milliseconds(5);
        }
        for (int i = 0; i < 20 && sp.begin < sp.end; ++i) out.records.push_back({sp.begin++, kNoEventTime, kNoPartition});
        return Status::kMore;
      }
      return Status::kEnd;
    }
    std::int64_t wait_hint_ms() const override { return 1; }
    std::optional<std::vector<std::string>> snapshot_splits() const override {
      std::vector<std::string> out;
      for (const auto& sp : splits)
        out.push_back(std::to_string(sp.begin) + " " + std::to_string(sp.end) + " " + (sp.paced ? "1" : "0"));
      return out;
    }
    void restore_splits(std::vector<std::string> restored) override {
      splits.clear();
      for (const auto& text : restored) {
        Range r{};
        int paced = 0;
        if (std::sscanf(text.c_str(), "%" SCNd64 " %" SCNd64 " %d", &r.begin, &r.end, &paced) != 3)
          throw std::runtime_error("bad split " + text);
        r.paced = paced != 0;
        splits.push_back(r);
      }
    }
  };
  std::vector<Range> ranges_;
};

// What the sinks' subtasks did, watched by the tests and the failure injector.
struct SinkWatch {
  std::atomic<bool> ended[2] = {false, false};            // subtask s passed its end of input
  std::atomic<bool> committed_after_end[2] = {false, false};  // ... and committed after it
  std::atomic<int> commits[2] = {0, 0};
  std::atomic<bool> committed_without_checkpoint{false};  // rows became visible with no checkpoint
  fs::path checkpoints;  // where checkpoints go (to tell whether one completed)
};

// An exactly-once collecting sink whose subtasks 0 and 1 report to a SinkWatch. Its
// transactions get ids never used before (as sinks naming transactions after a run's
// epoch do), so a row written again in a new transaction shows as a duplicate instead
// of being dropped as a repeated commit; committing a restored transaction again is
// still idempotent.
class WatchedSink final : public TransactionalSink<std::int64_t> {
 public:
  WatchedSink(std::shared_ptr<ExactlyOnceCollectSink<std::int64_t>> inner, std::shared_ptr<SinkWatch> watch)
      : inner_(std::move(inner)), watch_(std::move(watch)) {}
  std::unique_ptr<TransactionalSinkWriter<std::int64_t>> create_writer(int subtask, int parallelism) const override {
    return std::make_unique<Writer>(inner_, inner_->create_writer(subtask, parallelism), watch_, subtask);
  }
  std::string factory_name() const override { return "watched"; }

 private:
  struct Writer final : TransactionalSinkWriter<std::int64_t> {
    Writer(std::shared_ptr<ExactlyOnceCollectSink<std::int64_t>> sink,
           std::unique_ptr<TransactionalSinkWriter<std::int64_t>> w, std::shared_ptr<SinkWatch> watch, int subtask)
        : sink(std::move(sink)), inner(std::move(w)), watch(std::move(watch)), subtask(subtask) {}
    void open(RuntimeContext& ctx) override { inner->open(ctx); }
    void begin_transaction(std::int64_t) override {
      static std::atomic<std::int64_t> ids{1};
      inner->begin_transaction(ids++);
    }
    void write(const Batch<std::int64_t>& batch) override { inner->write(batch); }
    std::string pre_commit() override { return inner->pre_commit(); }
    void commit(const std::string& c) override {
      std::size_t before = sink->values().size();
      inner->commit(c);
      if (sink->values().size() > before && !latest_checkpoint(watch->checkpoints))
        watch->committed_without_checkpoint = true;
      if (subtask > 1) return;
      if (ended) watch->committed_after_end[subtask] = true;
      ++watch->commits[subtask];
    }
    void abort() override { inner->abort(); }
    void end_of_input() override {
      ended = true;
      if (subtask <= 1) watch->ended[subtask] = true;
      inner->end_of_input();
    }
    void close() override { inner->close(); }
    std::shared_ptr<ExactlyOnceCollectSink<std::int64_t>> sink;
    std::unique_ptr<TransactionalSinkWriter<std::int64_t>> inner;
    std::shared_ptr<SinkWatch> watch;
    int subtask;
    bool ended = false;
  };
  std::shared_ptr<ExactlyOnceCollectSink<std::int64_t>> inner_;
  std::shared_ptr<SinkWatch> watch_;
};

std::vector<std::int64_t> numbers(std::int64_t from, std::int64_t to) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(to - from));
  std::iota(v.begin(), v.end(), from);
  return v;
}

constexpr std::int64_t kFast = 600;   // subtask 0 reads [0, 600) at once
constexpr std::int64_t kAll = 3000;   // subtask 1 reads [600, 3000), 20 rows per 5 ms

// Two chains numbers -> check -> sink (parallelism `p`): the first range ends at once,
// the second is paced (unless `paced` is false). `check` runs on every number.
template <class Check>
void two_speed_job(StreamExecutionEnvironment& env, int p, bool paced, std::shared_ptr<WatchedSink> sink, Check check) {
  env.set_parallelism(p);
  std::vector<RangeSource::Range> ranges{{0, kFast, false}, {kFast, kAll, paced}};
  env.from_source<std::int64_t>(std::make_shared<RangeSource>(ranges), "Numbers")
      .uid("numbers")
      .map([check](std::int64_t v) {
        check(v);
        return v;
      }, "Check")
      .uid("check")
      .sink_to(sink, "Sink");
}

class FinalCheckpoint : public BackendTest {};
INSTANTIATE_TEST_SUITE_P(Backends, FinalCheckpoint, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

// The defect FLIP-147 fixed: subtask 0 reaches its end of input and subtask 1 fails
// afterwards. Committing subtask 0's last transaction at its end made the restored run,
// which reads subtask 0's input again from the last checkpoint, write it twice. Now it
// is committed by a checkpoint taken after the end, so the output is exact whether the
// failure comes right after the end or after subtask 0 finished and more checkpoints
// recorded it as finished.
TEST_P(FinalCheckpoint, AFailureAfterOneSubtaskEndedWritesEachRowOnce) {
  for (bool after_more_checkpoints : {false, true}) {
    TempDir dir;
    auto collected = std::make_shared<ExactlyOnceCollectSink<std::int64_t>>();
    auto watch = std::make_shared<SinkWatch>();
    watch->checkpoints = dir.path;
    auto sink = std::make_shared<WatchedSink>(collected, watch);
    auto failures = std::make_shared<std::atomic<int>>(1);
    auto commits_at_finish = std::make_shared<std::atomic<int>>(-1);
    StreamExecutionEnvironment env;
    two_speed_job(env, 2, true, sink, [=](std::int64_t v) {
      if (v < kFast || !watch->ended[0]) return;
      if (after_more_checkpoints) {
        // Two more commits of subtask 1 after subtask 0's final one: a later checkpoint completed.
        if (!watch->committed_after_end[0]) return;
        int expected = -1;
        commits_at_finish->compare_exchange_strong(expected, watch->commits[1].load());
        if (watch->commits[1] < commits_at_finish->load() + 2) return;
      }
      if (failures->fetch_sub(1) > 0) throw std::runtime_error("subtask 1 failed at " + std::to_string(v));
    });
    auto handle = execute_async(env.graph(), checkpointing(dir.path));
    handle.wait();
    EXPECT_EQ(handle.status(), JobStatus::kFinished);
    ASSERT_EQ(handle.restart_causes().size(), 1u) << after_more_checkpoints;
    EXPECT_THAT(handle.restart_causes()[0], ::testing::HasSubstr("subtask 1 failed"));
    EXPECT_EQ(sorted(collected->values()), numbers(0, kAll)) << after_more_checkpoints << " size " << collected->values().size();
    EXPECT_FALSE(watch->committed_without_checkpoint);
  }
}

// Checkpoints complete while subtask 0 has finished; they record its subtasks as
// finished (no state) and the other's state. A run restored from such a checkpoint, at
// the same or another parallelism, reads the rest once: subtask 0's range is not read again.
TEST_P(FinalCheckpoint, RestoresFromACheckpointWithFinishedTasksAtAnyParallelism) {
  for (int p : {2, 1, 3}) {
    TempDir dir;
    auto collected = std::make_shared<ExactlyOnceCollectSink<std::int64_t>>();
    auto watch = std::make_shared<SinkWatch>();
    watch->checkpoints = dir.path;
    auto sink = std::make_shared<WatchedSink>(collected, watch);
    {
      StreamExecutionEnvironment env;
      two_speed_job(env, 2, true, sink, [](std::int64_t) {});
      auto handle = execute_async(env.graph(), checkpointing(dir.path));
      while (!watch->committed_after_end[0]) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      auto finished_at = handle.checkpoint_counts().completed;
      // Two checkpoints after subtask 0's final one: they record it as finished.
      while (handle.checkpoint_counts().completed < finished_at + 2 && !handle.wait_for(std::chrono::milliseconds(2))) {
      }
      handle.cancel();
      handle.wait();
      ASSERT_EQ(handle.status(), JobStatus::kCanceled) << "the paced half ended before two more checkpoints";
    }
    auto from = latest_checkpoint(dir.path);
    ASSERT_TRUE(from.has_value());
    auto meta = CheckpointMetadata::read(*from);
    for (const char* uid : {"numbers", "check"}) {
      const auto& op = meta.operators.at(uid);
      ASSERT_EQ(op.subtasks.size(), 2u);
      EXPECT_TRUE(op.subtasks[0].finished) << uid;
      EXPECT_TRUE(op.subtasks[0].operator_state_file.empty()) << uid;
      EXPECT_FALSE(op.subtasks[1].finished) << uid;
      EXPECT_FALSE(op.fully_finished()) << uid;
    }
    EXPECT_FALSE(meta.operators.at("numbers").subtasks[1].operator_state_file.empty());
    auto first = collected->values();
    EXPECT_EQ(std::count_if(first.begin(), first.end(), [](std::int64_t v) { return v < kFast; }), kFast);
    EXPECT_LT(first.size(), static_cast<std::size_t>(kAll));

    StreamExecutionEnvironment env;
    two_speed_job(env, p, false, sink, [](std::int64_t) {});
    auto options = checkpointing(dir.path);
    options.restore = RestoreSettings{*from};
    execute_async(env.graph(), options).wait();
    EXPECT_EQ(sorted(collected->values()), numbers(0, kAll)) << "restored at parallelism " << p;
  }
}

// A bounded job with checkpointing commits its last rows through a final checkpoint,
// taken as soon as its sources ended rather than an interval later.
TEST_P(FinalCheckpoint, TheLastRowsAreCommittedByAFinalCheckpointTakenAtOnce) {
  TempDir dir;
  auto collected = std::make_shared<ExactlyOnceCollectSink<std::int64_t>>();
  auto watch = std::make_shared<SinkWatch>();
  watch->checkpoints = dir.path;
  auto sink = std::make_shared<WatchedSink>(collected, watch);
  StreamExecutionEnvironment env;
  env.set_parallelism(1);
  env.from_source<std::int64_t>(std::make_shared<RangeSource>(std::vector<RangeSource::Range>{{0, 1000, false}}))
      .uid("numbers")
      .sink_to(sink, "Sink");
  auto start = Clock::now();
  auto handle = execute_async(env.graph(), checkpointing(dir.path, 60'000));
  handle.wait();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(20)) << "waited for the 60 s interval";
  EXPECT_EQ(collected->values(), numbers(0, 1000));
  EXPECT_FALSE(watch->committed_without_checkpoint) << "rows were committed before any checkpoint completed";
  EXPECT_TRUE(watch->committed_after_end[0]);
  EXPECT_EQ(handle.checkpoint_counts().completed, 1);
  // The final checkpoint holds the sources' state at their end, not finished markers.
  auto meta = CheckpointMetadata::read(*latest_checkpoint(dir.path));
  EXPECT_FALSE(meta.operators.at("numbers").subtasks.at(0).finished);
}

// Savepoints work while some tasks finished; an operator that finished everywhere
// (fully finished) does not run again after a restore, at any parallelism.
TEST_P(FinalCheckpoint, SavepointsWithFinishedTasksAndFullyFinishedOperatorsStayFinished) {
  TempDir dir;
  auto fast_out = std::make_shared<ExactlyOnceCollectSink<std::int64_t>>();
  auto slow_out = std::make_shared<ExactlyOnceCollectSink<std::int64_t>>();
  auto watch = std::make_shared<SinkWatch>();
  watch->checkpoints = dir.path;
  auto job = [&](StreamExecutionEnvironment& env, int fast_parallelism, bool paced) {
    env.set_parallelism(fast_parallelism);  // the fast source and its sink: one chain per subtask
    env.from_source<std::int64_t>(
           std::make_shared<RangeSource>(std::vector<RangeSource::Range>{{0, 300, false}, {300, kFast, false}}),
           "Fast")
        .uid("fast")
        .sink_to(std::make_shared<WatchedSink>(fast_out, watch), "FastSink");
    env.from_source<std::int64_t>(
           std::make_shared<RangeSource>(std::vector<RangeSource::Range>{{kFast, kAll, paced}}), "Slow")
        .set_parallelism(1)
        .uid("slow")
        .sink_to(slow_out, "SlowSink");
  };
  {
    StreamExecutionEnvironment env;
    job(env, 2, true);
    auto handle = execute_async(env.graph(), checkpointing(dir.path));
    while (!watch->committed_after_end[0] || !watch->committed_after_end[1])
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    handle.savepoint(dir.path / "sp-1");  // used to fail: "the job is finishing"
    handle.stop_with_savepoint(dir.path / "sp-2");
    EXPECT_EQ(handle.status(), JobStatus::kCanceled);
  }
  for (const char* sp : {"sp-1", "sp-2"}) {
    auto meta = CheckpointMetadata::read(dir.path / sp);
    EXPECT_TRUE(meta.operators.at("fast").fully_finished()) << sp;
    EXPECT_FALSE(meta.operators.at("slow").fully_finished()) << sp;
  }
  EXPECT_EQ(sorted(fast_out->values()), numbers(0, kFast));
  EXPECT_LT(slow_out->values().size(), static_cast<std::size_t>(kAll - kFast));
  StreamExecutionEnvironment env;
  job(env, 3, false);
  auto options = checkpointing(dir.path);
  options.restore = RestoreSettings{dir.path / "sp-2"};
  execute_async(env.graph(), options).wait();
  EXPECT_EQ(sorted(fast_out->values()), numbers(0, kFast)) << "the finished source read again";
  EXPECT_EQ(sorted(slow_out->values()), numbers(kFast, kAll));
}

// A run restored from the final checkpoint of a finished job (its tasks' state taken
// after their end) reads nothing again and commits nothing twice.
TEST_P(FinalCheckpoint, ARunRestoredFromTheFinalCheckpointAddsNothing) {
  TempDir dir;
  auto out = std::make_shared<ExactlyOnceCollectSink<std::int64_t>>();
  auto job = [&](StreamExecutionEnvironment& env) {
    env.set_parallelism(2);
    env.from_source<std::int64_t>(
           std::make_shared<RangeSource>(std::vector<RangeSource::Range>{{0, 300, false}, {300, 700, false}}))
        .uid("numbers")
        .rebalance()
        .map([](std::int64_t v) { return v; })
        .uid("pass")
        .sink_to(out);
  };
  {
    StreamExecutionEnvironment env;
    job(env);
    execute_async(env.graph(), checkpointing(dir.path, 60'000)).wait();
  }
  EXPECT_EQ(sorted(out->values()), numbers(0, 700));
  auto from = latest_checkpoint(dir.path);
  ASSERT_TRUE(from.has_value());
  StreamExecutionEnvironment env;
  job(env);
  auto options = checkpointing(dir.path, 60'000);
  options.restore = RestoreSettings{*from};
  execute_async(env.graph(), options).wait();
  EXPECT_EQ(sorted(out->values()), numbers(0, 700));
}

// As Flink's VertexFinishedStateChecker: an operator that finished cannot be fed by one
// that did not (it would receive input again after its end).
TEST_P(FinalCheckpoint, RestoreRejectsAFinishedOperatorFedByAnUnfinishedOne) {
  TempDir dir;
  CheckpointMetadata meta;
  meta.checkpoint_id = 7;
  meta.operators["numbers"] = {1, 128, {OperatorSubtaskState{}}};
  OperatorSubtaskState finished;
  finished.finished = true;
  meta.operators["pass"] = {1, 128, {finished}};
  fs::create_directories(dir.path / "chk-7");
  meta.write(dir.path / "chk-7");
  EXPECT_TRUE(CheckpointMetadata::read(dir.path / "chk-7").operators.at("pass").fully_finished());
  StreamExecutionEnvironment env;
  env.set_parallelism(1);
  env.from_source<std::int64_t>(std::make_shared<RangeSource>(std::vector<RangeSource::Range>{{0, 10, false}}))
      .uid("numbers")
      .rebalance()
      .map([](std::int64_t v) { return v; })
      .uid("pass")
      .sink_to(std::make_shared<ExactlyOnceCollectSink<std::int64_t>>());
  auto options = checkpointing(dir.path);
  options.restore = RestoreSettings{dir.path / "chk-7"};
  try {
    execute_async(env.graph(), options);
    FAIL() << "expected the restore to be rejected";
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("operator 'pass' finished in it, but its input 'numbers' did not"));
  }
}

}  // namespace
}  // namespace clink::test
