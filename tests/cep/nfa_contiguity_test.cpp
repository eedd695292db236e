// Contiguity (strict / relaxed / non-deterministic relaxed) at the NFA level; cases from
// Flink's NFAITCase and the contiguity tables of Flink's CEP documentation.
#include <gtest/gtest.h>

#include "cep_test_support.hpp"

namespace clink::test {

using namespace clink::cep;

namespace {

using Strings = std::vector<std::string>;

TEST(NfaContiguity, FollowedByAnyYieldsEveryPair) {
  auto p = Pattern<Event>::begin("start").followed_by_any("end");
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(40, "a"), ev(41, "b"), ev(42, "c"), ev(43, "d"), ev(44, "e")})),
            (Strings{"start:40 end:41", "start:40 end:42", "start:41 end:42", "start:40 end:43", "start:41 end:43",
                     "start:42 end:43", "start:40 end:44", "start:41 end:44", "start:42 end:44", "start:43 end:44"}));
}

TEST(NfaContiguity, SimplePatternWithSubtype) {
  // NFAITCase.testSimplePatternNFA: a middle "SubEvent" with volume > 5.
  auto p = Pattern<Event>::begin("start").where(named("start"))
               .followed_by("middle").where([](const Event& e) { return e.volume > 5.0; })
               .followed_by("end").where(named("end"));
  Harness h(p);
  EXPECT_EQ(h.feed({{ev(41, "start"), 1}, {ev(43, "foobar"), 2}, {ev(41, "barfoo", 1, 5.0), 3},
                    {ev(42, "foo", 1, 10.0), 3}, {ev(43, "start"), 4}, {ev(43, "end"), 5}}),
            (Strings{"start:41 middle:42 end:43"}));
}

TEST(NfaContiguity, StrictWithResults) {
  auto p = Pattern<Event>::begin("middle").where(named("a")).next("end").where(named("b"));
  Harness h(p);
  EXPECT_EQ(h.feed({{ev(41, "a"), 3}, {ev(42, "b"), 5}}), (Strings{"middle:41 end:42"}));
}

TEST(NfaContiguity, StrictNoResults) {
  auto p = Pattern<Event>::begin("middle").where(named("a")).next("end").where(named("b"));
  Harness h(p);
  EXPECT_EQ(h.feed({{ev(41, "a"), 3}, {ev(42, "c"), 4}, {ev(43, "b"), 5}}), Strings{});
}

// Flink docs: pattern "a b", input "a c b1 b2".
TEST(NfaContiguity, DocsTableStrict) {
  Harness h(Pattern<Event>::begin("a").where(named("a")).next("b").where(named("b")));
  EXPECT_EQ(h.feed(seq({ev(1, "a"), ev(2, "c"), ev(3, "b"), ev(4, "b")})), Strings{});
}
TEST(NfaContiguity, DocsTableRelaxed) {
  Harness h(Pattern<Event>::begin("a").where(named("a")).followed_by("b").where(named("b")));
  EXPECT_EQ(h.feed(seq({ev(1, "a"), ev(2, "c"), ev(3, "b"), ev(4, "b")})), (Strings{"a:1 b:3"}));
}
TEST(NfaContiguity, DocsTableNonDeterministic) {
  Harness h(Pattern<Event>::begin("a").where(named("a")).followed_by_any("b").where(named("b")));
  EXPECT_EQ(h.feed(seq({ev(1, "a"), ev(2, "c"), ev(3, "b"), ev(4, "b")})), (Strings{"a:1 b:3", "a:1 b:4"}));
}

TEST(NfaContiguity, BranchingPattern) {
  // NFAITCase.testBranchingPattern.
  auto sub = [](const Event& e) { return e.volume > 0; };
  auto p = Pattern<Event>::begin("start").where(named("start"))
               .followed_by_any("middle-first").where(sub).where([](const Event& e) { return e.volume > 5.0; })
               .followed_by_any("middle-second").where(sub).where(named("next-one"))
               .followed_by_any("end").where(named("end"));
  Harness h(p);
  auto out = h.feed({{ev(40, "start"), 1}, {ev(41, "foo1", 1, 10), 3}, {ev(42, "foo2", 1, 10), 4},
                     {ev(43, "foo3", 1, 10), 5}, {ev(44, "next-one", 1, 2), 6}, {ev(45, "next-one", 1, 2), 7},
                     {ev(46, "end"), 8}});
  EXPECT_EQ(out, (Strings{"start:40 middle-first:41 middle-second:44 end:46",
                          "start:40 middle-first:41 middle-second:45 end:46",
                          "start:40 middle-first:42 middle-second:44 end:46",
                          "start:40 middle-first:42 middle-second:45 end:46",
                          "start:40 middle-first:43 middle-second:44 end:46",
                          "start:40 middle-first:43 middle-second:45 end:46"}));
}

TEST(NfaContiguity, StrictThenRelaxedMixed) {
  // a next b followed_by c: "a b x c" matches, "a x b c" does not.
  auto p = Pattern<Event>::begin("a").where(named("a")).next("b").where(named("b")).followed_by("c").where(named("c"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "a"), ev(2, "b"), ev(3, "x"), ev(4, "c"), ev(5, "a"), ev(6, "x"), ev(7, "b"),
                        ev(8, "c")})),
            (Strings{"a:1 b:2 c:4"}));
}

TEST(NfaContiguity, RelaxedTakesFirstMatchingEventOnly) {
  auto p = Pattern<Event>::begin("a").where(named("a")).followed_by("b").where(named("b")).followed_by("c").where(named("c"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "a"), ev(2, "b"), ev(3, "b"), ev(4, "c"), ev(5, "c")})), (Strings{"a:1 b:2 c:4"}));
}

TEST(NfaContiguity, OverlappingStartsEachMatch) {
  auto p = Pattern<Event>::begin("a").where(named("a")).followed_by("b").where(named("b"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "a"), ev(2, "a"), ev(3, "b")})), (Strings{"a:1 b:3", "a:2 b:3"}));
}

TEST(NfaContiguity, IterativeConditionSeesMatchSoFar) {
  // IterativeConditionsITCase shape: end's price is above the sum of the middle prices.
  auto p = Pattern<Event>::begin("start").where(named("start"))
               .followed_by("middle").where(named("m")).one_or_more()
               .followed_by("end").where([](const Event& e, const MatchContext<Event>& ctx) {
                 double sum = 0;
                 for (const Event* m : ctx.events("middle")) sum += m->price;
                 return e.name == "end" && e.price > sum;
               });
  Harness h(p);
  auto out = h.feed(seq({ev(1, "start"), ev(2, "m", 2.0), ev(3, "m", 3.0), ev(4, "end", 4.0), ev(5, "end", 6.0)}));
  // m2 cannot be skipped (relaxed), so every match starts middle at 2; end:4 (4 > 2) closes
  // [2], end:5 (6 > 5) closes [2 3]; [2] was already closed by end:4.
  EXPECT_EQ(out, (Strings{"start:1 middle:2 end:4", "start:1 middle:2 middle:3 end:5"}));
}

TEST(NfaContiguity, OrConditions) {
  auto p = Pattern<Event>::begin("x").where(named("a")).or_where(named("b")).next("y").where(named("c"));
  Harness h(p);
  EXPECT_EQ(h.feed(seq({ev(1, "a"), ev(2, "c"), ev(3, "b"), ev(4, "c"), ev(5, "d"), ev(6, "c")})),
            (Strings{"x:1 y:2", "x:3 y:4"}));
}

}  // namespace
}  // namespace clink::test
