#include <algorithm>

#include <gtest/gtest.h>

#include "clink/core/error.hpp"
#include "clink/operators/builtin_streams.hpp"
#include "test_support.hpp"

namespace clink::test {
namespace {

// Bucket arithmetic (floor at negative timestamps, saturation): tests/time/window_arithmetic_test.cpp.

ScriptStep<Event> batch(std::vector<std::pair<Event, EventTime>> events) { return ScriptStep<Event>{std::move(events)}; }

TEST(EventTimeCount, CountsOutOfOrderInputWithinTheBound) {
  StreamExecutionEnvironment env;
  // Out of order by up to 4 s; the assigner's bound is 5 s, so nothing is late.
  auto src = scripted_source<Event>(env, {
                                             batch({{{"a", 1}, 1000}, {{"b", 1}, 9000}, {{"a", 1}, 12000}}),
                                             batch({{{"a", 1}, 8000}, {{"b", 1}, 14000}}),
                                             batch({{{"a", 1}, 11000}, {{"b", 1}, 21000}, {{"a", 1}, 19999}}),
                                             batch({{{"b", 1}, 17000}, {{"a", 1}, 31000}}),
                                         });
  auto counted = event_time_count(assign_watermarks(src, 5000), 10000);
  auto out = collect(counted);
  auto handle = env.execute_async();
  handle.wait();
  EXPECT_EQ(out->strings(), (std::vector<std::string>{"(a,0,2)", "(b,0,1)", "(a,10000,3)", "(b,10000,2)",
                                                      "(b,20000,1)", "(a,30000,1)"}));
  EXPECT_EQ(handle.metrics().total(counted.id()).late_records_dropped, 0);
}

TEST(EventTimeCount, EmitsWithTheBucketsLastTimestampInTimerOrder) {
  StreamExecutionEnvironment env;
  auto src = scripted_source<Event>(env, {batch({{{"b", 1}, 5}, {{"a", 1}, 3}, {{"b", 1}, 12}, {{"a", 1}, 25}})});
  auto out = collect(event_time_count(assign_watermarks(src, 100), 10));
  env.execute();
  // The final watermark fires everything: by time, then key.
  EXPECT_EQ(out->strings(), (std::vector<std::string>{"(a,0,1)", "(b,0,1)", "(b,10,1)", "(a,20,1)"}));
  std::vector<EventTime> ts;
  for (auto& e : out->entries) ts.push_back(e.event_time);
  EXPECT_EQ(ts, (std::vector<EventTime>{9, 9, 19, 29}));
}

TEST(EventTimeCount, NegativeTimestampsFloorToEpochAlignedBuckets) {
  StreamExecutionEnvironment env;
  auto src = scripted_source<Event>(env, {batch({{{"k", 1}, -15000},
                                                 {{"k", 1}, -20000},
                                                 {{"k", 1}, -10001},
                                                 {{"k", 1}, -1},
                                                 {{"k", 1}, -10000},
                                                 {{"k", 1}, 0}})});
  auto out = collect(event_time_count(assign_watermarks(src, 60000), 10000));
  env.execute();
  EXPECT_EQ(out->strings(), (std::vector<std::string>{"(k,-20000,3)", "(k,-10000,2)", "(k,0,1)"}));
}

TEST(EventTimeCount, FiresWhenTheWatermarkPassesTheBucketEnd) {
  StreamExecutionEnvironment env;
  auto src = scripted_source<Event>(env, {batch({{{"k", 1}, 100}}), batch({{{"k", 1}, 10000}}),
                                          batch({{{"k", 1}, 10001}})});
  auto counted = event_time_count(assign_watermarks(src, 0), 10000);
  auto log = probe(counted);
  env.execute();
  // W 9999 = bucket 0's end - 1: fires there, before record 10001 arrives.
  EXPECT_EQ(log->get(), (std::vector<std::string>{"W99", "(k,0,1)@9999", "W9999", "W10000", "(k,10000,2)@19999",
                                                  "WMAX"}));
}

TEST(EventTimeCount, DropsRecordsOfBucketsThatAlreadyFired) {
  StreamExecutionEnvironment env;
  auto src = scripted_source<Event>(env, {batch({{{"k", 1}, 15000}}), batch({{{"k", 1}, 3000}, {{"k", 1}, 12000}})});
  auto counted = event_time_count(assign_watermarks(src, 0), 10000);
  auto out = collect(counted);
  auto handle = env.execute_async();
  handle.wait();
  EXPECT_EQ(out->strings(), (std::vector<std::string>{"(k,10000,2)"}));
  EXPECT_EQ(handle.metrics().total(counted.id()).late_records_dropped, 1);
}

TEST(EventTimeCount, ParallelSubtasksEachCountTheirKeys) {
  std::vector<std::pair<Event, EventTime>> events;
  for (int i = 0; i < 1000; ++i) events.push_back({Event{"key-" + std::to_string(i % 4), i}, i * 7});
  StreamExecutionEnvironment env;
  auto src = scripted_source<Event>(env, {batch(events)});
  auto counted = event_time_count(assign_watermarks(src, 0), 1000);
  counted.set_parallelism(2);
  auto out = collect(counted);
  env.execute();

  std::map<std::pair<std::string, std::int64_t>, std::int64_t> expected;
  for (int i = 0; i < 1000; ++i) ++expected[{"key-" + std::to_string(i % 4), (i * 7) / 1000 * 1000}];
  std::map<std::pair<std::string, std::int64_t>, std::int64_t> got;
  for (auto& [k, start, n] : out->values()) {
    EXPECT_EQ(got.count({k, start}), 0u) << "bucket emitted twice";
    got[{k, start}] = n;
  }
  EXPECT_EQ(got, expected);
  for (int s = 0; s < 2; ++s) {
    auto v = out->values_of(s);
    EXPECT_TRUE(std::is_sorted(v.begin(), v.end(), [](const WindowCount& x, const WindowCount& y) {
      return std::get<1>(x) < std::get<1>(y);
    })) << "subtask " << s << " emits in timer order";
  }
}

TEST(EventTimeCount, RecordWithoutEventTimeFails) {
  StreamExecutionEnvironment env;
  auto counted = event_time_count(env.from_collection(std::vector<Event>{{"a", 1}}), 10, "counter");
  collect(counted);
  try {
    env.execute();
    FAIL() << "expected the job to fail";
  } catch (const JobFailedError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("counter"), std::string::npos) << msg;
    EXPECT_NE(msg.find("record has no event time"), std::string::npos) << msg;
  }
}

TEST(EventTimeCount, RejectsANonPositiveSize) {
  StreamExecutionEnvironment env;
  EXPECT_THROW(event_time_count(env.from_collection(std::vector<Event>{}), 0), ClinkError);
}

}  // namespace
}  // namespace clink::test
