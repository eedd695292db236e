// debezium-json, canal-json and maxwell-json against Flink's Debezium/Canal/MaxwellJson
// SerDe schemas: the documentation's sample messages and Flink's own test data
// (flink-formats/flink-json/src/test/resources/{canal,maxwell}-data.txt, copied into
// tests/sql_connectors/data), with the row kinds and values Flink's tests expect.
#include <gtest/gtest.h>

#include <fstream>

#include "clink/core/error.hpp"
#include "record_format_harness.hpp"

namespace clink::test {
using namespace clink::sql;
namespace {

using Rows = std::vector<std::string>;

std::vector<std::string> lines_of(const std::string& name) {
  std::ifstream in(std::string(CLINK_SOURCE_DIR) + "/tests/sql_connectors/data/" + name);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

SchemaPtr products() {
  return fields_of({{"id", "INT"}, {"name", "STRING"}, {"description", "STRING"}, {"weight", "DOUBLE"}});
}

// The rows Flink's Canal and Maxwell tests expect from their data files.
const Rows kProductChanges = {
    "+I[101, scooter, Small 2-wheel scooter, 3.14]",
    "+I[102, car battery, 12V car battery, 8.1]",
    "+I[103, 12-pack drill bits, 12-pack of drill bits with sizes ranging from #40 to #3, 0.8]",
    "+I[104, hammer, 12oz carpenter's hammer, 0.75]",
    "+I[105, hammer, 14oz carpenter's hammer, 0.875]",
    "+I[106, hammer, 16oz carpenter's hammer, 1.0]",
    "+I[107, rocks, box of assorted rocks, 5.3]",
    "+I[108, jacket, water resistent black wind breaker, 0.1]",
    "+I[109, spare tire, 24 inch spare tire, 22.2]",
    "-U[106, hammer, 16oz carpenter's hammer, 1.0]",
    "+U[106, hammer, 18oz carpenter hammer, 1.0]",
    "-U[107, rocks, box of assorted rocks, 5.3]",
    "+U[107, rocks, box of assorted rocks, 5.1]",
    "+I[110, jacket, water resistent white wind breaker, 0.2]",
    "+I[111, scooter, Big 2-wheel scooter , 5.18]",
    "-U[110, jacket, water resistent white wind breaker, 0.2]",
    "+U[110, jacket, new water resistent white wind breaker, 0.5]",
    "-U[111, scooter, Big 2-wheel scooter , 5.18]",
    "+U[111, scooter, Big 2-wheel scooter , 5.17]",
    "-D[111, scooter, Big 2-wheel scooter , 5.17]",
    "-U[101, scooter, Small 2-wheel scooter, 3.14]",
    "+U[101, scooter, Small 2-wheel scooter, 5.17]",
    "-U[102, car battery, 12V car battery, 8.1]",
    "+U[102, car battery, 12V car battery, 5.17]",
    "-D[102, car battery, 12V car battery, 5.17]",
    "-D[103, 12-pack drill bits, 12-pack of drill bits with sizes ranging from #40 to #3, 0.8]",
};

// ---- debezium-json --------------------------------------------------------------------

// The update in Flink's "Debezium Format" documentation.
const std::string kDebeziumUpdate =
    R"({"before":{"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.18},)"
    R"("after":{"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.15},)"
    R"("source":{"version":"1.1.1.Final","connector":"mysql","name":"dbserver1","ts_ms":0,"snapshot":"true",)"
    R"("db":"inventory","table":"products","server_id":0,"gtid":null,"file":"mysql-bin.000003","pos":154,"row":0,)"
    R"("thread":2,"query":null},"op":"u","ts_ms":1589362330904,"transaction":null})";

TEST(DebeziumJsonFormat, DocumentationMessages) {
  auto rows = decode("debezium-json", products(),
                     {kDebeziumUpdate,
                      R"({"before":null,"after":{"id":101,"name":"scooter","description":"Small 2-wheel scooter","weight":3.14},"source":{},"op":"r","ts_ms":1589355606100})",
                      R"({"before":null,"after":{"id":110,"name":"jacket","description":"water resistent white wind breaker","weight":0.2},"op":"c"})",
                      R"({"op":"d","before":{"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.17},"after":null})",
                      ""});  // a tombstone: no row
  EXPECT_EQ(rows, (Rows{"-U[111, scooter, Big 2-wheel scooter, 5.18]", "+U[111, scooter, Big 2-wheel scooter, 5.15]",
                        "+I[101, scooter, Small 2-wheel scooter, 3.14]",
                        "+I[110, jacket, water resistent white wind breaker, 0.2]",
                        "-D[111, scooter, Big 2-wheel scooter, 5.17]"}));
}

TEST(DebeziumJsonFormat, SchemaInclude) {
  const std::string with_schema =
      R"({"schema":{"type":"struct","fields":[{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],)"
      R"("optional":true,"name":"dbserver1.inventory.products.Value","field":"before"}],"optional":false},)"
      R"("payload":)" + kDebeziumUpdate + "}";
  EXPECT_EQ(decode("debezium-json", products(), {with_schema}, {{"debezium-json.schema-include", "true"}}),
            (Rows{"-U[111, scooter, Big 2-wheel scooter, 5.18]", "+U[111, scooter, Big 2-wheel scooter, 5.15]"}));
  // Without the option such a message has no "op": Flink fails it as corrupt; the reason says why.
  EXPECT_EQ(decode("debezium-json", products(), {with_schema}),
            Rows{"ERROR: missing \"op\" field (the message has a \"payload\": set 'debezium-json.schema-include' to "
                 "true)"});
  EXPECT_EQ(decode("debezium-json", products(), {kDebeziumUpdate}, {{"debezium-json.schema-include", "true"}}),
            Rows{"ERROR: missing \"payload\" field ('debezium-json.schema-include' is true: messages are "
                 "{\"schema\":..,\"payload\":..})"});
}

TEST(DebeziumJsonFormat, MalformedMessages) {
  auto s = products();
  EXPECT_EQ(decode("debezium-json", s,
                   {R"({"before":null,"after":{"id":1},"op":"u"})", R"({"before":null,"after":null,"op":"d"})",
                    R"({"after":{"id":1},"op":"x"})", R"({"after":{"id":"one"},"op":"c"})",
                    R"({"before":{"id":1},"after":{"id":"two"},"op":"u"})", R"({"after":{"id":1}})", "{",
                    R"({"after":[1],"op":"c"})"}),
            (Rows{"ERROR: The \"before\" field of UPDATE message is null, if you are using Debezium Postgres "
                  "Connector, please check the Postgres table has been set REPLICA IDENTITY to FULL level.",
                  "ERROR: The \"before\" field of DELETE message is null, if you are using Debezium Postgres "
                  "Connector, please check the Postgres table has been set REPLICA IDENTITY to FULL level.",
                  "ERROR: Unknown \"op\" value \"x\"", "ERROR: \"after\": field \"id\": 'one' is not a valid INT",
                  "ERROR: \"after\": field \"id\": 'two' is not a valid INT",  // -U appended first, then undone
                  "ERROR: missing \"op\" field",
                  "ERROR: invalid JSON (JSON document ended early in the middle of an object or array.)",
                  "ERROR: field \"after\": expected a JSON object"}));
  std::size_t skipped = 0;
  EXPECT_EQ(decode("debezium-json", s, {R"({"op":"u","after":{"id":1}})", kDebeziumUpdate, "[]"},
                   {{"debezium-json.ignore-parse-errors", "true"}}, &skipped),
            (Rows{"-U[111, scooter, Big 2-wheel scooter, 5.18]", "+U[111, scooter, Big 2-wheel scooter, 5.15]"}));
  EXPECT_EQ(skipped, 2u);
}

// Found by fuzz_record_format: in a message that ends early, the search for "op"
// failed part-way, and the hint that looked for a "payload" then searched the spent
// document through a null parser (a crash of the job's task). Malformed messages are
// now rejected before any field is looked up.
TEST(DebeziumJsonFormat, AMalformedValueBeforeTheOpFieldIsAnErrorNotACrash) {
  const auto rows = decode("debezium-json", products(), {R"({"":{})"});  // ends inside the object
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0],
            "ERROR: invalid JSON (The JSON document has an improper structure: missing or superfluous commas, braces, "
            "missing keys, etc.)");
}

// The envelope is read in one ordered pass (no lookup by name, which rewound the
// document): its fields in any order, a repeated one's last value (as Jackson's tree),
// unread fields skipped whatever they hold, and content after the object an error.
TEST(DebeziumJsonFormat, EnvelopeFieldsInAnyOrderInOnePass) {
  auto s = fields_of({{"id", "INT"}, {"name", "STRING"}});
  EXPECT_EQ(decode("debezium-json", s,
                   {R"({"op":"u","source":{"a":[1,{"b":null}],"op":"x"},"after":{"name":"n\"2","id":2},)"
                    R"("ts_ms":1,"before":{"id":1,"name":"n1"}})",
                    R"({"op":"x","after":{"id":3},"op":"c"})", R"({"op":"c","after":{"id":4}} {})",
                    R"({"op":"c","after":{"id":5},"after":null})"}),
            (Rows{"-U[1, n1]", "+U[2, n\"2]", "+I[3, null]", "ERROR: unexpected content after the JSON object",
                  "ERROR: The \"after\" field of INSERT message is null"}));
  EXPECT_EQ(decode("canal-json", s, {R"({"type":"UPDATE","old":[{"name":"a"}],"x":{"data":1},"data":[{"id":1,"name":"b"}]})"}),
            (Rows{"-U[1, a]", "+U[1, b]"}));
  EXPECT_EQ(decode("maxwell-json", s, {R"({"old":{"name":"a"},"type":"update","data":{"id":1,"name":"b"}})"}),
            (Rows{"-U[1, a]", "+U[1, b]"}));
}

TEST(DebeziumJsonFormat, EncodesAsFlink) {
  auto s = fields_of({{"id", "INT"}, {"name", "STRING"}});
  auto in = batch_of(s, {{1, "a"}, {1, "a"}, {1, "b"}, {2, Value::null()}},
                     {RowKind::kInsert, RowKind::kUpdateBefore, RowKind::kUpdateAfter, RowKind::kDelete});
  EXPECT_EQ(encode("debezium-json", in), (Rows{R"({"before":null,"after":{"id":1,"name":"a"},"op":"c"})",
                                               R"({"before":{"id":1,"name":"a"},"after":null,"op":"d"})",
                                               R"({"before":null,"after":{"id":1,"name":"b"},"op":"c"})",
                                               R"({"before":{"id":2,"name":null},"after":null,"op":"d"})"}));
  EXPECT_EQ(encode("debezium-json", in, {{"debezium-json.encode.ignore-null-fields", "true"}}),
            (Rows{R"({"after":{"id":1,"name":"a"},"op":"c"})", R"({"before":{"id":1,"name":"a"},"op":"d"})",
                  R"({"after":{"id":1,"name":"b"},"op":"c"})", R"({"before":{"id":2},"op":"d"})"}));
  // Decoding them back: inserts and deletes (an update is written as a delete and an insert).
  EXPECT_EQ(decode("debezium-json", s, encode("debezium-json", in)),
            (Rows{"+I[1, a]", "-D[1, a]", "+I[1, b]", "-D[2, null]"}));
}

TEST(DebeziumJsonFormat, RoundTripEveryType) {
  auto s = fields_of({{"b", "BOOLEAN"}, {"i", "INT"}, {"l", "BIGINT"}, {"d", "DOUBLE"}, {"dec", "DECIMAL(10, 2)"},
                      {"s", "STRING"}, {"bin", "BYTES"}, {"dt", "DATE"}, {"ts", "TIMESTAMP(3)"},
                      {"ltz", "TIMESTAMP_LTZ(3)"}, {"arr", "ARRAY<STRING>"}, {"m", "MAP<STRING, INT>"},
                      {"r", "ROW<x INT, y ARRAY<INT>>"}});
  auto in = batch_of(s, {{true, 7, std::int64_t{-9000000000}, 0.5, Value::decimal(-1), "x\"y", std::string("\0\1", 2),
                          -3, std::int64_t{1586937909123000}, std::int64_t{1586937909123000}, ValueList{{"a", Value::null()}},
                          ValueList{{"k", 1, "n", Value::null()}}, ValueList{{3, ValueList{{4, 5}}}}},
                         std::vector<Value>(13, Value::null())},
                     {RowKind::kInsert, RowKind::kDelete});
  for (const char* f : {"debezium-json", "canal-json", "maxwell-json"}) {
    EXPECT_EQ(decode(f, s, encode(f, in)), format_rows(in, *TimeZone::utc())) << f;
    FormatOptions iso = {{std::string(f) + ".timestamp-format.standard", "ISO-8601"}};
    EXPECT_EQ(decode(f, s, encode(f, in, iso), iso), format_rows(in, *TimeZone::utc())) << f;
  }
}

TEST(DebeziumJsonFormat, OptionErrors) {
  auto s = products();
  EXPECT_EQ(error_of([&] { make_record_encoder("debezium-json", s, {{"debezium-json.schema-include", "true"}}); }),
            "Debezium JSON serialization doesn't support 'debezium-json.schema-include' option been set to true.");
  EXPECT_EQ(error_of([&] { make_record_decoder("debezium-json", s, {{"debezium-json.schema-include", "yes"}}); }),
            "option 'debezium-json.schema-include' must be true or false, got 'yes'");
  EXPECT_EQ(error_of([&] {
              make_record_decoder("debezium-json", s, {{"debezium-json.timestamp-format.standard", "sql"}});
            }),
            "option 'debezium-json.timestamp-format.standard' must be SQL or ISO-8601, got 'sql'");
  EXPECT_EQ(error_of([&] { make_record_decoder("debezium-json", s, {{"debezium-json.map-null-key.mode", "KEEP"}}); }),
            "option 'debezium-json.map-null-key.mode' must be FAIL, DROP or LITERAL, got 'KEEP'");
  EXPECT_EQ(error_of([&] { make_record_decoder("debezium-json", s, {{"debezium-json.fail-on-missing-field", "true"}}); }),
            "unknown option 'debezium-json.fail-on-missing-field' of format debezium-json (known: "
            "debezium-json.schema-include, debezium-json.ignore-parse-errors, debezium-json.timestamp-format.standard, "
            "debezium-json.map-null-key.mode, debezium-json.map-null-key.literal, "
            "debezium-json.encode.decimal-as-plain-number, debezium-json.encode.ignore-null-fields)");
  EXPECT_EQ(error_of([&] { make_record_decoder("maxwell-json", s, {{"maxwell-json.schema-include", "true"}}); }),
            "unknown option 'maxwell-json.schema-include' of format maxwell-json (known: "
            "maxwell-json.ignore-parse-errors, maxwell-json.timestamp-format.standard, maxwell-json.map-null-key.mode, "
            "maxwell-json.map-null-key.literal, maxwell-json.encode.decimal-as-plain-number, "
            "maxwell-json.encode.ignore-null-fields)");
  EXPECT_EQ(error_of([&] { make_record_decoder("canal-json", s, {{"canal-json.table.include", "prod(ucts"}}); }),
            "option 'canal-json.table.include' is not a valid regular expression: 'prod(ucts'");
  // The map-null-key options reach the row encoder.
  auto m = fields_of({{"m", "MAP<STRING, INT>"}});
  ColumnBatch b(m);
  b.append_row({ValueList{{Value::null(), 1}}});
  EXPECT_EQ(encode("debezium-json", b,
                   {{"debezium-json.map-null-key.mode", "LITERAL"}, {"debezium-json.map-null-key.literal", "nil"}}),
            Rows{R"({"before":null,"after":{"m":{"nil":1}},"op":"c"})"});
}

// ---- canal-json -----------------------------------------------------------------------

TEST(CanalJsonFormat, FlinkTestData) {
  auto lines = lines_of("canal-data.txt");
  ASSERT_EQ(lines.size(), 11u);
  EXPECT_EQ(decode("canal-json", products(), lines), kProductChanges);
}

TEST(CanalJsonFormat, DatabaseAndTableFilters) {
  auto lines = lines_of("canal-data.txt");
  EXPECT_EQ(decode("canal-json", products(), lines, {{"canal-json.table.include", "products"}}), Rows{});
  EXPECT_EQ(decode("canal-json", products(), lines,
                   {{"canal-json.database.include", "inv.*"}, {"canal-json.table.include", "products\\d"}}),
            kProductChanges);
  EXPECT_EQ(decode("canal-json", products(), {lines[1]}, {{"canal-json.database.include", "inventory2"}}), Rows{});
  EXPECT_EQ(decode("canal-json", products(), {R"({"data":[{"id":1}],"type":"INSERT"})"},
                   {{"canal-json.database.include", "x"}}),
            Rows{"ERROR: missing \"database\" field"});
}

TEST(CanalJsonFormat, UpdateTakesOldValuesThatAreNotNull) {
  // A field null in "old" did not change (Flink's canal-json copies data's value).
  EXPECT_EQ(decode("canal-json", products(),
                   {R"({"type":"UPDATE","old":[{"name":"a","weight":null},{}],"data":[{"id":1,"name":"b","weight":2.5},{"id":2,"name":"c"}]})"}),
            (Rows{"-U[1, a, null, 2.5]", "+U[1, b, null, 2.5]", "-U[2, c, null, null]", "+U[2, c, null, null]"}));
}

TEST(CanalJsonFormat, MalformedMessages) {
  auto s = products();
  EXPECT_EQ(decode("canal-json", s,
                   {R"({"data":[{"id":1}],"type":"ALTER","isDdl":true})", R"({"data":[{"id":1}]})",
                    R"({"data":[{"id":1}],"type":"UPDATE","old":[]})", R"({"data":[{"id":1},{"id":"x"}],"type":"INSERT"})",
                    R"({"data":{"id":1},"type":"DELETE"})", R"({"data":[{"id":1}],"type":"DELETE"})"}),
            (Rows{"ERROR: Unknown \"type\" value \"ALTER\"", "ERROR: missing \"type\" field",
                  "ERROR: the \"old\" field has 0 rows for 1 rows of \"data\"",
                  "ERROR: \"data\": field \"id\": 'x' is not a valid INT",
                  "ERROR: the \"data\" field is not a JSON array", "-D[1, null, null, null]"}));
  std::size_t skipped = 0;
  EXPECT_EQ(decode("canal-json", s, {R"({"data":[{"id":1}],"type":"ALTER"})", R"({"data":[{"id":1}],"type":"INSERT"})"},
                   {{"canal-json.ignore-parse-errors", "true"}}, &skipped),
            Rows{"+I[1, null, null, null]"});
  EXPECT_EQ(skipped, 1u);
}

TEST(CanalJsonFormat, EncodesAsFlink) {
  auto s = fields_of({{"id", "INT"}, {"price", "DECIMAL(10, 2)"}});
  auto in = batch_of(s, {{1, Value::decimal(150)}, {1, Value::decimal(150)}, {1, Value::decimal(1)}, {2, Value::null()}},
                     {RowKind::kInsert, RowKind::kUpdateBefore, RowKind::kUpdateAfter, RowKind::kDelete});
  EXPECT_EQ(encode("canal-json", in), (Rows{R"({"data":[{"id":1,"price":1.50}],"type":"INSERT"})",
                                            R"({"data":[{"id":1,"price":1.50}],"type":"DELETE"})",
                                            R"({"data":[{"id":1,"price":0.01}],"type":"INSERT"})",
                                            R"({"data":[{"id":2,"price":null}],"type":"DELETE"})"}));
  EXPECT_EQ(decode("canal-json", s, encode("canal-json", in)),
            (Rows{"+I[1, 1.50]", "-D[1, 1.50]", "+I[1, 0.01]", "-D[2, null]"}));
}

// ---- maxwell-json ---------------------------------------------------------------------

TEST(MaxwellJsonFormat, FlinkTestData) {
  auto lines = lines_of("maxwell-data.txt");
  ASSERT_EQ(lines.size(), 20u);
  EXPECT_EQ(decode("maxwell-json", products(), lines), kProductChanges);
}

TEST(MaxwellJsonFormat, UpdateTakesTheFieldsPresentInOld) {
  // A field present in "old", even as null, changed (Flink: findValue finds the null node).
  EXPECT_EQ(decode("maxwell-json", products(),
                   {R"({"type":"update","data":{"id":1,"name":"b","weight":2.5},"old":{"name":"a","weight":null}})"}),
            (Rows{"-U[1, a, null, null]", "+U[1, b, null, 2.5]"}));
}

TEST(MaxwellJsonFormat, MalformedMessages) {
  auto s = products();
  EXPECT_EQ(decode("maxwell-json", s,
                   {R"({"type":"bootstrap-insert","data":{"id":1}})", R"({"type":"update","data":{"id":1}})",
                    R"({"type":"insert"})", R"({"type":"insert","data":{"id":1.5e99}})", ""}),
            (Rows{"ERROR: Unknown \"type\" value \"bootstrap-insert\"", "ERROR: the \"old\" field of an update is null",
                  "ERROR: the \"data\" field is null", "ERROR: \"data\": field \"id\": '1.5e99' is not a valid INT"}));
  std::size_t skipped = 0;
  EXPECT_EQ(decode("maxwell-json", s, {R"({"type":"truncate"})", R"({"type":"delete","data":{"id":3}})"},
                   {{"maxwell-json.ignore-parse-errors", "true"}}, &skipped),
            Rows{"-D[3, null, null, null]"});
  EXPECT_EQ(skipped, 1u);
}

TEST(MaxwellJsonFormat, EncodesAsFlink) {
  auto s = fields_of({{"id", "INT"}, {"name", "STRING"}});
  auto in = batch_of(s, {{1, "a"}, {1, "a"}, {1, "b"}, {2, "c"}},
                     {RowKind::kInsert, RowKind::kUpdateBefore, RowKind::kUpdateAfter, RowKind::kDelete});
  EXPECT_EQ(encode("maxwell-json", in), (Rows{R"({"data":{"id":1,"name":"a"},"type":"insert"})",
                                              R"({"data":{"id":1,"name":"a"},"type":"delete"})",
                                              R"({"data":{"id":1,"name":"b"},"type":"insert"})",
                                              R"({"data":{"id":2,"name":"c"},"type":"delete"})"}));
}

}  // namespace
}  // namespace clink::test
