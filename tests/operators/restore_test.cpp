// Restore tests of the built-in stateful operators (count, event_time_count,
// watermark_assigner): each runs with checkpoints and a failure injected after some
// checkpoints completed, or is stopped with a savepoint and restored into a new run
// (also at another parallelism), and its exactly-once output must equal the
// failure-free run exactly. Every test runs on the memory and the RocksDB backend.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "clink/connectors/datagen.hpp"
#include "clink/connectors/exactly_once_collect_sink.hpp"
#include "clink/connectors/file_source.hpp"
#include "clink/core/error.hpp"
#include "clink/operators/builtin_streams.hpp"
#include "clink/runtime/executor.hpp"
#include "test_support.hpp"

#include "../support/restore_harness.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class OperatorRestore : public BackendTest {
 protected:
  // Runs the job; once `checkpoints` checkpoints completed, arms the injector; waits for
  // the end and checks that exactly the injected failure caused one restart.
  void run_with_failure(const JobGraph& graph, const fs::path& dir, ArmedFailure& injector, int checkpoints = 2) {
    auto handle = execute_async(graph, checkpointing(dir, 40));
    while (handle.checkpoint_counts().completed < checkpoints && !handle.wait_for(std::chrono::milliseconds(2))) {
    }
    ASSERT_EQ(handle.status(), JobStatus::kRunning) << "the job ended before " << checkpoints << " checkpoints";
    injector.armed = true;
    handle.wait();
    EXPECT_EQ(handle.checkpoint_counts().restarts, 1);
    EXPECT_THAT(handle.restart_causes(), ::testing::ElementsAre(HasSubstr("injected failure")));
  }

  // Runs the job until `until` holds (or `ms` passed), then stops it with a savepoint.
  fs::path run_and_stop_with_savepoint(const JobGraph& graph, const fs::path& dir, const std::string& name,
                                       std::optional<fs::path> from, int ms = 250) {
    auto o = checkpointing(dir, 0);
    if (from) o.restore = RestoreSettings{*from};
    auto handle = execute_async(graph, o);
    EXPECT_FALSE(handle.wait_for(std::chrono::milliseconds(ms))) << "the job ended before its savepoint";
    auto path = handle.stop_with_savepoint(dir / name);
    EXPECT_EQ(handle.status(), JobStatus::kCanceled);
    return path;
  }
  void run_to_end(const JobGraph& graph, const fs::path& dir, const fs::path& from, bool allow_non_restored = false) {
    auto o = checkpointing(dir, 0);
    o.restore = RestoreSettings{from, allow_non_restored};
    execute_async(graph, o).wait();
  }
};
INSTANTIATE_TEST_SUITE_P(Backends, OperatorRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

// ---- count ----

constexpr std::int64_t kKeys = 10;  // datagen's default key_count: key "k" + n % 10

// datagen events 0..n-1 (rate-limited) -> injector -> count (hash on event.key) -> sink
void count_job(StreamExecutionEnvironment& env, std::int64_t n, double rate, CountEmit emit, int parallelism,
               std::shared_ptr<ArmedFailure> injector, std::shared_ptr<ExactlyOnceCollectSink<WordCount>> sink) {
  env.set_parallelism(parallelism);
  DatagenOptions opts;
  opts.rows_per_second = rate;
  auto events = env.from_source<Event>(DatagenSource<Event>::sequence(0, n - 1, opts), "Events")
                    .set_parallelism(1)
                    .uid("events")
                    .map([injector](Event e) { return injector->pass(std::move(e)); }, "Injector")
                    .set_parallelism(1)
                    .uid("injector");
  count(events, emit).uid("count").sink_to(sink, "Sink");
}

std::vector<WordCount> expected_final_counts(std::int64_t n) {
  std::vector<WordCount> v;
  for (std::int64_t k = 0; k < kKeys; ++k) v.push_back({"k" + std::to_string(k), n / kKeys});
  return sorted(v);
}
std::vector<WordCount> expected_running_counts(std::int64_t n) {
  std::vector<WordCount> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back({"k" + std::to_string(i % kKeys), i / kKeys + 1});
  return sorted(v);
}

TEST_P(OperatorRestore, CountFinalSurvivesAFailure) {
  TempDir dir;
  auto sink = std::make_shared<ExactlyOnceCollectSink<WordCount>>();
  auto injector = std::make_shared<ArmedFailure>();
  StreamExecutionEnvironment env;
  count_job(env, 3000, 4000, CountEmit::kFinal, 2, injector, sink);
  run_with_failure(env.graph(), dir.path, *injector);
  EXPECT_EQ(sorted(sink->values()), expected_final_counts(3000));
}

TEST_P(OperatorRestore, CountEverySurvivesAFailureWithoutGapOrRepeat) {
  TempDir dir;
  auto sink = std::make_shared<ExactlyOnceCollectSink<WordCount>>();
  auto injector = std::make_shared<ArmedFailure>();
  StreamExecutionEnvironment env;
  count_job(env, 3000, 4000, CountEmit::kEvery, 2, injector, sink);
  run_with_failure(env.graph(), dir.path, *injector);
  EXPECT_EQ(sorted(sink->values()), expected_running_counts(3000));
}

// Savepoint at parallelism 2, restore at 3, savepoint, restore at 1: the key groups move
// between subtasks and the final emission finds every restored key.
TEST_P(OperatorRestore, CountRestoresFromSavepointsAtOtherParallelism) {
  for (CountEmit emit : {CountEmit::kFinal, CountEmit::kEvery}) {
    TempDir dir;
    auto sink = std::make_shared<ExactlyOnceCollectSink<WordCount>>();
    const std::int64_t n = 4000;
    std::optional<fs::path> from;
    int part = 0;
    for (int p : {2, 3}) {
      StreamExecutionEnvironment env;
      count_job(env, n, 4000, emit, p, std::make_shared<ArmedFailure>(), sink);
      from = run_and_stop_with_savepoint(env.graph(), dir.path, "sp-" + std::to_string(part++), from);
    }
    if (emit == CountEmit::kFinal) {
      EXPECT_TRUE(sink->values().empty());  // nothing before the end
    }
    StreamExecutionEnvironment env;
    count_job(env, n, 0, emit, 1, std::make_shared<ArmedFailure>(), sink);
    run_to_end(env.graph(), dir.path, *from);
    EXPECT_EQ(sorted(sink->values()),
              emit == CountEmit::kFinal ? expected_final_counts(n) : expected_running_counts(n));
  }
}

TEST_P(OperatorRestore, CountFinalEmitsSortedByKeyPerSubtaskAfterARestore) {
  TempDir dir;
  auto sink = std::make_shared<ExactlyOnceCollectSink<WordCount>>();
  fs::path from;
  {
    StreamExecutionEnvironment env;
    count_job(env, 3000, 4000, CountEmit::kFinal, 2, std::make_shared<ArmedFailure>(), sink);
    from = run_and_stop_with_savepoint(env.graph(), dir.path, "sp", std::nullopt);
  }
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  DatagenOptions unlimited;
  auto events = env.from_source<Event>(DatagenSource<Event>::sequence(0, 2999, unlimited), "Events")
                    .set_parallelism(1)
                    .uid("events")
                    .map([](Event e) { return e; }, "Injector")
                    .set_parallelism(1)
                    .uid("injector");
  auto counted = count(events, CountEmit::kFinal);
  counted.uid("count");
  auto out = collect(counted);
  run_to_end(env.graph(), dir.path, from, /*allow_non_restored=*/true);  // the first run's sink is gone
  EXPECT_EQ(sorted(out->values()), expected_final_counts(3000));
  for (int s = 0; s < 2; ++s) {
    auto v = out->values_of(s);
    EXPECT_FALSE(v.empty());
    EXPECT_TRUE(std::is_sorted(v.begin(), v.end())) << "subtask " << s;
  }
}

// A count behind a forward edge is not keyed: its counts cannot be checkpointed, and
// the job says so instead of losing them on the next restore.
TEST(CountRestore, WithoutAKeyedInputACheckpointFailsNamingTheProblem) {
  TempDir dir;
  StreamExecutionEnvironment env;
  DatagenOptions opts;
  opts.rows_per_second = 2000;
  env.from_source<Event>(DatagenSource<Event>::sequence(0, 1999, opts), "Events")
      .then<WordCount>("count", "Unkeyed count", [] { return std::make_unique<CountOperator<Event>>(); })
      .sink_to(std::make_shared<ExactlyOnceCollectSink<WordCount>>());
  ExecutionOptions o;
  o.checkpoints.interval_ms = 20;
  o.checkpoints.directory = dir.path;
  auto handle = execute_async(env.graph(), o);
  EXPECT_THROW(handle.wait(), JobFailedError);
  EXPECT_THAT(handle.error(), HasSubstr("Unkeyed count"));
  EXPECT_THAT(handle.error(), HasSubstr("not hash-partitioned"));
}

// file_source: its reader position (lines consumed) is operator state. The lines are
// slowed down so that checkpoints happen while the file is read.
TEST_P(OperatorRestore, FileSourceAndCountResumeAfterAFailure) {
  TempDir dir;
  const std::int64_t n = 3000;
  {
    std::ofstream f(dir.path / "words.txt");
    for (std::int64_t i = 0; i < n; ++i) f << "k" << i % kKeys << "\n";
  }
  auto sink = std::make_shared<ExactlyOnceCollectSink<WordCount>>();
  auto injector = std::make_shared<ArmedFailure>();
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  auto words = env.from_source<std::string>(FileSource<std::string>::text((dir.path / "words.txt").string()), "Words")
                   .set_parallelism(1)
                   .uid("words")
                   .map([injector](std::string w) {
                     // Slow until armed, so checkpoints complete while records remain even
                     // on a loaded machine (3000 records take >= 3 s before arming).
                     if (!injector->armed.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                     return injector->pass(std::move(w));
                   }, "Injector")
                   .set_parallelism(1)
                   .uid("injector");
  count(words, CountEmit::kEvery).uid("count").sink_to(sink, "Sink");
  run_with_failure(env.graph(), dir.path / "checkpoints", *injector);
  EXPECT_EQ(sorted(sink->values()), expected_running_counts(n));
}

// ---- event_time_count ----

constexpr std::int64_t kBucket = 100;

// datagen events 0..n-1 with event time = n (rate-limited) -> watermarks (bound 0) ->
// injector -> event_time_count (hash on event.key) -> sink
void event_time_count_job(StreamExecutionEnvironment& env, std::int64_t n, double rate, int parallelism,
                          std::shared_ptr<ArmedFailure> injector, std::shared_ptr<ExactlyOnceCollectSink<WindowCount>> sink) {
  env.set_parallelism(parallelism);
  DatagenOptions opts;
  opts.rows_per_second = rate;
  opts.event_time_start_ms = 0;
  auto events = env.from_source<Event>(DatagenSource<Event>::sequence(0, n - 1, opts), "Events")
                    .set_parallelism(1)
                    .uid("events");
  auto timed = assign_watermarks(events, 0).set_parallelism(1).uid("watermarks");
  auto injected = timed.map([injector](Event e) { return injector->pass(std::move(e)); }, "Injector")
                      .set_parallelism(1)
                      .uid("injector");
  event_time_count(injected, kBucket).uid("event-time-count").sink_to(sink, "Sink");
}

std::vector<WindowCount> expected_buckets(std::int64_t n) {
  std::map<std::pair<std::string, std::int64_t>, std::int64_t> m;
  for (std::int64_t i = 0; i < n; ++i) ++m[{"k" + std::to_string(i % kKeys), i - i % kBucket}];
  std::vector<WindowCount> v;
  for (const auto& [kb, c] : m) v.emplace_back(kb.first, kb.second, c);
  return sorted(v);
}

TEST_P(OperatorRestore, EventTimeCountSurvivesAFailure) {
  TempDir dir;
  auto sink = std::make_shared<ExactlyOnceCollectSink<WindowCount>>();
  auto injector = std::make_shared<ArmedFailure>();
  StreamExecutionEnvironment env;
  event_time_count_job(env, 3000, 4000, 2, injector, sink);
  run_with_failure(env.graph(), dir.path, *injector);
  EXPECT_EQ(sorted(sink->values()), expected_buckets(3000));
}

TEST_P(OperatorRestore, EventTimeCountRestoresFromSavepointsAtOtherParallelism) {
  TempDir dir;
  auto sink = std::make_shared<ExactlyOnceCollectSink<WindowCount>>();
  const std::int64_t n = 4000;
  std::optional<fs::path> from;
  int part = 0;
  for (int p : {2, 3}) {
    StreamExecutionEnvironment env;
    event_time_count_job(env, n, 4000, p, std::make_shared<ArmedFailure>(), sink);
    from = run_and_stop_with_savepoint(env.graph(), dir.path, "sp-" + std::to_string(part++), from);
  }
  EXPECT_FALSE(sink->values().empty());
  StreamExecutionEnvironment env;
  event_time_count_job(env, n, 0, 1, std::make_shared<ArmedFailure>(), sink);
  run_to_end(env.graph(), dir.path, *from);
  EXPECT_EQ(sorted(sink->values()), expected_buckets(n));
}

// ---- watermark_assigner ----

// source -> watermark_assigner (bound 0) -> event_time_count (size 10) -> sink, and a
// probe logging what the assigner emits.
struct WatermarkJob {
  std::shared_ptr<ExactlyOnceCollectSink<WindowCount>> sink = std::make_shared<ExactlyOnceCollectSink<WindowCount>>();
  std::shared_ptr<SourceControl> control = std::make_shared<SourceControl>();
  std::shared_ptr<ProbeLog> log;
  std::string counter;

  void build(StreamExecutionEnvironment& env, const std::vector<ScriptStep<Event>>& steps) {
    auto src = scripted_source(env, steps, control).uid("source");
    auto timed = assign_watermarks(src, 0).uid("watermarks");
    log = probe(timed);
    auto counted = event_time_count(timed, 10).uid("event-time-count");
    counter = counted.id();
    counted.sink_to(sink, "Sink");
  }
};

std::vector<ScriptStep<Event>> late_record_script() {
  return {
      ScriptStep<Event>{{{{"a", 1}, 5}, {{"b", 1}, 12}}},  // W11: fires (a,0)
      ScriptStep<Event>{{{{"a", 1}, 25}}},                 // W24: fires (b,10)
      // -- the savepoint is taken here --
      ScriptStep<Event>{{{{"a", 1}, 15}, {{"b", 1}, 27}}},  // (a,15) is late: bucket 10 fired at W19
      ScriptStep<Event>{{{{"a", 1}, 31}}},                  // W30: fires (a,20), (b,20)
  };
}

// Deterministic: the savepoint is taken between two exactly known batches, and the first
// batch after the restore holds a record that is late only if the restored job knows
// the watermark it had reached. Flink (whose strategies start over at Long.MIN_VALUE)
// would count it and fire bucket (a,10) a second time.
TEST_P(OperatorRestore, WatermarkAssignerRestoresItsWatermarkSoALateRecordStaysLate) {
  const std::vector<WindowCount> expected{{"a", 0, 1}, {"b", 10, 1}, {"a", 20, 1}, {"b", 20, 1}, {"a", 30, 1}};
  {  // the failure-free run
    TempDir dir;
    StreamExecutionEnvironment env;
    WatermarkJob job;
    job.build(env, late_record_script());
    auto handle = execute_async(env.graph(), checkpointing(dir.path, 0));
    handle.wait();
    EXPECT_EQ(sorted(job.sink->values()), sorted(expected));
    EXPECT_EQ(handle.metrics().total(job.counter).late_records_dropped, 1);
    EXPECT_EQ(job.log->get(), (std::vector<std::string>{"(a,1)@5", "(b,1)@12", "W11", "(a,1)@25", "W24", "(a,1)@15",
                                                        "(b,1)@27", "W26", "(a,1)@31", "W30", "WMAX"}));
  }
  TempDir dir;
  WatermarkJob job;  // one sink for both runs
  fs::path savepoint;
  {
    StreamExecutionEnvironment env;
    job.build(env, late_record_script());
    job.control->pause_at = 2;
    auto handle = execute_async(env.graph(), checkpointing(dir.path, 0));
    while (job.control->emitted.load() < 2 || job.log->get().size() < 5)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    savepoint = handle.stop_with_savepoint(dir.path / "sp");
    // What the savepoint pre-committed ((a,0,1), (b,10,1)) is committed when its
    // completion reaches the sink, or at the latest by the restored run.
  }
  StreamExecutionEnvironment env;
  job.build(env, late_record_script());
  job.control->pause_at = static_cast<std::size_t>(-1);
  auto o = checkpointing(dir.path, 0);
  o.restore = RestoreSettings{savepoint};
  auto handle = execute_async(env.graph(), o);
  handle.wait();
  // The restored watermark goes out again before the first record after the restore.
  EXPECT_EQ(job.log->get(),
            (std::vector<std::string>{"W24", "(a,1)@15", "(b,1)@27", "W26", "(a,1)@31", "W30", "WMAX"}));
  EXPECT_EQ(handle.metrics().total(job.counter).late_records_dropped, 1);
  EXPECT_EQ(sorted(job.sink->values()), sorted(expected));
}

// Rows n > 2000 with n % 97 == 0 are 5 s late: late whatever the batching, so the
// failure-free output is deterministic; the others are in order.
EventTime late_event_time(const Event& e, EventTime) { return e.value > 2000 && e.value % 97 == 0 ? e.value - 5000 : e.value; }

void late_events_job(StreamExecutionEnvironment& env, std::int64_t n, double rate, std::shared_ptr<ArmedFailure> injector,
                     std::shared_ptr<ExactlyOnceCollectSink<WindowCount>> sink, std::string* counter_id) {
  env.set_parallelism(2);
  DatagenOptions opts;
  opts.rows_per_second = rate;
  opts.event_time_start_ms = 0;
  auto events = env.from_source<Event>(DatagenSource<Event>::sequence(0, n - 1, opts), "Events")
                    .set_parallelism(1)
                    .uid("events");
  auto timed =
      events
          .assign_timestamps_and_watermarks(BoundedOutOfOrdernessStrategy<Event>(0).with_timestamp_assigner(late_event_time))
          .set_parallelism(1)
          .uid("watermarks");
  auto injected = timed.map([injector](Event e) { return injector->pass(std::move(e)); }, "Injector")
                      .set_parallelism(1)
                      .uid("injector");
  auto counted = event_time_count(injected, kBucket).uid("event-time-count");
  *counter_id = counted.id();
  counted.sink_to(sink, "Sink");
}

TEST_P(OperatorRestore, WatermarkAssignerWithLateRecordsSurvivesAFailureExactly) {
  const std::int64_t n = 6000;
  std::vector<WindowCount> failure_free;
  std::int64_t late = 0;
  {
    TempDir dir;
    StreamExecutionEnvironment env;
    auto sink = std::make_shared<ExactlyOnceCollectSink<WindowCount>>();
    std::string counter;
    late_events_job(env, n, 0, std::make_shared<ArmedFailure>(), sink, &counter);
    auto handle = execute_async(env.graph(), checkpointing(dir.path, 40));
    handle.wait();
    failure_free = sorted(sink->values());
    late = handle.metrics().total(counter).late_records_dropped;
  }
  std::int64_t expected_late = 0;
  for (std::int64_t i = 2001; i < n; ++i) expected_late += i % 97 == 0 ? 1 : 0;
  EXPECT_EQ(late, expected_late);
  std::set<std::pair<std::string, std::int64_t>> fired;
  for (const auto& [k, start, c] : failure_free) EXPECT_TRUE(fired.insert({k, start}).second) << "fired twice";

  TempDir dir;
  auto sink = std::make_shared<ExactlyOnceCollectSink<WindowCount>>();
  auto injector = std::make_shared<ArmedFailure>();
  StreamExecutionEnvironment env;
  std::string counter;
  late_events_job(env, n, 6000, injector, sink, &counter);
  run_with_failure(env.graph(), dir.path, *injector, 3);
  EXPECT_EQ(sorted(sink->values()), failure_free);
}

// Rescaled (the source's records rebalanced over 2, then 3 assigners): each assigner
// restarts from the minimum of the old watermarks; output stays exact.
TEST_P(OperatorRestore, WatermarkAssignerRestoresAtOtherParallelism) {
  TempDir dir;
  auto sink = std::make_shared<ExactlyOnceCollectSink<WindowCount>>();
  const std::int64_t n = 4000;
  auto job = [&](StreamExecutionEnvironment& env, double rate, int p) {
    DatagenOptions opts;
    opts.rows_per_second = rate;
    opts.event_time_start_ms = 0;
    auto events = env.from_source<Event>(DatagenSource<Event>::sequence(0, n - 1, opts), "Events")
                      .set_parallelism(1)
                      .uid("events");
    auto timed = assign_watermarks(events.rebalance(), 0).set_parallelism(p).uid("watermarks");
    event_time_count(timed, kBucket).set_parallelism(2).uid("event-time-count").sink_to(sink, "Sink");
  };
  std::optional<fs::path> from;
  int part = 0;
  for (int p : {2, 3}) {
    StreamExecutionEnvironment env;
    job(env, 4000, p);
    from = run_and_stop_with_savepoint(env.graph(), dir.path, "sp-" + std::to_string(part++), from);
  }
  StreamExecutionEnvironment env;
  job(env, 0, 1);
  run_to_end(env.graph(), dir.path, *from);
  EXPECT_EQ(sorted(sink->values()), expected_buckets(n));
}

}  // namespace
}  // namespace clink::test
