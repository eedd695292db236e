// within(): timeouts of partial matches at the NFA level (NFAITCase time-window cases,
// NFAStatusChangeITCase), and the shared buffer's bookkeeping.
#include <gtest/gtest.h>

#include "cep_test_support.hpp"

namespace clink::test {

using namespace clink::cep;

namespace {

using Strings = std::vector<std::string>;

Pattern<Event> start_middle_end(bool any) {
  auto p = Pattern<Event>::begin("start").where(named("start"));
  auto q = any ? std::move(p).followed_by_any("middle") : std::move(p).followed_by("middle");
  q = std::move(q).where(named("middle"));
  q = any ? std::move(q).followed_by_any("end") : std::move(q).followed_by("end");
  return std::move(q).where(named("end")).within(10);
}

std::vector<std::pair<Event, EventTime>> window_input() {
  return {{ev(1, "start"), 1},  {ev(2, "start"), 2}, {ev(3, "middle"), 3},
          {ev(4, "foobar"), 4}, {ev(5, "end"), 11},  {ev(6, "end"), 13}};
}

TEST(NfaTime, WindowDropsExpiredPartials) {
  // NFAITCase.testSimplePatternWithTimeWindowNFA.
  Harness h(start_middle_end(false));
  EXPECT_EQ(h.feed(window_input()), (Strings{"start:2 middle:3 end:5"}));
}

TEST(NfaTime, TimedOutPartialsCarryStartPlusWindow) {
  // NFAITCase.testSimplePatternWithTimeoutHandling (followed_by_any).
  Harness h(start_middle_end(true));
  EXPECT_EQ(h.feed(window_input()), (Strings{"start:2 middle:3 end:5"}));
  EXPECT_EQ(h.timeouts(), (std::vector<Timeout>{{"start:1 middle:3", 11}, {"start:1", 11},
                                                {"start:2 middle:3", 12}, {"start:2", 12}}));
}

TEST(NfaTime, EventExactlyAtTheWindowEdgeIsTooLate) {
  Harness h(Pattern<Event>::begin("a").where(named("a")).followed_by("b").where(named("b")).within(5));
  EXPECT_EQ(h.feed({{ev(1, "a"), 0}, {ev(2, "b"), 5}}), Strings{});
  EXPECT_EQ(h.timeouts(), (std::vector<Timeout>{{"a:1", 5}}));
  EXPECT_EQ(h.feed({{ev(3, "a"), 10}, {ev(4, "b"), 14}}), (Strings{"a:3 b:4"}));
}

TEST(NfaTime, AdvanceTimeAloneTimesOut) {
  Harness h(Pattern<Event>::begin("a").where(named("a")).next("b").where(named("b")).times(2).within(100));
  EXPECT_EQ(h.feed({{ev(1, "a"), 0}, {ev(2, "b"), 10}}), Strings{});
  EXPECT_EQ(h.advance(99), Strings{});
  EXPECT_TRUE(h.timeouts().empty());
  h.advance(100);
  EXPECT_EQ(h.timeouts(), (std::vector<Timeout>{{"a:1 b:2", 100}}));
  EXPECT_TRUE(h.state().idle());  // everything released
}

TEST(NfaTime, SmallestWithinWins) {
  auto p = Pattern<Event>::begin("a").where(named("a")).within(50).followed_by("b").where(named("b")).within(20);
  Harness h(p);
  EXPECT_EQ(h.nfa().window(), 20);
  EXPECT_EQ(h.feed({{ev(1, "a"), 0}, {ev(2, "b"), 25}}), Strings{});
}

TEST(NfaTime, SharedBufferStoresEachEventOnce) {
  // a followed_by_any b+: many overlapping partials share a:1 and the b's.
  Harness h(Pattern<Event>::begin("a").where(named("a")).followed_by_any("b").where(named("b")).one_or_more()
                .followed_by("c").where(named("c")));
  h.feed(seq({ev(1, "a"), ev(2, "b"), ev(3, "b"), ev(4, "b")}));
  const auto& st = h.state();
  EXPECT_GE(st.partial.size(), 7u);
  EXPECT_EQ(st.buffer.live_events(), 4u);  // a:1, b:2, b:3, b:4 once each
  // Runs of b's (the first b may be skipped, later ones not): [2] [2 3] [2 3 4] [3] [3 4] [4].
  EXPECT_EQ(h.feed({{ev(5, "c"), 5}}).size(), 6u);
}

TEST(NfaTime, EverythingIsReleasedAfterMatchesAndTimeouts) {
  Harness h(Pattern<Event>::begin("a").where(named("a")).followed_by_any("b").where(named("b")).one_or_more()
                .followed_by("c").where(named("c")).within(10));
  h.feed(seq({ev(1, "a"), ev(2, "b"), ev(3, "b"), ev(4, "c"), ev(5, "x")}));
  EXPECT_FALSE(h.state().buffer.empty());
  h.advance(100);
  EXPECT_TRUE(h.state().idle());
  EXPECT_EQ(h.state().buffer.live_nodes(), 0u);
  EXPECT_EQ(h.state().buffer.live_events(), 0u);
}

TEST(NfaTime, StatusUnchangedForIgnoredEvents) {
  // NFAStatusChangeITCase shape: an event no partial can use leaves the state as it was.
  Harness h(Pattern<Event>::begin("a").where(named("a")).followed_by("b").where(named("b")));
  h.feed(seq({ev(1, "a")}));
  const auto before = h.state().partial.size();
  h.feed({{ev(2, "x"), 2}, {ev(3, "y"), 3}});
  EXPECT_EQ(h.state().partial.size(), before);
  EXPECT_EQ(h.state().buffer.live_events(), 1u);
}

TEST(DeweyNumberTest, CompatibilityAndOrder) {
  const DeweyNumber start(1);
  const DeweyNumber n = start.add_stage().increase(2).add_stage();  // 1.2.0
  EXPECT_EQ(n.to_string(), "1.2.0");
  EXPECT_TRUE(n.is_compatible_with(DeweyNumber::parse("1.2")));
  EXPECT_TRUE(n.is_compatible_with(DeweyNumber::parse("1")));
  EXPECT_FALSE(n.is_compatible_with(DeweyNumber::parse("1.3")));
  EXPECT_TRUE(DeweyNumber::parse("1.3").is_compatible_with(DeweyNumber::parse("1.2")));
  EXPECT_FALSE(DeweyNumber::parse("1.2").is_compatible_with(DeweyNumber::parse("1.3")));
  EXPECT_FALSE(DeweyNumber::parse("2").is_compatible_with(DeweyNumber::parse("1.0")));
  DeweyNumber longv(1);
  for (int i = 0; i < 40; ++i) longv = longv.add_stage().increase(i);
  std::string bytes;
  longv.encode(bytes);
  std::string_view in(bytes);
  EXPECT_EQ(DeweyNumber::decode(in), longv);
  EXPECT_EQ(longv.length(), 41);
}

}  // namespace
}  // namespace clink::test
