#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/job_graph_spec.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/runtime/executor.hpp"

namespace clink::test {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

json word_count_spec() {
  return json::parse(R"({
    "name": "wc",
    "config": {"parallelism": 2, "max_parallelism": 64, "channel_capacity": 4, "chaining": true},
    "ops": [
      {"id": "gen", "type": "datagen", "parallelism": 1,
       "params": {"kind": "sequence", "type": "event", "start": 0, "end": 99, "key_count": 3,
                  "event_time_start_ms": 0, "event_time_step_ms": 10}},
      {"id": "assign", "type": "watermark_assigner", "params": {"out_of_orderness_ms": 0},
       "inputs": [{"from": "gen"}], "parallelism": 1},
      {"id": "count", "type": "count", "name": "Count per key", "uid": "count-v1",
       "inputs": [{"from": "assign", "partitioning": "hash", "key": "event.key"}]},
      {"id": "sink", "type": "blackhole", "inputs": [{"from": "count", "partitioning": "rebalance"}]}
    ]})");
}

TEST(JobGraphSpec, RoundTripsThroughTheRegistry) {
  JobGraph g = from_spec(word_count_spec(), builtin_registry());
  json once = to_spec(g);
  JobGraph again = from_spec(once, builtin_registry());
  EXPECT_EQ(to_spec(again), once);

  EXPECT_EQ(g.name, "wc");
  EXPECT_EQ(g.config.default_parallelism, 2);
  EXPECT_EQ(g.config.max_parallelism, 64);
  EXPECT_EQ(g.config.channel_capacity, 4u);
  const JobNode& count = g.node("count");
  EXPECT_EQ(count.name, "Count per key");
  EXPECT_EQ(count.uid, "count-v1");
  EXPECT_EQ(count.out_type, "word_count");
  EXPECT_EQ(g.node("gen").out_type, "event");
  auto in = g.inputs_of("count");
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0]->partitioning, Partitioning::kHash);
  EXPECT_EQ(in[0]->key, "event.key");
  EXPECT_EQ(once["ops"][2]["inputs"][0], json::parse(R"({"from":"assign","partitioning":"hash","key":"event.key"})"));
}

TEST(JobGraphSpec, ARestoredSpecRunsAndPlansTheSameChains) {
  JobGraph g = from_spec(word_count_spec(), builtin_registry());
  auto plan = plan_tasks(g);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].chain, (std::vector<std::string>{"gen", "assign"}));
  EXPECT_EQ(plan[1].chain, (std::vector<std::string>{"count"}));
  EXPECT_EQ(plan[2].chain, (std::vector<std::string>{"sink"}));
  auto handle = execute_async(from_spec(to_spec(g), builtin_registry()));
  handle.wait();
  EXPECT_EQ(handle.metrics().total("count").records_in, 100);
  EXPECT_EQ(handle.metrics().total("sink").records_in, 3);  // one final count per key
}

void expect_error(const json& spec, const std::string& fragment) {
  try {
    from_spec(spec, builtin_registry());
    FAIL() << "expected an error containing: " << fragment;
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), HasSubstr(fragment));
  }
}

TEST(JobGraphSpec, ErrorsNameTheOpAndTheProblem) {
  json s = word_count_spec();
  s["ops"][1]["type"] = "no_such_op";
  expect_error(s, "op 'assign': unknown operator type 'no_such_op'");

  s = word_count_spec();
  s["ops"][2]["inputs"][0]["from"] = "ghost";
  expect_error(s, "op 'count' input: no op with id 'ghost'");

  s = word_count_spec();
  s["ops"][2]["inputs"][0]["key"] = "string.self";
  expect_error(s, "key 'string.self' reads string records but 'assign' produces event");

  s = word_count_spec();
  s["ops"][2]["inputs"][0].erase("key");
  expect_error(s, "hash partitioning needs a 'key'");

  s = word_count_spec();
  s["ops"][2]["inputs"][0]["partitioning"] = "random";
  expect_error(s, "unknown partitioning 'random'");

  s = word_count_spec();
  s["ops"][3]["paralelism"] = 2;
  expect_error(s, "op 'sink': unknown field 'paralelism'");

  s = word_count_spec();
  s["ops"][0]["inputs"] = json::parse(R"([{"from": "sink"}])");
  expect_error(s, "cycle");

  s = word_count_spec();
  s["ops"][3].erase("inputs");
  expect_error(s, "op 'sink': input 0 is not connected");

  s = word_count_spec();
  s["ops"][2]["parallelism"] = 100;
  expect_error(s, "parallelism 100 exceeds max parallelism 64");

  s = word_count_spec();
  s["ops"].push_back(s["ops"][0]);
  expect_error(s, "duplicate op id 'gen'");
}

}  // namespace
}  // namespace clink::test
