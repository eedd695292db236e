// The columnar csv format against Flink's CsvToRowDataConverters / RowDataToCsvConverters.
#include <gtest/gtest.h>

#include "clink/core/error.hpp"
#include "clink/formats/csv_row_format.hpp"
#include "clink/sql/common/time_zone.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

SchemaPtr schema_of(std::vector<std::pair<std::string, std::string>> fields) {
  std::vector<RowField> f;
  for (auto& [n, t] : fields) f.push_back({n, parse_logical_type(t)});
  return make_schema(std::move(f));
}

std::vector<std::size_t> all(const SchemaPtr& s) {
  std::vector<std::size_t> v;
  for (std::size_t i = 0; i < s->size(); ++i) v.push_back(i);
  return v;
}

// Decodes each record; "SKIP" for skipped lines, "ERROR@<offset>: <reason>" for failures,
// "INCOMPLETE@<offset of the open quote>: <reason>" for a record with a quoted field open.
std::vector<std::string> decode(const SchemaPtr& table, std::vector<std::size_t> projected,
                                const std::vector<std::string>& lines, CsvFormatOptions options = {}) {
  std::vector<RowField> out_fields;
  for (auto i : projected) out_fields.push_back(table->field(i));
  ColumnBatch batch(make_schema(out_fields));
  CsvRowDecoder dec(table, projected, options);
  std::vector<std::string> out;
  for (const auto& line : lines) {
    std::string reason;
    switch (dec.decode(line, batch.columns(), reason)) {
      case CsvRowDecoder::Result::kRow:
        batch.commit_rows(1);
        out.push_back(format_row(batch, batch.size() - 1, *TimeZone::utc()));
        break;
      case CsvRowDecoder::Result::kSkipped: out.push_back("SKIP"); break;
      case CsvRowDecoder::Result::kError:
        out.push_back("ERROR@" + std::to_string(dec.error_offset()) + ": " + reason);
        break;
      case CsvRowDecoder::Result::kIncomplete:
        out.push_back("INCOMPLETE@" + std::to_string(dec.error_offset()) + ": " + reason);
        break;
    }
  }
  batch.validate();
  return out;
}

TEST(CsvRowFormat, FieldsQuotingAndTypes) {
  auto s = schema_of({{"i", "INT"}, {"s", "STRING"}, {"d", "DECIMAL(5, 2)"}, {"ts", "TIMESTAMP(3)"}, {"b", "BOOLEAN"},
                      {"dt", "DATE"}});
  EXPECT_EQ(decode(s, all(s),
                   {R"(1,"a,""b""",1.005,2020-04-15 08:05:00.123,true,2020-4-5)", R"( 2 ,,-3,2020-04-15 08:05:00,x,2020-04-15)",
                    "", R"(3,"open,1,2020-04-15 08:05:00,true,2020-04-15)", "4,a,1,2020-04-15T08:05:00,true,2020-04-15",
                    "5,a,1"}),
            (std::vector<std::string>{"+I[1, a,\"b\", 1.01, 2020-04-15T08:05:00.123, true, 2020-04-05]",
                                      "+I[2, , -3.00, 2020-04-15T08:05, false, 2020-04-15]", "SKIP",
                                      "INCOMPLETE@2: unterminated quoted field 2",
                                      "ERROR@6: field 4 (ts): '2020-04-15T08:05:00' is not a valid TIMESTAMP(3)",
                                      "ERROR@5: row length mismatch: 6 fields expected but was 3"}));
}

// A row with too many fields is skipped, as Flink drops what Jackson fails (checked on Flink 2.3).
TEST(CsvRowFormat, IgnoreParseErrorsNullsBadFieldsPadsShortRowsAndSkipsLongOnes) {
  auto s = schema_of({{"i", "INT"}, {"d", "DOUBLE"}, {"s", "STRING"}});
  CsvFormatOptions o;
  o.ignore_parse_errors = true;
  EXPECT_EQ(decode(s, all(s), {"x,1.5,a", "1,2", "1,2,3,4", "\"x"}, o),
            (std::vector<std::string>{"+I[null, 1.5, a]", "+I[1, 2.0, null]", "SKIP",
                                      "INCOMPLETE@0: unterminated quoted field 1"}));
}

TEST(CsvRowFormat, OptionsDelimiterCommentsNullLiteralEscapeArrays) {
  auto s = schema_of({{"a", "INT"}, {"arr", "ARRAY<INT>"}, {"r", "ROW<x STRING, y INT>"}, {"s", "STRING"}});
  auto o = CsvFormatOptions::from({{"csv.field-delimiter", "|"}, {"csv.allow-comments", "true"},
                                   {"csv.null-literal", "N/A"}, {"csv.escape-character", "\\"},
                                   {"csv.array-element-delimiter", ","}});
  EXPECT_EQ(decode(s, all(s), {"# a comment", "1|1,2,3|p,4|a\\|b", "N/A|||N/A", "2|1,x|p,1|s"}, o),
            (std::vector<std::string>{"SKIP", "+I[1, [1, 2, 3], +I[p, 4], a|b]", "+I[null, [], null, null]",
                                      "ERROR@2: field 2 (arr): 'x' is not a valid INT"}));
}

// RFC 4180: a quoted field holds delimiters, doubled quotes and line breaks; the record is
// incomplete while the quote is open, whole once it closes.
TEST(CsvRowFormat, QuotedFieldsSpanLines) {
  auto s = schema_of({{"i", "INT"}, {"s", "STRING"}, {"j", "INT"}});
  EXPECT_EQ(decode(s, all(s),
                   {"1,\"a", "1,\"a\nb", "1,\"a\nb\n\"\"c\"\"\",2", "2,\"x\r\ny\",3", "3,\"\n\",\"4\"",
                    "4,\"a\"b,5", "5,x,6,7", "\"6\nz\",x,1"}),
            (std::vector<std::string>{"INCOMPLETE@2: unterminated quoted field 2", "INCOMPLETE@2: unterminated quoted field 2",
                                      "+I[1, a\nb\n\"c\", 2]", "+I[2, x\r\ny, 3]", "+I[3, \n, 4]",
                                      "ERROR@5: unexpected character 'b' after the quoted field 2",
                                      "ERROR@6: row length mismatch: 3 fields expected but was 4",
                                      "ERROR@0: field 1 (i): '6\nz' is not a valid INT"}));
}

// Text is UTF-8, as Flink's CSV format (Jackson) and clink's JSON reader read it: a
// malformed byte is a parse error at its offset (issue 16, item 8).
TEST(CsvRowFormat, InvalidUtf8IsAParseErrorAtItsByte) {
  auto s = schema_of({{"i", "INT"}, {"s", "STRING"}});
  EXPECT_EQ(decode(s, all(s),
                   {"1,caf\xC3\xA9", "2,ab\xFF" "cd", "3,\xC3", "4,\xC0\xAF", "5,\xED\xA0\x80", "6,\"x\xE2\x82\"",
                    "7,\xF0\x9F\x98\x80"}),
            (std::vector<std::string>{"+I[1, caf\xC3\xA9]", "ERROR@4: invalid UTF-8 at byte 5 of the record",
                                      "ERROR@2: invalid UTF-8 at byte 3 of the record",
                                      "ERROR@2: invalid UTF-8 at byte 3 of the record",
                                      "ERROR@2: invalid UTF-8 at byte 3 of the record",
                                      "ERROR@4: invalid UTF-8 at byte 5 of the record", "+I[7, \xF0\x9F\x98\x80]"}));
}

// A UTF-8 byte order mark before a record is skipped, as Jackson's CSV parser does; the
// error offsets still count it (they are offsets into the line).
TEST(CsvRowFormat, AByteOrderMarkBeforeTheRecordIsSkipped) {
  auto s = schema_of({{"i", "INT"}, {"s", "STRING"}});
  EXPECT_EQ(decode(s, all(s), {"\xEF\xBB\xBF" "1,a", "\xEF\xBB\xBFx,b", "\xEF\xBB\xBF"}),
            (std::vector<std::string>{"+I[1, a]", "ERROR@3: field 1 (i): 'x' is not a valid INT", "SKIP"}));
}

TEST(CsvRowFormat, ProjectionSkipsOtherFields) {
  auto s = schema_of({{"a", "INT"}, {"b", "INT"}, {"c", "STRING"}});
  EXPECT_EQ(decode(s, {2, 0}, {"1,not an int,x"}), std::vector<std::string>{"+I[x, 1]"});
}

TEST(CsvRowFormat, OptionErrorsNameOptionAndValue) {
  auto error = [](std::map<std::string, std::string> m) {
    try {
      CsvFormatOptions::from(m);
    } catch (const ClinkError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error({{"csv.field-delimiter", ";;"}}), "option 'csv.field-delimiter' must be a single character, got ';;'");
  EXPECT_EQ(error({{"csv.allow-comments", "1"}}), "option 'csv.allow-comments' must be true or false, got '1'");
  EXPECT_EQ(error({{"csv.quote", "'"}}).substr(0, 41), "unknown option 'csv.quote' of format csv ");
  EXPECT_EQ(CsvFormatOptions::from({{"csv.field-delimiter", "\\t"}}).field_delimiter, '\t');
  EXPECT_THROW(CsvRowDecoder(schema_of({{"m", "MAP<STRING, INT>"}}), {0}, {}), ClinkError);
}

TEST(CsvRowFormat, Encodes) {
  auto s = schema_of({{"i", "INT"}, {"s", "STRING"}, {"e", "STRING"}, {"n", "STRING"}, {"ts", "TIMESTAMP(3)"},
                      {"arr", "ARRAY<STRING>"}, {"dec", "DECIMAL(10, 9)"}});
  ColumnBatch batch(s);
  CsvRowDecoder dec(s, all(s), {});
  std::string reason;
  ASSERT_EQ(dec.decode(R"(1,"a,""b",,"",2020-04-15 08:05:00.120,x;y,0.000000001)", batch.columns(), reason),
            CsvRowDecoder::Result::kRow)
      << reason;
  batch.commit_rows(1);
  batch.column(3).set_valid(0, false);  // n: NULL
  std::string out;
  CsvRowEncoder(s, {}).encode(batch, 0, out);
  EXPECT_EQ(out, R"(1,"a,""b","",,2020-04-15 08:05:00.12,x;y,1E-9)");
  CsvFormatOptions o = CsvFormatOptions::from({{"csv.null-literal", "NULL"}, {"csv.field-delimiter", "\t"},
                                               {"csv.write-bigdecimal-in-scientific-notation", "false"}});
  out.clear();
  CsvRowEncoder(s, o).encode(batch, 0, out);
  EXPECT_EQ(out, "1\t\"a,\"\"b\"\t\"\"\tNULL\t2020-04-15 08:05:00.12\tx;y\t0.000000001");
}

}  // namespace
}  // namespace clink::test
