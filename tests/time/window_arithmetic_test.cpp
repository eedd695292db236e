#include "clink/time/window_arithmetic.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace clink::test {
namespace {

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

TEST(WindowArithmetic, FloorDivAndModRoundTowardNegativeInfinity) {
  EXPECT_EQ(floor_div(7, 2), 3);
  EXPECT_EQ(floor_div(-7, 2), -4);
  EXPECT_EQ(floor_div(-8, 2), -4);
  EXPECT_EQ(floor_div(7, -2), -4);
  EXPECT_EQ(floor_div(kMin, 1), kMin);
  EXPECT_EQ(floor_div(kMin, -1), kMax);  // saturates
  EXPECT_EQ(floor_mod(7, 3), 1);
  EXPECT_EQ(floor_mod(-7, 3), 2);
  EXPECT_EQ(floor_mod(-6, 3), 0);
  EXPECT_EQ(floor_mod(7, -3), -2);  // sign of the divisor, as Java's Math.floorMod
  EXPECT_EQ(floor_mod(kMin, 10000), 4192);
  EXPECT_EQ(floor_mod(kMax, 10000), 5807);
}

TEST(WindowArithmetic, SaturatingAddAndSubtract) {
  EXPECT_EQ(sat_add(1, 2), 3);
  EXPECT_EQ(sat_add(kMax, 1), kMax);
  EXPECT_EQ(sat_add(kMax - 5, 10), kMax);
  EXPECT_EQ(sat_add(kMin, -1), kMin);
  EXPECT_EQ(sat_add(kMin, kMax), -1);
  EXPECT_EQ(sat_sub(kMin, 1), kMin);
  EXPECT_EQ(sat_sub(kMax, -1), kMax);
  EXPECT_EQ(sat_sub(0, kMin), kMax);
  EXPECT_EQ(sat_sub(-5, 3), -8);
}

TEST(WindowArithmetic, TumblingStartFloorsNegativeTimestamps) {
  // SEMANTICS.md: a record at -15000 in a 10 s window is in [-20000, -10000).
  EXPECT_EQ(window_start_for(-15000, 10000), -20000);
  EXPECT_EQ(window_end_for(-20000, 10000), -10000);
  EXPECT_EQ(window_max_timestamp_for(-20000, 10000), -10001);
  EXPECT_EQ(window_start_for(-10000, 10000), -10000);
  EXPECT_EQ(window_start_for(-10001, 10000), -20000);
  EXPECT_EQ(window_start_for(-1, 10000), -10000);
  EXPECT_EQ(window_start_for(0, 10000), 0);
  EXPECT_EQ(window_start_for(9999, 10000), 0);
  EXPECT_EQ(window_start_for(10000, 10000), 10000);
}

TEST(WindowArithmetic, TumblingOffsetShiftsAlignment) {
  constexpr std::int64_t hour = 3600 * 1000, day = 24 * hour;
  // A day window with offset -8h starts at 16:00 UTC (local midnight in UTC+8).
  std::int64_t ts = 2 * day + 17 * hour;  // day 2, 17:00 UTC
  EXPECT_EQ(window_start_for(ts, day, -8 * hour), 2 * day + 16 * hour);
  EXPECT_EQ(window_start_for(2 * day + 15 * hour, day, -8 * hour), day + 16 * hour);
  EXPECT_EQ(window_start_for(ts, day, 0), 2 * day);
  // Flink's example: hourly windows offset by 15 minutes.
  EXPECT_EQ(window_start_for(hour + 10 * 60000, hour, 15 * 60000), 15 * 60000);
  EXPECT_EQ(window_start_for(-5, 10, 3), -7);
}

TEST(WindowArithmetic, TumblingSaturatesAtTheInt64Limits) {
  // The window holding INT64_MIN would start below it: clamped to INT64_MIN.
  EXPECT_EQ(window_start_for(kMin, 10000), kMin);
  EXPECT_EQ(window_end_for(kMin, 10000), kMin + 10000);
  EXPECT_EQ(window_start_for(kMin + 5807, 10000), kMin);
  EXPECT_EQ(window_start_for(kMin + 5808, 10000), kMin + 5808);
  // The window holding INT64_MAX would end past it: it ends (closed) at INT64_MAX.
  std::int64_t top = window_start_for(kMax, 10000);
  EXPECT_EQ(top, kMax - 5807);
  EXPECT_EQ(window_end_for(top, 10000), kMax);
  EXPECT_EQ(window_max_timestamp_for(top, 10000), kMax);
  EXPECT_EQ(window_max_timestamp_for(top - 10000, 10000), top - 1);
  // Offsets near the limits do not overflow ts - offset.
  EXPECT_EQ(window_start_for(kMin, 10, 9), kMin);
  EXPECT_EQ(window_start_for(kMax, 10, -9), kMax - 6);
  EXPECT_EQ(window_start_for(kMax, kMax), kMax);
  EXPECT_EQ(window_start_for(kMax - 1, kMax), 0);
}

TEST(WindowArithmetic, HopStartsAreAllAlignedStartsWithinSizeLatestFirst) {
  using V = std::vector<std::int64_t>;
  EXPECT_EQ(hop_window_starts_for(5, 10, 5), (V{5, 0}));
  EXPECT_EQ(hop_window_starts_for(4, 10, 5), (V{0, -5}));
  EXPECT_EQ(hop_window_starts_for(0, 10, 5), (V{0, -5}));
  EXPECT_EQ(hop_window_starts_for(-15000, 10000, 5000), (V{-15000, -20000}));
  EXPECT_EQ(hop_window_starts_for(-14999, 10000, 5000), (V{-15000, -20000}));
  EXPECT_EQ(hop_window_starts_for(-1, 10000, 5000), (V{-5000, -10000}));
  // size / slide windows when size is a multiple of slide.
  EXPECT_EQ(hop_window_starts_for(61500, 60000, 1000).size(), 60u);
  EXPECT_EQ(hop_window_starts_for(61500, 60000, 1000).front(), 61000);
  EXPECT_EQ(hop_window_starts_for(61500, 60000, 1000).back(), 2000);
  // Not a multiple: size 10, slide 4 -> starts in (ts - 10, ts].
  EXPECT_EQ(hop_window_starts_for(9, 10, 4), (V{8, 4, 0}));
  EXPECT_EQ(hop_window_starts_for(10, 10, 4), (V{8, 4}));
  // With an offset.
  EXPECT_EQ(hop_window_starts_for(5, 10, 5, 2), (V{2, -3}));
}

TEST(WindowArithmetic, HopStartsSaturate) {
  using V = std::vector<std::int64_t>;
  EXPECT_EQ(hop_window_starts_for(kMin, 30, 10), (V{kMin}));
  EXPECT_EQ(hop_window_starts_for(kMin + 7, 30, 10), (V{kMin}));  // kMin - 2, - 12, - 22 clamp to one
  EXPECT_EQ(hop_window_starts_for(kMin + 8, 30, 10), (V{kMin + 8}));
  EXPECT_EQ(hop_window_starts_for(kMin + 18, 30, 10), (V{kMin + 18, kMin + 8}));
  auto top = hop_window_starts_for(kMax, 30, 10);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0], kMax - 7);
  EXPECT_EQ(window_end_for(top[0], 30), kMax);
}

TEST(WindowArithmetic, Gcd) {
  EXPECT_EQ(gcd_i64(60000, 1000), 1000);
  EXPECT_EQ(gcd_i64(10, 4), 2);
  EXPECT_EQ(gcd_i64(7, 7), 7);
}

}  // namespace
}  // namespace clink::test
