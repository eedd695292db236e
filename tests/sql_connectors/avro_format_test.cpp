// The avro format (plain Avro binary, the schema derived as Flink's AvroSchemaConverter):
// exact bytes against hand-computed encodings, round trips, malformed input, options.
#include <gtest/gtest.h>

#include "clink/core/error.hpp"
#include "record_format_harness.hpp"

namespace clink::test {
using namespace clink::sql;
namespace {

using Rows = std::vector<std::string>;

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s += static_cast<char>(x);
  return s;
}

// The one message of a one-row batch.
std::string encode_row(const SchemaPtr& s, std::vector<Value> row, const FormatOptions& options = {}) {
  return encode("avro", batch_of(s, {std::move(row)}), options).at(0);
}

TEST(AvroFormat, HandComputedBytes) {
  // INT 1 -> zigzag 2; STRING "a" -> length 1 (zigzag 2) then 'a'; a nullable field is the
  // union ["null", T]: index 0 for NULL, index 1 then the value.
  auto s = fields_of({{"a", "INT NOT NULL"}, {"s", "STRING NOT NULL"}, {"n", "INT"}});
  EXPECT_EQ(encode_row(s, {1, "a", Value::null()}), bytes({0x02, 0x02, 0x61, 0x00}));
  EXPECT_EQ(encode_row(s, {-1, "", 2}), bytes({0x01, 0x00, 0x02, 0x04}));
  EXPECT_EQ(encode_row(s, {64, "a", -64}), bytes({0x80, 0x01, 0x02, 0x61, 0x02, 0x7f}));

  auto scalars = fields_of({{"b", "BOOLEAN NOT NULL"}, {"f", "FLOAT NOT NULL"}, {"d", "DOUBLE NOT NULL"},
                            {"dt", "DATE NOT NULL"}, {"l", "BIGINT NOT NULL"}});
  EXPECT_EQ(encode_row(scalars, {true, 1.5, 1.0, 18367, std::int64_t{-9000000000}}),
            bytes({0x01, 0x00, 0x00, 0xc0, 0x3f, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0xfe, 0x9e, 0x02,  //
                   0xff, 0xe7, 0x88, 0x87, 0x43}));  // zigzag 17999999999

  // DECIMAL: bytes of the unscaled value, minimal big-endian two's complement.
  auto dec = fields_of({{"d", "DECIMAL(10, 2) NOT NULL"}});
  EXPECT_EQ(encode_row(dec, {Value::decimal(100)}), bytes({0x02, 0x64}));
  EXPECT_EQ(encode_row(dec, {Value::decimal(-128)}), bytes({0x02, 0x80}));
  EXPECT_EQ(encode_row(dec, {Value::decimal(128)}), bytes({0x04, 0x00, 0x80}));
  EXPECT_EQ(encode_row(dec, {Value::decimal(0)}), bytes({0x02, 0x00}));
  EXPECT_EQ(encode_row(dec, {Value::decimal(-1)}), bytes({0x02, 0xff}));
  EXPECT_EQ(encode_row(dec, {Value::decimal(-129)}), bytes({0x04, 0xff, 0x7f}));

  // TIMESTAMP(3): epoch millis (microseconds floored); non-legacy TIMESTAMP(6): micros.
  auto ts = fields_of({{"t", "TIMESTAMP(3) NOT NULL"}});
  EXPECT_EQ(encode_row(ts, {std::int64_t{1000}}), bytes({0x02}));
  EXPECT_EQ(encode_row(ts, {std::int64_t{-1}}), bytes({0x01}));
  auto ts6 = fields_of({{"t", "TIMESTAMP(6) NOT NULL"}, {"z", "TIMESTAMP_LTZ(3) NOT NULL"}});
  EXPECT_EQ(encode_row(ts6, {std::int64_t{1}, std::int64_t{2000}}, {{"avro.timestamp_mapping.legacy", "false"}}),
            bytes({0x02, 0x04}));

  // ARRAY: one block (count, items) then 0; MAP: one block of (string key, value) then 0;
  // a nullable ROW: the union index, then its fields.
  auto nested = fields_of({{"a", "ARRAY<INT NOT NULL> NOT NULL"}, {"e", "ARRAY<INT> NOT NULL"},
                           {"m", "MAP<STRING, INT NOT NULL> NOT NULL"}, {"r", "ROW<x INT NOT NULL>"}});
  EXPECT_EQ(encode_row(nested, {ValueList{{1, 2}}, ValueList{}, ValueList{{"k", 1}}, ValueList{{1}}}),
            bytes({0x04, 0x02, 0x04, 0x00, 0x00, 0x02, 0x02, 0x6b, 0x02, 0x00, 0x02, 0x02}));
  EXPECT_EQ(encode_row(nested, {ValueList{{1}}, ValueList{{Value::null()}}, ValueList{}, Value::null()}),
            bytes({0x02, 0x02, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00}));

  // And back.
  EXPECT_EQ(decode("avro", s, {bytes({0x02, 0x02, 0x61, 0x00}), bytes({0x80, 0x01, 0x00, 0x02, 0x7f})}),
            (Rows{"+I[1, a, null]", "+I[64, , -64]"}));
  EXPECT_EQ(decode("avro", dec, {bytes({0x04, 0xff, 0x7f}), bytes({0x02, 0x80})}), (Rows{"+I[-1.29]", "+I[-1.28]"}));
}

TEST(AvroFormat, ReadsMultiBlockArrays) {
  // Writers may split arrays and maps in blocks, a negative count followed by the block's byte size.
  auto s = fields_of({{"a", "ARRAY<INT NOT NULL> NOT NULL"}});
  EXPECT_EQ(decode("avro", s, {bytes({0x02, 0x02, 0x03, 0x02, 0x04, 0x06, 0x00})}), Rows{"+I[[1, 2, 3]]"});
}

TEST(AvroFormat, RoundTripEveryTypeAndNulls) {
  auto s = fields_of({{"b", "BOOLEAN"}, {"t", "TINYINT"}, {"sm", "SMALLINT"}, {"i", "INT"}, {"l", "BIGINT"},
                      {"f", "FLOAT"}, {"d", "DOUBLE"}, {"dec", "DECIMAL(38, 10)"}, {"c", "CHAR(3)"}, {"s", "STRING"},
                      {"bin", "BYTES"}, {"dt", "DATE"}, {"tm", "TIME(3)"}, {"ts", "TIMESTAMP(3)"},
                      {"ts6", "TIMESTAMP(6)"}, {"ltz", "TIMESTAMP_LTZ(6)"}, {"arr", "ARRAY<STRING>"},
                      {"m", "MAP<STRING, DOUBLE>"}, {"r", "ROW<x INT, y ROW<z STRING>>"}});
  Int128 big = Decimal128::pow10(37) * 9 + 12345;
  auto in = batch_of(
      s, {{true, -128, -32768, 2147483647, std::int64_t{-9223372036854775807LL - 1}, -1.5, 1e300, Value::decimal(-big),
           "abc", "h\xc3\xa9", std::string("\0\xff", 2), -719162, 86399999, std::int64_t{-62135596800000000},
           std::int64_t{1586937909123456}, std::int64_t{1}, ValueList{{"x", Value::null(), ""}},
           ValueList{{"k", 0.5, "n", Value::null()}}, ValueList{{7, ValueList{{"deep"}}}}},
          std::vector<Value>(19, Value::null()),
          {false, 0, 0, 0, std::int64_t{0}, 0.0, -0.0, Value::decimal(0), "", "", "", 0, 0, std::int64_t{0},
           std::int64_t{0}, std::int64_t{0}, ValueList{}, ValueList{}, ValueList{{Value::null(), Value::null()}}}});
  FormatOptions modern = {{"avro.timestamp_mapping.legacy", "false"}};
  EXPECT_EQ(decode("avro", s, encode("avro", in, modern), modern), format_rows(in, *TimeZone::utc()));
}

TEST(AvroFormat, MalformedInputNamesTheField) {
  auto s = fields_of({{"a", "INT"}, {"s", "STRING"}, {"r", "ROW<x INT, y STRING>"}, {"b", "BOOLEAN NOT NULL"}});
  EXPECT_EQ(decode("avro", s,
                   {bytes({0x02, 0x02, 0x02, 0x0a, 0x61, 0x62}), bytes({0x04}), bytes({0x00, 0x00, 0x02, 0x02, 0x02, 0x02, 0x06, 0x61}),
                    bytes({0x00, 0x00, 0x00, 0x02}), bytes({0x00, 0x02, 0x01}), "",
                    bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}),
                    bytes({0x00, 0x00, 0x00, 0x01})}),
            (Rows{"ERROR: field \"s\": truncated message", "ERROR: field \"a\": invalid union index 2",
                  "ERROR: field \"r.y\": truncated message", "ERROR: field \"b\": invalid boolean byte 2",
                  "ERROR: field \"s\": negative length -1", "ERROR: field \"a\": truncated message",
                  "ERROR: field \"a\": invalid varint", "+I[null, null, null, true]"}));
  // Found by fuzzing: a timestamp-millis whose microseconds overflow 64 bits (the long
  // 2^62, zigzag 2^63: varint 80 80 80 80 80 80 80 80 80 01).
  EXPECT_EQ(decode("avro", fields_of({{"t", "TIMESTAMP(3) NOT NULL"}}),
                   {bytes({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01})}),
            Rows{"ERROR: field \"t\": timestamp-millis 4611686018427387904 is out of range"});
  // Found by fuzzing: an array block count of the most negative long (zigzag 2^64 - 1), whose
  // negation overflowed.
  EXPECT_EQ(decode("avro", fields_of({{"a", "ARRAY<INT NOT NULL> NOT NULL"}}),
                   {bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x02, 0x02, 0x00})}),
            Rows{"ERROR: field \"a\": invalid block count -9223372036854775808"});
  // A DECIMAL beyond its precision is NULL, as Flink's DecimalData.
  EXPECT_EQ(decode("avro", fields_of({{"d", "DECIMAL(3, 2) NOT NULL"}}), {bytes({0x04, 0x03, 0xe8})}), Rows{"+I[null]"});
}

TEST(AvroFormat, OptionAndSchemaErrors) {
  auto s = fields_of({{"a", "INT"}});
  EXPECT_EQ(error_of([&] { make_record_decoder("avro", s, {{"avro.codec", "snappy"}}); }),
            "unknown option 'avro.codec' of format avro (known: avro.encoding, avro.timestamp_mapping.legacy, "
            "avro.fast-read)");
  EXPECT_EQ(error_of([&] { make_record_encoder("avro", s, {{"avro.encoding", "json"}}); }),
            "option 'avro.encoding': only 'binary' is supported, got 'json'");
  EXPECT_EQ(error_of([&] { make_record_encoder("avro", s, {{"avro.encoding", "binary"}, {"avro.fast-read", "true"}}); }),
            "no error");
  EXPECT_EQ(error_of([] { make_record_decoder("avro", fields_of({{"t", "TIMESTAMP(6)"}}), {}); }),
            "Avro does not support TIMESTAMP type with precision: 6, it only supports precision less than 3.");
  EXPECT_EQ(error_of([] {
              make_record_decoder("avro", fields_of({{"t", "TIMESTAMP(9)"}}), {{"avro.timestamp_mapping.legacy", "false"}});
            }),
            "Avro does not support LOCAL TIMESTAMP type with precision: 9, it only supports precision less than 6.");
  EXPECT_EQ(error_of([] { make_record_encoder("avro", fields_of({{"t", "TIMESTAMP_LTZ(3)"}}), {}); }),
            "Unsupported to derive Schema for type: TIMESTAMP_LTZ(3)");
  EXPECT_EQ(error_of([] { make_record_encoder("avro", fields_of({{"m", "MAP<INT, STRING>"}}), {}); }),
            "Avro format doesn't support non-string as key type of map. The key type is: INT");
  EXPECT_EQ(error_of([] { make_record_encoder("avro", fields_of({{"i", "INTERVAL DAY TO SECOND(3)"}}), {}); }),
            "Unsupported to derive Schema for type: INTERVAL DAY(2) TO SECOND(3)");
  ColumnBatch nulls(fields_of({{"r", "ROW<x INT NOT NULL>"}, {"m", "MAP<STRING, INT>"}}));
  nulls.append_row({ValueList{{Value::null()}}, ValueList{}});
  nulls.append_row({ValueList{{1}}, ValueList{{Value::null(), 1}}});
  auto enc = make_record_encoder("avro", nulls.schema(), {});
  std::vector<const Column*> cols = {&nulls.column(0), &nulls.column(1)};
  std::string out;
  EXPECT_EQ(error_of([&] { enc->encode(cols, 0, RowKind::kInsert, out); }),
            "avro format cannot write field \"r.x\": NULL in a NOT NULL field");
  EXPECT_EQ(error_of([&] { enc->encode(cols, 1, RowKind::kInsert, out); }),
            "avro format cannot write field \"m\": NULL map key");
  EXPECT_EQ(out, "");
  auto in = batch_of(fields_of({{"a", "INT"}}), {{1}}, {RowKind::kUpdateBefore});
  EXPECT_EQ(error_of([&] { encode("avro", in); }), "avro format is insert-only: it cannot write a -U row");
}

}  // namespace
}  // namespace clink::test
