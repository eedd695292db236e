// The per-split watermark combiner the typed and the SQL sources share: the minimum over
// the held splits, a split without records holding it back, idle splits left out, and a
// watermark that never goes back.
#include "clink/time/split_watermark_combiner.hpp"

#include <gtest/gtest.h>

namespace clink::test {
namespace {

TEST(SplitWatermarkCombiner, TheMinimumOverTheSplitsAndASplitWithoutRecordsHoldsItBack) {
  SplitWatermarkCombiner c(0, 0, kMinEventTime);
  c.set_splits({1, 2}, 0);
  c.advance(1, 5000, 0);
  EXPECT_EQ(c.poll(0), std::nullopt) << "split 2 has no record yet";
  c.advance(2, 3000, 0);
  EXPECT_EQ(c.poll(0), Watermark::at(3000));
  c.advance(2, 9000, 0);
  EXPECT_EQ(c.poll(0), Watermark::at(5000));
  c.advance(1, 4000, 0);  // a split's watermark never goes back
  EXPECT_EQ(c.poll(0), std::nullopt);
  c.set_splits({2}, 0);  // split 1 finished
  EXPECT_EQ(c.poll(0), Watermark::at(9000));
}

TEST(SplitWatermarkCombiner, AnIdleSplitIsLeftOutAndOneComingBackIsClamped) {
  SplitWatermarkCombiner c(100, 0, kMinEventTime);
  c.set_splits({1, 2}, 0);
  c.advance(1, 5000, 50);
  EXPECT_EQ(c.poll(50), std::nullopt);
  EXPECT_EQ(c.poll(100), Watermark::at(5000)) << "split 2 idle since 0";
  EXPECT_EQ(c.poll(200), Watermark::idle_marker(5000)) << "both idle";
  EXPECT_EQ(c.poll(300), std::nullopt);
  c.advance(2, 1000, 300);  // back, behind the watermark: resumes at it
  EXPECT_EQ(c.poll(300), Watermark::at(5000));
  c.advance(2, 7000, 350);
  EXPECT_EQ(c.poll(350), Watermark::at(7000));
}

// A split with records and one without going idle in the same poll (records read as the
// splits were taken): the watermark still advances to the busy split's before the source
// is idle, as with Flink's idleness timers (a CI failure of the typed idle test).
TEST(SplitWatermarkCombiner, SplitsGoingIdleTogetherStillAdvanceTheWatermarkFirst) {
  SplitWatermarkCombiner c(300, 0, kMinEventTime);
  c.set_splits({1, 2}, 0);
  c.advance(1, 15000, 0);
  EXPECT_EQ(c.poll(0), std::nullopt) << "split 2 has no record yet";
  EXPECT_EQ(c.poll(300), Watermark::at(15000)) << "both idle now; split 1's records count first";
  EXPECT_EQ(c.poll(301), Watermark::idle_marker(15000));
  EXPECT_EQ(c.poll(400), std::nullopt);
}

TEST(SplitWatermarkCombiner, EmitsAtItsIntervalAndNeverAtOrBelowTheFloor) {
  SplitWatermarkCombiner c(0, 200, 0);
  c.set_splits({0}, 0);
  c.advance(0, -5, 300);
  EXPECT_EQ(c.poll(300), std::nullopt) << "at or below the floor";
  c.advance(0, 1000, 300);
  EXPECT_EQ(c.poll(300), Watermark::at(1000));
  c.advance(0, 2000, 400);
  EXPECT_EQ(c.poll(400), std::nullopt) << "within the interval";
  EXPECT_EQ(c.poll(500), Watermark::at(2000));
}

}  // namespace
}  // namespace clink::test
