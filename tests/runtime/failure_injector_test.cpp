// The failure injector's rules and probes on their own: the spec grammar and its errors,
// which operator subtasks a rule selects, where each trigger fires, how many times, and
// that a seeded random rule fires at the same places every time.
// (tests/checkpoint/failure_injection_test.cpp runs it inside jobs.)
#include "clink/runtime/failure_injector.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>

#include "clink/core/error.hpp"

namespace clink::test {
namespace {

using ::testing::HasSubstr;
using Trigger = FailureRule::Trigger;

std::string parse_error(const std::string& spec) {
  try {
    FailureRule::parse(spec);
  } catch (const ClinkError& e) {
    return e.what();
  }
  return "(no error)";
}

// Feeds `probe` batches of `size` records until it throws: the record count it failed
// at, nullopt if it never did within `limit` records.
std::optional<std::uint64_t> fails_at(FailureProbe& probe, std::size_t size, std::uint64_t limit) {
  std::uint64_t seen = 0;
  while (seen < limit) {
    seen += size;
    try {
      probe.on_batch(size);
    } catch (const ClinkError&) {
      return seen;
    }
  }
  return std::nullopt;
}

TEST(FailureRule, ParsesEachTriggerAndSelector) {
  auto r = FailureRule::parse("operator=Window*,subtask=1,after-records=5000");
  EXPECT_EQ(r.operator_glob, "Window*");
  EXPECT_EQ(r.subtask, 1);
  EXPECT_EQ(r.trigger, Trigger::kAfterRecords);
  EXPECT_EQ(r.threshold, 5000u);
  EXPECT_EQ(r.times, 1);

  r = FailureRule::parse("after-checkpoint=3,times=4");
  EXPECT_EQ(r.trigger, Trigger::kAfterCheckpoint);
  EXPECT_EQ(r.threshold, 3u);
  EXPECT_EQ(r.times, 4);
  EXPECT_EQ(r.subtask, -1);
  EXPECT_EQ(r.operator_glob, "");

  r = FailureRule::parse("during-checkpoint=2,times=unlimited");
  EXPECT_EQ(r.trigger, Trigger::kDuringCheckpoint);
  EXPECT_EQ(r.times, -1);

  r = FailureRule::parse("probability=0.001,seed=7");
  EXPECT_EQ(r.trigger, Trigger::kProbability);
  EXPECT_DOUBLE_EQ(r.probability, 0.001);
  EXPECT_EQ(r.seed, 7u);
  EXPECT_FALSE(r.per_batch);
  EXPECT_EQ(r.times, -1);  // random rules fire until stopped, unless limited

  r = FailureRule::parse("probability=0.5,per=batch,times=2");
  EXPECT_TRUE(r.per_batch);
  EXPECT_EQ(r.times, 2);
}

TEST(FailureRule, MalformedSpecsNameTheProblemAndItsPosition) {
  EXPECT_EQ(parse_error("operator=x,after-recs=5"),
            "failure spec 'operator=x,after-recs=5': unknown key 'after-recs' (keys: operator, subtask, "
            "after-records, after-checkpoint, during-checkpoint, probability, per, seed, times) at character 12");
  EXPECT_EQ(parse_error("after-records=5k"),
            "failure spec 'after-records=5k': after-records must be an integer >= 1, not '5k' at character 15");
  EXPECT_EQ(parse_error("after-records=0"),
            "failure spec 'after-records=0': after-records must be an integer >= 1, not '0' at character 15");
  EXPECT_EQ(parse_error("subtask=-1,checkpoint=2"),
            "failure spec 'subtask=-1,checkpoint=2': subtask must be an integer >= 0, not '-1' at character 9");
  EXPECT_EQ(parse_error("operator=x"),
            "failure spec 'operator=x': no trigger (give after-records, after-checkpoint, during-checkpoint or "
            "probability) at character 1");
  EXPECT_EQ(parse_error("after-records=5,after-checkpoint=1"),
            "failure spec 'after-records=5,after-checkpoint=1': a second trigger 'after-checkpoint' (one of "
            "after-records, after-checkpoint, during-checkpoint, probability per spec) at character 17");
  EXPECT_EQ(parse_error("probability=1.5"),
            "failure spec 'probability=1.5': probability must be a number in (0, 1], not '1.5' at character 13");
  EXPECT_EQ(parse_error("after-records=5,seed=3"),
            "failure spec 'after-records=5,seed=3': seed applies to probability only, not after-records at character 1");
  EXPECT_EQ(parse_error("after-records=5,,times=2"),
            "failure spec 'after-records=5,,times=2': expected key=value, got '' at character 17");
  EXPECT_EQ(parse_error("probability=0.1,per=row"),
            "failure spec 'probability=0.1,per=row': per must be record or batch, not 'row' at character 21");
  EXPECT_THAT(parse_error(""), HasSubstr("empty"));
}

TEST(FailureRule, SelectsByUidOrNameWithWildcardsAndBySubtask) {
  auto r = FailureRule::parse("operator=Window*,subtask=1,after-records=1");
  EXPECT_TRUE(r.selects("op-3", "WindowAggregate", 1));
  EXPECT_TRUE(r.selects("Window-uid", "Agg", 1));
  EXPECT_FALSE(r.selects("op-3", "WindowAggregate", 0));
  EXPECT_FALSE(r.selects("op-3", "GroupWindow", 1));
  auto q = FailureRule::parse("operator=?ink*x,after-records=1");
  EXPECT_TRUE(q.selects("sink-x", "", 0));
  EXPECT_TRUE(q.selects("Linkx", "", 5));
  EXPECT_FALSE(q.selects("ink-x", "", 0));
  EXPECT_TRUE(FailureRule::parse("after-records=1").selects("anything", "at all", 7));
}

TEST(FailureInjector, NoProbeWhereNoRuleSelects) {
  auto inj = FailureInjector::parse({"operator=checker,subtask=0,after-records=10"});
  EXPECT_EQ(inj->probe("numbers", "Numbers", 0), nullptr);
  EXPECT_EQ(inj->probe("checker", "Checker", 1), nullptr);
  EXPECT_NE(inj->probe("checker", "Checker", 0), nullptr);
  EXPECT_EQ(FailureInjector::parse({}), nullptr);
}

TEST(FailureInjector, AfterRecordsFailsOnTheBatchReachingTheCountOncePerAttemptUpToTimes) {
  auto inj = FailureInjector::parse({"operator=m,after-records=10,times=2"});
  auto first = inj->probe("m", "Map", 0);
  first->on_batch(4);
  first->on_batch(5);  // 9
  try {
    first->on_batch(3);  // 12: this batch reaches 10
    FAIL() << "no failure";
  } catch (const ClinkError& e) {
    EXPECT_STREQ(e.what(), "injected failure [operator=m,after-records=10,times=2]: 12 records into m#0");
  }
  // Each attempt counts its own records; the rule's failures count over all of them.
  auto second = inj->probe("m", "Map", 0);
  EXPECT_EQ(fails_at(*second, 1, 100), std::optional<std::uint64_t>(10));
  EXPECT_EQ(inj->probe("m", "Map", 0), nullptr) << "no failures left: no probe";
  EXPECT_EQ(inj->injected(), 2);
}

TEST(FailureInjector, CheckpointTriggersFireFromTheirNumberOnUntilTimesAreUsed) {
  auto inj = FailureInjector::parse({"after-checkpoint=3,times=2", "operator=s,during-checkpoint=5"});
  auto a = inj->probe("m", "Map", 0), b = inj->probe("m", "Map", 1), s = inj->probe("s", "Sink", 0);
  a->on_checkpoint_complete(2);
  a->on_snapshot(3);
  EXPECT_THROW(a->on_checkpoint_complete(3), ClinkError);
  EXPECT_THROW(b->on_checkpoint_complete(4), ClinkError);  // a later checkpoint counts too
  EXPECT_NO_THROW(a->on_checkpoint_complete(5));           // both used
  EXPECT_NO_THROW(s->on_checkpoint_complete(6));
  EXPECT_NO_THROW(s->on_snapshot(4));
  try {
    s->on_snapshot(5);
    FAIL() << "no failure";
  } catch (const ClinkError& e) {
    EXPECT_STREQ(e.what(), "injected failure [operator=s,during-checkpoint=5]: while snapshotting checkpoint 5 at s#0");
  }
  EXPECT_EQ(inj->injected(), 3);
}

TEST(FailureInjector, ASeededProbabilityFailsAtTheSamePlacesEveryTime) {
  auto places = [](const std::string& spec, std::size_t batch) {
    auto inj = FailureInjector::parse({spec});
    std::vector<std::uint64_t> at;
    for (int attempt = 0; attempt < 50; ++attempt) {
      auto probe = inj->probe("agg", "Agg", 2);
      at.push_back(fails_at(*probe, batch, 1'000'000).value_or(0));
    }
    return at;
  };
  const auto seven = places("probability=0.01,seed=7", 1);
  EXPECT_EQ(places("probability=0.01,seed=7", 1), seven);
  EXPECT_NE(places("probability=0.01,seed=8", 1), seven);
  // Geometric gaps with mean 1 / p: 50 draws average 100 within a few standard errors.
  double sum = 0;
  for (auto n : seven) {
    EXPECT_GE(n, 1u);
    sum += static_cast<double>(n);
  }
  EXPECT_GT(sum / 50, 60);
  EXPECT_LT(sum / 50, 140);
  // Per batch: counted in batches of 100 records, the mean is 1 / p batches.
  const auto batches = places("probability=0.1,per=batch,seed=7", 100);
  double b = 0;
  for (auto n : batches) {
    EXPECT_EQ(n % 100, 0u);
    b += static_cast<double>(n) / 100;
  }
  EXPECT_GT(b / 50, 6);
  EXPECT_LT(b / 50, 14);
  // Each subtask draws from a stream of its own.
  auto inj = FailureInjector::parse({"probability=0.01,seed=7"});
  auto p0 = inj->probe("agg", "Agg", 0), p1 = inj->probe("agg", "Agg", 1);
  EXPECT_NE(fails_at(*p0, 1, 1'000'000), fails_at(*p1, 1, 1'000'000));
}

TEST(FailureInjector, ACertainProbabilityFailsEveryRecordAndTimesLimitsIt) {
  auto inj = FailureInjector::parse({"probability=1,times=3"});
  for (int i = 0; i < 3; ++i) {
    auto p = inj->probe("x", "X", 0);
    EXPECT_EQ(fails_at(*p, 1, 10), std::optional<std::uint64_t>(1));
  }
  EXPECT_EQ(inj->probe("x", "X", 0), nullptr);
  EXPECT_EQ(inj->injected(), 3);
}

}  // namespace
}  // namespace clink::test
