#include "clink/runtime/multi_input_alignment.hpp"

#include <gtest/gtest.h>

namespace clink::test {
namespace {

TEST(MultiInputAlignment, EmitsMinimumOverInputs) {
  MultiInputAlignment a(2);
  EXPECT_EQ(a.on_watermark(0, Watermark::at(10)), std::nullopt);  // input 1 still at min
  EXPECT_EQ(a.on_watermark(1, Watermark::at(5)), Watermark::at(5));
  EXPECT_EQ(a.on_watermark(1, Watermark::at(20)), Watermark::at(10));
  EXPECT_EQ(a.on_watermark(0, Watermark::at(15)), Watermark::at(15));
  EXPECT_EQ(a.on_watermark(0, Watermark::at(15)), std::nullopt);  // no advance, nothing sent
}

TEST(MultiInputAlignment, RegressingInputIsIgnored) {
  MultiInputAlignment a(1);
  EXPECT_EQ(a.on_watermark(0, Watermark::at(10)), Watermark::at(10));
  EXPECT_EQ(a.on_watermark(0, Watermark::at(3)), std::nullopt);
  EXPECT_EQ(a.current(), Watermark::at(10));
}

TEST(MultiInputAlignment, IdleInputDoesNotHoldBackTheMinimum) {
  MultiInputAlignment a(2);
  a.on_watermark(0, Watermark::at(100));
  EXPECT_EQ(a.on_watermark(1, Watermark::idle_marker()), Watermark::at(100));
  EXPECT_EQ(a.on_watermark(0, Watermark::at(200)), Watermark::at(200));
}

TEST(MultiInputAlignment, InputReturningFromIdleIsClampedSoOutputNeverRegresses) {
  MultiInputAlignment a(2);
  a.on_watermark(0, Watermark::at(50));
  a.on_watermark(1, Watermark::idle_marker());
  EXPECT_EQ(a.on_watermark(0, Watermark::at(300)), Watermark::at(300));
  // Input 1 comes back far behind: clamped to 300, so nothing regresses.
  EXPECT_EQ(a.on_watermark(1, Watermark::at(10)), std::nullopt);
  EXPECT_EQ(a.current(), Watermark::at(300));
  // From now on input 1 holds the minimum again.
  EXPECT_EQ(a.on_watermark(0, Watermark::at(400)), std::nullopt);
  EXPECT_EQ(a.on_watermark(1, Watermark::at(350)), Watermark::at(350));
}

TEST(MultiInputAlignment, AllInputsIdleForwardsOneIdleMarkerThenActivity) {
  MultiInputAlignment a(2);
  a.on_watermark(0, Watermark::at(7));
  a.on_watermark(1, Watermark::at(9));
  EXPECT_EQ(a.on_watermark(0, Watermark::idle_marker()), Watermark::at(9));
  auto idle = a.on_watermark(1, Watermark::idle_marker());
  ASSERT_TRUE(idle.has_value());
  EXPECT_TRUE(idle->is_idle());
  EXPECT_EQ(a.on_watermark(1, Watermark::idle_marker()), std::nullopt);  // only once
  EXPECT_EQ(a.on_watermark(0, Watermark::at(12)), Watermark::at(12));     // active again
}

TEST(MultiInputAlignment, ClosedInputsCountAsMaxAndAllClosedGivesMax) {
  MultiInputAlignment a(2);
  a.on_watermark(0, Watermark::at(5));
  EXPECT_EQ(a.on_end_of_input(1), Watermark::at(5));
  EXPECT_FALSE(a.all_closed());
  EXPECT_EQ(a.on_end_of_input(0), Watermark::max());
  EXPECT_TRUE(a.all_closed());
}

TEST(MultiInputAlignment, MaxIsFinal) {
  MultiInputAlignment a(2);
  a.on_watermark(1, Watermark::idle_marker());
  EXPECT_EQ(a.on_watermark(0, Watermark::max()), Watermark::max());  // idle input excluded
  EXPECT_EQ(a.on_end_of_input(0), std::nullopt);  // no idle marker after the end of time
  EXPECT_EQ(a.on_watermark(1, Watermark::at(3)), std::nullopt);
  EXPECT_EQ(a.on_end_of_input(1), std::nullopt);
}

TEST(MultiInputAlignment, IdleAndClosedInputsTogether) {
  MultiInputAlignment a(3);
  a.on_watermark(0, Watermark::at(5));
  a.on_watermark(1, Watermark::at(6));
  a.on_end_of_input(2);
  EXPECT_EQ(a.on_watermark(0, Watermark::idle_marker()), Watermark::at(6));
  auto idle = a.on_watermark(1, Watermark::idle_marker());
  ASSERT_TRUE(idle.has_value());
  EXPECT_TRUE(idle->is_idle());
}

}  // namespace
}  // namespace clink::test

namespace clink::test {
namespace {

CheckpointBarrier barrier(std::int64_t id) { return CheckpointBarrier{id, 0, false}; }

TEST(MultiInputAlignment, BarrierIsAlignedWhenEveryLiveInputDeliveredIt) {
  MultiInputAlignment a(3);
  EXPECT_EQ(a.on_barrier(0, barrier(1)), std::nullopt);
  EXPECT_TRUE(a.barrier_received(0));  // the caller blocks input 0 now
  EXPECT_FALSE(a.barrier_received(1));
  EXPECT_EQ(a.on_barrier(2, barrier(1)), std::nullopt);
  EXPECT_EQ(a.aligning_checkpoint(), 1);
  EXPECT_EQ(a.on_barrier(1, barrier(1)), barrier(1));
  EXPECT_FALSE(a.aligning());
  EXPECT_FALSE(a.barrier_received(0));  // everything unblocked
}

TEST(MultiInputAlignment, ClosedInputsDoNotHoldAnAlignmentBack) {
  MultiInputAlignment a(2);
  EXPECT_EQ(a.on_barrier(0, barrier(4)), std::nullopt);
  a.on_end_of_input(1);
  EXPECT_EQ(a.completed_by_close(), barrier(4));
  MultiInputAlignment b(2);
  b.on_end_of_input(1);
  EXPECT_EQ(b.on_barrier(0, barrier(5)), barrier(5));  // already closed: aligned at once
}

TEST(MultiInputAlignment, NewerBarrierAbandonsAnOlderAlignmentAndStaleOnesAreIgnored) {
  MultiInputAlignment a(2);
  EXPECT_EQ(a.on_barrier(0, barrier(1)), std::nullopt);
  EXPECT_EQ(a.on_barrier(1, barrier(2)), std::nullopt);  // checkpoint 1 was aborted
  EXPECT_FALSE(a.barrier_received(0));
  EXPECT_TRUE(a.barrier_received(1));
  EXPECT_EQ(a.on_barrier(0, barrier(1)), std::nullopt);  // late barrier of the old one
  EXPECT_EQ(a.on_barrier(0, barrier(2)), barrier(2));
  EXPECT_EQ(a.on_barrier(1, barrier(2)), std::nullopt);  // already completed
}

}  // namespace
}  // namespace clink::test
