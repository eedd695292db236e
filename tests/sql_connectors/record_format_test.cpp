// The record formats (record_format.hpp): the registry, json, csv and raw as whole
// messages, against Flink's JsonRowData*/CsvRowData*/RawFormat* schemas.
#include <gtest/gtest.h>

#include "clink/core/error.hpp"
#include "record_format_harness.hpp"

namespace clink::test {
using namespace clink::sql;
namespace {

using Rows = std::vector<std::string>;

SchemaPtr every_type() {
  return fields_of({{"b", "BOOLEAN"}, {"t", "TINYINT"}, {"sm", "SMALLINT"}, {"i", "INT"}, {"l", "BIGINT"},
                    {"f", "FLOAT"}, {"d", "DOUBLE"}, {"dec", "DECIMAL(10, 2)"}, {"s", "STRING"}, {"bin", "BYTES"},
                    {"dt", "DATE"}, {"tm", "TIME(3)"}, {"ts", "TIMESTAMP(3)"}, {"arr", "ARRAY<INT>"},
                    {"m", "MAP<STRING, BIGINT>"}, {"r", "ROW<x INT, y STRING>"}});
}

std::vector<Value> full_row() {
  return {true,
          -5,
          300,
          70000,
          std::int64_t{9000000000},
          1.5,
          -2.25,
          Value::decimal(1235),
          "h\xc3\xa9llo \"q\", x",
          std::string("\x01\x02\xff", 3),
          18367,
          29109000,  // Flink's json writes TIME as HH:mm:ss: no fraction, so none here
          std::int64_t{1586937909123000},
          ValueList{{1, Value::null(), 3}},
          ValueList{{"k", 7}},
          ValueList{{1, "z"}}};
}

std::vector<Value> null_row(std::size_t n) { return std::vector<Value>(n, Value::null()); }

// Encodes the batch's rows, decodes the messages: the same rows come back.
void expect_round_trip(std::string_view format, const ColumnBatch& in, const FormatOptions& options = {}) {
  auto messages = encode(format, in, options);
  auto rows = decode(format, in.schema(), messages, options);
  EXPECT_EQ(rows, format_rows(in, *TimeZone::utc())) << format;
}

TEST(RecordFormatRegistry, NamesKindsAndKeys) {
  EXPECT_EQ(record_format_names(), "avro, canal-json, csv, debezium-json, json, maxwell-json, raw");
  for (const char* f : {"avro", "canal-json", "csv", "debezium-json", "json", "maxwell-json", "raw"})
    EXPECT_TRUE(record_format_known(f)) << f;
  EXPECT_FALSE(record_format_known("protobuf"));
  EXPECT_TRUE(record_format_is_changelog("debezium-json"));
  EXPECT_TRUE(record_format_is_changelog("canal-json"));
  EXPECT_TRUE(record_format_is_changelog("maxwell-json"));
  EXPECT_FALSE(record_format_is_changelog("json"));
  EXPECT_FALSE(record_format_is_changelog("avro"));
  EXPECT_EQ(record_format_keys("raw"), (std::vector<std::string>{"raw.charset", "raw.endianness"}));
  EXPECT_EQ(record_format_keys("json").size(), 7u);
  EXPECT_EQ(record_format_keys("debezium-json"),
            (std::vector<std::string>{"debezium-json.schema-include", "debezium-json.ignore-parse-errors",
                                      "debezium-json.timestamp-format.standard", "debezium-json.map-null-key.mode",
                                      "debezium-json.map-null-key.literal",
                                      "debezium-json.encode.decimal-as-plain-number",
                                      "debezium-json.encode.ignore-null-fields"}));
  EXPECT_EQ(error_of([] { make_record_decoder("protobuf", fields_of({{"a", "INT"}}), {}); }),
            "unknown format 'protobuf' (known: avro, canal-json, csv, debezium-json, json, maxwell-json, raw)");
  EXPECT_EQ(error_of([] { record_format_keys("xml"); }),
            "unknown format 'xml' (known: avro, canal-json, csv, debezium-json, json, maxwell-json, raw)");
}

// ---- json -----------------------------------------------------------------------------

TEST(RecordFormatJson, RoundTripEveryTypeAndNulls) {
  auto s = every_type();
  auto in = batch_of(s, {full_row(), null_row(s->size())});
  auto messages = encode("json", in);
  EXPECT_EQ(messages[1],
            R"({"b":null,"t":null,"sm":null,"i":null,"l":null,"f":null,"d":null,"dec":null,"s":null,"bin":null,)"
            R"("dt":null,"tm":null,"ts":null,"arr":null,"m":null,"r":null})");
  expect_round_trip("json", in);
  expect_round_trip("json", in, {{"json.timestamp-format.standard", "ISO-8601"}});
}

TEST(RecordFormatJson, DecodesIntoColumnsOfALargerBatch) {
  // The decoder fills exactly the columns it is given: here fields 1 and 2 of a batch.
  auto wide = fields_of({{"k", "STRING"}, {"a", "INT"}, {"b", "STRING"}});
  ColumnBatch batch(wide);
  auto dec = make_record_decoder("json", fields_of({{"a", "INT"}, {"b", "STRING"}}), {});
  std::vector<Column*> cols = {&batch.column(1), &batch.column(2)};
  std::vector<RowKind> kinds;
  std::string reason;
  batch.column(0).append_string("key");
  ASSERT_EQ(dec->decode(R"({"b":"x","a":7})", cols, kinds, reason), 1) << reason;
  batch.commit_rows(1, kinds[0]);
  EXPECT_EQ(format_rows(batch, *TimeZone::utc()), Rows{"+I[key, 7, x]"});
}

TEST(RecordFormatJson, MalformedMessagesLeaveTheColumns) {
  auto s = fields_of({{"a", "INT"}, {"b", "DOUBLE"}});
  EXPECT_EQ(decode("json", s, {R"({"a":1,"b":"x"})", R"({"a":1)", "", "[1]", R"({"a":2,"b":2.5})"}),
            (Rows{"ERROR: field \"b\": 'x' is not a valid DOUBLE",
                  "ERROR: invalid JSON (JSON document ended early in the middle of an object or array.)",
                  "ERROR: empty line", "ERROR: expected a JSON object", "+I[2, 2.5]"}));
}

// As Flink's: a field that does not convert is NULL, a message that is not JSON is skipped.
TEST(RecordFormatJson, IgnoreParseErrorsNullsFieldsAndSkipsMessages) {
  auto s = fields_of({{"a", "INT"}});
  std::size_t skipped = 0;
  EXPECT_EQ(decode("json", s, {R"({"a":"x"})", R"({"a":1})", "nope"}, {{"json.ignore-parse-errors", "true"}}, &skipped),
            (Rows{"+I[null]", "+I[1]"}));
  EXPECT_EQ(skipped, 1u);
}

TEST(RecordFormatJson, OptionErrors) {
  auto s = fields_of({{"a", "INT"}});
  EXPECT_EQ(error_of([&] { make_record_decoder("json", s, {{"json.ignore-parse-errors", "yes"}}); }),
            "option 'json.ignore-parse-errors' must be true or false, got 'yes'");
  EXPECT_EQ(error_of([&] { make_record_encoder("json", s, {{"json.timestamp-format.standard", "RFC"}}); }),
            "option 'json.timestamp-format.standard' must be SQL or ISO-8601, got 'RFC'");
  EXPECT_EQ(error_of([&] {
              make_record_decoder("json", s, {{"json.fail-on-missing-field", "true"}, {"json.ignore-parse-errors", "true"}});
            }),
            "options 'json.fail-on-missing-field' and 'json.ignore-parse-errors' cannot both be true");
  EXPECT_EQ(error_of([&] { make_record_decoder("json", s, {{"json.colour", "red"}}); }),
            "unknown option 'json.colour' of format json (known: json.fail-on-missing-field, json.ignore-parse-errors, "
            "json.timestamp-format.standard, json.map-null-key.mode, json.map-null-key.literal, "
            "json.encode.decimal-as-plain-number, json.encode.ignore-null-fields)");
  // Another format's options are not this format's business.
  EXPECT_EQ(error_of([&] { make_record_decoder("json", s, {{"csv.field-delimiter", "|"}}); }), "no error");
}

TEST(RecordFormatJson, InsertOnly) {
  auto s = fields_of({{"a", "INT"}});
  auto in = batch_of(s, {{1}}, {RowKind::kDelete});
  EXPECT_EQ(error_of([&] { encode("json", in); }), "json format is insert-only: it cannot write a -D row");
}

// ---- csv ------------------------------------------------------------------------------

TEST(RecordFormatCsv, RoundTripAndNoLineSeparator) {
  auto s = fields_of({{"b", "BOOLEAN"}, {"i", "INT"}, {"l", "BIGINT"}, {"d", "DOUBLE"}, {"dec", "DECIMAL(10, 2)"},
                      {"s", "STRING"}, {"bin", "BYTES"}, {"dt", "DATE"}, {"ts", "TIMESTAMP(3)"},
                      {"arr", "ARRAY<INT>"}, {"r", "ROW<x INT, y STRING>"}});
  auto in = batch_of(s, {{true, 7, std::int64_t{9000000000}, -2.25, Value::decimal(1235), "a,\"b\"",
                          std::string("\x01\x02", 2), 18367, std::int64_t{1586937909123000}, ValueList{{1, 2}},
                          ValueList{{1, "z"}}},
                         {Value::null(), Value::null(), Value::null(), Value::null(), Value::null(), "",
                          Value::null(), Value::null(), Value::null(), ValueList{}, Value::null()}});
  auto messages = encode("csv", in);
  EXPECT_EQ(messages, (Rows{R"(true,7,9000000000,-2.25,12.35,"a,""b""",AQI=,2020-04-15,2020-04-15 08:05:09.123,1;2,1;z)",
                            R"(,,,,,"",,,,"",)"}));
  // An empty INT field does not parse (as Flink's Integer.parseInt("")): NULLs round trip
  // through csv.null-literal.
  expect_round_trip("csv", in, {{"csv.null-literal", "n/a"}});
  EXPECT_EQ(encode("csv", in, {{"csv.null-literal", "n/a"}})[1], R"(n/a,n/a,n/a,n/a,n/a,"",n/a,n/a,n/a,"",n/a)");
}

TEST(RecordFormatCsv, MalformedAndIgnoreParseErrors) {
  auto s = fields_of({{"a", "INT"}, {"b", "STRING"}});
  EXPECT_EQ(decode("csv", s, {"x,y", "1,y,z", "\"open,y", "2,w\n", ""}),
            (Rows{"ERROR: field 1 (a): 'x' is not a valid INT", "ERROR: row length mismatch: 2 fields expected but was 3",
                  "ERROR: unterminated quoted field 1", "+I[2, w]"}));
  std::size_t skipped = 0;
  // With csv.ignore-parse-errors a bad field is NULL (as Flink); an unparseable record is skipped.
  EXPECT_EQ(decode("csv", s, {"x,y", "\"open,y"}, {{"csv.ignore-parse-errors", "true"}}, &skipped),
            Rows{"+I[null, y]"});
  EXPECT_EQ(skipped, 1u);
  EXPECT_EQ(error_of([&] { make_record_decoder("csv", s, {{"csv.field-delimiter", "ab"}}); }),
            "option 'csv.field-delimiter' must be a single character, got 'ab'");
  EXPECT_EQ(error_of([&] { make_record_encoder("csv", fields_of({{"m", "MAP<STRING, INT>"}}), {}); }),
            "csv format does not support the type MAP<STRING, INT> of field `m`");
}

// ---- raw ------------------------------------------------------------------------------

TEST(RecordFormatRaw, StringsAndBytesAreTheMessage) {
  auto s = fields_of({{"v", "STRING"}});
  EXPECT_EQ(decode("raw", s, {"hello, world", ""}), (Rows{"+I[hello, world]", "+I[]"}));
  auto in = batch_of(s, {{"h\xc3\xa9"}, {""}});
  EXPECT_EQ(encode("raw", in), (Rows{"h\xc3\xa9", ""}));
  expect_round_trip("raw", in);
  auto b = fields_of({{"v", "BYTES"}});
  auto bin = batch_of(b, {{std::string("\x00\x01\xff", 3)}});
  EXPECT_EQ(encode("raw", bin), Rows{std::string("\x00\x01\xff", 3)});
  expect_round_trip("raw", bin);
}

TEST(RecordFormatRaw, NumbersInEitherByteOrder) {
  auto s = fields_of({{"v", "INT"}});
  auto in = batch_of(s, {{0x01020304}, {-2}});
  EXPECT_EQ(encode("raw", in), (Rows{std::string("\x01\x02\x03\x04", 4), std::string("\xff\xff\xff\xfe", 4)}));
  EXPECT_EQ(encode("raw", in, {{"raw.endianness", "little-endian"}}),
            (Rows{std::string("\x04\x03\x02\x01", 4), std::string("\xfe\xff\xff\xff", 4)}));
  expect_round_trip("raw", in);
  expect_round_trip("raw", in, {{"raw.endianness", "little-endian"}});
  for (const char* t : {"BOOLEAN", "TINYINT", "SMALLINT", "BIGINT", "FLOAT", "DOUBLE"}) {
    auto st = fields_of({{"v", t}});
    std::vector<std::vector<Value>> rows;
    if (std::string(t) == "BOOLEAN") rows = {{true}, {false}};
    else if (std::string(t) == "FLOAT" || std::string(t) == "DOUBLE") rows = {{1.5}, {-0.25}};
    else rows = {{-1}, {100}};
    expect_round_trip("raw", batch_of(st, rows));
    expect_round_trip("raw", batch_of(st, rows), {{"raw.endianness", "little-endian"}});
  }
  auto d = fields_of({{"v", "DOUBLE"}});
  EXPECT_EQ(encode("raw", batch_of(d, {{1.0}})), Rows{std::string("\x3f\xf0\0\0\0\0\0\0", 8)});
  EXPECT_EQ(decode("raw", fields_of({{"v", "BOOLEAN"}}), {std::string("\x00", 1), "\x02"}),
            (Rows{"+I[false]", "+I[true]"}));
}

TEST(RecordFormatRaw, WrongLengthFailsAsFlink) {
  EXPECT_EQ(decode("raw", fields_of({{"v", "INT"}}), {"abc"}),
            Rows{"ERROR: Size of data received for deserializing INT type is not 4."});
  EXPECT_EQ(decode("raw", fields_of({{"v", "BOOLEAN"}}), {""}),
            Rows{"ERROR: Size of data received for deserializing BOOLEAN type is not 1."});
}

TEST(RecordFormatRaw, NullMessages) {
  auto s = fields_of({{"v", "STRING"}});
  auto dec = make_record_decoder("raw", s, {});
  ColumnBatch batch(s);
  std::vector<Column*> cols = {&batch.column(0)};
  std::vector<RowKind> kinds;
  EXPECT_EQ(dec->decode_null(cols, kinds), 1);
  batch.commit_rows(1, kinds[0]);
  EXPECT_EQ(format_rows(batch, *TimeZone::utc()), Rows{"+I[null]"});
  auto enc = make_record_encoder("raw", s, {});
  std::vector<const Column*> ccols = {&batch.column(0)};
  EXPECT_TRUE(enc->is_null_message(ccols, 0));
  std::string out;
  EXPECT_TRUE(enc->encode(ccols, 0, RowKind::kInsert, out));
  EXPECT_EQ(out, "");
  // Other formats: a null message has no row, no row is a null message.
  auto json = make_record_decoder("json", s, {});
  EXPECT_EQ(json->decode_null(cols, kinds), 0);
  EXPECT_FALSE(make_record_encoder("json", s, {})->is_null_message(ccols, 0));
}

TEST(RecordFormatRaw, OptionAndSchemaErrors) {
  auto s = fields_of({{"v", "STRING"}});
  EXPECT_EQ(error_of([&] { make_record_decoder("raw", s, {{"raw.charset", "ISO-8859-1"}}); }),
            "option 'raw.charset': only UTF-8 is supported, got 'ISO-8859-1'");
  EXPECT_EQ(error_of([&] { make_record_decoder("raw", s, {{"raw.charset", "utf-8"}}); }), "no error");
  EXPECT_EQ(error_of([&] { make_record_encoder("raw", s, {{"raw.endianness", "middle"}}); }),
            "Unsupported endianness name: middle. Valid values of 'raw.endianness' option are 'big-endian' and "
            "'little-endian'.");
  EXPECT_EQ(error_of([&] { make_record_decoder("raw", s, {{"raw.size", "1"}}); }),
            "unknown option 'raw.size' of format raw (known: raw.charset, raw.endianness)");
  EXPECT_EQ(error_of([] { make_record_decoder("raw", fields_of({{"a", "STRING"}, {"b", "STRING"}}), {}); }),
            "The 'raw' format only supports single physical column. However current schema contains 2 columns.");
  EXPECT_EQ(error_of([] { make_record_encoder("raw", fields_of({{"a", "DATE"}}), {}); }),
            "The 'raw' format doesn't supports 'DATE' as column type.");
}

}  // namespace
}  // namespace clink::test
