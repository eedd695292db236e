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
#include <optional>
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

TEST(RestartTracker, MatchesFlinksClassesOnRandomTimelines) {
  // 400 random strategies and failure timelines, decided by Flink 2.3's own classes
  // (tests/cluster/oracle/FlinkRestartTimelines.java wrote the file).
  std::ifstream in(std::filesystem::path(CLINK_SOURCE_DIR) / "tests/cluster/data/flink_restart_timelines.txt");
  int cases = 0, merged = 0, failed = 0;
  for (std::string line; std::getline(in, line); ++cases) {
    const auto bar1 = line.find(" | "), bar2 = line.find(" | ", bar1 + 3);
    std::istringstream spec(line.substr(0, bar1)), times(line.substr(bar1 + 3, bar2 - bar1 - 3));
    const std::string expected = line.substr(bar2 + 3);
    std::string kind;
    spec >> kind;
    RestartStrategy strategy;
    if (kind == "fixed") {
      int attempts;
      std::int64_t delay;
      spec >> attempts >> delay;
      strategy = RestartStrategy::fixed_delay(attempts, delay);
    } else if (kind == "rate") {
      int max;
      std::int64_t interval, delay;
      spec >> max >> interval >> delay;
      strategy = RestartStrategy::failure_rate(max, interval, delay);
    } else {
      std::int64_t initial, max, reset;
      double multiplier;
      int attempts;
      spec >> initial >> max >> multiplier >> reset >> attempts;
      strategy = RestartStrategy::exponential_delay(initial, max, multiplier, reset, 0.0, attempts);
    }
    RestartTracker tracker(strategy);
    std::string decisions;
    for (std::int64_t t; times >> t;) {
      auto delay = tracker.on_failure(RestartTracker::Clock::time_point(milliseconds(t)));
      decisions += (decisions.empty() ? "" : " ") + (delay ? std::to_string(delay->count()) : std::string("FAIL")) +
                   (tracker.new_attempt() ? "" : "m");
      merged += tracker.new_attempt() ? 0 : 1;
      failed += delay ? 0 : 1;
    }
    EXPECT_EQ(decisions, expected) << line;
  }
  EXPECT_EQ(cases, 400);
  EXPECT_GT(merged, 100);  // the timelines do exercise merging and giving up
  EXPECT_GT(failed, 100);
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

// ---------------------------------------------------------------- Flink's value syntax

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ClinkError& e) {
    return e.what();
  }
  return "no error";
}

TEST(FlinkValues, DurationsAsFlinksTimeUtils) {
  // Each pair is what Flink 2.3's TimeUtils.parseDuration gives, in milliseconds.
  const std::vector<std::pair<std::string, std::int64_t>> cases = {
      {"10 s", 10000},   {"10s", 10000},         {"1 min", 60000},      {"500 ms", 500},   {"1500", 1500},
      {"PT1M", 60000},   {"1m", 60000},          {"2 h", 7200000},      {"1 d", 86400000}, {"1 seconds", 1000},
      {"10 S", 10000},   {" 3 s ", 3000},        {"PT1.5S", 1500},      {"pt1m", 60000},   {"P1DT1H", 90000000},
      {"10  s", 10000},  {"0", 0},               {"1 MS", 1},           {"100 ns", 0},     {"2500 \xC2\xB5s", 2},
      {"1 hours", 3600000}, {"3 millis", 3},     {"1 day", 86400000},
  };
  for (const auto& [text, ms] : cases) EXPECT_EQ(cluster::parse_duration("k", text).count(), ms) << text;
  EXPECT_EQ(error_of([] { cluster::parse_duration("execution.checkpointing.interval", "1 mins"); }),
            "execution.checkpointing.interval: '1 mins' is not a duration: unknown unit 'mins' (d, h, min|m, s, ms, "
            "\xC2\xB5s, ns and their long names like 'seconds')");
  for (std::string bad : {"1.5 s", "-1 s", "1min30s", "+10 s", "P2W", "", "ten seconds"})
    EXPECT_THAT(error_of([&] { cluster::parse_duration("heartbeat.timeout", bad); }),
                HasSubstr("heartbeat.timeout: '" + bad + "' is not a duration"));
}

TEST(FlinkValues, MemorySizesBooleansAndNumbers) {
  const std::vector<std::pair<std::string, std::int64_t>> sizes = {
      {"1024", 1024},         {"1 kb", 1024},          {"1k", 1024},      {"1KB", 1024}, {"64 mb", 67108864},
      {"1g", 1073741824},     {"2 gibibytes", 2147483648}, {"1 tb", 1099511627776}, {"1b", 1}, {"1 bytes", 1}};
  for (const auto& [text, bytes] : sizes) EXPECT_EQ(cluster::parse_memory_size("k", text), bytes) << text;
  EXPECT_EQ(error_of([] { cluster::parse_memory_size("taskmanager.memory.process.size", "1.5 g"); }),
            "taskmanager.memory.process.size: '1.5 g' is not a memory size: unknown unit '.5 g' (b, k|kb, m|mb, "
            "g|gb, t|tb)");
  EXPECT_TRUE(cluster::parse_bool("k", "true"));
  EXPECT_TRUE(cluster::parse_bool("k", "True"));  // YAML 1.2 reads True as a boolean, Flink too
  EXPECT_FALSE(cluster::parse_bool("k", "FALSE"));
  EXPECT_EQ(error_of([] { cluster::parse_bool("yes.flag", "yes"); }), "yes.flag: 'yes' is not a boolean (true or false)");
  EXPECT_EQ(cluster::parse_int("k", "0x10"), 16);  // Flink (YAML 1.2) reads 0x10 as 16
  EXPECT_EQ(cluster::parse_int("k", "0o17"), 15);
  EXPECT_EQ(cluster::parse_int("k", "+7"), 7);
  EXPECT_EQ(cluster::parse_int("k", "-3"), -3);
  EXPECT_EQ(error_of([] { cluster::parse_int("rest.port", "80 81"); }), "rest.port: '80 81' is not an integer");
  EXPECT_DOUBLE_EQ(cluster::parse_double("k", "1.5"), 1.5);
  EXPECT_EQ(error_of([] { cluster::parse_double("m", "x1"); }), "m: 'x1' is not a number");
}

// ---------------------------------------------------------------- ClusterConfig

TEST(ClusterConfig, NestedMapsAndDottedKeysAreTheSameKey) {
  auto nested = ClusterConfig::parse("rest:\n  port: 9091\n  address: 10.0.0.5\ntaskmanager.numberOfTaskSlots: 4\n");
  auto flat = ClusterConfig::parse("rest.port: 9091\nrest.address: 10.0.0.5\ntaskmanager:\n  numberOfTaskSlots: 4\n");
  EXPECT_EQ(nested.entries(), flat.entries());
  EXPECT_EQ(nested.rest_port(), 9091);
  EXPECT_EQ(nested.rest_address(), "10.0.0.5");
  EXPECT_EQ(flat.task_slots(), 4);
  // Mixed at any depth, as Flink's loader flattens it.
  auto mixed = ClusterConfig::parse("a:\n  b.c:\n    d: 1\na.b.c.e: 2\n");
  EXPECT_EQ(mixed.entries(), (std::map<std::string, std::string>{{"a.b.c.d", "1"}, {"a.b.c.e", "2"}}));
  // One key spelled both ways: the later wins (Flink 2.3 does the same); a key twice in
  // one map is an error, as Flink's YAML reader has it.
  EXPECT_EQ(ClusterConfig::parse("rest.port: 1\nrest:\n  port: 2\n").rest_port(), 2);
  EXPECT_EQ(ClusterConfig::parse("rest:\n  port: 2\nrest.port: 1\n").rest_port(), 1);
  EXPECT_EQ(error_of([] { ClusterConfig::parse("rest:\n  port: 1\n  port: 2\n"); }),
            "config.yaml:3: duplicate key 'rest.port'");
}

TEST(ClusterConfig, DefaultsAreFlinks) {
  ClusterConfig c = ClusterConfig::parse("");
  EXPECT_EQ(c.rest_address(), "127.0.0.1");
  EXPECT_EQ(c.rest_port(), 8081);
  EXPECT_EQ(c.rest_bind_address(), "127.0.0.1");
  EXPECT_EQ(c.rest_bind_port(), 8081);
  EXPECT_EQ(c.rpc_address(), "127.0.0.1");
  EXPECT_EQ(c.rpc_port(), 6123);
  EXPECT_EQ(c.rpc_bind_address(), "127.0.0.1");
  EXPECT_EQ(c.task_slots(), 1);
  EXPECT_EQ(c.taskmanager_host(), "127.0.0.1");
  EXPECT_EQ(c.data_port(), 0);
  EXPECT_EQ(c.default_parallelism(), 1);
  EXPECT_EQ(c.heartbeat_interval(), milliseconds(10000));
  EXPECT_EQ(c.heartbeat_timeout(), milliseconds(50000));
  auto ha = c.high_availability();
  EXPECT_FALSE(ha.enabled());
  EXPECT_EQ(ha.cluster_id, "/default");
  EXPECT_EQ(ha.zookeeper_root, "/clink");  // not Flink's /flink (docs/cluster.md)
  EXPECT_EQ(ha.session_timeout, milliseconds(60000));
  EXPECT_EQ(ha.connection_timeout, milliseconds(15000));
  EXPECT_FALSE(c.savepoint_dir());
  CheckpointConfig chk = c.checkpoint_config();
  EXPECT_FALSE(chk.enabled());
  EXPECT_EQ(chk.interval_ms, 0);
  EXPECT_EQ(chk.timeout_ms, 600000);
  EXPECT_EQ(chk.min_pause_ms, 0);
  EXPECT_EQ(chk.retained, 1);
  EXPECT_EQ(chk.mode, CheckpointingMode::kExactlyOnce);
  EXPECT_EQ(chk.state_backend.kind, "memory");
  EXPECT_FALSE(chk.state_backend.incremental);
  EXPECT_EQ(c.restart_strategy(false).kind, RestartStrategy::Kind::kNone);
  // With checkpointing and no restart-strategy.type: Flink 2.x's exponential-delay defaults.
  RestartStrategy r = c.restart_strategy(true);
  EXPECT_EQ(r.kind, RestartStrategy::Kind::kExponentialBackoff);
  EXPECT_EQ(r.delay_ms, 1000);
  EXPECT_EQ(r.max_delay_ms, 60000);
  EXPECT_DOUBLE_EQ(r.multiplier, 1.5);
  EXPECT_EQ(r.reset_backoff_threshold_ms, 3600000);
  EXPECT_DOUBLE_EQ(r.jitter_factor, 0.1);
  EXPECT_EQ(r.max_attempts, RestartStrategy::kUnlimitedAttempts);
  EXPECT_FALSE(c.restore_settings());
}

// The config.yaml that Flink ships, in the test venv (tests/flink/setup: CLINK_FLINK_VENV,
// by default ~/.cache/clink/flink-venv).
std::optional<std::filesystem::path> flinks_shipped_config() {
  const char* venv = std::getenv("CLINK_FLINK_VENV");
  const char* home = std::getenv("HOME");
  std::filesystem::path root = venv ? venv : std::filesystem::path(home ? home : "/root") / ".cache/clink/flink-venv";
  std::error_code ec;
  for (const auto& python : std::filesystem::directory_iterator(root / "lib", ec)) {
    auto conf = python.path() / "site-packages/pyflink/conf/config.yaml";
    if (std::filesystem::exists(conf)) return conf;
  }
  return std::nullopt;
}

TEST(ClusterConfig, ReadsFlinksOwnShippedConfig) {
  auto shipped = flinks_shipped_config();
  if (!shipped) GTEST_SKIP() << "Flink's venv is not installed (tests/flink/setup)";
  const std::filesystem::path conf = *shipped;
  ClusterConfig c = ClusterConfig::load(conf.parent_path());  // a directory means its config.yaml
  EXPECT_EQ(c.source(), conf.string());
  EXPECT_EQ(c.rest_address(), "127.0.0.1");  // "localhost"
  EXPECT_EQ(c.rpc_port(), 6123);
  EXPECT_EQ(c.task_slots(), 1);
  EXPECT_EQ(c.default_parallelism(), 1);
  EXPECT_EQ(c.get_memory_size("taskmanager.memory.process.size", 0), 1728LL << 20);
  EXPECT_EQ(c.get("jobmanager.execution.failover-strategy"), "region");  // kept, unused
  EXPECT_EQ(execution_options(c).restart.kind, RestartStrategy::Kind::kNone);
}

TEST(ClusterConfig, CheckpointingStateBackendAndRecovery) {
  auto c = ClusterConfig::parse(R"(
execution:
  checkpointing:
    interval: 10 s
    dir: file:///shared/chk
    savepoint-dir: /shared/savepoints
    mode: at_least_once
    timeout: 2 min
    min-pause: 500 ms
    num-retained: 3
    incremental: true
  state-recovery:
    path: file:///shared/savepoints/savepoint-1
    ignore-unclaimed-state: true
state.backend.type: RocksDB
state.backend.rocksdb.localdir: /local/rocks
)");
  ExecutionOptions o = execution_options(c);
  EXPECT_TRUE(o.checkpoints.enabled());
  EXPECT_EQ(o.checkpoints.interval_ms, 10000);
  EXPECT_EQ(o.checkpoints.directory, std::filesystem::path("/shared/chk"));
  EXPECT_EQ(o.checkpoints.mode, CheckpointingMode::kAtLeastOnce);
  EXPECT_EQ(o.checkpoints.timeout_ms, 120000);
  EXPECT_EQ(o.checkpoints.min_pause_ms, 500);
  EXPECT_EQ(o.checkpoints.retained, 3);
  EXPECT_EQ(o.checkpoints.state_backend.kind, "rocksdb");
  EXPECT_EQ(o.checkpoints.state_backend.working_dir, std::filesystem::path("/local/rocks"));
  EXPECT_TRUE(o.checkpoints.state_backend.incremental);
  EXPECT_EQ(c.savepoint_dir(), std::filesystem::path("/shared/savepoints"));
  ASSERT_TRUE(o.restore);
  EXPECT_EQ(o.restore->path, std::filesystem::path("/shared/savepoints/savepoint-1"));
  EXPECT_TRUE(o.restore->allow_non_restored_state);
  EXPECT_EQ(o.restart.kind, RestartStrategy::Kind::kExponentialBackoff);  // checkpointing on: Flink's default
}

TEST(ClusterConfig, DeprecatedKeysAreFallbacks) {
  auto old = ClusterConfig::parse(R"(
state.checkpoints.dir: /old/chk
state.savepoints.dir: /old/sp
state.checkpoints.num-retained: 2
state.backend: rocksdb
restart-strategy: fixed-delay
high-availability: zookeeper
high-availability.zookeeper.quorum: 127.0.0.1:2181
high-availability.zookeeper.storageDir: /old/ha
execution.savepoint.path: /old/sp/savepoint-9
)");
  EXPECT_EQ(old.checkpoint_config().directory, std::filesystem::path("/old/chk"));
  EXPECT_EQ(old.checkpoint_config().retained, 2);
  EXPECT_EQ(old.checkpoint_config().state_backend.kind, "rocksdb");
  EXPECT_EQ(old.savepoint_dir(), std::filesystem::path("/old/sp"));
  EXPECT_EQ(old.restart_strategy(false).kind, RestartStrategy::Kind::kFixedDelay);
  EXPECT_EQ(old.high_availability().storage_dir, "/old/ha");
  EXPECT_EQ(old.restore_settings()->path, std::filesystem::path("/old/sp/savepoint-9"));
  // The new key wins over the old one; an old key's bad value is reported by its name.
  auto both = ClusterConfig::parse("execution.checkpointing.dir: /new\nstate.checkpoints.dir: /old\n");
  EXPECT_EQ(both.checkpoint_config().directory, std::filesystem::path("/new"));
  auto bad = ClusterConfig::parse("state.checkpoints.num-retained: many\n");
  EXPECT_EQ(error_of([&] { bad.checkpoint_config(); }), "state.checkpoints.num-retained: 'many' is not an integer");
}

TEST(ClusterConfig, RestartStrategiesFromConfig) {
  auto fixed = ClusterConfig::parse(
      "restart-strategy:\n  type: FixedDelay\n  fixed-delay:\n    attempts: 3\n    delay: 500 ms\n");
  RestartStrategy f = fixed.restart_strategy(true);
  EXPECT_EQ(f.kind, RestartStrategy::Kind::kFixedDelay);
  EXPECT_EQ(f.max_attempts, 3);
  EXPECT_EQ(f.delay_ms, 500);
  auto fixed_defaults = ClusterConfig::parse("restart-strategy.type: fixed-delay\n").restart_strategy(false);
  EXPECT_EQ(fixed_defaults.max_attempts, 1);
  EXPECT_EQ(fixed_defaults.delay_ms, 1000);

  auto rate = ClusterConfig::parse(R"(
restart-strategy.type: failure-rate
restart-strategy.failure-rate.max-failures-per-interval: 3
restart-strategy.failure-rate.failure-rate-interval: 5 min
restart-strategy.failure-rate.delay: 10 s
)").restart_strategy(false);
  EXPECT_EQ(rate.kind, RestartStrategy::Kind::kFailureRate);
  EXPECT_EQ(rate.max_failures_per_interval, 3);
  EXPECT_EQ(rate.failure_rate_interval_ms, 300000);
  EXPECT_EQ(rate.delay_ms, 10000);
  auto rate_defaults = ClusterConfig::parse("restart-strategy.type: failurerate\n").restart_strategy(false);
  EXPECT_EQ(rate_defaults.max_failures_per_interval, 1);
  EXPECT_EQ(rate_defaults.failure_rate_interval_ms, 60000);
  EXPECT_EQ(rate_defaults.delay_ms, 1000);

  // Flink's docs example.
  auto expo = ClusterConfig::parse(R"(
restart-strategy.type: exponential-delay
restart-strategy.exponential-delay.initial-backoff: 10 s
restart-strategy.exponential-delay.max-backoff: 2 min
restart-strategy.exponential-delay.backoff-multiplier: 1.4
restart-strategy.exponential-delay.reset-backoff-threshold: 10 min
restart-strategy.exponential-delay.jitter-factor: 0.1
restart-strategy.exponential-delay.attempts-before-reset-backoff: 10
)").restart_strategy(false);
  EXPECT_EQ(expo.kind, RestartStrategy::Kind::kExponentialBackoff);
  EXPECT_EQ(expo.delay_ms, 10000);
  EXPECT_EQ(expo.max_delay_ms, 120000);
  EXPECT_DOUBLE_EQ(expo.multiplier, 1.4);
  EXPECT_EQ(expo.reset_backoff_threshold_ms, 600000);
  EXPECT_DOUBLE_EQ(expo.jitter_factor, 0.1);
  EXPECT_EQ(expo.max_attempts, 10);

  for (std::string off : {"none", "off", "disable", "NONE"})
    EXPECT_EQ(ClusterConfig::parse("restart-strategy.type: " + off + "\n").restart_strategy(true).kind,
              RestartStrategy::Kind::kNone)
        << off;
  EXPECT_THAT(error_of([] { ClusterConfig::parse("restart-strategy.type: sometimes\n").restart_strategy(true); }),
              HasSubstr("restart-strategy.type: 'sometimes' is not a restart strategy"));
  EXPECT_EQ(error_of([] {
              ClusterConfig::parse("restart-strategy.type: fixed-delay\nrestart-strategy.fixed-delay.delay: 1 parsec\n")
                  .restart_strategy(true);
            }),
            "restart-strategy.fixed-delay.delay: '1 parsec' is not a duration: unknown unit 'parsec' (d, h, min|m, s, "
            "ms, \xC2\xB5s, ns and their long names like 'seconds')");
  EXPECT_EQ(error_of([] {
              ClusterConfig::parse("restart-strategy.type: exponential-delay\n"
                                   "restart-strategy.exponential-delay.backoff-multiplier: 0.5\n")
                  .restart_strategy(true);
            }),
            "restart strategy: restart-strategy.exponential-delay.backoff-multiplier must be greater than 1, got 0.5");
}

TEST(ClusterConfig, OverridesWinAndUnknownKeysAreKept) {
  auto c = ClusterConfig::parse("rest.port: 9091\npipeline.jars: [a.jar, b.jar]\nenv.java.opts.all: \"-Xmx1g\"\n");
  c.set("rest.port", "9092");
  c.set_dynamic("taskmanager.numberOfTaskSlots = 8");
  EXPECT_EQ(c.rest_port(), 9092);
  EXPECT_EQ(c.task_slots(), 8);
  EXPECT_EQ(c.get("pipeline.jars"), "[a.jar, b.jar]");  // as Flink's Configuration prints a list
  EXPECT_EQ(c.get("env.java.opts.all"), "-Xmx1g");
  EXPECT_EQ(error_of([&] { c.set_dynamic("rest.port"); }), "-D rest.port: expected key=value");
}

TEST(ClusterConfig, BadValuesAndFilesNameTheKeyAndTheValue) {
  auto err = [](const std::string& yaml, const std::function<void(const ClusterConfig&)>& read) {
    return error_of([&] { read(ClusterConfig::parse(yaml)); });
  };
  EXPECT_EQ(err("rest.port: 70000\n", [](auto& c) { c.rest_port(); }),
            "rest.port: '70000' is not a port (0 to 65535)");
  EXPECT_EQ(err("taskmanager.numberOfTaskSlots: 0\n", [](auto& c) { c.task_slots(); }),
            "taskmanager.numberOfTaskSlots: '0' must be at least 1");
  EXPECT_EQ(err("parallelism.default: 99999999999\n", [](auto& c) { c.default_parallelism(); }),
            "parallelism.default: '99999999999' does not fit in a 32-bit integer");
  EXPECT_EQ(err("execution.checkpointing.mode: sometimes\n", [](auto& c) { c.checkpoint_config(); }),
            "execution.checkpointing.mode: 'sometimes' is not EXACTLY_ONCE or AT_LEAST_ONCE");
  EXPECT_EQ(err("state.backend.type: forst\n", [](auto& c) { c.checkpoint_config(); }),
            "state.backend.type: 'forst' is not supported (hashmap or rocksdb)");
  EXPECT_EQ(err("execution.checkpointing.dir: s3://bucket/chk\n", [](auto& c) { c.checkpoint_config(); }),
            "execution.checkpointing.dir: checkpoint storage 's3://bucket/chk': only directories and file:// are "
            "supported");
  EXPECT_EQ(err("execution.checkpointing.interval: 10 s\n", [](auto& c) { c.checkpoint_config(); }),
            "execution.checkpointing.interval is set (10 s) but execution.checkpointing.dir is not: a cluster's "
            "checkpoints go to a directory every coordinator and worker can reach");
  EXPECT_EQ(err("heartbeat.interval: 10 s\nheartbeat.timeout: 5 s\n", [](auto& c) { c.heartbeat_timeout(); }),
            "heartbeat.timeout (5000 ms) must be at least heartbeat.interval (10000 ms)");
  EXPECT_EQ(err("high-availability.type: kubernetes\n", [](auto& c) { c.high_availability(); }),
            "high-availability.type: 'kubernetes' is not supported (none or zookeeper)");
  EXPECT_EQ(err("high-availability.type: zookeeper\nhigh-availability.storageDir: /ha\n",
                [](auto& c) { c.high_availability(); }),
            "high-availability.type is zookeeper but high-availability.zookeeper.quorum is not set");
  EXPECT_EQ(error_of([] { ClusterConfig::parse("ha:\n  x: ~\n"); }), "config.yaml: ha.x has no value");
  EXPECT_THAT(error_of([] { ClusterConfig::parse("rest:\n  port: [1, 2\n", "/etc/clink/config.yaml"); }),
              HasSubstr("/etc/clink/config.yaml:3:1: not valid YAML"));
  EXPECT_EQ(error_of([] { ClusterConfig::parse("- a\n- b\n"); }),
            "config.yaml: a configuration is a map of keys to values");
  EXPECT_EQ(error_of([] { ClusterConfig::load("/nonexistent/clink/config.yaml"); }),
            "configuration /nonexistent/clink/config.yaml: cannot be read");
}

TEST(ClusterConfig, ZooKeeperHighAvailability) {
  auto ha = ClusterConfig::parse(R"(
high-availability:
  type: ZooKeeper
  zookeeper:
    quorum: zk1:2181,zk2:2181
    path.root: /clink
    client:
      session-timeout: 30 s
  storageDir: file:///shared/ha
  cluster-id: /prod
)").high_availability();
  EXPECT_TRUE(ha.enabled());
  EXPECT_EQ(ha.zookeeper_quorum, "zk1:2181,zk2:2181");
  EXPECT_EQ(ha.zookeeper_root, "/clink");
  EXPECT_EQ(ha.storage_dir, "file:///shared/ha");
  EXPECT_EQ(ha.cluster_id, "/prod");
  EXPECT_EQ(ha.session_timeout, milliseconds(30000));
  EXPECT_EQ(ha.connection_timeout, milliseconds(15000));
}

// ---------------------------------------------------------------- deploy/

const std::filesystem::path kDeploy = std::filesystem::path(CLINK_SOURCE_DIR) / "deploy";

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every Kubernetes object of deploy/kubernetes, by "Kind/name".
std::map<std::string, YAML::Node> kubernetes_objects() {
  std::map<std::string, YAML::Node> objects;
  for (const auto& entry : std::filesystem::directory_iterator(kDeploy / "kubernetes")) {
    if (entry.path().extension() != ".yaml") continue;
    for (const auto& doc : YAML::LoadAllFromFile(entry.path().string())) {
      const std::string name = doc["metadata"] ? doc["metadata"]["name"].as<std::string>() : "";
      objects[doc["kind"].as<std::string>() + "/" + name] = doc;
    }
  }
  return objects;
}

std::vector<std::string> strings(const YAML::Node& seq) {
  std::vector<std::string> out;
  for (const auto& n : seq) out.push_back(n.as<std::string>());
  return out;
}

// The mount path of the pod volume that uses `claim`.
std::string claim_mount(const YAML::Node& pod, const std::string& claim) {
  std::string volume;
  for (const auto& v : pod["volumes"])
    if (v["persistentVolumeClaim"] && v["persistentVolumeClaim"]["claimName"].as<std::string>() == claim)
      volume = v["name"].as<std::string>();
  for (const auto& m : pod["containers"][0]["volumeMounts"])
    if (m["name"].as<std::string>() == volume) return m["mountPath"].as<std::string>();
  return "";
}

TEST(DeployManifests, ParseWithPythonYamlToo) {
  if (std::system("python3 -c 'import yaml' 2>/dev/null") != 0) GTEST_SKIP() << "python3 has no yaml module";
  const std::string check = "python3 -c 'import sys, yaml\nfor f in sys.argv[1:]: list(yaml.safe_load_all(open(f)))' " +
                            (kDeploy / "kubernetes" / "*.yaml").string() + " " + (kDeploy / "config.yaml").string();
  EXPECT_EQ(std::system(check.c_str()), 0) << check;
}

TEST(DeployManifests, KubernetesObjectsAgreeWithTheirConfig) {
  auto objects = kubernetes_objects();
  std::vector<std::string> kinds;
  for (const auto& [name, _] : objects) kinds.push_back(name);
  EXPECT_THAT(kinds, ::testing::UnorderedElementsAre(
                         "ConfigMap/clink-config", "Deployment/clink-coordinator", "Service/clink-coordinator",
                         "Deployment/clink-worker", "PersistentVolumeClaim/clink-shared", "Kustomization/"));
  // kustomization.yaml lists every other file.
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(kDeploy / "kubernetes"))
    if (entry.path().filename() != "kustomization.yaml") files.push_back(entry.path().filename().string());
  EXPECT_THAT(strings(objects["Kustomization/"]["resources"]), ::testing::UnorderedElementsAreArray(files));

  // The ConfigMap's config.yaml is a valid cluster configuration.
  ClusterConfig config = ClusterConfig::parse(objects["ConfigMap/clink-config"]["data"]["config.yaml"].as<std::string>(),
                                              "deploy/kubernetes/configmap.yaml");
  ExecutionOptions options = execution_options(config);
  EXPECT_TRUE(options.checkpoints.enabled());
  EXPECT_EQ(config.rest_bind_address(), "0.0.0.0");

  // The shared volume: ReadWriteMany, mounted where the checkpoints and savepoints go.
  auto pvc = objects["PersistentVolumeClaim/clink-shared"];
  EXPECT_EQ(strings(pvc["spec"]["accessModes"]), std::vector<std::string>{"ReadWriteMany"});
  auto coordinator = objects["Deployment/clink-coordinator"]["spec"]["template"]["spec"];
  auto worker = objects["Deployment/clink-worker"]["spec"]["template"]["spec"];
  const std::string shared = claim_mount(coordinator, "clink-shared");
  EXPECT_EQ(shared, "/var/lib/clink/shared");
  EXPECT_EQ(claim_mount(worker, "clink-shared"), shared);
  EXPECT_EQ(options.checkpoints.directory.string().rfind(shared + "/", 0), 0u) << options.checkpoints.directory;
  EXPECT_EQ(config.savepoint_dir()->string().rfind(shared + "/", 0), 0u);
  EXPECT_EQ(options.checkpoints.state_backend.working_dir, "/var/lib/clink/rocksdb");

  // The Service exposes the configured REST and RPC ports; workers register at it.
  std::map<std::string, int> service_ports;
  for (const auto& p : objects["Service/clink-coordinator"]["spec"]["ports"])
    service_ports[p["name"].as<std::string>()] = p["port"].as<int>();
  EXPECT_EQ(service_ports, (std::map<std::string, int>{{"rest", config.rest_port()}, {"rpc", config.rpc_port()}}));
  EXPECT_EQ(strings(coordinator["containers"][0]["args"]),
            (std::vector<std::string>{"coordinator", "--config", "/etc/clink/config.yaml"}));
  EXPECT_EQ(strings(worker["containers"][0]["args"]),
            (std::vector<std::string>{"worker", "--coordinator", "clink-coordinator:" + std::to_string(config.rest_port()),
                                      "--slots", std::to_string(config.task_slots()), "--host", "$(POD_IP)",
                                      "--data-port", std::to_string(config.data_port())}));
  EXPECT_EQ(worker["containers"][0]["env"][0]["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>(), "status.podIP");
  // Workers reach the control plane at the address the coordinator publishes: the Service.
  EXPECT_EQ(config.rpc_address(), "clink-coordinator");
  EXPECT_EQ(config.rpc_bind_address(), "0.0.0.0");
  EXPECT_EQ(worker["containers"][0]["ports"][0]["containerPort"].as<int>(), config.data_port());

  // The commented ZooKeeper block is a valid HA configuration once uncommented, with its
  // storageDir on the shared volume.
  std::string with_ha;
  std::istringstream lines(objects["ConfigMap/clink-config"]["data"]["config.yaml"].as<std::string>());
  bool in_ha = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# high-availability:", 0) == 0) in_ha = true;
    if (in_ha && line.rfind("# ", 0) == 0) line = line.substr(2);
    with_ha += line + "\n";
  }
  auto ha = ClusterConfig::parse(with_ha).high_availability();
  EXPECT_TRUE(ha.enabled());
  EXPECT_EQ(ha.storage_dir.rfind("file://" + shared + "/", 0), 0u) << ha.storage_dir;
}

TEST(DeployManifests, DockerfileBuildsOnDebian12AndRunsClink) {
  const std::string dockerfile = read_text(kDeploy / "Dockerfile");
  EXPECT_THAT(dockerfile, HasSubstr("FROM debian:12 AS build\n"));
  EXPECT_THAT(dockerfile, HasSubstr("RUN scripts/setup"));
  EXPECT_THAT(dockerfile, HasSubstr("FROM debian:12-slim\n"));
  EXPECT_THAT(dockerfile, HasSubstr("COPY --from=build /build/clink /usr/local/bin/clink\n"));
  EXPECT_THAT(dockerfile, HasSubstr("ENTRYPOINT [\"clink\"]\n"));
  // The image's default configuration is a valid one.
  ClusterConfig image = ClusterConfig::load(kDeploy / "config.yaml");
  EXPECT_TRUE(execution_options(image).checkpoints.enabled());
  EXPECT_EQ(image.rest_port(), 8081);
}

}  // namespace
}  // namespace clink::test
