#include "clink/time/watermark_strategy.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/operators/builtin_streams.hpp"
#include "time_test_support.hpp"

namespace clink::test {
namespace {

Record<std::int64_t> rec(EventTime ts, PartitionId p = kNoPartition) { return Record<std::int64_t>{0, ts, p}; }

// ---- strategies on their own ----

TEST(WatermarkStrategy, BeforeAnyRecordTheWatermarkIsInt64Min) {
  MonotonicWatermarkStrategy<std::int64_t> m;
  BoundedOutOfOrdernessStrategy<std::int64_t> b(100);
  PartitionAwareBoundedOutOfOrdernessStrategy<std::int64_t> p(100);
  EXPECT_EQ(m.watermark(), kMinEventTime);
  EXPECT_EQ(b.watermark(), kMinEventTime);
  EXPECT_EQ(p.watermark(), kMinEventTime);
  EXPECT_EQ(m.current_watermark(), std::nullopt);
  EXPECT_EQ(b.current_watermark(), std::nullopt);
  EXPECT_EQ(p.current_watermark(), std::nullopt);
}

TEST(WatermarkStrategy, MonotonicIsMaxSeenMinusOne) {
  MonotonicWatermarkStrategy<std::int64_t> m;
  m.on_record(rec(1000));
  EXPECT_EQ(m.current_watermark(), 999);
  EXPECT_EQ(m.current_watermark(), std::nullopt);  // reported only when it advanced
  m.on_record(rec(500));                           // out of order: no regression
  EXPECT_EQ(m.current_watermark(), std::nullopt);
  EXPECT_EQ(m.watermark(), 999);
  m.on_record(rec(1001));
  EXPECT_EQ(m.current_watermark(), 1000);
}

TEST(WatermarkStrategy, BoundedOutOfOrdernessIsMaxSeenMinusBoundMinusOne) {
  BoundedOutOfOrdernessStrategy<std::int64_t> b(5000);
  b.on_record(rec(10000));
  EXPECT_EQ(b.current_watermark(), 4999);
  b.on_record(rec(7000));
  EXPECT_EQ(b.current_watermark(), std::nullopt);
  b.on_record(rec(-20000));
  EXPECT_EQ(b.watermark(), 4999);
  b.on_record(rec(12000));
  EXPECT_EQ(b.current_watermark(), 6999);
  EXPECT_THROW(BoundedOutOfOrdernessStrategy<std::int64_t>(-1), ClinkError);
}

TEST(WatermarkStrategy, ArithmeticSaturates) {
  BoundedOutOfOrdernessStrategy<std::int64_t> b(10);
  b.on_record(rec(kMinEventTime + 3));
  EXPECT_EQ(b.watermark(), kMinEventTime);
  BoundedOutOfOrdernessStrategy<std::int64_t> big(kMaxEventTime);
  big.on_record(rec(-5));
  EXPECT_EQ(big.watermark(), kMinEventTime);
  MonotonicWatermarkStrategy<std::int64_t> m;
  m.on_record(rec(kMaxEventTime));
  EXPECT_EQ(m.watermark(), kMaxEventTime - 1);
  EXPECT_EQ(bounded_out_of_orderness_watermark(-100, 30), -131);
}

TEST(WatermarkStrategy, PartitionAwareFollowsTheSlowestPartition) {
  PartitionAwareBoundedOutOfOrdernessStrategy<std::int64_t> p(100);
  p.on_record(rec(5000, 0));
  EXPECT_EQ(p.current_watermark(), 4899);
  p.on_record(rec(9000, 1));
  EXPECT_EQ(p.current_watermark(), std::nullopt);  // min(5000, 9000) - 100 - 1
  p.on_record(rec(7000, 0));
  EXPECT_EQ(p.current_watermark(), 6899);
  // A new, slower partition cannot make the watermark regress.
  p.on_record(rec(1000, 2));
  EXPECT_EQ(p.current_watermark(), std::nullopt);
  EXPECT_EQ(p.watermark(), 6899);
  p.on_record(rec(8000, 2));
  EXPECT_EQ(p.current_watermark(), std::nullopt);  // min(7000, 9000, 8000) - 101
  p.on_record(rec(9500, 0));
  EXPECT_EQ(p.current_watermark(), 7899);  // min(9500, 9000, 8000) - 101
}

TEST(WatermarkStrategy, PartitionAwareWithoutPartitionsEqualsBounded) {
  PartitionAwareBoundedOutOfOrdernessStrategy<std::int64_t> p(50);
  BoundedOutOfOrdernessStrategy<std::int64_t> b(50);
  for (EventTime t : {100, 30, 400, 399, 1000, -5}) {
    p.on_record(rec(t));
    b.on_record(rec(t));
    EXPECT_EQ(p.current_watermark(), b.current_watermark()) << t;
  }
  EXPECT_EQ(p.partition_count(), 1u);
}

TEST(WatermarkStrategy, PartitionAwareIdlePartitionsDoNotHoldTheMinimum) {
  PartitionAwareBoundedOutOfOrdernessStrategy<std::int64_t> p(0);
  p.on_record(rec(1000, 0));
  p.on_record(rec(9000, 1));
  EXPECT_EQ(p.current_watermark(), 999);
  p.set_idle_partitions({0});
  EXPECT_EQ(p.current_watermark(), 8999);
  EXPECT_FALSE(p.all_idle());
  // The idle partition's next record makes it active again; the watermark holds.
  p.on_record(rec(2000, 0));
  EXPECT_EQ(p.current_watermark(), std::nullopt);
  EXPECT_EQ(p.watermark(), 8999);
  p.on_record(rec(12000, 0));
  p.on_record(rec(11000, 1));
  EXPECT_EQ(p.current_watermark(), 10999);
  p.set_idle_partitions({0, 1});
  EXPECT_TRUE(p.all_idle());
  EXPECT_EQ(p.current_watermark(), std::nullopt);
  EXPECT_EQ(p.watermark(), 10999);
  p.set_idle_partitions({});
  EXPECT_FALSE(p.all_idle());
}

TEST(WatermarkStrategy, ConfigurationTravelsWithClones) {
  BoundedOutOfOrdernessStrategy<std::int64_t> b(7);
  b.with_idleness(1000).with_timestamp_assigner([](const std::int64_t& v, EventTime) { return v * 10; });
  auto c = b.clone();
  EXPECT_EQ(c->idleness_ms(), 1000);
  ASSERT_TRUE(c->timestamp_assigner());
  EXPECT_EQ(c->timestamp_assigner()(3, kNoEventTime), 30);
  EXPECT_THROW(b.with_idleness(0), ClinkError);
}

// ---- through the assigner, end to end ----

TEST(WatermarkAssignerStrategies, TimestampAssignerStampsEventTime) {
  StreamExecutionEnvironment env;
  auto s = env.from_collection<std::int64_t>({3, 1, 7})
               .assign_timestamps_and_watermarks(MonotonicWatermarkStrategy<std::int64_t>().with_timestamp_assigner(
                   [](const std::int64_t& v, EventTime) { return v * 1000; }));
  auto log = probe(s);
  env.execute();
  EXPECT_EQ(log->get(), (std::vector<std::string>{"3@3000", "1@1000", "7@7000", "W6999", "WMAX"}));
}

TEST(WatermarkAssignerStrategies, EmitsOncePerBatchOnlyWhenAdvanced) {
  StreamExecutionEnvironment env;
  auto src = scripted<std::int64_t>(env, [](ScriptedSource<std::int64_t>& s) {
    s.records({{1, 10}, {2, 5}}).records({{3, 8}}).records({{4, 20}, {5, 19}});
  });
  auto log = probe(src.assign_timestamps_and_watermarks(BoundedOutOfOrdernessStrategy<std::int64_t>(2)));
  env.execute();
  EXPECT_EQ(log->get(), (std::vector<std::string>{"1@10", "2@5", "W7", "3@8", "4@20", "5@19", "W17", "WMAX"}));
}

TEST(WatermarkAssignerStrategies, UpstreamWatermarksAreReplacedButTheFinalOneIsForwarded) {
  StreamExecutionEnvironment env;
  auto src = scripted<std::int64_t>(env, [](ScriptedSource<std::int64_t>& s) {
    s.records({{1, 1000}}).watermark(Watermark::at(50000)).records({{2, 1500}});
  });
  auto log = probe(src.assign_timestamps_and_watermarks(MonotonicWatermarkStrategy<std::int64_t>()));
  env.execute();
  EXPECT_EQ(log->get(), (std::vector<std::string>{"1@1000", "W999", "2@1500", "W1499", "WMAX"}));
}

TEST(WatermarkAssignerStrategies, IdleAfterTheTimeoutAndActiveAgainOnTheNextRecord) {
  ManualClock clock;
  StreamExecutionEnvironment env;
  env.set_clock(clock);
  ManualClock* c = &clock;
  // Chained to the source: the probe timer fires before each poll, deterministically.
  auto src = scripted<std::int64_t>(env, [c](ScriptedSource<std::int64_t>& s) {
    s.records({{1, 1000}})
        .then([c](Output&) { c->set(600); })   // the probe at 500 finds 600 ms < 1000 ms of silence
        .then([c](Output&) { c->set(1200); })  // the probe at 1100 finds 1200 ms: idle
        .then([](Output&) {})
        .records({{2, 500}})  // active again; the watermark did not advance but goes out non-idle
        .records({{3, 2000}});
  });
  auto log = probe(src.assign_timestamps_and_watermarks(MonotonicWatermarkStrategy<std::int64_t>().with_idleness(1000)));
  env.execute();
  EXPECT_EQ(log->get(), (std::vector<std::string>{"1@1000", "W999", "IDLE", "2@500", "W999", "3@2000", "W1999", "WMAX"}));
}

TEST(WatermarkAssignerStrategies, IdleMarkersMakeAlignmentIgnoreTheInputUntilItIsBack) {
  ManualClock clock;
  StreamExecutionEnvironment env;
  env.set_clock(clock);
  ManualClock* c = &clock;
  auto downstream = std::make_shared<ProbeLog>();
  auto seen = [downstream](const std::string& line) { return [downstream, line] { return downstream->contains(line); }; };
  // A is busy; B sends one record, then goes silent (idle), then comes back.
  auto a = scripted<std::int64_t>(env, [c, seen](ScriptedSource<std::int64_t>& s) {
    s.records({{1, 1000}})
        .wait_until(seen("W499"))  // both inputs' first watermarks arrived downstream
        .then([c](Output&) { c->set(5000); })  // B's probe marks it idle
        .wait_until(seen("W999"))              // alignment now follows A alone
        .records({{2, 8000}})
        .wait_until(seen("W7999"))
        .wait_until(seen("9@3000"));  // B back: held at 7999 (no regression) until A ends
  }, "A");
  auto b = scripted<std::int64_t>(env, [seen](ScriptedSource<std::int64_t>& s) {
    s.records({{0, 500}}).wait_until(seen("W7999")).records({{9, 3000}});
  }, "B");
  auto wa = a.assign_timestamps_and_watermarks(MonotonicWatermarkStrategy<std::int64_t>());
  auto wb = b.assign_timestamps_and_watermarks(MonotonicWatermarkStrategy<std::int64_t>().with_idleness(1000));
  wa.union_with(wb).rebalance().template then<std::int64_t>("probe", "Probe", [downstream] {
    return std::make_unique<ProbeOperator<std::int64_t>>(downstream, true);
  });
  env.execute();
  auto lines = downstream->get();
  // Before B's idleness the minimum is B's 499; then A's 999; then A's 7999; B's return
  // (its watermark 2999) cannot pull the output back.
  std::vector<std::string> wms;
  for (const auto& l : lines)
    if (l[0] == 'W' || l == "IDLE") wms.push_back(l);
  EXPECT_EQ(wms, (std::vector<std::string>{"W499", "W999", "W7999", "WMAX"})) << ::testing::PrintToString(lines);
}

TEST(WatermarkAssignerStrategies, PartitionAwareThroughTheOperator) {
  StreamExecutionEnvironment env;
  auto src = scripted<std::int64_t>(env, [](ScriptedSource<std::int64_t>& s) {
    auto batch = [](std::vector<Record<std::int64_t>> r) {
      return [r](Output& out) { out.emit(std::make_unique<Batch<std::int64_t>>(r)); };
    };
    s.then(batch({{1, 5000, 0}, {2, 9000, 1}})).then(batch({{3, 12000, 0}})).then(batch({{4, 13000, 1}}));
  });
  auto log = probe(src.assign_timestamps_and_watermarks(PartitionAwareBoundedOutOfOrdernessStrategy<std::int64_t>(1000)));
  env.execute();
  EXPECT_EQ(log->get(), (std::vector<std::string>{"1@5000", "2@9000", "W3999", "3@12000", "W7999", "4@13000",
                                                  "W10999", "WMAX"}));
}

TEST(WatermarkAssignerStrategies, SpecParamsDescribeTheStrategy) {
  StreamExecutionEnvironment env;
  auto src = env.from_collection<std::int64_t>({});
  auto m = src.assign_timestamps_and_watermarks(MonotonicWatermarkStrategy<std::int64_t>());
  EXPECT_EQ(m.node().factory, "watermark_assigner");
  EXPECT_EQ(m.node().params, (nlohmann::json{{"strategy", "monotonic"}}));
  auto b = src.assign_timestamps_and_watermarks(BoundedOutOfOrdernessStrategy<std::int64_t>(250).with_idleness(5000));
  EXPECT_EQ(b.node().params, (nlohmann::json{{"out_of_orderness_ms", 250}, {"idleness_ms", 5000}}));
  auto p = src.assign_timestamps_and_watermarks(PartitionAwareBoundedOutOfOrdernessStrategy<std::int64_t>(9));
  EXPECT_EQ(p.node().params, (nlohmann::json{{"strategy", "partition_aware"}, {"out_of_orderness_ms", 9}}));
}

}  // namespace
}  // namespace clink::test
