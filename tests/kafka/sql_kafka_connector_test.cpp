// The kafka and upsert-kafka SQL connectors end to end: Flink SQL scripts run by the real
// `clink` binary against a real broker, records written and read with librdkafka.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <regex>
#include <string>
#include <vector>

#include "../tools/clink_runner.hpp"
#include "kafka_test_env.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;
using clink::test::Result;

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
    return run_clink("run '" + path.string() + "' " + args, dir_);
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

  // A one-partition topic of {"n": 0..3}, record i at timestamp (i + 1) s.
  static std::string four_timestamped_records(const std::string& base) {
    const std::string topic = unique_kafka_name(base);
    create_kafka_topic(topic, 1);
    std::vector<KafkaRecord> records;
    for (int i = 0; i < 4; ++i) {
      records.push_back(kafka_value("{\"n\":" + std::to_string(i) + "}"));
      records.back().timestamp_ms = 1000 * (i + 1);
    }
    produce_kafka(topic, records);
    return topic;
  }
  // Prints the `n` of `topic` read with the scan `options`.
  Result read_n(const std::string& topic, const std::string& options) {
    return run("CREATE TABLE src (n INT) WITH ('connector' = 'kafka', 'topic' = '" + topic +
               "', 'properties.bootstrap.servers' = '${B}', 'format' = 'json', " + options + ");\n" +
               print_sink("out", "n INT") + "INSERT INTO out SELECT * FROM src;\n");
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

TEST_F(SqlKafka, KeyAndValueFormatsWithPrefix) {
  const std::string topic = unique_kafka_name("keyed");
  create_kafka_topic(topic, 1);
  produce_kafka(topic, {kafka_keyed(R"({"id":7})", R"({"name":"ann"})"), kafka_keyed(R"({"id":8})", R"({"name":"bob"})")});
  auto r = run(bounded_source("users", "k_id INT, name STRING", topic,
                              ", 'key.format' = 'json', 'key.fields' = 'k_id', 'key.fields-prefix' = 'k_', "
                              "'value.format' = 'json', 'value.fields-include' = 'EXCEPT_KEY'") +
               print_sink("out", "k_id INT, name STRING") + "INSERT INTO out SELECT * FROM users;\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.sorted_lines(), (std::vector<std::string>{"+I[7, ann]", "+I[8, bob]"}));
}

TEST_F(SqlKafka, StartupModes) {
  const std::string topic = four_timestamped_records("startup");
  auto read = [&](const std::string& options) {
    return read_n(topic, "'scan.bounded.mode' = 'latest-offset', " + options);
  };
  auto r = read("'scan.startup.mode' = 'specific-offsets', 'scan.startup.specific-offsets' = 'partition:0,offset:2'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.lines(), (std::vector<std::string>{"+I[2]", "+I[3]"}));
  r = read("'scan.startup.mode' = 'timestamp', 'scan.startup.timestamp-millis' = '2500'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.lines(), (std::vector<std::string>{"+I[2]", "+I[3]"}));
  r = read("'scan.startup.mode' = 'latest-offset'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.lines(), std::vector<std::string>{});
  // group-offsets: a group without a committed offset fails unless auto.offset.reset says.
  const std::string group = unique_kafka_name("group");
  r = read("'scan.startup.mode' = 'group-offsets', 'properties.group.id' = '" + group + "'");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("has no committed offset for group '" + group + "'"), std::string::npos) << r.err;
  r = read("'scan.startup.mode' = 'group-offsets', 'properties.group.id' = '" + group +
           "', 'properties.auto.offset.reset' = 'earliest'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.lines(), (std::vector<std::string>{"+I[0]", "+I[1]", "+I[2]", "+I[3]"}));
}

TEST_F(SqlKafka, BoundedByTimestampAndSpecificOffsets) {
  const std::string topic = four_timestamped_records("bounded");
  auto read = [&](const std::string& options) {
    return read_n(topic, "'scan.startup.mode' = 'earliest-offset', " + options);
  };
  auto r = read("'scan.bounded.mode' = 'timestamp', 'scan.bounded.timestamp-millis' = '3000'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.lines(), (std::vector<std::string>{"+I[0]", "+I[1]"}));
  r = read("'scan.bounded.mode' = 'specific-offsets', 'scan.bounded.specific-offsets' = 'partition:0,offset:1'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.lines(), (std::vector<std::string>{"+I[0]"}));
}

TEST_F(SqlKafka, MalformedRecordFailsNamingItsPositionOrIsSkipped) {
  const std::string topic = unique_kafka_name("bad");
  create_kafka_topic(topic, 1);
  produce_kafka(topic, {kafka_value(R"({"n":1})"), kafka_value("not json"), kafka_value(R"({"n":3})")});
  auto r = run(bounded_source("src", "n INT", topic, ", 'format' = 'json'") + print_sink("out", "n INT") +
               "INSERT INTO out SELECT * FROM src;\n");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("topic " + topic + " partition 0 offset 1: "), std::string::npos) << r.err;
  r = run(bounded_source("src", "n INT", topic, ", 'format' = 'json', 'json.ignore-parse-errors' = 'true'") +
          print_sink("out", "n INT") + "INSERT INTO out SELECT * FROM src;\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.lines(), (std::vector<std::string>{"+I[1]", "+I[3]"}));
}

TEST_F(SqlKafka, OptionErrorsNameTheOption) {
  auto r = run("CREATE TABLE src (n INT) WITH ('connector' = 'kafka', 'topic' = 't', 'format' = 'json');\n" +
               print_sink("out", "n INT") + "INSERT INTO out SELECT * FROM src;\n");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("missing required option 'properties.bootstrap.servers'"), std::string::npos) << r.err;
  r = run("CREATE TABLE src (n INT) WITH ('connector' = 'kafka', 'topic' = 't', 'properties.bootstrap.servers' = "
          "'${B}', 'format' = 'json', 'scan.startup.mode' = 'sometime');\n" +
          print_sink("out", "n INT") + "INSERT INTO out SELECT * FROM src;\n");
  EXPECT_NE(r.err.find("option 'scan.startup.mode' must be one of"), std::string::npos) << r.err;
  r = run(bounded_source("src", "n INT", "t", ", 'format' = 'json', 'key.format' = 'json'") +
          print_sink("out", "n INT") + "INSERT INTO out SELECT * FROM src;\n");
  EXPECT_NE(r.err.find("requires the declaration of one or more of key fields"), std::string::npos) << r.err;
  r = run(bounded_source("src", "n INT", unique_kafka_name("missing"), ", 'format' = 'json'") +
          print_sink("out", "n INT") + "INSERT INTO out SELECT * FROM src;\n");
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
}

// kafka -> kafka with each delivery guarantee: the records arrive, once each.
TEST_F(SqlKafka, SinkDeliveryGuarantees) {
  const std::string in = unique_kafka_name("in");
  create_kafka_topic(in, 2);
  std::vector<KafkaRecord> records;
  std::vector<std::string> expected;
  for (int i = 0; i < 50; ++i) {
    records.push_back(kafka_value("{\"n\":" + std::to_string(i) + "}", i % 2));
    expected.push_back("{\"n\":" + std::to_string(i * 10) + "}");
  }
  produce_kafka(in, records);
  std::sort(expected.begin(), expected.end());
  for (const std::string guarantee : {"none", "at-least-once", "exactly-once"}) {
    const std::string out = unique_kafka_name("out");
    create_kafka_topic(out, 1);
    auto r = run(bounded_source("src", "n INT", in, ", 'format' = 'json'") +
                     "CREATE TABLE dst (n INT) WITH ('connector' = 'kafka', 'topic' = '" + out +
                     "', 'properties.bootstrap.servers' = '${B}', 'format' = 'json', 'sink.delivery-guarantee' = '" +
                     guarantee + "', 'sink.transactional-id-prefix' = '" + unique_kafka_name("tx") + "');\n" +
                     "INSERT INTO dst SELECT n * 10 FROM src;\n",
                 "--checkpoint-dir '" + (dir_ / guarantee).string() + "' --checkpoint-interval 50");
    ASSERT_EQ(r.exit_code, 0) << guarantee << ": " << r.err;
    auto got = values_of(consume_kafka(out));
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, expected) << guarantee;
  }
}

TEST_F(SqlKafka, FixedPartitionerAndKeys) {
  const std::string in = unique_kafka_name("in");
  const std::string out = unique_kafka_name("out");
  create_kafka_topic(in, 1);
  create_kafka_topic(out, 3);
  produce_kafka(in, {kafka_value(R"({"id":1,"v":"a"})"), kafka_value(R"({"id":2,"v":"b"})")});
  auto r = run(bounded_source("src", "id INT, v STRING", in, ", 'format' = 'json'") +
               "CREATE TABLE dst (id INT, v STRING) WITH ('connector' = 'kafka', 'topic' = '" + out +
               "', 'properties.bootstrap.servers' = '${B}', 'key.format' = 'json', 'key.fields' = 'id', "
               "'value.format' = 'json', 'value.fields-include' = 'EXCEPT_KEY', 'sink.partitioner' = 'fixed');\n"
               "INSERT INTO dst SELECT * FROM src;\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto got = consume_kafka(out);
  ASSERT_EQ(got.size(), 2u);
  for (const auto& rec : got) EXPECT_EQ(rec.partition, 0) << "subtask 0 writes partition 0 under 'fixed'";
  EXPECT_EQ(got[0].key, R"({"id":1})");
  EXPECT_EQ(got[0].value, R"({"v":"a"})");
  EXPECT_EQ(got[1].key, R"({"id":2})");
}

// GROUP BY into upsert-kafka: the topic's compacted view is the final counts; a tombstone
// deletes; reading the topic back as an upsert-kafka table gives the normalised changelog.
TEST_F(SqlKafka, UpsertKafkaRoundTrip) {
  const std::string in = unique_kafka_name("clicks");
  const std::string out = unique_kafka_name("counts");
  create_kafka_topic(in, 1);
  create_kafka_topic(out, 1);
  produce_kafka(in, {kafka_value(R"({"user":"ann"})"), kafka_value(R"({"user":"bob"})"), kafka_value(R"({"user":"ann"})")});
  const std::string upsert_table = "CREATE TABLE counts (`user` STRING, c BIGINT, PRIMARY KEY (`user`) NOT ENFORCED) "
                                   "WITH ('connector' = 'upsert-kafka', 'topic' = '" + out +
                                   "', 'properties.bootstrap.servers' = '${B}', 'key.format' = 'json', "
                                   "'value.format' = 'json');\n";
  auto r = run(bounded_source("clicks", "`user` STRING NOT NULL", in, ", 'format' = 'json'") + upsert_table +
               "INSERT INTO counts SELECT `user`, COUNT(*) FROM clicks GROUP BY `user`;\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::string> compacted;
  int tombstones = 0;
  for (const auto& rec : consume_kafka(out)) {
    if (rec.has_value) compacted[rec.key] = rec.value;
    else compacted.erase(rec.key);
    tombstones += rec.has_value ? 0 : 1;
  }
  EXPECT_EQ(compacted, (std::map<std::string, std::string>{{R"({"user":"ann"})", R"({"user":"ann","c":2})"},
                                                           {R"({"user":"bob"})", R"({"user":"bob","c":1})"}}));
  EXPECT_EQ(tombstones, 0) << "a -U followed by its +U is left out";
  // A tombstone for bob, then the topic read back as a table: the changelog normalised
  // (retractions of the rows it replaces), which materialises to ann's count alone.
  KafkaRecord tomb = kafka_keyed(R"({"user":"bob"})", "");
  tomb.has_value = false;
  produce_kafka(out, {tomb});
  r = run(upsert_table.substr(0, upsert_table.size() - 3) + ", 'scan.bounded.mode' = 'latest-offset');\n" +
          print_sink("out", "`user` STRING, c BIGINT") + "INSERT INTO out SELECT * FROM counts;\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::multiset<std::string> rows;
  for (const auto& line : r.lines()) {
    std::string row = line.substr(2);
    if (line.starts_with("+I") || line.starts_with("+U")) rows.insert(row);
    else if (auto it = rows.find(row); it != rows.end()) rows.erase(it);
    else ADD_FAILURE() << "retracts a row not emitted: " << line << "\n" << r.out;
  }
  EXPECT_EQ(rows, (std::multiset<std::string>{"[ann, 2]"})) << r.out;
  EXPECT_EQ(r.lines().back(), "-D[bob, 1]") << r.out;
}

// A filter over an aggregate: ann's count passes at 1 and 2, and her third click makes it 3,
// which the filter removes; the -U left alone is a tombstone (as Flink writes it), so the
// compacted topic no longer holds a count that stopped qualifying.
TEST_F(SqlKafka, UpsertKafkaAFilteredUpdateIsATombstone) {
  const std::string in = unique_kafka_name("clicks");
  const std::string out = unique_kafka_name("small-counts");
  create_kafka_topic(in, 1);
  create_kafka_topic(out, 1);
  produce_kafka(in, {kafka_value(R"({"user":"ann"})"), kafka_value(R"({"user":"bob"})"),
                     kafka_value(R"({"user":"ann"})"), kafka_value(R"({"user":"ann"})")});
  auto r = run(bounded_source("clicks", "`user` STRING NOT NULL", in, ", 'format' = 'json'") +
               "CREATE TABLE counts (`user` STRING, c BIGINT, PRIMARY KEY (`user`) NOT ENFORCED) WITH ("
               "'connector' = 'upsert-kafka', 'topic' = '" + out + "', 'properties.bootstrap.servers' = '${B}', "
               "'key.format' = 'json', 'value.format' = 'json');\n"
               "INSERT INTO counts SELECT `user`, c FROM (SELECT `user`, COUNT(*) AS c FROM clicks GROUP BY `user`) "
               "WHERE c <= 2;\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::string> compacted;
  for (const auto& rec : consume_kafka(out)) {
    if (rec.has_value) compacted[rec.key] = rec.value;
    else compacted.erase(rec.key);
  }
  EXPECT_EQ(compacted, (std::map<std::string, std::string>{{R"({"user":"bob"})", R"({"user":"bob","c":1})"}}));
}

// sink.buffer-flush.*: the reduce buffer writes the last change per key only (here all at
// the end of input: the interval is long and the keys few).
TEST_F(SqlKafka, UpsertKafkaBufferFlushReducesByKey) {
  const std::string in = unique_kafka_name("clicks");
  const std::string out = unique_kafka_name("counts");
  create_kafka_topic(in, 1);
  create_kafka_topic(out, 1);
  std::vector<KafkaRecord> clicks;
  for (int i = 0; i < 300; ++i) clicks.push_back(kafka_value(i % 3 == 0 ? R"({"user":"ann"})" : R"({"user":"bob"})"));
  produce_kafka(in, clicks);
  auto r = run(bounded_source("clicks", "`user` STRING NOT NULL", in, ", 'format' = 'json'") +
               "CREATE TABLE counts (`user` STRING, c BIGINT, PRIMARY KEY (`user`) NOT ENFORCED) WITH ("
               "'connector' = 'upsert-kafka', 'topic' = '" + out + "', 'properties.bootstrap.servers' = '${B}', "
               "'key.format' = 'json', 'value.format' = 'json', 'sink.buffer-flush.max-rows' = '1000', "
               "'sink.buffer-flush.interval' = '1 h');\n"
               "INSERT INTO counts SELECT `user`, COUNT(*) FROM clicks GROUP BY `user`;\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> got = values_of(consume_kafka(out));
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{R"({"user":"ann","c":100})", R"({"user":"bob","c":200})"}));
  r = run(bounded_source("clicks", "`user` STRING NOT NULL", in, ", 'format' = 'json'") +
          "CREATE TABLE counts (`user` STRING, c BIGINT, PRIMARY KEY (`user`) NOT ENFORCED) WITH ("
          "'connector' = 'upsert-kafka', 'topic' = '" + out + "', 'properties.bootstrap.servers' = '${B}', "
          "'key.format' = 'json', 'value.format' = 'json', 'sink.buffer-flush.max-rows' = '1000');\n"
          "INSERT INTO counts SELECT `user`, COUNT(*) FROM clicks GROUP BY `user`;\n");
  EXPECT_NE(r.err.find("must be set to be greater than zero together"), std::string::npos) << r.err;
}

// The seed's spellings on kafka tables: 'mode' = 'cdc' (JSON change events), 'mode' =
// 'upsert' with a PRIMARY KEY (upsert-kafka), 'delivery_guarantee' = 'exactly_once' (no
// prefix needed), event_time_column + watermark_lag_ms (a watermark, pushed into the source).
TEST_F(SqlKafka, SeedSpellings) {
  const std::string in = unique_kafka_name("seed-in");
  const std::string out = unique_kafka_name("seed-out");
  create_kafka_topic(in, 1);
  create_kafka_topic(out, 1);
  produce_kafka(in, {
      kafka_value(R"({"before":null,"after":{"id":1,"region":"eu","ts":"2026-01-01 00:00:01"},"op":"c"})"),
      kafka_value(R"({"before":null,"after":{"id":2,"region":"us","ts":"2026-01-01 00:00:02"},"op":"c"})"),
      kafka_value(R"({"before":{"id":2,"region":"us","ts":"2026-01-01 00:00:02"},"after":{"id":2,"region":"eu","ts":"2026-01-01 00:00:03"},"op":"u"})")});
  auto r = run("CREATE TABLE users (id INT, region STRING NOT NULL, ts TIMESTAMP(3)) WITH ('connector' = 'kafka', "
               "'topic' = '" + in + "', 'properties.bootstrap.servers' = '${B}', 'format' = 'json', 'mode' = 'cdc', "
               "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', "
               "'event_time_column' = 'ts', 'watermark_lag_ms' = '1000');\n"
               "CREATE TABLE per_region (region STRING, n BIGINT, PRIMARY KEY (region) NOT ENFORCED) WITH ("
               "'connector' = 'kafka', 'topic' = '" + out + "', 'properties.bootstrap.servers' = '${B}', "
               "'format' = 'json', 'mode' = 'upsert', 'delivery_guarantee' = 'exactly_once');\n"
               "INSERT INTO per_region SELECT region, COUNT(*) FROM users GROUP BY region;\n",
               "--checkpoint-dir '" + (dir_ / "chk").string() + "' --checkpoint-interval 100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::string> compacted;
  for (const auto& rec : consume_kafka(out)) {
    if (rec.has_value) compacted[rec.key] = rec.value;
    else compacted.erase(rec.key);
  }
  EXPECT_EQ(compacted, (std::map<std::string, std::string>{{R"({"region":"eu"})", R"({"region":"eu","n":2})"}}));
}

// Every message format through a real topic: written by the kafka sink, read back by the
// source, row for row (NULLs included).
TEST_F(SqlKafka, FormatsRoundTripThroughATopic) {
  const std::string values =
      "INSERT INTO dst VALUES (1, 'a', 1.5, TRUE), (2, CAST(NULL AS STRING), CAST(NULL AS DOUBLE), FALSE);\n";
  for (const std::string format : {"json", "csv", "avro"}) {
    SCOPED_TRACE(format);
    const std::string topic = unique_kafka_name("fmt-" + format);
    create_kafka_topic(topic, 1);
    const std::string cols = "id INT, s STRING, d DOUBLE, b BOOLEAN";
    // csv reads an empty DOUBLE field as an error, as Flink: NULLs need a null literal.
    const std::string options = "'format' = '" + format + "'" + (format == "csv" ? ", 'csv.null-literal' = 'N/A'" : "");
    auto r = run("CREATE TABLE dst (" + cols + ") WITH ('connector' = 'kafka', 'topic' = '" + topic +
                 "', 'properties.bootstrap.servers' = '${B}', " + options + ");\n" + values);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run(bounded_source("src", cols, topic, ", " + options) + print_sink("out", cols) +
            "INSERT INTO out SELECT * FROM src;\n");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.sorted_lines(), (std::vector<std::string>{"+I[1, a, 1.5, true]", "+I[2, null, null, false]"}));
  }
  // raw: one column, the message's bytes; a NULL is a record without value.
  const std::string topic = unique_kafka_name("fmt-raw");
  create_kafka_topic(topic, 1);
  auto r = run("CREATE TABLE dst (line STRING) WITH ('connector' = 'kafka', 'topic' = '" + topic +
               "', 'properties.bootstrap.servers' = '${B}', 'format' = 'raw');\n"
               "INSERT INTO dst VALUES ('hello, world'), (CAST(NULL AS STRING));\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto records = consume_kafka(topic);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].value, "hello, world");
  EXPECT_FALSE(records[1].has_value);
  r = run(bounded_source("src", "line STRING", topic, ", 'format' = 'raw'") + print_sink("out", "line STRING") +
          "INSERT INTO out SELECT * FROM src;\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.lines(), (std::vector<std::string>{"+I[hello, world]", "+I[null]"}));
}

// SET 'sql.dead-letter': a record that does not decode goes there with its topic,
// partition, offset, reason and payload; the others go on.
TEST_F(SqlKafka, MalformedRecordsToTheDeadLetterTable) {
  const std::string topic = unique_kafka_name("dlq");
  create_kafka_topic(topic, 1);
  produce_kafka(topic, {kafka_value(R"({"n":1})"), kafka_value(R"({"n":"x"})"), kafka_value(R"({"n":3})")});
  auto r = run("SET 'sql.dead-letter' = 'dlq';\n"
               "CREATE TABLE dlq (reason STRING, origin STRING, `position` STRING, payload STRING) WITH "
               "('connector' = 'print', 'print-identifier' = 'dlq');\n" +
               bounded_source("src", "n INT", topic, ", 'format' = 'json'") + print_sink("out", "n INT") +
               "INSERT INTO out SELECT * FROM src;\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = r.sorted_lines();
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[0], "+I[1]");
  EXPECT_EQ(lines[1], "+I[3]");
  EXPECT_TRUE(lines[2].starts_with("dlq> +I[parse-error: ")) << lines[2];
  EXPECT_NE(lines[2].find(", " + topic + ", partition 0 offset 1, {\"n\":\"x\"}]"), std::string::npos) << lines[2];
}

// With a group.id, each completed checkpoint's offsets are committed to the group, and
// 'group-offsets' then starts where the last run stopped.
TEST_F(SqlKafka, CommitsOffsetsToTheGroupOnCheckpoints) {
  const std::string topic = unique_kafka_name("grp");
  const std::string group = unique_kafka_name("group");
  create_kafka_topic(topic, 1);
  produce_kafka(topic, {kafka_value(R"({"n":1})"), kafka_value(R"({"n":2})")});
  const std::string table = "CREATE TABLE src (n INT) WITH ('connector' = 'kafka', 'topic' = '" + topic +
                            "', 'properties.bootstrap.servers' = '${B}', 'properties.group.id' = '" + group +
                            "', 'properties.auto.offset.reset' = 'earliest', 'scan.startup.mode' = 'group-offsets', "
                            "'scan.bounded.mode' = 'latest-offset', 'format' = 'json');\n";
  const std::string job = table + print_sink("out", "n INT") + "INSERT INTO out SELECT * FROM src;\n";
  auto r = run(job, "--checkpoint-dir '" + (dir_ / "c1").string() + "' --checkpoint-interval 20");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.lines(), (std::vector<std::string>{"+I[1]", "+I[2]"}));
  produce_kafka(topic, {kafka_value(R"({"n":3})")});
  r = run(job, "--checkpoint-dir '" + (dir_ / "c2").string() + "' --checkpoint-interval 20");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.lines(), (std::vector<std::string>{"+I[3]"}));
}

// 'sink.parallelism' runs the sink at its own parallelism (every record still arrives).
TEST_F(SqlKafka, SinkParallelism) {
  const std::string in = unique_kafka_name("par-in");
  const std::string out = unique_kafka_name("par-out");
  create_kafka_topic(in, 1);
  create_kafka_topic(out, 4);
  std::vector<KafkaRecord> records;
  for (int i = 0; i < 40; ++i) records.push_back(kafka_value("{\"n\":" + std::to_string(i) + "}"));
  produce_kafka(in, records);
  auto r = run(bounded_source("src", "n INT", in, ", 'format' = 'json'") +
               "CREATE TABLE dst (n INT) WITH ('connector' = 'kafka', 'topic' = '" + out +
               "', 'properties.bootstrap.servers' = '${B}', 'format' = 'json', 'sink.parallelism' = '3', "
               "'sink.partitioner' = 'fixed');\n"
               "INSERT INTO dst SELECT * FROM src;\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto got = consume_kafka(out);
  EXPECT_EQ(got.size(), 40u);
  for (const auto& rec : got) EXPECT_LT(rec.partition, 3) << "sink subtask i writes partition i under 'fixed'";
  auto spec = clink::test::run_clink("explain '" + (dir_ / "job.sql").string() + "' --spec", dir_);
  EXPECT_NE(spec.out.find("\"parallelism\": 3"), std::string::npos) << spec.out;
}

// Writable metadata: a persisted `timestamp` and `headers` column becomes each record's
// timestamp and headers; read back through the same table. Non-writable metadata must be
// VIRTUAL to be declared on a table that is written.
TEST_F(SqlKafka, WritesTimestampAndHeadersMetadata) {
  const std::string topic = unique_kafka_name("meta-w");
  create_kafka_topic(topic, 1);
  const std::string table =
      "CREATE TABLE t (id INT, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', hdrs MAP<STRING, BYTES> METADATA FROM "
      "'headers', off BIGINT METADATA FROM 'offset' VIRTUAL) WITH ('connector' = 'kafka', 'topic' = '" + topic +
      "', 'properties.bootstrap.servers' = '${B}', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset', "
      "'scan.bounded.mode' = 'latest-offset');\n";
  auto r = run(table + "INSERT INTO t SELECT 7, TO_TIMESTAMP_LTZ(1700000000123, 3), MAP['trace', CAST('t1' AS BYTES)];\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto records = consume_kafka(topic);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].value, R"({"id":7})") << "metadata columns are not in the value";
  r = run(table + print_sink("out", "id INT, ts TIMESTAMP_LTZ(3), trace STRING, off BIGINT") +
          "INSERT INTO out SELECT id, ts, CAST(hdrs['trace'] AS STRING), off FROM t;\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.lines(), (std::vector<std::string>{"+I[7, 2023-11-14T22:13:20.123Z, t1, 0]"}));
  r = run("CREATE TABLE w (id INT, off BIGINT METADATA FROM 'offset') WITH ('connector' = 'kafka', 'topic' = '" +
          topic + "', 'properties.bootstrap.servers' = '${B}', 'format' = 'json');\n"
          "INSERT INTO w SELECT 1, CAST(2 AS BIGINT);\n");
  EXPECT_NE(r.err.find("the kafka connector cannot write metadata 'offset'"), std::string::npos) << r.err;
}

// Debezium change events (the Debezium tutorial's products) as a changelog source: a
// GROUP BY over them retracts what an update or a delete changes.
TEST_F(SqlKafka, DebeziumTopicFeedsAnAggregateWithRetractions) {
  const std::string topic = unique_kafka_name("dbz");
  create_kafka_topic(topic, 1);
  produce_kafka(topic, {
      kafka_value(R"({"before":null,"after":{"id":111,"name":"scooter","weight":5.18},"op":"c","ts_ms":1})"),
      kafka_value(R"({"before":null,"after":{"id":112,"name":"car battery","weight":8.1},"op":"c","ts_ms":2})"),
      kafka_value(R"({"before":{"id":111,"name":"scooter","weight":5.18},"after":{"id":111,"name":"scooter","weight":5.17},"op":"u","ts_ms":3})"),
      kafka_value(R"({"before":{"id":112,"name":"car battery","weight":8.1},"after":null,"op":"d","ts_ms":4})")});
  auto r = run(bounded_source("products", "id INT, name STRING, weight DECIMAL(10, 2)", topic,
                              ", 'format' = 'debezium-json'") +
               print_sink("out", "n BIGINT, total DECIMAL(38, 2)") +
               "INSERT INTO out SELECT COUNT(*), SUM(weight) FROM products;\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Applied in order, the changelog ends at the one product left; every retraction
  // retracts the row emitted before it.
  std::vector<std::string> state;
  for (const auto& line : r.lines()) {
    std::string row = line.substr(2);
    if (line.starts_with("+I") || line.starts_with("+U")) {
      state.push_back(row);
    } else {
      ASSERT_FALSE(state.empty()) << r.out;
      EXPECT_EQ(state.back(), row) << r.out;
      state.pop_back();
    }
  }
  EXPECT_EQ(state, std::vector<std::string>{"[1, 5.17]"}) << r.out;
  EXPECT_NE(r.out.find("-U["), std::string::npos) << "an update retracts: " << r.out;
  // The same topic written back in debezium-json by a kafka sink: a changelog sink.
  const std::string out = unique_kafka_name("dbz-out");
  create_kafka_topic(out, 1);
  r = run(bounded_source("products", "id INT, name STRING, weight DECIMAL(10, 2)", topic,
                         ", 'format' = 'debezium-json'") +
          "CREATE TABLE totals (name STRING, total DECIMAL(38, 2)) WITH ('connector' = 'kafka', 'topic' = '" + out +
          "', 'properties.bootstrap.servers' = '${B}', 'format' = 'debezium-json');\n"
          "INSERT INTO totals SELECT name, SUM(weight) FROM products GROUP BY name;\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto written = values_of(consume_kafka(out));
  ASSERT_FALSE(written.empty());
  EXPECT_EQ(written.back(), R"({"before":{"name":"car battery","total":8.10},"after":null,"op":"d"})");
}

}  // namespace
}  // namespace clink::test
