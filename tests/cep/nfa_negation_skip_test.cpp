// Negation (not_next, not_followed_by, trailing not_followed_by with within) and every
// after-match skip strategy at the NFA level (Flink's NotPatternITCase and
// AfterMatchSkipITCase; the skip cases are the CEP documentation's "b+ c" table).
#include <gtest/gtest.h>

#include "cep_test_support.hpp"

namespace clink::test {

using namespace clink::cep;

namespace {

using Strings = std::vector<std::string>;
using Skip = AfterMatchSkipStrategy;

TEST(NfaNegation, NotNextKillsOnImmediateMatch) {
  auto p = Pattern<Event>::begin("a").where(named("a")).not_next("notb").where(named("b"))
               .followed_by("c").where(named("c"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "a"), ev(2, "b"), ev(3, "c")})), Strings{});
  EXPECT_EQ(h.feed({{ev(4, "a"), 4}, {ev(5, "x"), 5}, {ev(6, "b"), 6}, {ev(7, "c"), 7}}), (Strings{"a:4 c:7"}));
}

TEST(NfaNegation, NotNextThenDirectlyTheNextStep) {
  // The event after "a" is not "b" and is itself the "c": the NOT step proceeds with it.
  auto p = Pattern<Event>::begin("a").where(named("a")).not_next("notb").where(named("b"))
               .followed_by("c").where(named("c"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "a"), ev(2, "c")})), (Strings{"a:1 c:2"}));
}

TEST(NfaNegation, NotNextAtTheEnd) {
  auto p = Pattern<Event>::begin("a").where(named("a")).not_next("notb").where(named("b"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "a"), ev(2, "b"), ev(3, "a"), ev(4, "c")})), (Strings{"a:3"}));
}

TEST(NfaNegation, NotFollowedByInTheMiddle) {
  auto p = Pattern<Event>::begin("a").where(named("a")).not_followed_by("notb").where(named("b"))
               .followed_by("c").where(named("c"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "a"), ev(2, "x"), ev(3, "b"), ev(4, "c")})), Strings{});
  EXPECT_EQ(h.feed({{ev(5, "a"), 5}, {ev(6, "x"), 6}, {ev(7, "c"), 7}, {ev(8, "b"), 8}}), (Strings{"a:5 c:7"}));
}

TEST(NfaNegation, NotFollowedByBeforeALoop) {
  // NotPatternITCase shape: a !b c+ d: a "b" between a and the first c kills the match;
  // one after the loop started does not (the not applies up to the next step only).
  auto p = Pattern<Event>::begin("a").where(named("a")).not_followed_by("notb").where(named("b"))
               .followed_by("c").where(named("c")).one_or_more().followed_by("d").where(named("d"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "a"), ev(2, "c"), ev(3, "b"), ev(4, "c"), ev(5, "d")})),
            (Strings{"a:1 c:2 c:4 d:5", "a:1 c:2 d:5"}));
  Harness h2(p);
  EXPECT_EQ(h2.feed(seq({ev(6, "a"), ev(7, "b"), ev(8, "c"), ev(9, "d")})), Strings{});
}

TEST(NfaNegation, NotFollowedByWithOptionalBetween) {
  // NFACompiler.copyWithoutTransitiveNots: a !b c? d. "a c b d" matches (taking the
  // optional c ends the not), "a b d" does not.
  auto p = Pattern<Event>::begin("a").where(named("a")).not_followed_by("notb").where(named("b"))
               .followed_by_any("c").where(named("c")).optional().followed_by_any("d").where(named("d"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "a"), ev(2, "c"), ev(3, "b"), ev(4, "d")})), (Strings{"a:1 c:2 d:4"}));
  Harness h2(p);
  EXPECT_EQ(h2.feed(seq({ev(5, "a"), ev(6, "b"), ev(7, "d")})), Strings{});
}

TEST(NfaNegation, TrailingNotFollowedByCompletesWhenTheWindowExpires) {
  auto p = Pattern<Event>::begin("a").where(named("a")).not_followed_by("notb").where(named("b")).within(10);
  Harness h(p);
  EXPECT_EQ(h.feed({{ev(1, "a"), 1}, {ev(2, "x"), 5}}), Strings{});
  EXPECT_EQ(h.advance(10), Strings{});
  EXPECT_EQ(h.advance(11), (Strings{"a:1"}));  // 11 - 1 >= 10: no "b" came
  EXPECT_EQ(h.feed({{ev(3, "a"), 20}, {ev(4, "b"), 25}}), Strings{});  // a:3 killed by b:4
  EXPECT_EQ(h.advance(40), Strings{});
  EXPECT_TRUE(h.timeouts().empty());  // a completed trailing NOT is a match, never a timeout
  EXPECT_TRUE(h.state().idle());
}

TEST(NfaNegation, TrailingNotFollowedByAfterALoop) {
  auto p = Pattern<Event>::begin("a").where(named("a")).followed_by("c").where(named("c")).one_or_more().consecutive()
               .not_followed_by("notb").where(named("b")).within(10);
  Harness h(p);
  EXPECT_EQ(h.feed({{ev(1, "a"), 1}, {ev(2, "c"), 2}, {ev(3, "c"), 3}, {ev(4, "x"), 4}}), Strings{});
  EXPECT_EQ(h.advance(11), (Strings{"a:1 c:2 c:3", "a:1 c:2"}));
}

// The docs' skip table: pattern b+ next c over b1 b2 b3 c (consecutive b's, so no loop
// partial outlives the c and holds matches back).
std::vector<std::string> skip_run(Skip skip) {
  Harness h(Pattern<Event>::begin("b", skip).where(named("b")).one_or_more().consecutive().next("c").where(named("c")));
  return h.feed(seq({ev(1, "b"), ev(2, "b"), ev(3, "b"), ev(4, "c")}));
}

TEST(NfaSkip, NoSkip) { EXPECT_EQ(skip_run(Skip::no_skip()), (Strings{"b:1 b:2 b:3 c:4", "b:2 b:3 c:4", "b:3 c:4"})); }
TEST(NfaSkip, SkipToNext) {
  EXPECT_EQ(skip_run(Skip::skip_to_next()), (Strings{"b:1 b:2 b:3 c:4", "b:2 b:3 c:4", "b:3 c:4"}));
}
TEST(NfaSkip, SkipPastLastEvent) { EXPECT_EQ(skip_run(Skip::skip_past_last_event()), (Strings{"b:1 b:2 b:3 c:4"})); }
TEST(NfaSkip, SkipToFirst) {
  EXPECT_EQ(skip_run(Skip::skip_to_first("b")), (Strings{"b:1 b:2 b:3 c:4", "b:2 b:3 c:4", "b:3 c:4"}));
}
TEST(NfaSkip, SkipToLast) { EXPECT_EQ(skip_run(Skip::skip_to_last("b")), (Strings{"b:1 b:2 b:3 c:4", "b:3 c:4"})); }

// a.times(3) over a1..a5 (AfterMatchSkipITCase.testNoSkip / testSkipPastLast shape).
std::vector<std::string> times_run(Skip skip) {
  Harness h(Pattern<Event>::begin("a", skip).where(named("a")).times(3));
  return h.feed(seq({ev(1, "a"), ev(2, "a"), ev(3, "a"), ev(4, "a"), ev(5, "a")}));
}
TEST(NfaSkip, TimesNoSkip) { EXPECT_EQ(times_run(Skip::no_skip()), (Strings{"a:1 a:2 a:3", "a:2 a:3 a:4", "a:3 a:4 a:5"})); }
TEST(NfaSkip, TimesSkipPastLast) { EXPECT_EQ(times_run(Skip::skip_past_last_event()), (Strings{"a:1 a:2 a:3"})); }
TEST(NfaSkip, TimesSkipToNext) {
  EXPECT_EQ(times_run(Skip::skip_to_next()), (Strings{"a:1 a:2 a:3", "a:2 a:3 a:4", "a:3 a:4 a:5"}));
}
TEST(NfaSkip, TimesSkipToLastOfAll) {
  // Skipping to the last "a" of a:1 a:2 a:3 drops the partial started at a:2 only.
  EXPECT_EQ(times_run(Skip::skip_to_last("a")), (Strings{"a:1 a:2 a:3", "a:3 a:4 a:5"}));
}

TEST(NfaSkip, SkipToNextWithOverlappingStarts) {
  // a b+ (relaxed): skip to next drops every other partial that started with a:1.
  Harness h(Pattern<Event>::begin("a", Skip::skip_to_next()).where(named("a"))
                .followed_by("b").where(named("b")).one_or_more());
  EXPECT_EQ(h.feed(seq({ev(1, "a"), ev(2, "a"), ev(3, "b"), ev(4, "b")})),
            (Strings{"a:1 b:3", "a:2 b:3"}));
}

TEST(NfaSkip, SkipPastLastHoldsMatchWhileAnEarlierPartialLives) {
  // x1 starts a partial (needs "y"); a2 b3 completes a later one. With a skip strategy
  // the later match waits until the earlier partial is resolved (here: completes).
  auto p = Pattern<Event>::begin("s", Skip::skip_past_last_event())
               .where([](const Event& e) { return e.name == "x" || e.name == "a"; })
               .followed_by("e").where([](const Event& e) { return e.name == "b" || e.name == "y"; });
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "x"), ev(2, "a")})), Strings{});
  EXPECT_EQ(h.feed({{ev(3, "b"), 3}}), (Strings{"s:1 e:3"}));  // x1 b3 first, it prunes a2 (start <= b3)
}

TEST(NfaSkip, SkipToFirstNamedStepAbsentPrunesNothingAndHoldsBack) {
  // The optional "opt" step's ignore branch keeps a partial started at a:1 alive after
  // a:1 b:3 completes; a:2 b:3 (no "opt" event: nothing pruned) waits for it, as in
  // Flink, and is emitted when that partial times out.
  auto p = Pattern<Event>::begin("a", Skip::skip_to_first("opt")).where(named("a"))
               .followed_by("opt").where(named("o")).optional().followed_by("b").where(named("b")).within(10);
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "a"), ev(2, "a"), ev(3, "b")})), (Strings{"a:1 b:3"}));
  EXPECT_EQ(h.advance(10), Strings{});
  EXPECT_EQ(h.advance(11), (Strings{"a:2 b:3"}));
  EXPECT_EQ(h.timeouts(), (std::vector<Timeout>{{"a:1", 11}}));
}

TEST(NfaSkip, SkipToFirstPrunesBeforeTheNamedEvent) {
  auto p = Pattern<Event>::begin("a", Skip::skip_to_first("b")).where(named("a"))
               .followed_by("b").where(named("b")).followed_by("c").where(named("c"));
  Harness h(p);
  // a1 a2 b3 a4 c5: a1 b3 c5 prunes partials started before b3 (a2), keeps a4.
  EXPECT_EQ(h.feed(seq({ev(1, "a"), ev(2, "a"), ev(3, "b"), ev(4, "a"), ev(5, "c"), ev(6, "b"), ev(7, "c")})),
            (Strings{"a:1 b:3 c:5", "a:4 b:6 c:7"}));
}

}  // namespace
}  // namespace clink::test
