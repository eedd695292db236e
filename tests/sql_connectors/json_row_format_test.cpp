// The columnar json format against Flink's JsonToRowDataConverters / RowDataToJsonConverters.
#include <gtest/gtest.h>

#include "clink/core/error.hpp"
#include "clink/formats/json_row_format.hpp"
#include "clink/sql/common/time_zone.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

SchemaPtr schema_of(std::vector<std::pair<std::string, std::string>> fields) {
  std::vector<RowField> f;
  for (auto& [n, t] : fields) f.push_back({n, parse_logical_type(t)});
  return make_schema(std::move(f));
}

// Decodes each line; a failed line becomes "ERROR: <reason>".
std::vector<std::string> decode(const SchemaPtr& schema, const std::vector<std::string>& lines,
                                JsonFormatOptions options = {}) {
  JsonRowDecoder dec(schema, options);
  ColumnBatch batch(schema);
  std::vector<std::string> out;
  for (const auto& line : lines) {
    std::string reason;
    if (dec.decode(line, line.size(), batch.columns(), reason)) {
      batch.commit_rows(1);
      out.push_back(format_row(batch, batch.size() - 1, *TimeZone::utc()));
    } else {
      out.push_back("ERROR: " + reason);
    }
  }
  batch.validate();
  return out;
}

TEST(JsonRowFormat, ScalarsOfEveryType) {
  auto s = schema_of({{"b", "BOOLEAN"}, {"t", "TINYINT"}, {"sm", "SMALLINT"}, {"i", "INT"}, {"l", "BIGINT"},
                      {"f", "FLOAT"}, {"d", "DOUBLE"}, {"dec", "DECIMAL(10, 2)"}, {"s", "STRING"},
                      {"bin", "BYTES"}, {"dt", "DATE"}, {"tm", "TIME(0)"}, {"ts", "TIMESTAMP(3)"},
                      {"ltz", "TIMESTAMP_LTZ(3)"}});
  EXPECT_EQ(decode(s, {R"({"b":true,"t":-5,"sm":300,"i":70000,"l":9000000000,"f":1.5,"d":-2.25,"dec":12.345,)"
                       R"("s":"h\u00e9\"y","bin":"AQID","dt":"2020-04-15","tm":"08:05:09","ts":"2020-04-15 08:05:00.123",)"
                       R"("ltz":"2020-04-15 08:05:00.5Z"})"}),
            std::vector<std::string>{"+I[true, -5, 300, 70000, 9000000000, 1.5, -2.25, 12.35, h\xc3\xa9\"y, [1, 2, 3], "
                                     "2020-04-15, 08:05:09, 2020-04-15T08:05:00.123, 2020-04-15T08:05:00.500Z]"});
}

TEST(JsonRowFormat, JacksonConversions) {
  auto s = schema_of({{"i", "INT"}, {"b", "BOOLEAN"}, {"s", "STRING"}, {"d", "DOUBLE"}});
  EXPECT_EQ(decode(s, {R"({"i":"42","b":"TRUE","s":{"x":[1, 2]},"d":"1e3"})",  // strings parsed, objects as JSON text
                       R"({"i":7.9,"b":1,"s":12.50,"d":3})"}),                   // floats truncate, numbers' text
            (std::vector<std::string>{"+I[42, true, {\"x\":[1, 2]}, 1000.0]", "+I[7, false, 12.50, 3.0]"}));
}

TEST(JsonRowFormat, MissingFieldsAreNullUnlessFailOnMissingField) {
  auto s = schema_of({{"a", "INT"}, {"b", "STRING"}});
  EXPECT_EQ(decode(s, {R"({"b":"x","extra":[1,{"y":2}]})", R"({"a":null,"b":null})", R"({"a":1,"a":2,"b":"z"})"}),
            (std::vector<std::string>{"+I[null, x]", "+I[null, null]", "+I[2, z]"}));
  JsonFormatOptions strict;
  strict.fail_on_missing_field = true;
  EXPECT_EQ(decode(s, {R"({"b":"x"})", R"({"a":1,"b":"y"})"}, strict),
            (std::vector<std::string>{"ERROR: missing field \"a\"", "+I[1, y]"}));
}

TEST(JsonRowFormat, ErrorsNameTheFieldAndLeaveNoPartialRow) {
  auto s = schema_of({{"a", "INT"}, {"b", "DOUBLE"}, {"c", "TIMESTAMP(3)"}});
  EXPECT_EQ(decode(s, {R"({"a":1,"b":"x","c":null})", R"({"a":1,"b":2,"c":"2020-04-15T08:05:00"})",
                       R"({"a":3000000000})", R"([1,2])", R"({"a":1} {"b":2})", R"({"a":)", R"({"a":2,"b":1,"c":null})"}),
            (std::vector<std::string>{
                "ERROR: field \"b\": 'x' is not a valid DOUBLE",
                "ERROR: field \"c\": '2020-04-15T08:05:00' is not a valid TIMESTAMP(3)",
                "ERROR: field \"a\": '3000000000' is not a valid INT",
                "ERROR: expected a JSON object",
                "ERROR: unexpected content after the JSON object",
                "ERROR: invalid JSON (JSON document ended early in the middle of an object or array.)",
                "+I[2, 1.0, null]"}));
}

// Numbers just outside an integer type's range are decode errors, never wrapped or
// saturated values (issue 16: 9223372036854775808 used to become INT64_MIN).
TEST(JsonRowFormat, IntegersOutOfRangeAreErrors) {
  auto l = schema_of({{"l", "BIGINT"}});
  EXPECT_EQ(decode(l, {R"({"l":9223372036854775807})", R"({"l":-9223372036854775808})",
                       R"({"l":9223372036854775808})", R"({"l":-9223372036854775809})",
                       R"({"l":9223372036854775807.0})", R"({"l":18446744073709551615})", R"({"l":1e30})",
                       R"({"l":-9223372036854775808.0})", R"({"l":12.9})"}),
            (std::vector<std::string>{"+I[9223372036854775807]", "+I[-9223372036854775808]",
                                      "ERROR: field \"l\": '9223372036854775808' is not a valid BIGINT",
                                      "ERROR: field \"l\": '-9223372036854775809' is not a valid BIGINT",
                                      "ERROR: field \"l\": '9223372036854775807.0' is not a valid BIGINT",
                                      "ERROR: field \"l\": '18446744073709551615' is not a valid BIGINT",
                                      "ERROR: field \"l\": '1e30' is not a valid BIGINT",
                                      "+I[-9223372036854775808]", "+I[12]"}));
  auto narrow = schema_of({{"t", "TINYINT"}, {"s", "SMALLINT"}, {"i", "INT"}});
  EXPECT_EQ(decode(narrow, {R"({"t":127,"s":32767,"i":2147483647})", R"({"t":128})", R"({"s":-32769})",
                            R"({"i":2147483648})", R"({"i":2147483647.5})"}),
            (std::vector<std::string>{"+I[127, 32767, 2147483647]",
                                      "ERROR: field \"t\": '128' is not a valid TINYINT",
                                      "ERROR: field \"s\": '-32769' is not a valid SMALLINT",
                                      "ERROR: field \"i\": '2147483648' is not a valid INT",
                                      "ERROR: field \"i\": '2147483647.5' is not a valid INT"}));
}

// A UTF-8 byte order mark before the object is skipped, as Jackson does (issue 16, item 8).
TEST(JsonRowFormat, ByteOrderMarkIsSkipped) {
  auto s = schema_of({{"a", "INT"}});
  EXPECT_EQ(decode(s, {"\xEF\xBB\xBF{\"a\":1}", "{\"a\":2}"}), (std::vector<std::string>{"+I[1]", "+I[2]"}));
}

TEST(JsonRowFormat, DecimalIsExactFromTheNumberText) {
  auto s = schema_of({{"d", "DECIMAL(38, 18)"}, {"e", "DECIMAL(5, 2)"}});
  EXPECT_EQ(decode(s, {R"({"d":12345678901234567890.123456789012345678,"e":"1.005"})", R"({"d":1e-18,"e":99999.99})"}),
            (std::vector<std::string>{"+I[12345678901234567890.123456789012345678, 1.01]",
                                      "+I[1E-18, null]"}));  // overflow is NULL, as Flink
}

TEST(JsonRowFormat, Iso8601Timestamps) {
  auto s = schema_of({{"ts", "TIMESTAMP(6)"}, {"ltz", "TIMESTAMP_LTZ(3)"}});
  JsonFormatOptions iso;
  iso.timestamp_standard = TimestampStandard::kIso8601;
  EXPECT_EQ(decode(s, {R"({"ts":"2020-04-15T08:05:00.123456","ltz":"2020-04-15T23:59:59.999Z"})",
                       R"({"ts":"2020-04-15 08:05:00"})"},
                   iso),
            (std::vector<std::string>{"+I[2020-04-15T08:05:00.123456, 2020-04-15T23:59:59.999Z]",
                                      "ERROR: field \"ts\": '2020-04-15 08:05:00' is not a valid TIMESTAMP(6)"}));
}

TEST(JsonRowFormat, NestedArrayMapRow) {
  auto s = schema_of({{"arr", "ARRAY<INT>"}, {"m", "MAP<STRING, DOUBLE>"}, {"r", "ROW<x INT, y ARRAY<STRING>>"}});
  EXPECT_EQ(decode(s, {R"({"arr":[1,null,3],"m":{"a":1.5,"b":null},"r":{"y":["p","q"],"x":7}})",
                       R"({"arr":[],"m":{},"r":null})", R"({"arr":[1,"x"]})", R"({"arr":null,"r":{"x":1}})"}),
            (std::vector<std::string>{"+I[[1, null, 3], {a=1.5, b=null}, +I[7, [p, q]]]", "+I[[], {}, null]",
                                      "ERROR: field \"arr\": 'x' is not a valid INT",
                                      "+I[null, null, +I[1, null]]"}));
}

// Keys and strings are read in place when they hold no escape; with escapes they are
// unescaped first, so either spelling of a name or value decodes the same.
TEST(JsonRowFormat, EscapedAndPlainKeysAndStrings) {
  auto s = schema_of({{"a", "INT"}, {"q\"k", "STRING"}, {"s", "STRING"}, {"m", "MAP<STRING, INT>"}});
  EXPECT_EQ(decode(s, {R"({"\u0061":1,"q\"k":"x","s":"plain","m":{"k\u00e9":1,"k":2}})",
                       R"({ "a" : 2 , "s" : "tab\tquote\"end" , "q\u0022k" : "y\\" })",
                       R"({"s":"","a":3,"s2":"ignored \" too"})"}),
            (std::vector<std::string>{"+I[1, x, plain, {k=2, k\xc3\xa9=1}]", "+I[2, y\\, tab\tquote\"end, null]",
                                      "+I[3, null, , null]"}));
}

// Keys are compared in place with the name expected next: a name that is a prefix of the
// key (or the other way round), a name longer than simdjson's padding and one with a
// backslash all still match exactly their own key.
TEST(JsonRowFormat, KeysComparedInPlace) {
  const std::string long_name(70, 'x');
  auto s = schema_of({{"a", "INT"}, {"ab", "INT"}, {long_name, "INT"}, {"b\\c", "INT"}});
  EXPECT_EQ(decode(s, {"{\"ab\":1,\"a\":2,\"" + long_name + "\":3,\"b\\\\c\":4}", R"({"abc":9,"a":5,"x":6})",
                       "{\"" + long_name + "x\":7,\"" + long_name.substr(1) + "\":8,\"a\":0}"}),
            (std::vector<std::string>{"+I[2, 1, 3, 4]", "+I[5, null, null, null]", "+I[0, null, null, null]"}));
}

// Timestamps of the usual fixed shape are read by position, the others by the general
// parser: both accept and reject the same texts, with the same values.
TEST(JsonRowFormat, TimestampShapes) {
  auto s = schema_of({{"ts", "TIMESTAMP(9)"}});
  EXPECT_EQ(decode(s, {R"({"ts":"2020-04-15 08:05:00"})", R"({"ts":"2020-04-15 08:05:00.1"})",
                       R"({"ts":"2020-04-15 08:05:00.123456789"})", R"({"ts":" 2020-04-15 08:05:00.12 "})",
                       R"({"ts":"2020-04-15 8:05:00"})", R"({"ts":"2020-04-15 08:05"})", R"({"ts":"1969-12-31 23:59:59.999"})",
                       R"({"ts":"2020-04-15 08:05:00.1234567891"})", R"({"ts":"2021-02-29 00:00:00"})",
                       R"({"ts":"2020-04-15 24:00:00"})", R"({"ts":"2020-04-15 08:05:00."})",
                       R"({"ts":"2020-04-15T08:05:00"})", R"({"ts":"2020-04-15 08:05:00Z"})"}),
            (std::vector<std::string>{
                "+I[2020-04-15T08:05]", "+I[2020-04-15T08:05:00.100]", "+I[2020-04-15T08:05:00.123456]",
                "+I[2020-04-15T08:05:00.120]", "+I[2020-04-15T08:05]", "+I[2020-04-15T08:05]",
                "+I[1969-12-31T23:59:59.999]",
                "ERROR: field \"ts\": '2020-04-15 08:05:00.1234567891' is not a valid TIMESTAMP(9)",
                "ERROR: field \"ts\": '2021-02-29 00:00:00' is not a valid TIMESTAMP(9)",
                "ERROR: field \"ts\": '2020-04-15 24:00:00' is not a valid TIMESTAMP(9)",
                "ERROR: field \"ts\": '2020-04-15 08:05:00.' is not a valid TIMESTAMP(9)",
                "ERROR: field \"ts\": '2020-04-15T08:05:00' is not a valid TIMESTAMP(9)",
                "ERROR: field \"ts\": '2020-04-15 08:05:00Z' is not a valid TIMESTAMP(9)"}));
}

TEST(JsonRowFormat, ProjectionDecodesOnlyTheSchemaFields) {
  auto s = schema_of({{"c", "STRING"}, {"a", "INT"}});
  EXPECT_EQ(decode(s, {R"({"a":1,"b":{"deep":[1,2,3]},"c":"x","d":"not an int"})"}),
            std::vector<std::string>{"+I[x, 1]"});
}

TEST(JsonRowFormat, Options) {
  auto o = JsonFormatOptions::from({{"json.ignore-parse-errors", "true"}, {"json.timestamp-format.standard", "ISO-8601"},
                                    {"format", "json"}});
  EXPECT_TRUE(o.ignore_parse_errors);
  EXPECT_EQ(o.timestamp_standard, TimestampStandard::kIso8601);
  auto error = [](std::map<std::string, std::string> m) {
    try {
      JsonFormatOptions::from(m);
    } catch (const ClinkError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error({{"json.timestamp-format.standard", "iso"}}),
            "option 'json.timestamp-format.standard' must be SQL or ISO-8601, got 'iso'");
  EXPECT_EQ(error({{"json.ignore-parse-errors", "yes"}}), "option 'json.ignore-parse-errors' must be true or false, got 'yes'");
  EXPECT_EQ(error({{"json.fail-on-missing-field", "true"}, {"json.ignore-parse-errors", "true"}}),
            "options 'json.fail-on-missing-field' and 'json.ignore-parse-errors' cannot both be true");
  EXPECT_EQ(error({{"json.fail-on-missing", "true"}}).substr(0, 60),
            "unknown option 'json.fail-on-missing' of format json (known:");
}

TEST(JsonRowFormat, EncodesAsFlink) {
  auto s = schema_of({{"i", "INT"}, {"d", "DOUBLE"}, {"dec", "DECIMAL(10, 3)"}, {"s", "STRING"}, {"ts", "TIMESTAMP(3)"},
                      {"ltz", "TIMESTAMP_LTZ(3)"}, {"dt", "DATE"}, {"b", "BYTES"}, {"arr", "ARRAY<INT>"},
                      {"m", "MAP<STRING, INT>"}, {"r", "ROW<x INT, y STRING>"}, {"n", "STRING"}});
  ColumnBatch batch(s);
  std::string reason;
  JsonRowDecoder dec(s, {});
  std::string line = R"({"i":1,"d":1e10,"dec":"0.5","s":"a\"b\n","ts":"2020-04-15 08:05:00.500","ltz":"2020-04-15 08:05:00Z",)"
                     R"("dt":"2020-04-15","b":"AQID","arr":[1,null],"m":{"k":2},"r":{"x":1,"y":"z"},"n":null})";
  ASSERT_TRUE(dec.decode(line, line.size(), batch.columns(), reason)) << reason;
  batch.commit_rows(1);
  std::string out;
  JsonRowEncoder(s, {}).encode(batch, 0, out);
  EXPECT_EQ(out, R"({"i":1,"d":1.0E10,"dec":0.500,"s":"a\"b\n","ts":"2020-04-15 08:05:00.5","ltz":"2020-04-15 08:05:00Z",)"
                 R"("dt":"2020-04-15","b":"AQID","arr":[1,null],"m":{"k":2},"r":{"x":1,"y":"z"},"n":null})");
  JsonFormatOptions iso;
  iso.timestamp_standard = TimestampStandard::kIso8601;
  iso.encode_ignore_null_fields = true;
  out.clear();
  JsonRowEncoder(s, iso).encode(batch, 0, out);
  EXPECT_NE(out.find(R"("ts":"2020-04-15T08:05:00.5","ltz":"2020-04-15T08:05:00Z")"), std::string::npos) << out;
  EXPECT_EQ(out.find("\"n\""), std::string::npos) << out;
}

TEST(JsonRowFormat, NullMapKeys) {
  auto s = schema_of({{"m", "MAP<STRING, INT>"}});
  ColumnBatch batch(s);
  Value map = Value(ValueList{{Value::null(), Value(1), Value("a"), Value(2)}});
  batch.append_row({map});
  std::string out;
  EXPECT_THROW(JsonRowEncoder(s, {}).encode(batch, 0, out), ClinkError);
  JsonFormatOptions drop;
  drop.map_null_key_mode = JsonFormatOptions::MapNullKeyMode::kDrop;
  out.clear();
  JsonRowEncoder(s, drop).encode(batch, 0, out);
  EXPECT_EQ(out, R"({"m":{"a":2}})");
  JsonFormatOptions literal;
  literal.map_null_key_mode = JsonFormatOptions::MapNullKeyMode::kLiteral;
  literal.map_null_key_literal = "N/A";
  out.clear();
  JsonRowEncoder(s, literal).encode(batch, 0, out);
  EXPECT_EQ(out, R"({"m":{"N/A":1,"a":2}})");
}

}  // namespace
}  // namespace clink::test
