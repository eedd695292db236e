// Matches found by one event and started by the same event are listed in the order the
// NFA produced them (for loops: longest first); Flink leaves that order unspecified.
//
// Quantifiers with each contiguity at the NFA level: one_or_more, times, times(from, to),
// times_or_more, optional, greedy, consecutive, allow_combinations, until, groups (cases
// from Flink's NFAITCase, GreedyITCase, TimesRangeITCase, TimesOrMoreITCase,
// UntilConditionITCase, GroupITCase and the CEP documentation).
#include <gtest/gtest.h>

#include "cep_test_support.hpp"

namespace clink::test {

using namespace clink::cep;

namespace {

using Strings = std::vector<std::string>;

// Flink docs (consecutive / allowCombinations): "C D A1 A2 A3 D A4 B".
std::vector<std::pair<Event, EventTime>> docs_input() {
  return seq({ev(1, "c"), ev(2, "d"), ev(3, "a"), ev(4, "a"), ev(5, "a"), ev(6, "d"), ev(7, "a"), ev(8, "b")});
}
Pattern<Event> c_a_plus_b() {
  return Pattern<Event>::begin("start").where(named("c")).followed_by("middle").where(named("a")).one_or_more();
}

TEST(NfaQuantifier, OneOrMoreRelaxedInner) {
  Harness h(c_a_plus_b().followed_by("end").where(named("b")));
  EXPECT_EQ(h.feed(docs_input()),
            (Strings{"start:1 middle:3 middle:4 middle:5 middle:7 end:8", "start:1 middle:3 middle:4 middle:5 end:8",
                     "start:1 middle:3 middle:4 end:8", "start:1 middle:3 end:8"}));
}

TEST(NfaQuantifier, OneOrMoreConsecutive) {
  Harness h(c_a_plus_b().consecutive().followed_by("end").where(named("b")));
  EXPECT_EQ(h.feed(docs_input()), (Strings{"start:1 middle:3 middle:4 middle:5 end:8", "start:1 middle:3 middle:4 end:8",
                                           "start:1 middle:3 end:8"}));
}

TEST(NfaQuantifier, OneOrMoreAllowCombinations) {
  Harness h(c_a_plus_b().allow_combinations().followed_by("end").where(named("b")));
  auto out = h.feed(docs_input());
  EXPECT_EQ(sorted_copy(out),
            sorted_copy(Strings{"start:1 middle:3 end:8", "start:1 middle:3 middle:4 end:8",
                                       "start:1 middle:3 middle:5 end:8", "start:1 middle:3 middle:7 end:8",
                                       "start:1 middle:3 middle:4 middle:5 end:8", "start:1 middle:3 middle:4 middle:7 end:8",
                                       "start:1 middle:3 middle:5 middle:7 end:8",
                                       "start:1 middle:3 middle:4 middle:5 middle:7 end:8"}));
  EXPECT_EQ(out.size(), 8u);
}

// b+ then strict c: the docs' skip-strategy example (no skip: every suffix).
TEST(NfaQuantifier, LoopThenStrictNext) {
  Harness h(Pattern<Event>::begin("b").where(named("b")).one_or_more().next("c").where(named("c")));
  EXPECT_EQ(h.feed(seq({ev(1, "b"), ev(2, "b"), ev(3, "b"), ev(4, "c")})),
            (Strings{"b:1 b:2 b:3 c:4", "b:2 b:3 c:4", "b:3 c:4"}));
}

TEST(NfaQuantifier, GreedyZeroOrMoreTakesAll) {
  // GreedyITCase.testGreedyZeroOrMore.
  auto p = Pattern<Event>::begin("start").where(named("c"))
               .followed_by("middle").where(named("a")).one_or_more().optional().greedy()
               .followed_by("end").where(named("d"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(40, "c"), ev(41, "a"), ev(42, "a"), ev(43, "a"), ev(44, "d")})),
            (Strings{"start:40 middle:41 middle:42 middle:43 end:44"}));
}

TEST(NfaQuantifier, NonGreedyZeroOrMoreYieldsEveryLength) {
  auto p = Pattern<Event>::begin("start").where(named("c"))
               .followed_by("middle").where(named("a")).one_or_more().optional()
               .followed_by("end").where(named("d"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(40, "c"), ev(41, "a"), ev(42, "a"), ev(43, "d")})),
            (Strings{"start:40 middle:41 middle:42 end:43", "start:40 middle:41 end:43", "start:40 end:43"}));
}

TEST(NfaQuantifier, GreedyLoopStarvesAnOverlappingEnd) {
  // Flink's compiler ANDs the following state's conditions with NOT(loop condition)
  // for a greedy loop: an event the loop accepts can never end it, so here the "d"s
  // are always taken by the loop and no match completes.
  auto p = Pattern<Event>::begin("start").where(named("c"))
               .followed_by("middle").where([](const Event& e) { return e.name == "a" || e.name == "d"; })
               .one_or_more().greedy()
               .followed_by("end").where(named("d"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "c"), ev(2, "a"), ev(3, "d"), ev(4, "d")})), Strings{});
}

TEST(NfaQuantifier, TimesRelaxed) {
  auto p = Pattern<Event>::begin("start").where(named("c")).followed_by("middle").where(named("a")).times(2)
               .followed_by("end").where(named("b"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "c"), ev(2, "a"), ev(3, "x"), ev(4, "a"), ev(5, "a"), ev(6, "b")})),
            (Strings{"start:1 middle:2 middle:4 end:6"}));
}

TEST(NfaQuantifier, TimesStrictFailsOnGap) {
  auto p = Pattern<Event>::begin("start").where(named("c")).followed_by("middle").where(named("a")).times(2)
               .consecutive().followed_by("end").where(named("b"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "c"), ev(2, "a"), ev(3, "x"), ev(4, "a"), ev(5, "a"), ev(6, "b")})), Strings{});
}

TEST(NfaQuantifier, TimesWithFollowedByAny) {
  auto p = Pattern<Event>::begin("start").where(named("c")).followed_by_any("middle").where(named("a")).times(2)
               .followed_by("end").where(named("b"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "c"), ev(2, "a"), ev(3, "a"), ev(4, "a"), ev(5, "b")})),
            (Strings{"start:1 middle:2 middle:3 end:5", "start:1 middle:3 middle:4 end:5"}));
}

TEST(NfaQuantifier, TimesRange) {
  auto p = Pattern<Event>::begin("start").where(named("c")).followed_by("middle").where(named("a")).times(1, 3)
               .followed_by("end").where(named("b"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "c"), ev(2, "a"), ev(3, "a"), ev(4, "a"), ev(5, "a"), ev(6, "b")})),
            (Strings{"start:1 middle:2 middle:3 middle:4 end:6", "start:1 middle:2 middle:3 end:6", "start:1 middle:2 end:6"}));
}

TEST(NfaQuantifier, TimesRangeFromZeroIsOptional) {
  auto p = Pattern<Event>::begin("start").where(named("c")).next("middle").where(named("a")).times(0, 2)
               .next("end").where(named("b"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "c"), ev(2, "b"), ev(3, "c"), ev(4, "a"), ev(5, "a"), ev(6, "b")})),
            (Strings{"start:1 end:2", "start:3 middle:4 middle:5 end:6"}));
}

TEST(NfaQuantifier, TimesRangeGreedy) {
  auto p = Pattern<Event>::begin("start").where(named("c")).next("middle").where(named("a")).times(1, 3).greedy()
               .followed_by("end").where(named("b"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "c"), ev(2, "a"), ev(3, "a"), ev(4, "b")})),
            (Strings{"start:1 middle:2 middle:3 end:4"}));
}

TEST(NfaQuantifier, TimesOrMore) {
  auto p = Pattern<Event>::begin("start").where(named("c")).followed_by("middle").where(named("a")).times_or_more(2)
               .followed_by("end").where(named("b"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "c"), ev(2, "a"), ev(3, "d"), ev(4, "a"), ev(5, "a"), ev(6, "b")})),
            (Strings{"start:1 middle:2 middle:4 middle:5 end:6", "start:1 middle:2 middle:4 end:6"}));
}

TEST(NfaQuantifier, TimesOrMoreConsecutive) {
  auto p = Pattern<Event>::begin("start").where(named("c")).followed_by("middle").where(named("a")).times_or_more(2)
               .consecutive().followed_by("end").where(named("b"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "c"), ev(2, "a"), ev(3, "d"), ev(4, "a"), ev(5, "a"), ev(6, "b")})), Strings{});
}

TEST(NfaQuantifier, OptionalRelaxedGivesBothPaths) {
  auto p = Pattern<Event>::begin("a").where(named("a")).followed_by("b").where(named("b")).optional()
               .followed_by("c").where(named("c"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "a"), ev(2, "b"), ev(3, "c")})), (Strings{"a:1 b:2 c:3", "a:1 c:3"}));
}

TEST(NfaQuantifier, OptionalStrict) {
  auto p = Pattern<Event>::begin("a").where(named("a")).next("b").where(named("b")).optional()
               .next("c").where(named("c"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "a"), ev(2, "c"), ev(3, "a"), ev(4, "b"), ev(5, "c"), ev(6, "a"), ev(7, "x"), ev(8, "c")})),
            (Strings{"a:1 c:2", "a:3 b:4 c:5"}));
}

TEST(NfaQuantifier, OptionalAtTheEndCompletesImmediately) {
  auto p = Pattern<Event>::begin("a").where(named("a")).followed_by("b").where(named("b")).optional();
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "a"), ev(2, "b")})), (Strings{"a:1", "a:1 b:2"}));
}

TEST(NfaQuantifier, UntilStopsTheLoop) {
  auto p = Pattern<Event>::begin("start").where(named("c"))
               .followed_by("middle").where(named("a")).one_or_more().until([](const Event& e) { return e.price > 3.0; })
               .followed_by("end").where(named("b"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "c"), ev(2, "a", 1.0), ev(3, "a", 2.0), ev(4, "a", 5.0), ev(5, "a", 1.0), ev(6, "b")})),
            (Strings{"start:1 middle:2 middle:3 end:6", "start:1 middle:2 end:6"}));
}

TEST(NfaQuantifier, UntilWithConsecutive) {
  auto p = Pattern<Event>::begin("start").where(named("c"))
               .followed_by("middle").where(named("a")).one_or_more().consecutive()
               .until([](const Event& e) { return e.name == "x"; })
               .followed_by("end").where(named("b"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "c"), ev(2, "a"), ev(3, "a"), ev(4, "x"), ev(5, "a"), ev(6, "b")})),
            (Strings{"start:1 middle:2 middle:3 end:6", "start:1 middle:2 end:6"}));
}

TEST(NfaQuantifier, UntilGreedyOneOrMore) {
  auto p = Pattern<Event>::begin("start").where(named("c"))
               .followed_by("middle").where(named("a")).one_or_more().greedy()
               .until([](const Event& e) { return e.price > 3.0; })
               .followed_by("end").where(named("b"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "c"), ev(2, "a", 1.0), ev(3, "a", 2.0), ev(4, "a", 5.0), ev(5, "b")})),
            (Strings{"start:1 middle:2 middle:3 end:5"}));
}

TEST(NfaQuantifier, GroupTimes) {
  auto group = Pattern<Event>::begin("m1").where(named("a")).followed_by("m2").where(named("b"));
  auto p = Pattern<Event>::begin("start").where(named("c")).followed_by(group).times(2)
               .followed_by("end").where(named("d"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "c"), ev(2, "a"), ev(3, "b"), ev(4, "a"), ev(5, "b"), ev(6, "d")})),
            (Strings{"start:1 m1:2 m2:3 m1:4 m2:5 end:6"}));
}

TEST(NfaQuantifier, GroupOneOrMore) {
  auto group = Pattern<Event>::begin("m1").where(named("a")).next("m2").where(named("b"));
  auto p = Pattern<Event>::begin("start").where(named("c")).followed_by(group).one_or_more()
               .followed_by("end").where(named("d"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "c"), ev(2, "a"), ev(3, "b"), ev(4, "a"), ev(5, "b"), ev(6, "d")})),
            (Strings{"start:1 m1:2 m2:3 m1:4 m2:5 end:6", "start:1 m1:2 m2:3 end:6"}));
}

TEST(NfaQuantifier, GroupOptional) {
  auto group = Pattern<Event>::begin("m1").where(named("a")).next("m2").where(named("b"));
  auto p = Pattern<Event>::begin("start").where(named("c")).next(group).optional().next("end").where(named("d"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "c"), ev(2, "d"), ev(3, "c"), ev(4, "a"), ev(5, "b"), ev(6, "d")})),
            (Strings{"start:1 end:2", "start:3 m1:4 m2:5 end:6"}));
}

TEST(NfaQuantifier, BeginWithGroup) {
  auto group = Pattern<Event>::begin("x").where(named("a")).next("y").where(named("b"));
  auto p = Pattern<Event>::begin(group).times(2).consecutive().next("end").where(named("c"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "a"), ev(2, "b"), ev(3, "a"), ev(4, "b"), ev(5, "c")})),
            (Strings{"x:1 y:2 x:3 y:4 end:5"}));
}

}  // namespace
}  // namespace clink::test
