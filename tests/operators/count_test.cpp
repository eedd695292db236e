#include <algorithm>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "clink/operators/builtin_streams.hpp"
#include "test_support.hpp"

namespace clink::test {
namespace {

std::vector<std::string> words() { return {"b", "a", "c", "a", "b", "a", "dd", "c"}; }

TEST(Count, FinalEmitsOnePerKeySortedAtEndOfInput) {
  StreamExecutionEnvironment env;
  auto out = collect(count(env.from_collection(words())));
  env.execute();
  EXPECT_EQ(out->strings(), (std::vector<std::string>{"(a,3)", "(b,2)", "(c,2)", "(dd,1)"}));
}

TEST(Count, EveryEmitsTheRunningCountPerRecord) {
  StreamExecutionEnvironment env;
  auto out = collect(count(env.from_collection(words()), CountEmit::kEvery));
  env.execute();
  EXPECT_EQ(out->strings(), (std::vector<std::string>{"(b,1)", "(a,1)", "(c,1)", "(a,2)", "(b,2)", "(a,3)",
                                                      "(dd,1)", "(c,2)"}));
}

TEST(Count, EveryKeepsTheRecordsEventTime) {
  StreamExecutionEnvironment env;
  auto src = env.from_source<std::string>(CollectionSource<std::string>::with_timestamps({{"x", 10}, {"x", 20}}));
  auto out = collect(count(src, CountEmit::kEvery));
  env.execute();
  ASSERT_EQ(out->entries.size(), 2u);
  EXPECT_EQ(out->entries[0].event_time, 10);
  EXPECT_EQ(out->entries[1].event_time, 20);
}

TEST(Count, ParallelFinalCountsEachKeyOnceSortedPerSubtask) {
  std::vector<std::string> in;
  for (int i = 0; i < 200; ++i)
    for (int k = 0; k <= i % 10; ++k) in.push_back("w" + std::to_string(i % 10));
  StreamExecutionEnvironment env;
  auto counted = count(env.from_collection(in));
  counted.set_parallelism(2);
  auto out = collect(counted);
  env.execute();

  std::vector<std::string> all = out->strings();
  std::sort(all.begin(), all.end());
  std::vector<std::string> expected;
  for (int w = 0; w < 10; ++w) expected.push_back("(w" + std::to_string(w) + "," + std::to_string(20 * (w + 1)) + ")");
  EXPECT_EQ(all, expected);
  int nonempty = 0;
  for (int s = 0; s < 2; ++s) {
    auto v = out->values_of(s);
    EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
    nonempty += v.empty() ? 0 : 1;
  }
  EXPECT_EQ(nonempty, 2) << "10 keys over 2 subtasks should use both";
}

TEST(Count, CountsEventsByKey) {
  StreamExecutionEnvironment env;
  auto out = collect(count(env.from_collection(std::vector<Event>{{"k1", 5}, {"k2", 6}, {"k1", 7}})));
  env.execute();
  EXPECT_EQ(out->strings(), (std::vector<std::string>{"(k1,2)", "(k2,1)"}));
}

TEST(Count, EmptyInputEmitsNothing) {
  StreamExecutionEnvironment env;
  auto out = collect(count(env.from_collection(std::vector<std::string>{})));
  env.execute();
  EXPECT_TRUE(out->values().empty());
}

TEST(Count, RecordsItsFactoryAndParamsForSpecs) {
  StreamExecutionEnvironment env;
  auto c = count(env.from_collection(words()), CountEmit::kEvery);
  EXPECT_EQ(c.node().factory, "count");
  EXPECT_EQ(c.node().params, (nlohmann::json{{"emit", "every"}}));
  EXPECT_EQ(c.node().out_type, "word_count");
  auto ins = env.graph().inputs_of(c.id());
  ASSERT_EQ(ins.size(), 1u);
  EXPECT_EQ(ins[0]->partitioning, Partitioning::kHash);
  EXPECT_EQ(ins[0]->key, "string.self");
}

}  // namespace
}  // namespace clink::test
