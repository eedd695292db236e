// sql_filesystem_source and sql_filesystem_sink in real jobs: rows, projection, bad
// records (fail with the position, ignore and count, or dead letters), partitions,
// overwrite, insert-only.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../support/checkpoint_support.hpp"
#include "clink/connectors/sql/sql_sinks.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "sql_job_support.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

json people_schema() { return schema_json({{"id", "BIGINT"}, {"name", "STRING"}, {"score", "DECIMAL(5, 2)"}}); }

// source -> collect("name"), and the source's dead letters to a dead-letter sink when `dlq`.
JobGraph source_to_collect(json source_params, const std::string& name, const fs::path* dlq = nullptr) {
  JobGraph g;
  json collect = {{"name", name}, {"schema", source_params["schema"]}};
  if (source_params.contains("projected")) {
    json out = json::array();
    for (const auto& i : source_params["projected"]) out.push_back(source_params["schema"][i.get<std::size_t>()]);
    collect["schema"] = out;
  }
  if (dlq) source_params["dead_letter"] = true;
  g.add_node(registry_node("src", "sql_filesystem_source", source_params));
  g.add_node(registry_node("out", "sql_collect_sink", collect));
  g.add_edge(forward("src", "out"));
  if (dlq) {
    g.add_node(registry_node("dlq", "sql_dead_letter_sink", {{"path", dlq->string()}}));
    g.add_edge(forward("src", "dlq", "dead-letter"));
  }
  return g;
}

TEST(SqlFilesystemSource, ReadsADirectoryOfJsonFilesWithProjection) {
  TempDir dir;
  write_file(dir.path / "in/a.json", "{\"id\":1,\"name\":\"ann\",\"score\":1.5}\n\n{\"name\":\"bob\",\"id\":2}\n");
  write_file(dir.path / "in/b.json", "{\"id\":3,\"name\":\"cy\",\"score\":\"999.999\"}");
  write_file(dir.path / "in/_hidden.json", "not json");
  json p = {{"path", (dir.path / "in").string()}, {"format", "json"}, {"schema", people_schema()}, {"projected", {2, 0}}};
  execute(source_to_collect(p, "fs-proj"));
  auto results = SqlCollectResults::get("fs-proj");
  EXPECT_THAT(results->changelog(), ElementsAre("+I[1.50, 1]", "+I[null, 2]", "+I[null, 3]"));  // 999.999 overflows (5, 2)
  SqlCollectResults::drop("fs-proj");
}

TEST(SqlFilesystemSource, CsvWithOptions) {
  TempDir dir;
  write_file(dir.path / "x.csv", "# header\n1;\"a;b\";2.5\n2;N/A;3\n");
  json p = {{"path", (dir.path / "x.csv").string()}, {"format", "csv"}, {"schema", people_schema()},
            {"csv.field-delimiter", ";"}, {"csv.allow-comments", "true"}, {"csv.null-literal", "N/A"}};
  execute(source_to_collect(p, "fs-csv"));
  EXPECT_THAT(SqlCollectResults::get("fs-csv")->changelog(), ElementsAre("+I[1, a;b, 2.50]", "+I[2, null, 3.00]"));
  SqlCollectResults::drop("fs-csv");
}

TEST(SqlFilesystemSource, AMalformedLineFailsTheJobWithItsPosition) {
  TempDir dir;
  std::string file = (dir.path / "bad.json").string();
  write_file(file, "{\"id\":1}\n{\"id\":\"x\"}\n");
  json p = {{"path", file}, {"format", "json"}, {"schema", people_schema()}};
  try {
    execute(source_to_collect(p, "fs-bad"));
    FAIL() << "the job should fail";
  } catch (const JobFailedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("file " + file + " line 2: field \"id\": 'x' is not a valid BIGINT"));
  }
  SqlCollectResults::drop("fs-bad");
}

TEST(SqlFilesystemSource, IgnoreParseErrorsSkipsAndCounts) {
  TempDir dir;
  write_file(dir.path / "in.json", "{\"id\":1}\n{\"id\":\"x\"}\nnot json\n{\"id\":4}\n");
  json p = {{"path", (dir.path / "in.json").string()}, {"format", "json"}, {"schema", people_schema()},
            {"json.ignore-parse-errors", "true"}};
  auto handle = execute_async(source_to_collect(p, "fs-ignore"));
  handle.wait();
  // A field that does not convert is NULL (Flink's nullable converter); a line that is not
  // JSON is skipped.
  EXPECT_THAT(SqlCollectResults::get("fs-ignore")->changelog(),
              ElementsAre("+I[1, null, null]", "+I[null, null, null]", "+I[4, null, null]"));
  auto m = handle.metrics().total("src");
  EXPECT_EQ(m.dead_letters, 0);
  EXPECT_EQ(m.dead_letters_by_reason, (std::map<std::string, std::int64_t>{{"ignored-parse-error", 1}}));
  SqlCollectResults::drop("fs-ignore");
}

TEST(SqlFilesystemSource, BadRecordsGoToTheDeadLetterSinkWithReasonOriginPosition) {
  TempDir dir;
  std::string file = (dir.path / "in.json").string();
  write_file(file, "{\"id\":1,\"name\":\"a\",\"score\":1}\n{\"id\":2}\n{\"id\":[3]}\n{\"id\":4,\"name\":\"d\",\"score\":4}\n");
  json p = {{"path", file}, {"format", "json"}, {"schema", people_schema()}, {"json.fail-on-missing-field", "true"}};
  fs::path dlq = dir.path / "dlq";
  auto handle = execute_async(source_to_collect(p, "fs-dlq", &dlq));
  handle.wait();
  EXPECT_THAT(SqlCollectResults::get("fs-dlq")->changelog(), ElementsAre("+I[1, a, 1.00]", "+I[4, d, 4.00]"));
  EXPECT_EQ(committed_lines(dlq),
            (std::vector<std::string>{
                "{\"reason\":\"missing-field: missing field \\\"name\\\"\",\"origin\":\"src\",\"position\":\"file " +
                    file + " line 2\",\"payload\":\"{\\\"id\\\":2}\"}",
                "{\"reason\":\"parse-error: field \\\"id\\\": a JSON array is not a valid BIGINT\",\"origin\":\"src\","
                "\"position\":\"file " + file + " line 3\",\"payload\":\"{\\\"id\\\":[3]}\"}"}));
  auto m = handle.metrics().total("src");
  EXPECT_EQ(m.dead_letters, 2);
  EXPECT_EQ(m.dead_letters_by_reason, (std::map<std::string, std::int64_t>{{"missing-field", 1}, {"parse-error", 1}}));
  SqlCollectResults::drop("fs-dlq");
}

// A fixed batch of rows for the sink tests.
ColumnBatch sales(std::vector<std::vector<Value>> rows, RowKind kind = RowKind::kInsert) {
  ColumnBatch b(schema_of({{"day", "DATE"}, {"region", "STRING"}, {"amount", "BIGINT"}}));
  for (auto& r : rows) b.append_row(r, kind);
  return b;
}

JobGraph batches_to_sink(std::vector<ColumnBatch> batches, json sink_params) {
  JobGraph g;
  sink_params["schema"] = schema_json({{"day", "DATE"}, {"region", "STRING"}, {"amount", "BIGINT"}});
  g.add_node(batches_node("src", std::move(batches)));
  g.add_node(registry_node("sink", "sql_filesystem_sink", sink_params));
  g.add_edge(forward("src", "sink"));
  return g;
}

TEST(SqlFilesystemSink, PartitionedHiveStyleDirectories) {
  TempDir dir;
  fs::path out = dir.path / "out";
  execute(batches_to_sink({sales({{18367, "eu", 5}, {18367, "us/west", 7}, {18368, Value::null(), 1}})},
                          {{"path", out.string()}, {"format", "csv"}, {"partition_by", {0, 1}}}));
  EXPECT_EQ(listing(out), (std::vector<std::string>{"day=2020-04-15/region=eu/part-0-0.csv",
                                                    "day=2020-04-15/region=us%2Fwest/part-0-0.csv",
                                                    "day=2020-04-16/region=__DEFAULT_PARTITION__/part-0-0.csv"}));
  EXPECT_EQ(slurp(out / "day=2020-04-15/region=us%2Fwest/part-0-0.csv"), "7\n");
}

TEST(SqlFilesystemSink, JsonRowsWithoutPartitions) {
  TempDir dir;
  fs::path out = dir.path / "out";
  execute(batches_to_sink({sales({{18367, "eu", 5}}), sales({{18368, "us", 7}})}, {{"path", out.string()}, {"format", "json"}}));
  EXPECT_EQ(listing(out), std::vector<std::string>{"part-0-0.json"});
  EXPECT_EQ(slurp(out / "part-0-0.json"),
            "{\"day\":\"2020-04-15\",\"region\":\"eu\",\"amount\":5}\n{\"day\":\"2020-04-16\",\"region\":\"us\",\"amount\":7}\n");
}

TEST(SqlFilesystemSink, OverwriteReplacesTheTargetsContents) {
  TempDir dir;
  fs::path out = dir.path / "out";
  write_file(out / "old-1.json", "old\n");
  write_file(out / "part-0-0.json", "older run\n");
  write_file(out / "sub/old-2.json", "old\n");
  execute(batches_to_sink({sales({{18367, "eu", 5}})}, {{"path", out.string()}, {"format", "json"}, {"overwrite", true}}));
  // Numbered past the existing part file, which the overwrite then removed.
  EXPECT_EQ(listing(out), std::vector<std::string>{"part-0-1.json"});
  EXPECT_EQ(slurp(out / "part-0-1.json"), "{\"day\":\"2020-04-15\",\"region\":\"eu\",\"amount\":5}\n");
}

TEST(SqlFilesystemSink, ASecondJobIntoTheSameDirectoryKeepsTheFirstJobsFiles) {
  TempDir dir;
  fs::path out = dir.path / "out";
  execute(batches_to_sink({sales({{18367, "eu", 5}})}, {{"path", out.string()}, {"format", "csv"}}));
  execute(batches_to_sink({sales({{18368, "us", 7}})}, {{"path", out.string()}, {"format", "csv"}}));
  EXPECT_EQ(listing(out), (std::vector<std::string>{"part-0-0.csv", "part-0-1.csv"}));
  EXPECT_EQ(slurp(out / "part-0-0.csv"), "2020-04-15,eu,5\n");
  EXPECT_EQ(slurp(out / "part-0-1.csv"), "2020-04-16,us,7\n");
}

TEST(SqlFilesystemSink, PartitionedOverwriteReplacesOnlyThePartitionsWritten) {
  TempDir dir;
  fs::path out = dir.path / "out";
  write_file(out / "region=eu/old.csv", "1\n");
  write_file(out / "region=us/old.csv", "2\n");
  JobGraph g = batches_to_sink({sales({{18367, "eu", 5}})},
                               {{"path", out.string()}, {"format", "csv"}, {"overwrite", true}, {"partition_by", {1}}});
  execute(g);
  EXPECT_EQ(listing(out), (std::vector<std::string>{"region=eu/part-0-0.csv", "region=us/old.csv"}));
  EXPECT_EQ(slurp(out / "region=eu/part-0-0.csv"), "2020-04-15,5\n");
}

TEST(SqlFilesystemSink, IsInsertOnly) {
  TempDir dir;
  try {
    execute(batches_to_sink({sales({{18367, "eu", 5}}, RowKind::kUpdateBefore)},
                            {{"path", (dir.path / "out").string()}, {"format", "json"}}));
    FAIL() << "the job should fail";
  } catch (const JobFailedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("is insert-only and got a -U row: -U[2020-04-15, eu, 5]"));
  }
  EXPECT_EQ(listing(dir.path / "out"), std::vector<std::string>{});  // nothing committed
}

std::string make_error(const std::string& factory, json params) {
  try {
    registry_node("op", factory, params);
  } catch (const ClinkError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SqlFilesystemConnectors, ParamErrorsNameTheOptionAndValue) {
  json s = people_schema();
  EXPECT_EQ(make_error("sql_filesystem_source", {{"schema", s}, {"path", "/x"}, {"format", "xml"}}),
            "op 'op' (sql_filesystem_source): option 'format' must be json or csv, got 'xml'");
  EXPECT_EQ(make_error("sql_filesystem_source", {{"schema", s}, {"path", "/x"}, {"format", "json"}, {"csv.field-delimiter", ";"}}),
            "op 'op' (sql_filesystem_source): unknown option 'csv.field-delimiter' = ';' (known: path, format, "
            "partition.default-name, source.monitor-interval)");
  EXPECT_EQ(make_error("sql_filesystem_source", {{"schema", s}, {"format", "json"}}),
            "op 'op' (sql_filesystem_source): missing required option 'path'");
  EXPECT_EQ(make_error("sql_filesystem_source",
                       {{"schema", s}, {"path", "/x"}, {"format", "json"}, {"json.ignore-parse-errors", "maybe"}}),
            "op 'op' (sql_filesystem_source): option 'json.ignore-parse-errors' must be true or false, got 'maybe'");
  EXPECT_EQ(make_error("sql_filesystem_source", {{"schema", s}, {"path", "/x"}, {"format", "json"}, {"projected", {5}}}),
            "op 'op' (sql_filesystem_source): param 'projected': 5 is not a column index below 3");
  EXPECT_EQ(make_error("sql_filesystem_sink", {{"schema", s}, {"path", "/x"}, {"format", "json"}, {"partition_by", {3}}}),
            "op 'op' (sql_filesystem_sink): param 'partition_by': 3 is not a column index below 3");
  EXPECT_EQ(make_error("sql_filesystem_sink",
                       {{"schema", schema_json({{"m", "MAP<STRING, INT>"}})}, {"path", "/x"}, {"format", "csv"}}),
            "op 'op' (sql_filesystem_sink): csv format does not support the type MAP<STRING, INT> of field `m`");
  EXPECT_EQ(make_error("sql_filesystem_sink", {{"schema", s}, {"input_schemas", {schema_json({{"id", "INT"}})}},
                                               {"path", "/x"}, {"format", "json"}}),
            "op 'op' (sql_filesystem_sink): input schema (`id` INT) differs from the sink's schema "
            "(`id` BIGINT, `name` STRING, `score` DECIMAL(5, 2))");
  EXPECT_EQ(make_error("sql_filesystem_source",
                       {{"schema", s}, {"path", "/x"}, {"format", "json"}, {"partition_keys", {0}},
                        {"partition_filter", sql::expr_to_json(*sql::expr::column(1, LogicalType::string(), "name"))}}),
            "op 'op' (sql_filesystem_source): param 'partition_filter' is STRING, it must be a BOOLEAN");
  EXPECT_EQ(make_error("sql_filesystem_source",
                       {{"schema", s}, {"path", "/x"}, {"format", "json"}, {"partition_keys", {0}},
                        {"partition_filter", {{"call", "IS NULL"}, {"args", {{{"col", 1}}}}}}}),
            "op 'op' (sql_filesystem_source): param 'partition_filter' references `name`, which is not a partition "
            "column");
  EXPECT_EQ(make_error("sql_filesystem_source",
                       {{"schema", s}, {"path", "/x"}, {"format", "json"}, {"partition_keys", {0, 1, 2}}}),
            "op 'op' (sql_filesystem_source): every column of (`id` BIGINT, `name` STRING, `score` DECIMAL(5, 2)) is a "
            "partition column: the files hold none");
  EXPECT_EQ(make_error("sql_filesystem_sink", {{"schema", s}, {"path", "/x"}, {"format", "json"},
                                               {"partition.default-name", "a/b"}}),
            "op 'op' (sql_filesystem_sink): option 'partition.default-name' must be a non-empty directory name, got 'a/b'");
}

}  // namespace
}  // namespace clink::test
