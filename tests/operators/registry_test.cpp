// The built-in operators through the OperatorRegistry and JobGraphSpec: param
// validation, key selectors and whole specs run through the executor.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/operators/builtin_streams.hpp"
#include "clink/operators/register_operators.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "clink/runtime/operator_registry.hpp"
#include "test_support.hpp"

namespace clink::test {
namespace {

using nlohmann::json;

// The built-in operators plus a test source of events ("test_events", params
// {"events": [[key, value, ts], ...]}) and lines ("test_lines"), and sinks collecting
// into the given objects.
struct TestRegistry {
  OperatorRegistry registry;
  std::shared_ptr<Collected<WordCount>> word_counts = std::make_shared<Collected<WordCount>>();
  std::shared_ptr<Collected<WindowCount>> window_counts = std::make_shared<Collected<WindowCount>>();

  TestRegistry() {
    register_builtin_operators(registry);
    registry.add(OperatorFactoryInfo{
        .name = "test_lines",
        .num_inputs = 0,
        .out_type = [](const OperatorSpecContext&) { return std::string("string"); },
        .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
          auto src = CollectionSource<std::string>::of(ctx.params->at("lines").get<std::vector<std::string>>());
          return [src] { return std::make_unique<ReaderSourceOperator<std::string>>(src); };
        }});
    registry.add(OperatorFactoryInfo{
        .name = "test_events",
        .num_inputs = 0,
        .out_type = [](const OperatorSpecContext&) { return std::string("event"); },
        .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
          std::vector<std::pair<Event, EventTime>> v;
          for (const auto& e : ctx.params->at("events"))
            v.push_back({Event{e[0].get<std::string>(), e[1].get<std::int64_t>()}, e[2].get<EventTime>()});
          auto src = CollectionSource<Event>::with_timestamps(v);
          return [src] { return std::make_unique<ReaderSourceOperator<Event>>(src); };
        }});
    auto wc = word_counts;
    registry.add(OperatorFactoryInfo{
        .name = "collect_word_counts",
        .out_type = [](const OperatorSpecContext&) { return std::string("word_count"); },
        .make = [wc](const OperatorSpecContext&) -> OperatorBuilder {
          return [wc] { return std::make_unique<SinkOperator<WordCount>>(std::make_shared<CollectSink<WordCount>>(wc)); };
        }});
    auto win = window_counts;
    registry.add(OperatorFactoryInfo{
        .name = "collect_window_counts",
        .out_type = [](const OperatorSpecContext&) { return std::string("window_count"); },
        .make = [win](const OperatorSpecContext&) -> OperatorBuilder {
          return [win] {
            return std::make_unique<SinkOperator<WindowCount>>(std::make_shared<CollectSink<WindowCount>>(win));
          };
        }});
  }
};

json word_count_spec(json count_params = json::object()) {
  return json::parse(R"({
    "name": "wc",
    "ops": [
      {"id": "src", "type": "test_lines", "params": {"lines": ["The cat", "the DOG, the end"]}},
      {"id": "tok", "type": "tokenize", "inputs": [{"from": "src"}]},
      {"id": "cnt", "type": "count", "parallelism": 2,
       "inputs": [{"from": "tok", "partitioning": "hash", "key": "string.self"}]},
      {"id": "out", "type": "collect_word_counts", "parallelism": 2, "inputs": [{"from": "cnt"}]}
    ]})")
      .patch(json::array({{{"op", "add"}, {"path", "/ops/2/params"}, {"value", count_params}}}));
}

std::string spec_error(const json& spec, const OperatorRegistry& r) {
  try {
    from_spec(spec, r);
  } catch (const ClinkError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Registry, RegistersTheBuiltinOperatorsAndKeySelectors) {
  OperatorRegistry r;
  register_builtin_operators(r);
  for (const char* name : {"tokenize", "count", "watermark_assigner", "event_time_count"}) {
    EXPECT_TRUE(r.contains(name)) << name;
    EXPECT_FALSE(r.get(name).description.empty()) << name;
  }
  EXPECT_EQ(r.key_selector("string.self").record_type, "string");
  EXPECT_EQ(r.key_selector("event.key").record_type, "event");
  EXPECT_EQ(r.key_selector("word_count.word").record_type, "word_count");
}

// A spec edge and the DataStream key_by must send a key to the same subtask.
TEST(Registry, KeySelectorsRouteLikeKeyBy) {
  OperatorRegistry r;
  register_builtin_operators(r);
  auto spec_part = r.key_selector("word_count.word").partitioner(0, 4, 128);
  auto api_part = hash_partitioner_factory<WordCount>([](const WordCount& w) { return w.first; })(0, 4, 128);
  auto make = [] {
    auto b = std::make_unique<Batch<WordCount>>();
    for (int i = 0; i < 100; ++i) b->push(WordCount{"w" + std::to_string(i), i});
    return b;
  };
  std::vector<BatchPtr> a(4), b(4);
  spec_part->partition(make(), a);
  api_part->partition(make(), b);
  for (int t = 0; t < 4; ++t) {
    ASSERT_EQ(a[t] == nullptr, b[t] == nullptr);
    if (a[t]) {
      EXPECT_EQ(batch_cast<WordCount>(*a[t]).records, batch_cast<WordCount>(*b[t]).records);
    }
  }
}

TEST(Registry, WordCountSpecRuns) {
  TestRegistry t;
  execute(from_spec(word_count_spec(), t.registry));
  auto got = t.word_counts->strings();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"(cat,1)", "(dog,1)", "(end,1)", "(the,3)"}));
}

TEST(Registry, CountEmitEvery) {
  TestRegistry t;
  auto spec = word_count_spec({{"emit", "every"}});
  spec["ops"][2]["parallelism"] = 1;
  spec["ops"][3]["parallelism"] = 1;
  execute(from_spec(spec, t.registry));
  EXPECT_EQ(t.word_counts->strings(),
            (std::vector<std::string>{"(the,1)", "(cat,1)", "(the,2)", "(dog,1)", "(the,3)", "(end,1)"}));
}

TEST(Registry, EventTimeCountSpecRuns) {
  TestRegistry t;
  auto spec = json::parse(R"({
    "ops": [
      {"id": "src", "type": "test_events",
       "params": {"events": [["a", 1, 1000], ["b", 1, -1], ["a", 1, 9999], ["a", 1, 10000]]}},
      {"id": "wm", "type": "watermark_assigner", "params": {"out_of_orderness_ms": 20000}, "inputs": [{"from": "src"}]},
      {"id": "cnt", "type": "event_time_count", "params": {"size_ms": 10000},
       "inputs": [{"from": "wm", "partitioning": "hash", "key": "event.key"}]},
      {"id": "out", "type": "collect_window_counts", "inputs": [{"from": "cnt"}]}
    ]})");
  JobGraph g = from_spec(spec, t.registry);
  EXPECT_EQ(g.node("wm").out_type, "event");
  EXPECT_EQ(g.node("cnt").out_type, "window_count");
  execute(g);
  EXPECT_EQ(t.window_counts->strings(), (std::vector<std::string>{"(b,-10000,1)", "(a,0,2)", "(a,10000,1)"}));
}

TEST(Registry, CountWithEventInput) {
  TestRegistry t;
  auto spec = json::parse(R"({
    "ops": [
      {"id": "src", "type": "test_events", "params": {"events": [["x", 1, 1], ["y", 1, 2], ["x", 1, 3]]}},
      {"id": "cnt", "type": "count", "inputs": [{"from": "src", "partitioning": "hash", "key": "event.key"}]},
      {"id": "out", "type": "collect_word_counts", "inputs": [{"from": "cnt"}]}
    ]})");
  execute(from_spec(spec, t.registry));
  EXPECT_EQ(t.word_counts->strings(), (std::vector<std::string>{"(x,2)", "(y,1)"}));
}

TEST(Registry, BadParamsAreErrorsNamingOpAndParam) {
  TestRegistry t;
  EXPECT_EQ(spec_error(word_count_spec({{"emit", "sometimes"}}), t.registry),
            "op 'cnt' (count): param 'emit' must be one of final, every, got 'sometimes'");
  EXPECT_EQ(spec_error(word_count_spec({{"emit", 3}}), t.registry),
            "op 'cnt' (count): param 'emit' must be a string, got 3");
  EXPECT_EQ(spec_error(word_count_spec({{"emitt", "every"}}), t.registry),
            "op 'cnt' (count): unknown param 'emitt' (known: emit)");

  auto spec = word_count_spec();
  spec["ops"][1]["params"] = {{"lower", true}};
  EXPECT_EQ(spec_error(spec, t.registry), "op 'tok' (tokenize): unknown param 'lower' (known: none)");
}

json event_spec(json wm_params, json count_params) {
  auto spec = json::parse(R"({
    "ops": [
      {"id": "src", "type": "test_events", "params": {"events": []}},
      {"id": "wm", "type": "watermark_assigner", "inputs": [{"from": "src"}]},
      {"id": "cnt", "type": "event_time_count", "inputs": [{"from": "wm"}]},
      {"id": "out", "type": "collect_window_counts", "inputs": [{"from": "cnt"}]}
    ]})");
  spec["ops"][1]["params"] = wm_params;
  spec["ops"][2]["params"] = count_params;
  return spec;
}

TEST(Registry, EventTimeParamErrors) {
  TestRegistry t;
  EXPECT_EQ(spec_error(event_spec(json::object(), json::object()), t.registry),
            "op 'cnt' (event_time_count): missing required param 'size_ms'");
  EXPECT_EQ(spec_error(event_spec(json::object(), {{"size_ms", 0}}), t.registry),
            "op 'cnt' (event_time_count): param 'size_ms' must be at least 1, got 0");
  EXPECT_EQ(spec_error(event_spec(json::object(), {{"size_ms", "10s"}}), t.registry),
            "op 'cnt' (event_time_count): param 'size_ms' must be an integer, got \"10s\"");
  EXPECT_EQ(spec_error(event_spec({{"out_of_orderness_ms", -1}}, {{"size_ms", 10}}), t.registry),
            "op 'wm' (watermark_assigner): param 'out_of_orderness_ms' must be at least 0, got -1");
  EXPECT_EQ(spec_error(event_spec({{"out_of_orderness_ms", 1.5}}, {{"size_ms", 10}}), t.registry),
            "op 'wm' (watermark_assigner): param 'out_of_orderness_ms' must be an integer, got 1.5");
  EXPECT_EQ(spec_error(event_spec(json::object(), {{"size_ms", 10}}), t.registry), "no error");
}

TEST(Registry, WatermarkStrategyParams) {
  TestRegistry t;
  auto err = [&](json wm) { return spec_error(event_spec(std::move(wm), {{"size_ms", 10}}), t.registry); };
  EXPECT_EQ(err({{"strategy", "monotonic"}}), "no error");
  EXPECT_EQ(err({{"strategy", "bounded"}, {"out_of_orderness_ms", 5}, {"idleness_ms", 1000}}), "no error");
  EXPECT_EQ(err({{"strategy", "partition_aware"}, {"out_of_orderness_ms", 5}}), "no error");
  EXPECT_EQ(err({{"strategy", "periodic"}}),
            "op 'wm' (watermark_assigner): param 'strategy' must be one of bounded, monotonic, partition_aware, "
            "got 'periodic'");
  EXPECT_EQ(err({{"strategy", "monotonic"}, {"out_of_orderness_ms", 5}}),
            "op 'wm' (watermark_assigner): param 'out_of_orderness_ms' does not apply to strategy 'monotonic'");
  EXPECT_EQ(err({{"idleness_ms", -1}}), "op 'wm' (watermark_assigner): param 'idleness_ms' must be at least 0, got -1");
}

TEST(Registry, InputTypeErrors) {
  TestRegistry t;
  auto spec = word_count_spec();
  spec["ops"][2]["type"] = "event_time_count";
  spec["ops"][2]["params"] = {{"size_ms", 10}};
  EXPECT_EQ(spec_error(spec, t.registry),
            "op 'cnt' (event_time_count): input record type must be event, got 'string'");

  auto spec2 = event_spec(json::object(), {{"size_ms", 10}});
  spec2["ops"][2]["type"] = "tokenize";
  spec2["ops"][2]["params"] = json::object();
  EXPECT_EQ(spec_error(spec2, t.registry), "op 'cnt' (tokenize): input record type must be string, got 'event'");

  auto spec3 = event_spec(json::object(), {{"size_ms", 10}});
  spec3["ops"][3]["type"] = "count";
  spec3["ops"][3]["params"] = json::object();
  EXPECT_EQ(spec_error(spec3, t.registry),
            "op 'out' (count): input record type must be one of string, event, got 'window_count'");
}

TEST(Registry, DataStreamJobSerialisesToTheSameSpec) {
  StreamExecutionEnvironment env;
  auto lines = env.from_collection(std::vector<std::string>{"a"});
  auto c = count(tokenize(lines), CountEmit::kEvery);
  c.set_parallelism(2);
  json spec = to_spec(env.graph());
  const json& ops = spec.at("ops");
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[1].at("type"), "tokenize");
  EXPECT_EQ(ops[2].at("type"), "count");
  EXPECT_EQ(ops[2].at("params"), (json{{"emit", "every"}}));
  EXPECT_EQ(ops[2].at("inputs")[0].at("key"), "string.self");
  EXPECT_EQ(ops[2].at("inputs")[0].at("partitioning"), "hash");
}

}  // namespace
}  // namespace clink::test
