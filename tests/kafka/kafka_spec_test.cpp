// The `kafka_source` and `kafka_sink` JobGraphSpec ops: JSON jobs run by the real `clink`
// binary read and write Kafka through the same KafkaSource<T> / KafkaSink<T> a C++ job uses.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "../tools/clink_runner.hpp"
#include "kafka_test_env.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;

class KafkaSpec : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / unique_kafka_name("clink-kafka-spec");
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the spec `json` (${B}: the bootstrap servers) through `clink run`, plus `args`.
  Result run(std::string json, const std::string& args = "") {
    json = std::regex_replace(json, std::regex("\\$\\{B\\}"), kafka_bootstrap());
    auto path = dir_ / "job.json";
    std::ofstream(path) << json;
    return run_clink("run '" + path.string() + "' " + args, dir_);
  }

  fs::path dir_;
};

// JSON events in, word counts out: kafka_source (json, event) -> count -> kafka_sink (json).
TEST_F(KafkaSpec, AJsonJobReadsAndWritesKafka) {
  const std::string in = unique_kafka_name("spec-in"), out = unique_kafka_name("spec-out");
  create_kafka_topic(in, 2);
  create_kafka_topic(out, 1);
  produce_kafka(in, {kafka_value(R"({"key":"a","value":1})", 0), kafka_value(R"({"key":"b","value":2})", 1),
                     kafka_value(R"({"key":"a","value":3})", 0)});
  auto r = run(R"({"name": "kafka_counts", "ops": [
    {"id": "events", "type": "kafka_source", "params": {"bootstrap_servers": "${B}", "topics": [")" + in +
               R"("], "bounded": "latest", "format": "json", "type": "event"}},
    {"id": "count", "type": "count", "inputs": [{"from": "events", "partitioning": "hash", "key": "event.key"}]},
    {"id": "out", "type": "kafka_sink", "params": {"bootstrap_servers": "${B}", "topic": ")" + out +
               R"(", "format": "json", "delivery_guarantee": "exactly-once", "transactional_id_prefix": ")" + out +
               R"("}, "inputs": [{"from": "count"}]}]})",
               "-p 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> got = values_of(consume_kafka(out));
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{R"({"word":"a","count":2})", R"({"word":"b","count":1})"}));
}

// Text records, a ';'-list of topics, a timestamp start: each value as a string.
TEST_F(KafkaSpec, TextRecordsFromSeveralTopicsFromATimestamp) {
  const std::string a = unique_kafka_name("spec-a"), b = unique_kafka_name("spec-b");
  for (const auto& t : {a, b}) {
    create_kafka_topic(t, 1);
    std::vector<KafkaRecord> records;
    for (int i = 0; i < 3; ++i) {
      records.push_back(kafka_value(t.substr(0, 6) + std::to_string(i)));
      records.back().timestamp_ms = 1000 * (i + 1);
    }
    produce_kafka(t, records);
  }
  auto r = run(R"({"name": "text", "ops": [
    {"id": "lines", "type": "kafka_source", "params": {"bootstrap_servers": "${B}", "topics": ")" + a + ";" + b +
               R"(", "starting_offsets": "timestamp", "starting_offsets_timestamp_ms": 2000, "bounded": "latest",
               "properties": {"isolation.level": "read_committed"}}},
    {"id": "print", "type": "print", "inputs": [{"from": "lines"}]}]})");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.sorted_lines(), (std::vector<std::string>{"spec-a1", "spec-a2", "spec-b1", "spec-b2"}));
}

TEST_F(KafkaSpec, ParamErrorsNameTheOpAndParam) {
  auto error = [&](const std::string& source, const std::string& sink = R"({"bootstrap_servers": "${B}", "topic": "t"})") {
    auto r = run(R"({"name": "bad", "ops": [{"id": "k", "type": "kafka_source", "params": )" + source +
                 R"(}, {"id": "s", "type": "kafka_sink", "params": )" + sink + R"(, "inputs": [{"from": "k"}]}]})");
    EXPECT_EQ(r.exit_code, 1) << r.out;
    return r.err;
  };
  const std::string ok = R"({"bootstrap_servers": "${B}", "topics": "t"})";
  EXPECT_NE(error(R"({"topics": "t"})").find("op 'k' (kafka_source): missing required param 'bootstrap_servers'"),
            std::string::npos);
  EXPECT_NE(error(R"({"bootstrap_servers": "${B}", "topic": "t"})").find("unknown param 'topic'"), std::string::npos);
  EXPECT_NE(error(R"({"bootstrap_servers": "${B}", "topics": "t", "topic_pattern": "t.*"})")
                .find("set either the topics or a topic pattern"),
            std::string::npos);
  EXPECT_NE(error(R"({"bootstrap_servers": "${B}", "topics": "t", "format": "json"})")
                .find("missing required param 'type' for format json"),
            std::string::npos);
  EXPECT_NE(error(ok, R"({"bootstrap_servers": "${B}", "topic": "t", "delivery_guarantee": "exactly-once"})")
                .find("op 's' (kafka_sink): KafkaSink: EXACTLY_ONCE delivery guarantee requires a transactional id prefix"),
            std::string::npos);
  EXPECT_NE(error(ok, R"({"bootstrap_servers": "${B}", "topic": "t", "delivery_guarantee": "twice"})")
                .find("delivery_guarantee"),
            std::string::npos);
}

// Watermarks per partition in the source: a partition read ahead does not make the other's
// records late (the windows are Flink's for these events).
TEST_F(KafkaSpec, WatermarksPerPartitionInTheSource) {
  const std::string topic = unique_kafka_name("spec-wm");
  create_kafka_topic(topic, 2);
  std::vector<KafkaRecord> records;
  for (auto [partition, ts] : std::vector<std::pair<int, long long>>{{0, 1000}, {0, 12000}, {0, 25000}, {1, 2000},
                                                                     {1, 9000}, {1, 14000}}) {
    records.push_back(kafka_value(R"({"key":"k","value":1})", partition));
    records.back().timestamp_ms = ts;
  }
  produce_kafka(topic, records);
  auto r = run(R"({"name": "windows", "ops": [
    {"id": "events", "type": "kafka_source", "params": {"bootstrap_servers": "${B}", "topics": ")" + topic +
               R"(", "bounded": "latest", "format": "json", "type": "event",
               "watermarks": {"strategy": "bounded", "out_of_orderness_ms": 0}}},
    {"id": "count", "type": "event_time_count", "params": {"size_ms": 10000},
     "inputs": [{"from": "events", "partitioning": "hash", "key": "event.key"}]},
    {"id": "print", "type": "print", "inputs": [{"from": "count"}]}]})");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.lines(), (std::vector<std::string>{"(k,0,3)", "(k,10000,2)", "(k,20000,1)"}));
}

// The examples reading and writing Kafka: the spec (examples/kafka_word_count.json, its
// broker and topics overridden) and the C++ program (examples/kafka_word_count.cpp).
class KafkaExamples : public KafkaSpec {
 protected:
  void SetUp() override {
    KafkaSpec::SetUp();
    in_ = unique_kafka_name("example-lines");
    out_ = unique_kafka_name("example-counts");
    create_kafka_topic(in_, 2);
    create_kafka_topic(out_, 1);
    produce_kafka(in_, {kafka_value("the cat", 0), kafka_value("The dog, the end", 1)});
  }
  std::vector<std::string> counts() {
    std::vector<std::string> got = values_of(consume_kafka(out_));
    std::sort(got.begin(), got.end());
    return got;
  }
  const std::vector<std::string> expected_ = {R"({"word":"cat","count":1})", R"({"word":"dog","count":1})",
                                              R"({"word":"end","count":1})", R"({"word":"the","count":3})"};
  std::string in_, out_;
};

TEST_F(KafkaExamples, TheSpecCountsTheWordsOfATopicIntoATopic) {
  const std::string b = kafka_bootstrap();
  auto r = run_clink("run examples/kafka_word_count.json --set lines.bootstrap_servers=" + b + " --set lines.topics=" +
                         in_ + " --set out.bootstrap_servers=" + b + " --set out.topic=" + out_ +
                         " --set out.transactional_id_prefix=" + out_,
                     dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(counts(), expected_);
}

TEST_F(KafkaExamples, TheProgramCountsTheWordsOfATopicIntoATopic) {
  const std::string cmd = std::string("'") + CLINK_KAFKA_EXAMPLE + "' " + kafka_bootstrap() + " " + in_ + " " + out_ +
                          " >'" + (dir_ / "out").string() + "' 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(dir_ / "out");
  EXPECT_EQ(counts(), expected_);
}

}  // namespace
}  // namespace clink::test
