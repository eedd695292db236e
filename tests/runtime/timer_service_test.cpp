#include "clink/runtime/timer_service.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "../support/manual_clock.hpp"

namespace clink::test {
namespace {

using Fired = std::vector<std::tuple<std::int64_t, std::string, std::string>>;

TEST(TimerService, EventTimersFireInTimeThenKeyOrderWhenWatermarkPasses) {
  TimerService ts;
  ts.register_event_time_timer(30, "b", "");
  ts.register_event_time_timer(10, "b", "");
  ts.register_event_time_timer(10, "a", "");
  ts.register_event_time_timer(20, "a", "w1");
  Fired fired;
  auto record = [&](const Timer& t) { fired.emplace_back(t.time, t.key, t.ns); };
  EXPECT_EQ(ts.advance_watermark(9, record), 0u);
  EXPECT_EQ(ts.advance_watermark(20, record), 3u);
  EXPECT_EQ(fired, (Fired{{10, "a", ""}, {10, "b", ""}, {20, "a", "w1"}}));
  EXPECT_EQ(ts.current_watermark(), 20);
  EXPECT_EQ(ts.next_event_time(), 30);
}

TEST(TimerService, DuplicateTimersAreRegisteredOnce) {
  TimerService ts;
  ts.register_event_time_timer(5, "k", "n");
  ts.register_event_time_timer(5, "k", "n");
  ts.register_event_time_timer(5, "k", "m");  // other namespace: a different timer
  EXPECT_EQ(ts.event_time_timer_count(), 2u);
  int fired = 0;
  ts.advance_watermark(100, [&](const Timer&) { ++fired; });
  EXPECT_EQ(fired, 2);
}

TEST(TimerService, CurrentKeyScopesTimersAndDeleteRemoves) {
  TimerService ts;
  ts.set_current_key("k1");
  ts.register_event_time_timer(7);
  ts.set_current_key("k2");
  ts.register_event_time_timer(7);
  ts.delete_event_time_timer(7);  // k2's
  Fired fired;
  ts.advance_watermark(7, [&](const Timer& t) { fired.emplace_back(t.time, t.key, t.ns); });
  EXPECT_EQ(fired, (Fired{{7, "k1", ""}}));
}

TEST(TimerService, TimersRegisteredWhileFiringFireInTheSamePassIfDue) {
  TimerService ts;
  ts.register_event_time_timer(1, "k", "");
  std::vector<std::int64_t> fired;
  ts.advance_watermark(10, [&](const Timer& t) {
    fired.push_back(t.time);
    if (t.time < 5) ts.register_event_time_timer(t.time + 2, "k", "");
  });
  EXPECT_EQ(fired, (std::vector<std::int64_t>{1, 3, 5}));
}

TEST(TimerService, WatermarkNeverRegresses) {
  TimerService ts;
  ts.advance_watermark(50, [](const Timer&) {});
  ts.advance_watermark(10, [](const Timer&) {});
  EXPECT_EQ(ts.current_watermark(), 50);
}

TEST(TimerService, ProcessingTimersFollowTheClock) {
  ManualClock clock;
  TimerService ts(clock);
  clock.now = 1000;
  EXPECT_EQ(ts.current_processing_time(), 1000);
  ts.register_processing_time_timer(1500, "a", "");
  ts.register_processing_time_timer(1200, "b", "");
  EXPECT_EQ(ts.next_processing_time(), 1200);
  std::vector<std::string> fired;
  ts.advance_processing_time(1300, [&](const Timer& t) { fired.push_back(t.key); });
  EXPECT_EQ(fired, (std::vector<std::string>{"b"}));
  ts.advance_processing_time(2000, [&](const Timer& t) { fired.push_back(t.key); });
  EXPECT_EQ(fired, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(ts.next_processing_time(), std::nullopt);
}

}  // namespace
}  // namespace clink::test
