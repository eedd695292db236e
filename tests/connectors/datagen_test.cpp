#include "clink/connectors/datagen.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <set>

#include "clink/api/data_stream.hpp"
#include "clink/connectors/collect_sink.hpp"
#include "connector_test_util.hpp"

namespace clink::test {
namespace {

using ::testing::ElementsAre;

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

std::vector<std::int64_t> range(std::int64_t from, std::int64_t to_inclusive) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(to_inclusive - from + 1));
  std::iota(v.begin(), v.end(), from);
  return v;
}

TEST(Datagen, SequenceSplitsAcrossSubtasksByStride) {
  auto src = DatagenSource<std::int64_t>::sequence(1, 10);
  EXPECT_THAT(read_all<std::int64_t>(*src, 0, 2), ElementsAre(1, 3, 5, 7, 9));
  EXPECT_THAT(read_all<std::int64_t>(*src, 1, 2), ElementsAre(2, 4, 6, 8, 10));
  EXPECT_THAT(read_all<std::int64_t>(*src, 0, 1), ::testing::ContainerEq(range(1, 10)));
  // More subtasks than values: the extra ones end at once.
  auto small = DatagenSource<std::int64_t>::sequence(5, 6);
  EXPECT_THAT(read_all<std::int64_t>(*small, 0, 3), ElementsAre(5));
  EXPECT_THAT(read_all<std::int64_t>(*small, 1, 3), ElementsAre(6));
  EXPECT_TRUE(read_all<std::int64_t>(*small, 2, 3).empty());
}

TEST(Datagen, SequenceUnionAtParallelismTwoIsStartToEnd) {
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  auto sink = std::make_shared<CollectSink<std::int64_t>>();
  env.from_source<std::int64_t>(DatagenSource<std::int64_t>::sequence(0, 4999)).sink_to(sink);
  env.execute();
  auto got = sink->values();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, range(0, 4999));
}

TEST(Datagen, SequenceEdgesOfTheInt64Range) {
  EXPECT_THAT(read_all<std::int64_t>(*DatagenSource<std::int64_t>::sequence(kMax - 2, kMax), 0, 2),
              ElementsAre(kMax - 2, kMax));
  EXPECT_THAT(read_all<std::int64_t>(*DatagenSource<std::int64_t>::sequence(kMax - 2, kMax), 1, 2),
              ElementsAre(kMax - 1));
  EXPECT_THAT(read_all<std::int64_t>(*DatagenSource<std::int64_t>::sequence(kMin, kMin + 1)), ElementsAre(kMin, kMin + 1));
  EXPECT_THAT(read_all<std::int64_t>(*DatagenSource<std::int64_t>::sequence(7, 7)), ElementsAre(7));
  EXPECT_TRUE(read_all<std::int64_t>(*DatagenSource<std::int64_t>::sequence(8, 7)).empty());
}

TEST(Datagen, EventsCycleThroughKeyCountKeys) {
  auto src = DatagenSource<Event>::sequence(-1, 4, {}, EventGenerator{3});
  EXPECT_THAT(read_all<Event>(*src),
              ElementsAre(Event{"k2", -1}, Event{"k0", 0}, Event{"k1", 1}, Event{"k2", 2}, Event{"k0", 3},
                          Event{"k1", 4}));
}

TEST(Datagen, EventTimeIsStartPlusRowTimesStep) {
  DatagenOptions o;
  o.event_time_start_ms = 1000;
  o.event_time_step_ms = 10;
  auto src = DatagenSource<std::int64_t>::sequence(100, 103, o);
  TestContext tc(1, 2);
  auto reader = src->create_reader(1, 2);
  reader->open(tc.ctx);
  auto recs = drain(*reader);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0], (Record<std::int64_t>{101, 1010, kNoPartition}));
  EXPECT_EQ(recs[1], (Record<std::int64_t>{103, 1030, kNoPartition}));

  // Off by default.
  auto plain = DatagenSource<std::int64_t>::sequence(0, 0)->create_reader(0, 1);
  auto r = drain(*plain);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].event_time, kNoEventTime);
}

TEST(Datagen, RandomIsDeterministicPerSeedAndIndependentOfParallelism) {
  auto a = read_all<std::int64_t>(*DatagenSource<std::int64_t>::random(500, 42));
  auto b = read_all<std::int64_t>(*DatagenSource<std::int64_t>::random(500, 42));
  auto c = read_all<std::int64_t>(*DatagenSource<std::int64_t>::random(500, 43));
  ASSERT_EQ(a.size(), 500u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(std::set<std::int64_t>(a.begin(), a.end()).size(), 500u);  // 63-bit values: no repeats
  for (auto v : a) EXPECT_GE(v, 0);

  // Row k has the same value at any parallelism: subtask i of 2 produces rows i, i+2, ...
  auto s0 = read_all<std::int64_t>(*DatagenSource<std::int64_t>::random(500, 42), 0, 2);
  auto s1 = read_all<std::int64_t>(*DatagenSource<std::int64_t>::random(500, 42), 1, 2);
  ASSERT_EQ(s0.size(), 250u);
  ASSERT_EQ(s1.size(), 250u);
  for (std::size_t i = 0; i < 250; ++i) {
    EXPECT_EQ(s0[i], a[2 * i]);
    EXPECT_EQ(s1[i], a[2 * i + 1]);
  }
}

TEST(Datagen, RandomStaysInItsRange) {
  auto v = read_all<std::int64_t>(*DatagenSource<std::int64_t>::random(2000, 7, {}, {}, 5, 9));
  ASSERT_EQ(v.size(), 2000u);
  EXPECT_EQ(std::set<std::int64_t>(v.begin(), v.end()), (std::set<std::int64_t>{5, 6, 7, 8, 9}));
  // The whole int64 range is a valid range too.
  auto full = read_all<std::int64_t>(*DatagenSource<std::int64_t>::random(100, 1, {}, {}, kMin, kMax));
  EXPECT_TRUE(std::any_of(full.begin(), full.end(), [](std::int64_t x) { return x < 0; }));
}

TEST(Datagen, RandomUnboundedNeverEndsAndZeroRowsEndsAtOnce) {
  auto reader = DatagenSource<std::int64_t>::random(-1, 3)->create_reader(0, 1);
  for (int i = 0; i < 5; ++i) {
    Batch<std::int64_t> b;
    EXPECT_EQ(reader->poll(b, 1000), SourceOperator::PollStatus::kMore);
    EXPECT_EQ(b.size(), 1000u);
  }
  auto empty = DatagenSource<std::int64_t>::random(0, 3)->create_reader(0, 1);
  Batch<std::int64_t> b;
  EXPECT_EQ(empty->poll(b, 1000), SourceOperator::PollStatus::kEnd);
  EXPECT_TRUE(b.records.empty());
}

TEST(Datagen, CustomGeneratorThroughTheDataStreamApi) {
  StreamExecutionEnvironment env;
  auto sink = std::make_shared<CollectSink<std::string>>();
  env.from_source<std::string>(make_datagen_sequence(0, 3, [](std::int64_t n) { return std::string(n, 'x'); }))
      .sink_to(sink);
  env.execute();
  EXPECT_THAT(sink->values(), ElementsAre("", "x", "xx", "xxx"));
}

TEST(Datagen, RateLimiterAdmitsAtItsRateWithoutBursting) {
  using Clock = RateLimiter::Clock;
  using std::chrono::milliseconds;
  Clock::time_point t0{};
  RateLimiter limiter(1000, t0);  // minimum batch: 10 rows (10 ms), burst: 100 rows
  EXPECT_EQ(limiter.acquire(1024, t0), 0);
  EXPECT_EQ(limiter.wait_ms(), 10);
  EXPECT_EQ(limiter.acquire(1024, t0 + milliseconds(4)), 0);
  EXPECT_EQ(limiter.wait_ms(), 6);
  EXPECT_EQ(limiter.acquire(1024, t0 + milliseconds(10)), 10);
  EXPECT_EQ(limiter.acquire(1024, t0 + milliseconds(10)), 0);
  // A long pause does not build up more than 100 ms worth.
  EXPECT_EQ(limiter.acquire(1024, t0 + milliseconds(5000)), 100);
  // Fewer wanted than a minimum batch: granted as soon as they are available.
  EXPECT_EQ(limiter.acquire(3, t0 + milliseconds(5003)), 3);
  // A slow rate waits at most 100 ms per poll.
  RateLimiter slow(1, t0);
  EXPECT_EQ(slow.acquire(10, t0), 0);
  EXPECT_EQ(slow.wait_ms(), 100);
  EXPECT_EQ(slow.acquire(10, t0 + milliseconds(1000)), 1);
}

TEST(Datagen, RowsPerSecondLimitsTheWholeSource) {
  DatagenOptions o;
  o.rows_per_second = 1000;
  StreamExecutionEnvironment env;
  env.set_parallelism(2);  // 500 rows/s per subtask
  auto sink = std::make_shared<CollectSink<std::int64_t>>();
  env.from_source<std::int64_t>(DatagenSource<std::int64_t>::sequence(1, 2000, o)).sink_to(sink);
  auto start = std::chrono::steady_clock::now();
  env.execute();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(seconds, 1.9);
  EXPECT_LE(seconds, 4.0);
  auto got = sink->values();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, range(1, 2000));
}

}  // namespace
}  // namespace clink::test
