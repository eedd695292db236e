// Stop with drain (Flink's `flink stop --drain`): the sources emit MAX_WATERMARK before
// the savepoint's barrier, so every event-time window fires and its result is committed
// with the savepoint. Without drain the open windows stay in the savepoint, unfired.
#include <gtest/gtest.h>

#include <thread>

#include "clink/api/data_stream.hpp"
#include "clink/connectors/datagen.hpp"
#include "clink/connectors/exactly_once_collect_sink.hpp"
#include "clink/time/watermark_strategy.hpp"
#include "clink/api/windowed_stream.hpp"
#include "clink/windows/window_assigners.hpp"
#include "../support/checkpoint_support.hpp"

namespace clink::test {
namespace {

using Out = SequenceOut;  // (key, count, 0) per window; (value, value, 1) per row

struct DrainJob {
  std::shared_ptr<ExactlyOnceCollectSink<Out>> windows = std::make_shared<ExactlyOnceCollectSink<Out>>();
  std::shared_ptr<ExactlyOnceCollectSink<Out>> rows = std::make_shared<ExactlyOnceCollectSink<Out>>();

  // Rows 0, 1, 2, ... with event time = the row, counted per key v % 2 in one
  // tumbling event-time window that no watermark of the run reaches (only MAX does).
  void build(StreamExecutionEnvironment& env) {
    env.set_parallelism(2);
    DatagenOptions opts;
    opts.rows_per_second = 2000;
    auto numbers = env.from_source<std::int64_t>(DatagenSource<std::int64_t>::sequence(0, 1'000'000'000, opts),
                                                 "Numbers")
                       .uid("numbers")
                       .assign_timestamps_and_watermarks(
                           MonotonicWatermarkStrategy<std::int64_t>().with_timestamp_assigner(
                               [](const std::int64_t& v, EventTime) { return v; }),
                           "Watermarks")
                       .uid("watermarks");
    numbers.map([](std::int64_t v) { return Out{v, v, 1}; }, "Row").uid("row").sink_to(rows, "Rows");
    numbers.map([](std::int64_t v) { return Out{v % 2, 1, 0}; }, "One")
        .uid("one")
        .key_by([](const Out& o) { return std::get<0>(o); })
        .window(TumblingEventTimeWindows::of(10'000'000'000))
        .reduce([](const Out& a, const Out& b) { return Out{std::get<0>(a), std::get<1>(a) + std::get<1>(b), 0}; },
                "Count")
        .uid("count")
        .sink_to(windows, "Windows");
  }
};

class StopDrain : public BackendTest {
 protected:
  // Runs the job for 300 ms, then stops it with a savepoint (with or without drain).
  void run_and_stop(DrainJob& job, bool drain) {
    TempDir dir;
    StreamExecutionEnvironment env;
    job.build(env);
    auto handle = execute_async(env.graph(), checkpointing(dir.path, 100));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    handle.stop_with_savepoint(dir.path / "sp", std::chrono::seconds(60), drain);
  }
};
INSTANTIATE_TEST_SUITE_P(Backends, StopDrain, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

TEST_P(StopDrain, DrainFiresEveryWindowBeforeTheSavepoint) {
  DrainJob job;
  run_and_stop(job, /*drain=*/true);
  auto rows = job.rows->values();
  ASSERT_GT(rows.size(), 0u);
  // One final result per key, counting exactly the rows the savepoint covers.
  auto windows = sorted(job.windows->values());
  ASSERT_EQ(windows.size(), 2u);
  std::int64_t per_key[2] = {0, 0};
  for (const auto& r : rows) ++per_key[std::get<0>(r) % 2];
  EXPECT_EQ(windows[0], (Out{0, per_key[0], 0}));
  EXPECT_EQ(windows[1], (Out{1, per_key[1], 0}));
}

TEST_P(StopDrain, WithoutDrainTheWindowsStayOpen) {
  DrainJob job;
  run_and_stop(job, /*drain=*/false);
  EXPECT_GT(job.rows->values().size(), 0u);
  EXPECT_TRUE(job.windows->values().empty());
}

}  // namespace
}  // namespace clink::test
