#include <gtest/gtest.h>

#include "clink/operators/builtin_streams.hpp"
#include "test_support.hpp"

namespace clink::test {
namespace {

std::vector<std::string> tokens_of(const std::string& line) {
  Batch<std::string> out;
  Collector<std::string> c(&out);
  Tokenizer{}(line, c);
  std::vector<std::string> v;
  for (auto& r : out.records) v.push_back(r.value);
  return v;
}

TEST(Tokenize, LowerCasesAndSplitsOnNonAlphanumerics) {
  EXPECT_EQ(tokens_of("Hello, World! It's 42nd-street"),
            (std::vector<std::string>{"hello", "world", "it", "s", "42nd", "street"}));
  EXPECT_EQ(tokens_of("  To be,  or NOT to be:  "),
            (std::vector<std::string>{"to", "be", "or", "not", "to", "be"}));
}

TEST(Tokenize, DropsEmptyTokens) {
  EXPECT_TRUE(tokens_of("").empty());
  EXPECT_TRUE(tokens_of(" -- ,,, !? ").empty());
  EXPECT_EQ(tokens_of("a"), std::vector<std::string>{"a"});
  EXPECT_EQ(tokens_of("under_score\ttab"), (std::vector<std::string>{"under", "score", "tab"}));
}

TEST(Tokenize, RunsThroughTheExecutorInOrderAndKeepsEventTime) {
  StreamExecutionEnvironment env;
  auto src = env.from_source<std::string>(
      CollectionSource<std::string>::with_timestamps({{"The quick brown", 5}, {"", 6}, {"FOX, the end.", 7}}));
  auto out = collect(tokenize(src));
  env.execute();
  EXPECT_EQ(out->values(), (std::vector<std::string>{"the", "quick", "brown", "fox", "the", "end"}));
  std::vector<EventTime> ts;
  for (auto& e : out->entries) ts.push_back(e.event_time);
  EXPECT_EQ(ts, (std::vector<EventTime>{5, 5, 5, 7, 7, 7}));
}

TEST(Tokenize, SplitsLargeInputsIntoBatches) {
  std::vector<std::string> lines(3000, "a b");
  StreamExecutionEnvironment env;
  auto out = collect(tokenize(env.from_collection(lines)));
  env.execute();
  EXPECT_EQ(out->values().size(), 6000u);
}

}  // namespace
}  // namespace clink::test
