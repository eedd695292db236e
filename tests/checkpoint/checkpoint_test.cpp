// Checkpoints, failure recovery and restore, in the style of Flink's all-round job:
// every key carries a sequence in keyed state and a checker fails the job if a number
// is skipped or repeated; exactly-once output must equal the failure-free run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "clink/api/data_stream.hpp"
#include "clink/checkpoint/checkpoint_metadata.hpp"
#include "clink/connectors/datagen.hpp"
#include "clink/connectors/exactly_once_collect_sink.hpp"
#include "clink/core/error.hpp"
#include "clink/state/keyed_state.hpp"
#include "clink/state/shared_state_registry.hpp"
#include "../support/checkpoint_support.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Out = SequenceOut;

constexpr std::int64_t kKeys = kSequenceKeys;



std::vector<Out> expected_output(std::int64_t n) {
  std::vector<Out> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back({i % kKeys, i, i / kKeys + 1});
  std::sort(v.begin(), v.end());
  return v;
}


// The checked sequence job into an exactly-once collecting sink, the checker at `parallelism`.
void build_job(StreamExecutionEnvironment& env, std::int64_t n, double rate, std::shared_ptr<Injector> injector,
               std::shared_ptr<ExactlyOnceCollectSink<Out>> sink, int parallelism) {
  checked_sequence(env, n, rate, std::move(injector))
      .set_parallelism(parallelism)
      .sink_to(sink, "Sink");
  // The sink follows the checker's parallelism through a forward edge.
}

// Every test runs on both state backends.
class Checkpoint : public BackendTest {};
INSTANTIATE_TEST_SUITE_P(Backends, Checkpoint, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

TEST_P(Checkpoint, PeriodicCheckpointsCompleteWithMetadataAndRetention) {
  TempDir dir;
  StreamExecutionEnvironment env;
  auto sink = std::make_shared<ExactlyOnceCollectSink<Out>>();
  build_job(env, 2000, 4000, std::make_shared<Injector>(), sink, 2);
  auto handle = execute_async(env.graph(), checkpointing(dir.path));
  handle.wait();
  EXPECT_EQ(sorted(sink->values()), expected_output(2000));
  auto counts = handle.checkpoint_counts();
  EXPECT_GE(counts.completed, 2);  // two suffice to show retention; more would make it timing-bound
  // Only the newest completed checkpoint is retained.
  auto latest = latest_checkpoint(dir.path);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->filename().string(), "chk-" + std::to_string(counts.last_completed_id));
  int chk_dirs = 0;
  for (auto& e : fs::directory_iterator(dir.path))
    if (e.path().filename().string().rfind("chk-", 0) == 0) ++chk_dirs;
  EXPECT_EQ(chk_dirs, 1);
  auto meta = CheckpointMetadata::read(*latest);
  EXPECT_EQ(meta.checkpoint_id, counts.last_completed_id);
  ASSERT_TRUE(meta.operators.count("checker"));
  EXPECT_EQ(meta.operators["checker"].parallelism, 2);
  EXPECT_EQ(meta.operators["checker"].max_parallelism, 128);
  ASSERT_EQ(meta.operators["checker"].subtasks.size(), 2u);
  EXPECT_EQ(meta.operators["checker"].subtasks[0].keyed.size(), 1u);
  EXPECT_FALSE(meta.operators["numbers"].subtasks.at(0).operator_state_file.empty());  // source position
  auto history = handle.checkpoint_history();
  auto last = std::find_if(history.rbegin(), history.rend(), [](const CheckpointStats& c) {
    return c.status == CheckpointStats::Status::kCompleted;
  });
  ASSERT_NE(last, history.rend());
  EXPECT_EQ(last->id, counts.last_completed_id);
  EXPECT_GT(last->size_bytes, 0);
  EXPECT_EQ(last->path, latest->string());
}

TEST_P(Checkpoint, ExactlyOnceOutputSurvivesInjectedFailures) {
  for (int failures : {1, 3}) {
    TempDir dir;
    StreamExecutionEnvironment env;
    auto sink = std::make_shared<ExactlyOnceCollectSink<Out>>();
    auto injector = std::make_shared<Injector>();
    injector->at = 1234;
    injector->failures_left = failures;  // the same record fails `failures` attempts in a row
    build_job(env, 2000, 4000, injector, sink, 2);
    auto handle = execute_async(env.graph(), checkpointing(dir.path));
    handle.wait();
    EXPECT_EQ(handle.status(), JobStatus::kFinished);
    EXPECT_EQ(handle.checkpoint_counts().restarts, failures);
    for (const auto& cause : handle.restart_causes()) EXPECT_THAT(cause, HasSubstr("injected failure at 1234"));
    EXPECT_EQ(sorted(sink->values()), expected_output(2000)) << failures << " failures";
  }
}

TEST_P(Checkpoint, WithoutRestartsAFailureFailsTheJob) {
  TempDir dir;
  StreamExecutionEnvironment env;
  auto sink = std::make_shared<ExactlyOnceCollectSink<Out>>();
  auto injector = std::make_shared<Injector>();
  injector->at = 100;
  injector->failures_left = 1;
  build_job(env, 500, 0, injector, sink, 1);
  auto options = checkpointing(dir.path);
  options.restart = RestartStrategy::none();
  auto handle = execute_async(env.graph(), options);
  EXPECT_THROW(handle.wait(), JobFailedError);
  EXPECT_THAT(handle.error(), HasSubstr("injected failure at 100"));
  EXPECT_TRUE(sink->values().empty());  // nothing was committed
}


TEST_P(Checkpoint, RestoreAtOtherParallelismContinuesWithoutGapOrRepeat) {
  TempDir dir;
  auto sink = std::make_shared<ExactlyOnceCollectSink<Out>>();
  const std::int64_t n = 20000;  // at 6000 rows/s no part gets near the end
  std::optional<fs::path> from;
  std::size_t committed = 0;
  for (int p : {1, 2, 4, 2}) {
    StreamExecutionEnvironment env;
    build_job(env, n, 6000, std::make_shared<Injector>(), sink, p);
    auto options = checkpointing(dir.path);
    if (from) options.restore = RestoreSettings{*from};
    run_until_checkpoints(env, options);
    from = latest_checkpoint(dir.path);
    ASSERT_TRUE(from.has_value());
    EXPECT_GT(sink->values().size(), committed) << "parallelism " << p << " made progress";
    committed = sink->values().size();
  }
  // The rest, unthrottled, at parallelism 3.
  StreamExecutionEnvironment env;
  build_job(env, n, 0, std::make_shared<Injector>(), sink, 3);
  auto options = checkpointing(dir.path);
  options.restore = RestoreSettings{*from};
  execute_async(env.graph(), options).wait();
  EXPECT_EQ(sorted(sink->values()), expected_output(n));
}

TEST_P(Checkpoint, StopWithSavepointThenRestoreInANewRunHasNoGapAndNoRepeat) {
  TempDir dir;
  auto sink = std::make_shared<ExactlyOnceCollectSink<Out>>();
  const std::int64_t n = 6000;
  ExecutionOptions no_periodic = checkpointing(dir.path, 0);  // savepoints need no periodic checkpoints
  {
    StreamExecutionEnvironment env;
    build_job(env, n, 6000, std::make_shared<Injector>(), sink, 2);
    auto handle = execute_async(env.graph(), no_periodic);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto path = handle.stop_with_savepoint(dir.path / "sp-1");
    EXPECT_EQ(handle.status(), JobStatus::kCanceled);
    auto meta = CheckpointMetadata::read(path);
    EXPECT_TRUE(meta.is_savepoint);
  }
  // stop_with_savepoint returns once the savepoint's transactions are committed.
  EXPECT_GT(sink->values().size(), 0u);
  StreamExecutionEnvironment env;
  build_job(env, n, 0, std::make_shared<Injector>(), sink, 3);
  ExecutionOptions restore = checkpointing(dir.path, 0);
  restore.restore = RestoreSettings{dir.path / "sp-1"};
  execute_async(env.graph(), restore).wait();
  EXPECT_EQ(sorted(sink->values()), expected_output(n));
}

// Two jobs never share a checkpoint directory (issue 16, item 5): the second fails to
// start, naming the directory; the first is untouched and, once it ended, the directory
// is free for a restore.
TEST_P(Checkpoint, ACheckpointDirectoryInUseRefusesASecondJob) {
  TempDir dir;
  auto sink = std::make_shared<ExactlyOnceCollectSink<Out>>();
  StreamExecutionEnvironment env;
  build_job(env, 4000, 4000, std::make_shared<Injector>(), sink, 2);
  auto first = execute_async(env.graph(), checkpointing(dir.path));
  StreamExecutionEnvironment other;
  build_job(other, 100, 0, std::make_shared<Injector>(), std::make_shared<ExactlyOnceCollectSink<Out>>(), 1);
  try {
    execute_async(other.graph(), checkpointing(dir.path));
    FAIL() << "a second job started on a checkpoint directory in use";
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the checkpoint directory " + dir.path.string() +
                                    " is in use by another running job (process "));
  }
  first.wait();
  EXPECT_EQ(sorted(sink->values()), expected_output(4000));
  StreamExecutionEnvironment again;
  build_job(again, 100, 0, std::make_shared<Injector>(), std::make_shared<ExactlyOnceCollectSink<Out>>(), 1);
  execute_async(again.graph(), checkpointing(dir.path)).wait();
}

// Checkpoints and savepoints hold the job's state: the directories clink creates for them
// are its user's alone (0700; issue 16, item 8). A directory the user made keeps its mode.
TEST_P(Checkpoint, CheckpointAndSavepointDirectoriesAreCreatedPrivate) {
  TempDir dir;
  const fs::path checkpoints = dir.path / "made" / "checkpoints";
  auto sink = std::make_shared<ExactlyOnceCollectSink<Out>>();
  StreamExecutionEnvironment env;
  build_job(env, 4000, 8000, std::make_shared<Injector>(), sink, 2);
  auto handle = execute_async(env.graph(), checkpointing(checkpoints));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const fs::path savepoint = handle.stop_with_savepoint(dir.path / "sp");
  const auto others = fs::perms::group_all | fs::perms::others_all;
  for (const fs::path& p : {dir.path / "made", checkpoints, savepoint})
    EXPECT_EQ(fs::status(p).permissions() & others, fs::perms::none) << p;
  bool any_checkpoint = false;
  for (const auto& e : fs::directory_iterator(checkpoints))
    if (e.path().filename().string().starts_with("chk-")) {
      any_checkpoint = true;
      EXPECT_EQ(fs::status(e.path()).permissions() & others, fs::perms::none) << e.path();
    }
  EXPECT_TRUE(any_checkpoint);
  // The user's own directory keeps its mode.
  const fs::path mine = dir.path / "mine";
  fs::create_directories(mine);
  fs::permissions(mine, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
  StreamExecutionEnvironment again;
  build_job(again, 100, 0, std::make_shared<Injector>(), std::make_shared<ExactlyOnceCollectSink<Out>>(), 1);
  execute_async(again.graph(), checkpointing(mine)).wait();
  EXPECT_EQ(fs::status(mine).permissions() & others, fs::perms::group_read | fs::perms::group_exec);
}

// A savepoint never goes into a directory holding other files, so its failure path (which
// removes what it wrote) cannot take the user's files (issue 16, item 2).
TEST_P(Checkpoint, SavepointRefusesANonEmptyDirectoryAndLeavesItAlone) {
  TempDir dir;
  std::filesystem::create_directories(dir.path / "mine");
  std::ofstream(dir.path / "mine" / "notes.txt") << "keep me";
  auto sink = std::make_shared<ExactlyOnceCollectSink<Out>>();
  StreamExecutionEnvironment env;
  build_job(env, 6000, 6000, std::make_shared<Injector>(), sink, 1);
  auto handle = execute_async(env.graph(), checkpointing(dir.path, 0));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  try {
    handle.stop_with_savepoint(dir.path / "mine");
    ADD_FAILURE() << "a savepoint into a non-empty directory must be refused";
  } catch (const ClinkError& e) {
    EXPECT_NE(std::string(e.what()).find("is not empty"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(std::filesystem::exists(dir.path / "mine" / "notes.txt"));
  // An empty directory the user made is fine.
  std::filesystem::create_directories(dir.path / "empty");
  auto path = handle.stop_with_savepoint(dir.path / "empty");
  EXPECT_TRUE(CheckpointMetadata::read(path).is_savepoint);
}

// An exactly-once sink whose subtask 0 commits slowly: the window between a savepoint's
// completion and the stop, in which sources used to run on to their end of input and
// the other subtasks to commit it.
class SlowCommitSink final : public TransactionalSink<Out> {
 public:
  explicit SlowCommitSink(std::shared_ptr<ExactlyOnceCollectSink<Out>> inner) : inner_(std::move(inner)) {}
  std::unique_ptr<TransactionalSinkWriter<Out>> create_writer(int subtask, int parallelism) const override {
    return std::make_unique<Writer>(inner_->create_writer(subtask, parallelism), subtask == 0);
  }
  std::string factory_name() const override { return "slow_commit"; }

 private:
  struct Writer final : TransactionalSinkWriter<Out> {
    Writer(std::unique_ptr<TransactionalSinkWriter<Out>> w, bool slow) : inner(std::move(w)), slow(slow) {}
    void open(RuntimeContext& ctx) override { inner->open(ctx); }
    void begin_transaction(std::int64_t id) override { inner->begin_transaction(id); }
    void write(const Batch<Out>& batch) override { inner->write(batch); }
    std::string pre_commit() override { return inner->pre_commit(); }
    void commit(const std::string& c) override {
      if (slow) std::this_thread::sleep_for(std::chrono::milliseconds(400));
      inner->commit(c);
    }
    void abort() override { inner->abort(); }
    void end_of_input() override { inner->end_of_input(); }
    void close() override { inner->close(); }
    std::unique_ptr<TransactionalSinkWriter<Out>> inner;
    bool slow;
  };
  std::shared_ptr<ExactlyOnceCollectSink<Out>> inner_;
};

// Flink's stop-with-savepoint is synchronous: sources emit nothing after its barrier.
// Here subtask 1 would reach its end of input while subtask 0 commits the savepoint;
// had its source gone on, the end-of-input commit would publish rows past the savepoint
// and the run resumed from it would write them again.
TEST_P(Checkpoint, StopWithSavepointStopsSourcesAtTheBarrier) {
  TempDir dir;
  auto collected = std::make_shared<ExactlyOnceCollectSink<Out>>();
  auto slow = std::make_shared<SlowCommitSink>(collected);
  const std::int64_t n = 3000;  // 10000 rows/s: the end comes within subtask 0's 400 ms commit
  // Two chains source -> map -> sink, so subtask 0's slow commit holds nothing of subtask 1's.
  auto job = [&](StreamExecutionEnvironment& env, double rate) {
    env.set_parallelism(2);
    DatagenOptions opts;
    opts.rows_per_second = rate;
    env.from_source<std::int64_t>(DatagenSource<std::int64_t>::sequence(0, n - 1, opts), "Numbers")
        .uid("numbers")
        .map([](std::int64_t v) { return Out{v % kKeys, v, v / kKeys + 1}; }, "ToOut")
        .uid("to-out")
        .sink_to(slow, "Sink");
  };
  {
    StreamExecutionEnvironment env;
    job(env, 10000);
    auto handle = execute_async(env.graph(), checkpointing(dir.path, 0));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    handle.stop_with_savepoint(dir.path / "sp");
    EXPECT_EQ(handle.status(), JobStatus::kCanceled);
  }
  auto first = collected->values().size();
  EXPECT_GT(first, 0u);
  EXPECT_LT(first, static_cast<std::size_t>(n) / 2);
  StreamExecutionEnvironment env;
  job(env, 0);
  ExecutionOptions restore = checkpointing(dir.path, 0);
  restore.restore = RestoreSettings{dir.path / "sp"};
  execute_async(env.graph(), restore).wait();
  EXPECT_EQ(sorted(collected->values()), expected_output(n));
}

TEST_P(Checkpoint, RestoreRejectsStateWithoutOwnerUnlessAllowed) {
  TempDir dir;
  {
    StreamExecutionEnvironment env;
    build_job(env, 4000, 4000, std::make_shared<Injector>(), std::make_shared<ExactlyOnceCollectSink<Out>>(), 1);
    run_until_checkpoints(env, checkpointing(dir.path));
  }
  auto from = latest_checkpoint(dir.path);
  ASSERT_TRUE(from.has_value());
  auto renamed_job = [&](StreamExecutionEnvironment& env, std::shared_ptr<ExactlyOnceCollectSink<Out>> sink) {
    build_job(env, 4000, 0, std::make_shared<Injector>(), sink, 1);
    for (auto& node : env.graph().nodes)
      if (node.uid == "checker") node.uid = "checker-v2";  // the checker's state has no owner now
  };
  {
    StreamExecutionEnvironment env;
    renamed_job(env, std::make_shared<ExactlyOnceCollectSink<Out>>());
    auto options = checkpointing(dir.path);
    options.restore = RestoreSettings{*from};
    try {
      execute_async(env.graph(), options);
      FAIL() << "expected the restore to be rejected";
    } catch (const ClinkError& e) {
      EXPECT_THAT(e.what(), HasSubstr("state of operator uid 'checker' has no owner in this job"));
    }
  }
  {
    StreamExecutionEnvironment env;
    env.set_max_parallelism(64);
    build_job(env, 4000, 0, std::make_shared<Injector>(), std::make_shared<ExactlyOnceCollectSink<Out>>(), 1);
    auto options = checkpointing(dir.path);
    options.restore = RestoreSettings{*from};
    try {
      execute_async(env.graph(), options);
      FAIL() << "expected the restore to be rejected";
    } catch (const ClinkError& e) {
      EXPECT_THAT(e.what(), HasSubstr("max parallelism changed from 128 to 64"));
    }
  }
}

// An operator that fails in its first snapshot, or in its first open() after a restore.
struct FlakyPassThrough final : StreamOperator {
  std::shared_ptr<std::atomic<int>> snapshot_failures, restore_failures;
  FlakyPassThrough(std::shared_ptr<std::atomic<int>> s, std::shared_ptr<std::atomic<int>> r)
      : snapshot_failures(std::move(s)), restore_failures(std::move(r)) {}
  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    if (ctx.is_restored() && restore_failures->fetch_sub(1) > 0) throw std::runtime_error("restore failure");
  }
  void process_batch(int, BatchPtr b) override { output().emit(std::move(b)); }
  void snapshot_state(std::int64_t) override {
    ctx().operator_state().list("marker").assign(1, "x");  // so that restores open it as restored
    if (snapshot_failures->fetch_sub(1) > 0) throw std::runtime_error("snapshot failure");
  }
};

TEST_P(Checkpoint, FailuresDuringSnapshotAndRestoreAreRecoveredExactlyOnce) {
  TempDir dir;
  auto snapshot_failures = std::make_shared<std::atomic<int>>(1);
  auto restore_failures = std::make_shared<std::atomic<int>>(1);
  auto injector = std::make_shared<Injector>();
  injector->at = 1500;
  injector->failures_left = 1;  // a failure after some checkpoints, so that the restart restores
  auto sink = std::make_shared<ExactlyOnceCollectSink<Out>>();
  StreamExecutionEnvironment env;
  DatagenOptions opts;
  opts.rows_per_second = 4000;
  env.from_source<std::int64_t>(DatagenSource<std::int64_t>::sequence(0, 1999, opts))
      .uid("numbers")
      .then<std::int64_t>("flaky", "Flaky",
                          [=] { return std::make_unique<FlakyPassThrough>(snapshot_failures, restore_failures); })
      .uid("flaky")
      .map([injector](std::int64_t v) {
        if (v == injector->at.load() && injector->failures_left.fetch_sub(1) > 0)
          throw std::runtime_error("injected failure at " + std::to_string(v));
        return v;
      })
      .key_by([](std::int64_t v) { return v % kKeys; })
      .process(SequenceChecker{})
      .set_parallelism(2)
      .uid("checker")
      .sink_to(sink);
  auto handle = execute_async(env.graph(), checkpointing(dir.path));
  handle.wait();
  EXPECT_THAT(handle.restart_causes(),
              ::testing::ElementsAre(HasSubstr("snapshot failure"), HasSubstr("injected failure at 1500"),
                                     HasSubstr("restore failure")));
  EXPECT_EQ(sorted(sink->values()), expected_output(2000));
}

// The files of shared/ the newest checkpoint references, and those on disk.
std::pair<std::set<fs::path>, std::set<fs::path>> shared_files(const fs::path& dir) {
  std::set<fs::path> referenced, on_disk;
  auto latest = latest_checkpoint(dir);
  EXPECT_TRUE(latest.has_value());
  if (latest)
    for (const auto& [uid, op] : CheckpointMetadata::read(*latest).operators)
      for (const auto& st : op.subtasks)
        for (const auto& h : st.keyed)
          for (const auto& f : shared_state_files(h)) referenced.insert(fs::weakly_canonical(f));
  if (fs::exists(dir / "shared"))
    for (const auto& e : fs::directory_iterator(dir / "shared")) on_disk.insert(fs::weakly_canonical(e.path()));
  return {referenced, on_disk};
}

TEST_P(Checkpoint, SharedFilesOfDiscardedCheckpointsAreDeleted) {
  TempDir dir;
  StreamExecutionEnvironment env;
  auto sink = std::make_shared<ExactlyOnceCollectSink<Out>>();
  // Unbounded in practice: runs until 5 checkpoints completed, however slow the machine.
  build_job(env, 1'000'000'000, 3000, std::make_shared<Injector>(), sink, 2);
  run_until_checkpoints(env, checkpointing(dir.path, 30), 5);
  auto [referenced, on_disk] = shared_files(dir.path);
  EXPECT_EQ(on_disk, referenced);  // nothing leaks, nothing referenced is missing
  if (GetParam() == "rocksdb") {
    EXPECT_FALSE(referenced.empty());
  }
}

// A task whose snapshot fails part-way (its keyed state uploaded, a later operator of its
// chain failing) never acknowledges: what it uploaded to shared/ is deleted, not left behind.
TEST_P(Checkpoint, SharedFilesOfAPartialSnapshotAreDeleted) {
  TempDir dir;
  StreamExecutionEnvironment env;
  auto sink = std::make_shared<ExactlyOnceCollectSink<Out>>();
  auto snapshot_failures = std::make_shared<std::atomic<int>>(2);
  checked_sequence(env, 1'000'000'000, 3000, std::make_shared<Injector>())
      .set_parallelism(2)
      .then<Out>("fails-in-snapshot", "FailsInSnapshot", [snapshot_failures] {
        // Chained after the checker: fails the snapshot of checkpoints 2 and 3 (once each
        // attempt), after the checker's keyed state was written.
        struct FailsInSnapshot final : StreamOperator {
          std::shared_ptr<std::atomic<int>> failures;
          void process_batch(int, BatchPtr b) override { output().emit(std::move(b)); }
          void snapshot_state(std::int64_t id) override {
            if (id >= 2 && failures->fetch_sub(1) > 0) throw std::runtime_error("snapshot failed");
          }
        };
        auto op = std::make_unique<FailsInSnapshot>();
        op->failures = snapshot_failures;
        return op;
      })
      .set_parallelism(2)  // chained to the checker
      .uid("fails-in-snapshot")
      .sink_to(sink, "Sink");
  run_until_checkpoints(env, checkpointing(dir.path, 30), 5);
  EXPECT_LE(snapshot_failures->load(), 0);  // both snapshot failures happened
  auto [referenced, on_disk] = shared_files(dir.path);
  EXPECT_EQ(on_disk, referenced);
  if (GetParam() == "rocksdb") {
    EXPECT_FALSE(referenced.empty());
  }
}

// Event-time timers are part of the checkpoint: registered before, fired after a restore.
TEST_P(Checkpoint, TimersSurviveFailureAndRestore) {
  TempDir dir;
  struct TimerFn final : KeyedProcessFunction<std::int64_t, std::int64_t, std::int64_t> {
    void process_element(const std::int64_t& v, Context& ctx, Collector<std::int64_t>&) override {
      // One timer per key and 100-ms bucket of event time.
      ctx.timer_service().register_event_time_timer((v / 100 + 1) * 100 - 1);
    }
    void on_timer(std::int64_t ts, OnTimerContext& ctx, Collector<std::int64_t>& out) override {
      out.collect(ts * 10 + ctx.current_key());
    }
  };
  auto injector = std::make_shared<Injector>();
  injector->at = 1500;
  injector->failures_left = 1;
  StreamExecutionEnvironment env;
  DatagenOptions opts;
  opts.rows_per_second = 4000;
  opts.event_time_start_ms = 0;  // event time = value (ms)
  auto sink = std::make_shared<ExactlyOnceCollectSink<std::int64_t>>();
  env.from_source<std::int64_t>(DatagenSource<std::int64_t>::sequence(0, 1999, opts))
      .uid("numbers")
      .map([injector](std::int64_t v) {
        if (v == injector->at.load() && injector->failures_left.fetch_sub(1) > 0) throw std::runtime_error("boom");
        return v;
      })
      .uid("injector")
      .then<std::int64_t>("watermarks", "Watermarks", [] {
        // Watermark = value - 1 after each batch (monotonic event time).
        struct Wm final : StreamOperator {
          void process_batch(int, BatchPtr b) override {
            auto ts = batch_cast<std::int64_t>(*b).records.back().event_time;
            output().emit(std::move(b));
            output().emit_watermark(Watermark::at(ts - 1));
          }
        };
        return std::make_unique<Wm>();
      })
      .uid("watermarks")
      .key_by([](std::int64_t v) { return v % 3; })
      .process(TimerFn{})
      .set_parallelism(2)
      .uid("timers")
      .sink_to(sink);
  auto handle = execute_async(env.graph(), checkpointing(dir.path, 40));
  handle.wait();
  EXPECT_THAT(handle.restart_causes(), ::testing::ElementsAre(HasSubstr("boom")));
  std::vector<std::int64_t> expected;
  for (std::int64_t bucket = 0; bucket < 20; ++bucket)
    for (std::int64_t k = 0; k < 3; ++k) expected.push_back(((bucket + 1) * 100 - 1) * 10 + k);
  EXPECT_EQ(sorted(sink->values()), expected);
}

}  // namespace
}  // namespace clink::test
