// Window state is durable: a job with windows restores from a checkpoint (injected
// failure) or a savepoint (new run, also at another parallelism) and its exactly-once
// output equals the failure-free run exactly, pane timing and index included. Each
// scenario runs on the memory and the RocksDB backend, through the sliced path
// (tumbling, sliding), the generic path (process windows, evictors, count triggers)
// and the merging path (sessions).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "clink/connectors/exactly_once_collect_sink.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/executor.hpp"
#include "window_test_support.hpp"

#include "../support/restore_harness.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using Script = std::vector<ScriptStep<KV>>;

// "key [s,e) value PANE" for an aggregated window.
struct AggPaneFn final : ProcessWindowFunction<std::int64_t, std::string, std::string> {
  void process(const std::string& key, Context& ctx, const WindowElements<std::int64_t>& elements,
               Collector<std::string>& out) override {
    std::string s = key + " ";
    to_string_into(ctx.window(), s);
    s += " " + std::to_string(elements[0]) + " ";
    to_string_into(ctx.pane(), s);
    out.collect(s);
  }
};

using WindowBuild = std::function<DataStream<std::string>(KeyedStream<KV, std::string, KeyOf>)>;

// source (script) -> injector -> keyed window -> exactly-once sink.
struct Job {
  Script script;
  WindowBuild window;
  std::shared_ptr<ExactlyOnceCollectSink<std::string>> sink = std::make_shared<ExactlyOnceCollectSink<std::string>>();
  std::shared_ptr<SourceControl> control = std::make_shared<SourceControl>();
  std::shared_ptr<ArmedFailure> failure = std::make_shared<ArmedFailure>();

  RestorableJob restorable() const {
    return {[this](int parallelism) {
              StreamExecutionEnvironment env;
              env.set_parallelism(parallelism);
              auto src = scripted_source(env, script, control).uid("source");
              auto fail = failure;
              auto injected =
                  src.map([fail](KV v) { return fail->pass(std::move(v)); }, "Injector").set_parallelism(1).uid("injector");
              window(keyed(injected)).uid("window").sink_to(sink, "Sink");
              return env.graph();
            },
            control, failure};
  }
};

class WindowRestore : public RestoreHarness {
 protected:
  std::vector<std::string> failure_free(const Script& script, const WindowBuild& window, int parallelism = 1) {
    Job job{script, window};
    run_failure_free(job.restorable(), parallelism);
    return sorted(job.sink->values());
  }

  // Stops the job with a savepoint after step `at` (parallelism p1), restores it at
  // parallelism p2 and runs it to the end: both runs' output.
  std::vector<std::string> with_savepoint(const Script& script, const WindowBuild& window, std::size_t at, int p1,
                                          int p2) {
    Job job{script, window};
    run_with_savepoint(job.restorable(), at, p1, p2);
    return sorted(job.sink->values());
  }

  // Pauses after step `at` until checkpoints completed, then fails the next record.
  std::vector<std::string> with_failure(const Script& script, const WindowBuild& window, std::size_t at,
                                        int parallelism = 2) {
    Job job{script, window};
    run_with_failure(job.restorable(), at, parallelism);
    return sorted(job.sink->values());
  }

  // Every way of interrupting the job after step `at` gives the failure-free output.
  void expect_restores(const Script& script, const WindowBuild& window, std::size_t at,
                       const std::vector<std::string>& must_contain = {}) {
    const auto expected = failure_free(script, window);
    ASSERT_FALSE(expected.empty());
    for (const auto& s : must_contain) EXPECT_THAT(expected, ::testing::Contains(s));
    EXPECT_EQ(failure_free(script, window, 2), expected) << "parallelism 2";
    for (auto [p1, p2] : {std::pair{1, 1}, std::pair{1, 2}, std::pair{2, 1}, std::pair{2, 2}})
      EXPECT_EQ(with_savepoint(script, window, at, p1, p2), expected) << "savepoint " << p1 << " -> " << p2;
    EXPECT_EQ(with_failure(script, window, at), expected) << "injected failure";
  }
};
INSTANTIATE_TEST_SUITE_P(Backends, WindowRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

// Keys a..f, so that at parallelism 2 both subtasks hold keys.
std::vector<std::pair<KV, EventTime>> spread(std::int64_t value, EventTime t) {
  std::vector<std::pair<KV, EventTime>> v;
  for (const char* k : {"a", "b", "c", "d", "e", "f"}) v.push_back({{k, value}, t});
  return v;
}

Script tumbling_script() {
  return {
      {spread(1, 1), 5},
      {spread(2, 12), 14},  // W14: [0,10) fired
      {spread(4, 15), 16},
      // -- interrupted here: [10,20) holds 2 + 4, [20,30) nothing yet --
      {spread(8, 21), 25},  // W25: [10,20) fired
      {spread(16, 29), std::nullopt},
  };
}

TEST_P(WindowRestore, TumblingSliced) {
  expect_restores(tumbling_script(), [](auto k) {
    return k.window(TumblingEventTimeWindows::of(10)).aggregate(SumAgg{}, AggPaneFn{});
  }, 3, {"a [10,20) 6 ON_TIME#0 first last"});
}

// Sliding windows (size 30, slide 10) with allowed lateness 20: the restore falls
// between the on-time pane of [0,30) and its cleanup; the late record after it makes
// a LATE pane with index 1, not a second ON_TIME pane.
Script sliding_late_script() {
  return {
      {spread(1, 1), 12},
      {spread(2, 15), 31},  // W31: [-10,20) [0,30) on time
      {spread(4, 33), 35},
      // -- interrupted here --
      {spread(8, 5), 36},   // late for [0,30) (cleanup at 49) and [-10,20) (39): LATE panes
      {spread(16, 7), 45},  // late again: [-10,20) is gone (W45 >= 39), [0,30) pane 2
      {spread(32, 25), 60},
  };
}

TEST_P(WindowRestore, SlidingSlicedLatePaneAfterARestore) {
  auto win = [](auto k) {
    return k.window(SlidingEventTimeWindows::of(30, 10)).allowed_lateness(20).aggregate(SumAgg{}, AggPaneFn{});
  };
  expect_restores(sliding_late_script(), win, 3, {"a [0,30) 3 ON_TIME#0 first", "a [0,30) 11 LATE#1"});
}

TEST_P(WindowRestore, SlidingGenericLatePaneAfterARestore) {
  auto win = [](auto k) {
    return k.window(SlidingEventTimeWindows::of(30, 10)).allowed_lateness(20).slicing(false).aggregate(SumAgg{},
                                                                                                       AggPaneFn{});
  };
  expect_restores(sliding_late_script(), win, 3, {"a [0,30) 3 ON_TIME#0 first", "a [0,30) 11 LATE#1"});
}

// A sliding window's firing moves each key's complete newest pane to its older panes:
// the interruption falls right after that, and the first record after it is late for
// exactly that pane (a LATE pane of both windows that ended, the next one on time).
Script sliding_spilled_pane_script() {
  return {
      {spread(1, 1), 12},   // W12: [-20,10) fires 1
      {spread(2, 15), 31},  // W31: [-10,20) and [0,30) fire 3; pane [10,20) is moved
      // -- interrupted here --
      {spread(4, 16), 33},  // late into pane [10,20): [-10,20) and [0,30) fire 7, LATE
      {spread(8, 35), 60},  // W60: [10,40) 14 (its last pane), [20,50) 8, [30,60) 8
  };
}

TEST_P(WindowRestore, SlidingLateRecordIntoTheLastFiredPane) {
  const std::vector<std::string> lines = {"a [0,30) 3 ON_TIME#0 first", "a [-10,20) 7 LATE#1", "a [0,30) 7 LATE#1",
                                          "a [10,40) 14 ON_TIME#0 first last", "a [30,60) 8 ON_TIME#0 first"};
  for (bool slicing : {true, false}) {
    auto win = [slicing](auto k) {
      return k.window(SlidingEventTimeWindows::of(30, 10)).allowed_lateness(20).slicing(slicing).aggregate(SumAgg{},
                                                                                                           AggPaneFn{});
    };
    expect_restores(sliding_spilled_pane_script(), win, 2, lines);
  }
}

// Sessions (gap 10): two sessions of each key are open at the interruption; the first
// record after it bridges them (a merge of restored windows).
Script session_script() {
  return {
      {spread(1, 1), 0},
      {spread(2, 15), 2},  // sessions [1,11) and [15,25)
      // -- interrupted here --
      {spread(4, 9), 5},  // [1,19) joins [15,25): [1,25)
      {spread(8, 40), 30},  // W30: [1,25) fires
      {spread(16, 45), std::nullopt},
  };
}

TEST_P(WindowRestore, SessionMergesRestoredWindows) {
  expect_restores(session_script(), [](auto k) {
    return k.window(EventTimeSessionWindows::with_gap(10)).aggregate(SumAgg{}, AggPaneFn{});
  }, 2, {"a [1,25) 7 ON_TIME#0 first last"});
}

TEST_P(WindowRestore, SessionProcessMergesRestoredWindows) {
  expect_restores(session_script(), [](auto k) {
    return k.window(EventTimeSessionWindows::with_gap(10)).process(ListFn{});
  }, 2, {"a [1,25) 1,2,4 ON_TIME#0 first last"});
}

// An evicting process window (keeps the last 2 elements) with allowed lateness: the
// restore falls between the on-time pane and the cleanup.
TEST_P(WindowRestore, EvictingProcessWindowLatePaneAfterARestore) {
  Script script{
      {spread(1, 1), 2},
      {spread(2, 3), std::nullopt},
      {spread(4, 5), 12},  // W12: [0,10) on time: 2,4
      // -- interrupted here --
      {spread(8, 6), 14},  // LATE#1: 4,8
      {spread(16, 25), 30},
  };
  expect_restores(script, [](auto k) {
    return k.window(TumblingEventTimeWindows::of(10)).allowed_lateness(10).evictor(CountEvictor::of(2)).process(ListFn{});
  }, 3, {"a [0,10) 2,4 ON_TIME#0 first", "a [0,10) 4,8 LATE#1"});
}

// A count trigger keeps its count in trigger state.
TEST_P(WindowRestore, CountTriggerStateSurvives) {
  Script script{
      {spread(1, 1), std::nullopt},
      {spread(2, 2), std::nullopt},
      {spread(4, 3), std::nullopt},
      // -- interrupted here: the count is 1 of 2 --
      {spread(8, 4), std::nullopt},
      {spread(16, 5), 100},
  };
  expect_restores(script, [](auto k) {
    return k.window(TumblingEventTimeWindows::of(10)).trigger(CountTrigger::of(2)).process(ListFn{});
  }, 3, {"a [0,10) 1,2,4,8 EARLY#1"});
}

// Many keys, out-of-order and late records, sliding windows with allowed lateness: the
// key groups of 300 keys move between subtasks with their panes, and the windows'
// key lists and timers are rebuilt on the subtasks that now hold them.
Script many_keys_script() {
  Script script;
  std::uint64_t x = 42;
  auto next = [&x] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x >> 33;
  };
  for (std::int64_t step = 0; step < 40; ++step) {
    ScriptStep<KV> s;
    for (int i = 0; i < 60; ++i) {
      const auto key = "k" + std::to_string(next() % 300);
      const EventTime t = step * 10 + static_cast<EventTime>(next() % 60) - 40;  // up to 40 late
      s.records.push_back({{key, static_cast<std::int64_t>(next() % 100)}, t});
    }
    s.watermark = step * 10 - 5;
    script.push_back(std::move(s));
  }
  return script;
}

TEST_P(WindowRestore, ManyKeysSlidingWithLatenessRescales) {
  auto script = many_keys_script();
  for (bool slicing : {true, false}) {
    auto win = [slicing](auto k) {
      return k.window(SlidingEventTimeWindows::of(40, 10))
          .allowed_lateness(15)
          .slicing(slicing)
          .aggregate(SumAgg{}, AggPaneFn{});
    };
    expect_restores(script, win, 20);
  }
}

// An accumulator type without a StateCodec: the checkpoint fails naming the window.
struct Opaque {
  std::int64_t n = 0;
};
struct OpaqueAgg final : AggregateFunction<KV, Opaque, std::int64_t> {
  Opaque create_accumulator() const override { return {}; }
  void add(const KV& v, Opaque& acc) const override { acc.n += v.second; }
  std::int64_t get_result(const Opaque& acc) const override { return acc.n; }
  void merge(Opaque& acc, const Opaque& o) const override { acc.n += o.n; }
};

TEST(WindowCheckpoint, AnAccumulatorWithoutStateCodecFailsTheCheckpointNamingTheWindow) {
  TempDir dir;
  Job job{{{spread(1, 1), 5}, {spread(1, 2), 6}}, [](auto k) {
            return k.window(TumblingEventTimeWindows::of(10))
                .aggregate(OpaqueAgg{}, "my-window")
                .map([](std::int64_t v) { return std::to_string(v); });
          }};
  job.control->pause_at = 1;
  ExecutionOptions o;
  o.checkpoints.interval_ms = 10;
  o.checkpoints.directory = dir.path;
  auto handle = execute_async(job.restorable().graph(1), o);
  EXPECT_THROW(handle.wait(), JobFailedError);
  EXPECT_THAT(handle.error(), HasSubstr("my-window"));
  EXPECT_THAT(handle.error(), HasSubstr("StateCodec"));
}

}  // namespace
}  // namespace clink::test
