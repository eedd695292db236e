#include "clink/time/alignment_group.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "clink/api/data_stream.hpp"
#include "clink/connectors/collect_sink.hpp"
#include "clink/connectors/datagen.hpp"
#include "clink/time/watermark_strategy.hpp"

namespace clink::test {
namespace {

TEST(AlignmentGroup, MinimumOverActiveMembers) {
  AlignmentGroup g;
  int a = g.join(), b = g.join();
  EXPECT_EQ(g.min_watermark(), kMinEventTime);  // b has no watermark yet
  g.publish(a, 100, false);
  g.publish(b, 40, false);
  EXPECT_EQ(g.min_watermark(), 40);
  g.publish(b, 30, false);  // never regresses
  EXPECT_EQ(g.min_watermark(), 40);
  g.publish(b, 40, true);  // idle: left out
  EXPECT_EQ(g.min_watermark(), 100);
  g.leave(a);
  EXPECT_EQ(g.min_watermark(), kMaxEventTime);  // only an idle member left
}

TEST(AlignmentGroup, WaitsWhileAheadAndIsReleasedWhenTheSlowestCatchesUp) {
  AlignmentGroup g;
  int fast = g.join(), slow = g.join();
  g.publish(fast, 500, false);
  g.publish(slow, 100, false);
  EXPECT_LT(g.wait_until_aligned(150, 50, 1000), 50);  // within drift: no wait
  std::thread catch_up([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    g.publish(slow, 460, false);
  });
  auto waited = g.wait_until_aligned(500, 50, 5000);
  catch_up.join();
  EXPECT_GE(waited, 90);
  EXPECT_LT(waited, 4000);
  g.leave(slow);
  g.publish(fast, 1'000'000, false);
  EXPECT_LT(g.wait_until_aligned(1'000'000, 0, 5000), 50);  // the slow member left: nothing holds it back
  // Bounded: a member that never moves delays others by at most max_wait per call.
  int stuck = g.join();
  auto bounded = g.wait_until_aligned(500, 0, 60);
  EXPECT_GE(bounded, 55);
  g.leave(stuck);
  (void)fast;
}

// Two sources in one group: the fast one is held to the slow one's pace.
TEST(WatermarkAlignment, AFastSourceWaitsForTheSlowOneWithinTheDrift) {
  struct Observation {
    std::mutex mu;
    std::int64_t max_fast = -1, max_slow = -1, worst_drift = 0, count = 0;
  };
  std::shared_ptr<Observation> obs;
  auto run = [&](bool aligned) {
    obs = std::make_shared<Observation>();
    StreamExecutionEnvironment env;
    auto source = [&](std::int64_t start, double rate) {
      DatagenOptions o;
      o.rows_per_second = rate;
      o.event_time_start_ms = 0;  // event time = row number (ms)
      auto strategy = MonotonicWatermarkStrategy<std::int64_t>();
      if (aligned) strategy.with_watermark_alignment("alignment-test", 100, 5000);
      return env.from_source<std::int64_t>(DatagenSource<std::int64_t>::sequence(start, start + 999, o))
          .assign_timestamps_and_watermarks(strategy);
    };
    // Aligned, the fast source is rate-limited so that its batches are small (alignment
    // acts per batch); unaligned it is not limited at all.
    auto fast = source(1'000'000, aligned ? 2500 : 0);
    auto slow = source(0, 500);           // 2 s
    struct Track final : ProcessFunction<std::int64_t, std::int64_t> {
      std::shared_ptr<Observation> obs;
      explicit Track(std::shared_ptr<Observation> o) : obs(std::move(o)) {}
      void process_element(const std::int64_t& v, Context& ctx, Collector<std::int64_t>&) override {
        std::lock_guard lock(obs->mu);
        auto& m = v >= 1'000'000 ? obs->max_fast : obs->max_slow;
        m = std::max(m, ctx.timestamp());
        ++obs->count;
        if (obs->max_slow >= 0) obs->worst_drift = std::max(obs->worst_drift, obs->max_fast - obs->max_slow);
      }
    };
    fast.union_with(slow).process(Track{obs}).set_parallelism(1);
    env.execute();
  };
  run(true);
  EXPECT_EQ(obs->count, 2000);
  // Alignment works per batch: drift 100 ms plus one batch of the fast source (after a
  // wait its rate limiter releases a burst of up to 100 ms of rows = 250 ms of event time),
  // with slack for a loaded machine.
  EXPECT_LE(obs->worst_drift, 500);
  run(false);
  EXPECT_EQ(obs->count, 2000);
  EXPECT_GT(obs->worst_drift, 800);  // without alignment the fast source runs far ahead
}

}  // namespace
}  // namespace clink::test
