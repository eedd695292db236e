// The kafka and upsert-kafka SQL connectors end to end: Flink SQL scripts run by the real
// `clink` binary against a real broker, records written and read with librdkafka.
#include <gtest/gtest.h>

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
using clink_test::Result;

class SqlKafka : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / unique_kafka_name("clink-sql-kafka");
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `sql` (with ${B} for the bootstrap servers) through `clink run`, plus `args`.
  Result run(std::string sql, const std::string& args = "") {
    sql = std::regex_replace(sql, std::regex("\\$\\{B\\}"), kafka_bootstrap());
    auto path = dir_ / "job.sql";
    std::ofstream(path) << sql;
    return clink_test::run_clink("run '" + path.string() + "' " + args, dir_);
  }

  // A kafka table over `topic` read from the start to the end it has now.
  static std::string bounded_source(const std::string& name, const std::string& columns, const std::string& topic,
                                    const std::string& extra = "") {
    return "CREATE TABLE " + name + " (" + columns + ") WITH ('connector' = 'kafka', 'topic' = '" + topic +
           "', 'properties.bootstrap.servers' = '${B}', 'scan.startup.mode' = 'earliest-offset', "
           "'scan.bounded.mode' = 'latest-offset'" + extra + ");\n";
  }
  static std::string print_sink(const std::string& name, const std::string& columns) {
    return "CREATE TABLE " + name + " (" + columns + ") WITH ('connector' = 'print');\n";
  }

  fs::path dir_;
};

TEST_F(SqlKafka, ReadsJsonFromEveryPartitionAndEndsAtTheLatestOffset) {
  const std::string topic = unique_kafka_name("orders");
  create_kafka_topic(topic, 2);
  produce_kafka(topic, {kafka_value(R"({"id":1,"item":"apple","price":1.5})", 0),
                        kafka_value(R"({"id":2,"item":"pear","price":2.25})", 1),
                        kafka_value(R"({"id":3,"item":"fig","price":0.5})", 0)});
  auto r = run(bounded_source("orders", "id INT, item STRING, price DOUBLE", topic, ", 'format' = 'json'") +
               print_sink("out", "id INT, item STRING, price DOUBLE") + "INSERT INTO out SELECT * FROM orders;\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.sorted_lines(), (std::vector<std::string>{"+I[1, apple, 1.5]", "+I[2, pear, 2.25]", "+I[3, fig, 0.5]"}));
}

TEST_F(SqlKafka, MetadataColumns) {
  const std::string topic = unique_kafka_name("meta");
  create_kafka_topic(topic, 1);
  KafkaRecord rec = kafka_value(R"({"v":"a"})");
  rec.timestamp_ms = 1700000000123;
  rec.headers = {{"trace", "t1"}};
  produce_kafka(topic, {rec, kafka_value(R"({"v":"b"})")});
  auto r = run(
      bounded_source("src",
                     "v STRING, `topic` STRING METADATA VIRTUAL, `partition` INT METADATA VIRTUAL, "
                     "off BIGINT METADATA FROM 'offset' VIRTUAL, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', "
                     "tt STRING METADATA FROM 'timestamp-type', hdrs MAP<STRING, BYTES> METADATA FROM 'headers'",
                     topic, ", 'format' = 'json'") +
      print_sink("out", "v STRING, t BOOLEAN, p INT, off BIGINT, ts TIMESTAMP_LTZ(3), tt STRING, trace STRING") +
      "INSERT INTO out SELECT v, `topic` = '" + topic +
      "', `partition`, off, CASE WHEN v = 'a' THEN ts END, tt, CAST(hdrs['trace'] AS STRING) FROM src;\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = r.sorted_lines();
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0], "+I[a, true, 0, 0, 2023-11-14T22:13:20.123Z, CreateTime, t1]");
  EXPECT_EQ(lines[1], "+I[b, true, 0, 1, null, CreateTime, null]");
}

}  // namespace
}  // namespace clink::test
