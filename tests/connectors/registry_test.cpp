// The connectors as spec factories: built from JSON params, run through from_spec.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "clink/runtime/operator_registry.hpp"
#include "connector_test_util.hpp"

namespace clink::test {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;

const OperatorRegistry& registry() { return builtin_registry(); }

OperatorSpecContext spec_ctx(std::string id, json params, std::vector<std::string> inputs = {}) {
  return OperatorSpecContext{std::move(id), std::move(params), std::move(inputs)};
}

std::string make_error(const std::string& factory, const OperatorSpecContext& ctx) {
  try {
    registry().get(factory).make(ctx);
  } catch (const ClinkError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ConnectorRegistry, EachFactoryBuildsFromParams) {
  struct Case {
    const char* factory;
    json params;
    std::vector<std::string> inputs;
    std::string out_type;
  };
  std::vector<Case> cases = {
      {"datagen", {{"kind", "sequence"}, {"start", 1}, {"end", 5}}, {}, "int64"},
      {"datagen",
       {{"kind", "random"}, {"type", "event"}, {"number_of_rows", 10}, {"seed", 3}, {"key_count", 4},
        {"rows_per_second", 100}, {"event_time_start_ms", 0}, {"event_time_step_ms", 5}},
       {},
       "event"},
      {"file_source", {{"path", "/tmp/x"}}, {}, "string"},
      {"file_source", {{"path", "/tmp/x"}, {"format", "json"}, {"type", "word_count"}, {"on_error", "dead_letter"}},
       {}, "word_count"},
      {"file_sink", {{"path", "/tmp/out"}, {"format", "json"}}, {"event"}, "event"},
      {"print", {{"target", "stderr"}}, {"window_count"}, "window_count"},
      {"blackhole", json::object(), {"dead_letter"}, "dead_letter"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.factory) + " " + c.params.dump());
    const auto& info = registry().get(c.factory);
    auto ctx = spec_ctx("op", c.params, c.inputs);
    EXPECT_EQ(info.num_inputs, static_cast<int>(c.inputs.size()));
    EXPECT_EQ(info.out_type(ctx), c.out_type);
    OperatorBuilder build = info.make(ctx);
    ASSERT_TRUE(build);
    auto op = build();
    ASSERT_NE(op, nullptr);
    EXPECT_EQ(op->num_inputs(), static_cast<int>(c.inputs.size()));
  }
  EXPECT_EQ(registry().get("file_source").side_outputs.at("dead-letter"), "dead_letter");
}

TEST(ConnectorRegistry, BadParamsNameTheOpAndTheParam) {
  EXPECT_EQ(make_error("datagen", spec_ctx("gen", {{"end", 5}, {"rows_per_sec", 10}})),
            "op 'gen' (datagen): unknown param 'rows_per_sec' (known: kind, type, start, end, number_of_rows, "
            "key_count, rows_per_second, event_time_start_ms, event_time_step_ms, seed)");
  EXPECT_EQ(make_error("datagen", spec_ctx("gen", {{"end", 5}, {"rows_per_second", "fast"}})),
            "op 'gen' (datagen): param 'rows_per_second' must be an integer, got \"fast\"");
  EXPECT_EQ(make_error("datagen", spec_ctx("gen", {{"kind", "seq"}, {"end", 5}})),
            "op 'gen' (datagen): param 'kind' must be one of sequence, random, got 'seq'");
  EXPECT_EQ(make_error("datagen", spec_ctx("gen", json::object())),
            "op 'gen' (datagen): missing required param 'end'");
  EXPECT_EQ(make_error("datagen", spec_ctx("gen", {{"start", 5}, {"end", 4}})),
            "op 'gen' (datagen): param 'end' must be at least 5, got 4");
  EXPECT_EQ(make_error("datagen", spec_ctx("gen", {{"end", 4}, {"key_count", 3}})),
            "op 'gen' (datagen): param 'key_count' applies to type event only");
  EXPECT_EQ(make_error("file_source", spec_ctx("src", {{"format", "json"}})),
            "op 'src' (file_source): missing required param 'path'");
  EXPECT_EQ(make_error("file_source", spec_ctx("src", {{"path", "/x"}, {"format", "json"}})),
            "op 'src' (file_source): missing required param 'type' for format json");
  EXPECT_EQ(make_error("file_source", spec_ctx("src", {{"path", "/x"}, {"type", "event"}})),
            "op 'src' (file_source): param 'type' must be one of string, got 'event'");
  EXPECT_EQ(make_error("file_source", spec_ctx("src", {{"path", "/x"}, {"on_error", "skip"}})),
            "op 'src' (file_source): param 'on_error' must be one of fail, dead_letter, got 'skip'");
  EXPECT_EQ(make_error("file_sink", spec_ctx("out", {{"path", 3}}, {"int64"})),
            "op 'out' (file_sink): param 'path' must be a string, got 3");
  EXPECT_EQ(make_error("print", spec_ctx("p", {{"target", "stdin"}}, {"int64"})),
            "op 'p' (print): param 'target' must be one of stdout, stderr, got 'stdin'");
}

TEST(ConnectorRegistry, SpecPipelineFromDatagenThroughFiles) {
  TempDir dir;
  json spec = json::parse(R"({
    "name": "files",
    "config": {"parallelism": 1},
    "ops": [
      {"id": "gen", "type": "datagen",
       "params": {"type": "event", "start": 0, "end": 4, "key_count": 2}},
      {"id": "out", "type": "file_sink", "params": {"format": "json"}, "inputs": [{"from": "gen"}]}
    ]})");
  spec["ops"][1]["params"]["path"] = dir.file("events.jsonl");
  execute(from_spec(spec, registry()));
  EXPECT_EQ(read_file(dir.file("events.jsonl")),
            "{\"key\":\"k0\",\"value\":0}\n{\"key\":\"k1\",\"value\":1}\n{\"key\":\"k0\",\"value\":2}\n"
            "{\"key\":\"k1\",\"value\":3}\n{\"key\":\"k0\",\"value\":4}\n");

  // Read them back (with one bad line) and write text plus the dead letters.
  dir.write("in/events.jsonl", read_file(dir.file("events.jsonl")) + "{\"key\":\"k9\"}\n");
  json back = json::parse(R"({
    "name": "back",
    "config": {"parallelism": 1},
    "ops": [
      {"id": "src", "type": "file_source", "params": {"format": "json", "type": "event", "on_error": "dead_letter"}},
      {"id": "text", "type": "file_sink", "inputs": [{"from": "src"}]},
      {"id": "dead", "type": "file_sink", "params": {"format": "json"},
       "inputs": [{"from": "src", "side_output": "dead-letter"}]}
    ]})");
  back["ops"][0]["params"]["path"] = dir.file("in");
  back["ops"][1]["params"]["path"] = dir.file("out.txt");
  back["ops"][2]["params"]["path"] = dir.file("dead.jsonl");
  execute(from_spec(back, registry()));
  EXPECT_EQ(read_file(dir.file("out.txt")), "(k0,0)\n(k1,1)\n(k0,2)\n(k1,3)\n(k0,4)\n");
  EXPECT_EQ(read_file(dir.file("dead.jsonl")),
            "{\"source\":\"src\",\"file\":\"" + dir.file("in/events.jsonl") +
                "\",\"line\":6,\"reason\":\"missing field \\\"value\\\"\",\"raw\":\"{\\\"key\\\":\\\"k9\\\"}\"}\n");
}

TEST(ConnectorRegistry, SpecBlackholeCountsEverything) {
  json spec = json::parse(R"({
    "name": "bh",
    "config": {"parallelism": 2},
    "ops": [
      {"id": "gen", "type": "datagen", "params": {"kind": "random", "number_of_rows": 1000, "seed": 1}},
      {"id": "sink", "type": "blackhole", "inputs": [{"from": "gen", "partitioning": "rebalance"}]}
    ]})");
  auto handle = execute_async(from_spec(spec, registry()));
  handle.wait();
  EXPECT_EQ(handle.metrics().total("sink").records_in, 1000);
}

}  // namespace
}  // namespace clink::test
