// Malformed patterns are rejected with messages naming the step (Flink's
// MalformedPatternException cases and the seed's list: empty, misplaced begin,
// quantifier on a negative step, trailing not_followed_by without within, duplicate
// names), at the builder call where Flink rejects there, else by validate().
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cep_test_support.hpp"

namespace clink::test {

using namespace clink::cep;

namespace {

using ::testing::HasSubstr;
using P = Pattern<Event>;

void expect_error(const std::function<void()>& f, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << "expected an error containing: " << what;
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), HasSubstr(what));
  }
}

TEST(PatternValidate, EmptyPattern) {
  expect_error([] { P::from_steps({}).validate(); }, "cep pattern is empty");
}

TEST(PatternValidate, MisplacedBegin) {
  std::vector<PatternStep<Event>> steps(1);
  steps[0].name = "x";
  steps[0].quantifier.consuming = ConsumingStrategy::kNotNext;
  expect_error([&] { P::from_steps(steps).validate(); }, "step #1 'x': a pattern cannot begin with not_next");
}

TEST(PatternValidate, QuantifierOnNegativeStep) {
  expect_error([] { (void)P::begin("a").not_followed_by("b").one_or_more(); },
               "step #2 'b': a quantifier cannot be applied to a NOT pattern");
  expect_error([] { (void)P::begin("a").not_next("b").optional(); }, "step #2 'b': a NOT pattern");
  // The same through validate() (a pattern assembled from steps, as SQL does).
  std::vector<PatternStep<Event>> steps(2);
  steps[0].name = "a";
  steps[1].name = "b";
  steps[1].quantifier.consuming = ConsumingStrategy::kNotNext;
  steps[1].quantifier.kind = Quantifier::Kind::kTimes;
  steps[1].times = {2, 2};
  expect_error([&] { P::from_steps(steps).validate(); }, "step #2 'b': a quantifier (times");
}

TEST(PatternValidate, TrailingNotFollowedByNeedsWithin) {
  expect_error([] { P::begin("a").not_followed_by("b").validate(); },
               "step #2 'b': a trailing not_followed_by needs within(...)");
  EXPECT_NO_THROW(P::begin("a").not_followed_by("b").within(10).validate());
}

TEST(PatternValidate, DuplicateNames) {
  expect_error([] { P::begin("a").followed_by("b").next("a").validate(); },
               "step #3 'a': duplicate pattern name 'a'");
  auto group = P::begin("a").next("c");
  expect_error([&] { P::begin("a").followed_by(group).validate(); }, "duplicate pattern name 'a'");
}

TEST(PatternValidate, ReservedNames) {
  expect_error([] { P::begin("$endState$").validate(); }, "reserved");
  expect_error([] { P::begin("a:1").validate(); }, "cannot contain ':'");
}

TEST(PatternValidate, QuantifierTwice) {
  expect_error([] { (void)P::begin("a").one_or_more().times(2); }, "step #1 'a': a quantifier was already applied");
}

TEST(PatternValidate, GreedyOnSingleAndOnAny) {
  expect_error([] { (void)P::begin("a").greedy(); }, "greedy() is not applicable to a single");
  expect_error([] { (void)P::begin("a").followed_by_any("b").one_or_more().greedy(); }, "followed_by_any");
}

TEST(PatternValidate, ConsecutiveAndCombinations) {
  expect_error([] { (void)P::begin("a").consecutive(); }, "consecutive() applies only to a looping or times");
  expect_error([] { (void)P::begin("a").one_or_more().consecutive().allow_combinations(); }, "not both");
  expect_error([] { (void)P::begin("a").allow_combinations(); }, "allow_combinations() applies only");
}

TEST(PatternValidate, UntilOnlyOnLooping) {
  expect_error([] { (void)P::begin("a").times(2).until(named("x")); }, "until() applies only to looping steps");
  expect_error([] { (void)P::begin("a").one_or_more().until(named("x")).until(named("y")); }, "only one until()");
}

TEST(PatternValidate, BadTimes) {
  expect_error([] { (void)P::begin("a").times(0); }, "times(n) needs n > 0");
  expect_error([] { (void)P::begin("a").times(3, 2); }, "times(from, to) needs 0 <= from <= to");
  expect_error([] { (void)P::begin("a").within(0); }, "within() needs a positive duration");
}

TEST(PatternValidate, OptionalThenNotIsRejected) {
  expect_error([] { (void)P::begin("a").followed_by("b").optional().not_followed_by("c"); },
               "step #2 'b': an optional step cannot be followed by not_followed_by");
}

TEST(PatternValidate, OptionalAfterGreedy) {
  expect_error([] { (void)P::begin("a").one_or_more().greedy().followed_by("b").optional(); },
               "an optional step cannot follow a greedy one");
}

TEST(PatternValidate, SkipStrategyMustNameAStep) {
  expect_error([] { P::begin("a", AfterMatchSkipStrategy::skip_to_last("zz")).next("b").validate(); },
               "SKIP_TO_LAST(zz) names 'zz', which is not a step");
}

TEST(PatternValidate, GroupPatternsTakeNoConditions) {
  auto group = P::begin("x").next("y");
  expect_error([&] { (void)P::begin("a").next(group).where(named("q")); }, "a group pattern does not support where()");
  expect_error([&] { (void)P::begin("a").next(group).one_or_more().greedy(); }, "does not support greedy()");
}

TEST(PatternValidate, CompilerValidates) {
  expect_error([] { Nfa<Event> nfa(P::begin("a").next("a")); }, "duplicate pattern name 'a'");
}

}  // namespace
}  // namespace clink::test
