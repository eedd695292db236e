// The cluster's configuration (Flink's config.yaml), Flink's restart strategies and the
// deploy/ manifests. Restart decisions are Flink's own: the expected timelines below
// are what Flink 2.3's strategy classes print for the same failures
// (tests/cluster/oracle/FlinkRestartOracle.java); value syntax and defaults likewise
// come from Flink 2.3's Configuration.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "clink/checkpoint/restart_tracker.hpp"
#include "clink/cluster/config/cluster_config.hpp"
#include "clink/cluster/config/flink_values.hpp"
#include "clink/core/error.hpp"

namespace clink::test {
namespace {

using cluster::ClusterConfig;
using std::chrono::milliseconds;
using ::testing::HasSubstr;

// ---------------------------------------------------------------- restart strategies

// Feeds failures at the given times (ms) and renders each decision as the oracle does:
// "t=<ms>:<delay>|FAIL[ merged]".
std::string timeline(RestartTracker& tracker, const std::vector<std::int64_t>& times) {
  std::string out;
  for (auto t : times) {
    auto delay = tracker.on_failure(RestartTracker::Clock::time_point(milliseconds(t)));
    out += (out.empty() ? "" : " ") + std::string("t=") + std::to_string(t) + ":" +
           (delay ? std::to_string(delay->count()) : "FAIL");
    if (!tracker.new_attempt()) out += " merged";
  }
  return out;
}

TEST(RestartTracker, FixedDelayAsFlink) {
  RestartTracker tracker(RestartStrategy::fixed_delay(3, 250));
  EXPECT_EQ(timeline(tracker, {0, 1000, 2000, 3000}), "t=0:250 t=1000:250 t=2000:250 t=3000:FAIL");
  EXPECT_EQ(tracker.restarts(), 3);
  EXPECT_EQ(tracker.suppressed_message(),
            "Recovery is suppressed by FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=3, "
            "backoffTimeMS=250)");
  RestartTracker none_left(RestartStrategy::fixed_delay(0, 250));
  EXPECT_EQ(timeline(none_left, {0}), "t=0:FAIL");
}

TEST(RestartTracker, NoneNeverRestarts) {
  RestartTracker tracker(RestartStrategy::none());
  EXPECT_EQ(timeline(tracker, {0, 5000}), "t=0:FAIL t=5000:FAIL");
  EXPECT_EQ(tracker.describe(), "NoRestartBackoffTimeStrategy");
}

TEST(RestartTracker, ExponentialDelayGrowsCapsAndMergesPendingFailures) {
  RestartTracker tracker(RestartStrategy::exponential_delay(1000, 10000, 2.0, 60000, 0.0));
  EXPECT_EQ(timeline(tracker, {0, 1500, 4000, 8500, 17000, 26000, 27000, 86999, 147000, 207000}),
            "t=0:1000 t=1500:2000 t=4000:4000 t=8500:8000 t=17000:10000 t=26000:1000 merged t=27000:0 merged "
            "t=86999:10000 t=147000:10000 t=207000:10000");
  EXPECT_EQ(tracker.restarts(), 8);  // the two merged failures are no restarts of their own
  EXPECT_EQ(tracker.describe(),
            "ExponentialDelayRestartBackoffTimeStrategy(initialBackoffMS=1000, maxBackoffMS=10000, "
            "backoffMultiplier=2.0, resetBackoffThresholdMS=60000, jitterFactor=0.0, "
            "attemptsBeforeResetBackoff=2147483647, currentRestartAttempt=8, nextRestartTimestamp=217000)");
}

TEST(RestartTracker, ExponentialDelayAttemptsBeforeResetBackoff) {
  RestartTracker tracker(RestartStrategy::exponential_delay(1000, 10000, 2.0, 60000, 0.0, 2));
  EXPECT_EQ(timeline(tracker, {0, 1500, 1600, 5000}), "t=0:1000 t=1500:2000 t=1600:1900 merged t=5000:FAIL");
  EXPECT_EQ(tracker.describe(),
            "ExponentialDelayRestartBackoffTimeStrategy(initialBackoffMS=1000, maxBackoffMS=10000, "
            "backoffMultiplier=2.0, resetBackoffThresholdMS=60000, jitterFactor=0.0, attemptsBeforeResetBackoff=2, "
            "currentRestartAttempt=3, nextRestartTimestamp=9000)");
}

TEST(RestartTracker, ExponentialDelayResetsAfterRunningThresholdPastTheRestart) {
  // The second restart happened at 3500; 60 s later the job has run long enough: the
  // backoff and the attempt count start over, so a third failure is allowed.
  RestartTracker tracker(RestartStrategy::exponential_delay(1000, 10000, 2.0, 60000, 0.0, 2));
  EXPECT_EQ(timeline(tracker, {0, 1500, 63500, 64000}), "t=0:1000 t=1500:2000 t=63500:1000 t=64000:500 merged");
}

TEST(RestartTracker, ExponentialDelayRoundsAsFlink) {
  // Flink's docs example (10 s, 2 min, x1.4): (long) (initial * 1.4^n) truncates.
  RestartTracker tracker(RestartStrategy::exponential_delay(10000, 120000, 1.4, 600000, 0.0));
  EXPECT_EQ(timeline(tracker, {0, 20000, 40000, 80000, 120000, 200000, 300000, 400000, 600000, 800000}),
            "t=0:10000 t=20000:14000 t=40000:19599 t=80000:27439 t=120000:38415 t=200000:53782 t=300000:75295 "
            "t=400000:105413 t=600000:120000 t=800000:120000");
  RestartTracker defaults(RestartStrategy::exponential_delay(1000, 60000, 1.5, 3600000, 0.0));
  EXPECT_EQ(timeline(defaults, {100000, 101001, 102502, 104753}),
            "t=100000:1000 t=101001:1500 t=102502:2250 t=104753:3375");
}

TEST(RestartTracker, ExponentialDelayJitterWithinFactorClampedToInitialAndMax) {
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  bool high = true;
  RestartTracker tracker(RestartStrategy::exponential_delay(1000, 10000, 2.0, 60000, 0.5),
                         [&](std::int64_t lo, std::int64_t hi) {
                           ranges.emplace_back(lo, hi);
                           return high ? hi : lo;
                         });
  // +50 %: 1000 -> 1500, 2000 -> 3000, 4000 -> 6000, 8000 -> 12000 capped at 10000.
  EXPECT_EQ(timeline(tracker, {0, 10000, 20000, 30000}), "t=0:1500 t=10000:3000 t=20000:6000 t=30000:10000");
  EXPECT_EQ(ranges, (std::vector<std::pair<std::int64_t, std::int64_t>>{
                        {-500, 500}, {-1000, 1000}, {-2000, 2000}, {-4000, 4000}}));
  // -50 %: never below the initial backoff.
  high = false;
  RestartTracker low(RestartStrategy::exponential_delay(1000, 10000, 2.0, 60000, 0.5),
                     [&](std::int64_t lo, std::int64_t) { return lo; });
  EXPECT_EQ(timeline(low, {0, 10000, 20000}), "t=0:1000 t=10000:1000 t=20000:2000");
  // The default random jitter (Flink's 0.1) stays within +-10 %, clamped to [initial, max].
  for (int i = 0; i < 50; ++i) {
    RestartTracker random(RestartStrategy::exponential_delay(1000, 60000, 2.0, 3600000, 0.1));
    auto first = random.on_failure(RestartTracker::Clock::time_point(milliseconds(0)));
    auto second = random.on_failure(RestartTracker::Clock::time_point(milliseconds(5000)));
    ASSERT_TRUE(first && second);
    EXPECT_GE(first->count(), 1000);
    EXPECT_LE(first->count(), 1100);
    EXPECT_GE(second->count(), 1800);
    EXPECT_LE(second->count(), 2200);
  }
}

TEST(RestartTracker, FailureRateAsFlink) {
  RestartTracker burst(RestartStrategy::failure_rate(3, 10000, 500));
  EXPECT_EQ(timeline(burst, {0, 1000, 2000, 3000}), "t=0:500 t=1000:500 t=2000:500 t=3000:FAIL");
  RestartTracker spread(RestartStrategy::failure_rate(3, 10000, 500));
  EXPECT_EQ(timeline(spread, {0, 1000, 2000, 10001, 10002}),
            "t=0:500 t=1000:500 t=2000:500 t=10001:500 t=10002:FAIL");
  // Exactly one interval between the oldest and the newest of max+1 failures: too many.
  RestartTracker edge(RestartStrategy::failure_rate(3, 10000, 500));
  EXPECT_EQ(timeline(edge, {0, 1, 2, 10000}), "t=0:500 t=1:500 t=2:500 t=10000:FAIL");
  RestartTracker one(RestartStrategy::failure_rate(1, 60000, 1000));
  EXPECT_EQ(timeline(one, {0, 60001, 120001, 180000}), "t=0:1000 t=60001:1000 t=120001:FAIL t=180000:FAIL");
  EXPECT_EQ(one.describe(),
            "FailureRateRestartBackoffTimeStrategy(FailureRateRestartBackoffTimeStrategy(failuresIntervalMS=60000,"
            "backoffTimeMS=1000,maxFailuresPerInterval=1)");
}

TEST(RestartTracker, InvalidSettingsNameTheKey) {
  auto message = [](const RestartStrategy& s) {
    try {
      RestartTracker tracker(s);
    } catch (const ClinkError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(RestartStrategy::exponential_delay(1000, 10000, 1.0, 60000, 0.1)),
            "restart strategy: restart-strategy.exponential-delay.backoff-multiplier must be greater than 1, got 1.0");
  EXPECT_EQ(message(RestartStrategy::exponential_delay(20000, 10000, 2.0, 60000, 0.1)),
            "restart strategy: restart-strategy.exponential-delay.initial-backoff cannot be higher than max-backoff, "
            "got 20000 ms > 10000 ms");
  EXPECT_EQ(message(RestartStrategy::exponential_delay(1000, 10000, 2.0, 60000, 1.5)),
            "restart strategy: restart-strategy.exponential-delay.jitter-factor must be >= 0 and <= 1, got 1.5");
  EXPECT_EQ(message(RestartStrategy::failure_rate(0, 1000, 10)),
            "restart strategy: restart-strategy.failure-rate.max-failures-per-interval must be greater than 0, got 0");
  EXPECT_EQ(message(RestartStrategy::fixed_delay(-1, 10)),
            "restart strategy: restart-strategy.fixed-delay.attempts must be at least 0, got -1");
}

}  // namespace
}  // namespace clink::test
