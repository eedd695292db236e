// pg_values against the real server: every clink type is written into a table of its
// PostgreSQL type three ways (COPY, statement parameters, SQL literals), read back as
// PostgreSQL's text (checked against the form PostgreSQL itself prints) and parsed into a
// column again, which must hold the values written.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "clink/connectors/jdbc/pg_values.hpp"
#include "clink/sql/common/temporal.hpp"
#include "pg_test_env.hpp"

namespace clink::test {
namespace {

using namespace clink::sql;

struct TypeCase {
  std::string clink_type;          // parse_logical_type's text
  std::string pg_type;             // the column's PostgreSQL type
  std::vector<Value> values;       // written (NULLs included)
  std::vector<std::string> texts;  // what PostgreSQL prints for each ("NULL" for NULL)
};

std::int64_t days(int y, int m, int d) { return days_from_civil(y, m, d); }
std::int64_t micros(int y, int m, int d, int hh, int mm, int ss, std::int64_t us = 0) {
  return days(y, m, d) * kMicrosPerDay + ((hh * 60 + mm) * 60 + ss) * kMicrosPerSecond + us;
}

// Writes `tc` through each path into its own rows and checks the round trip.
void round_trip(const TypeCase& tc) {
  SCOPED_TRACE(tc.clink_type + " as " + tc.pg_type);
  LogicalType type = parse_logical_type(tc.clink_type);
  Column col(type);
  for (const auto& v : tc.values) col.append_value(v);
  const std::size_t n = tc.values.size();
  const std::string t = unique_pg_table("vals");
  PgConnection& c = pg_test_connection();
  c.exec("CREATE TABLE " + t + " (path int, i int, v " + tc.pg_type + ")");

  // 0: COPY's text format.
  std::string copy;
  for (std::size_t i = 0; i < n; ++i) {
    copy += "0\t" + std::to_string(i) + "\t";
    append_pg_copy_field(col, i, copy);
    copy += '\n';
  }
  EXPECT_EQ(c.copy_in("COPY " + t + " (path, i, v) FROM STDIN", copy), static_cast<std::int64_t>(n));
  // 1: text parameters of a prepared statement.
  c.prepare(t + "_ins", "INSERT INTO " + t + " VALUES (1, $1, $2)", 2);
  for (std::size_t i = 0; i < n; ++i) {
    std::string idx = std::to_string(i), text;
    if (!col.is_null(i)) append_pg_text(col, i, text);
    const char* params[] = {idx.c_str(), col.is_null(i) ? nullptr : text.c_str()};
    int lengths[] = {static_cast<int>(idx.size()), static_cast<int>(text.size())};
    c.exec_prepared(t + "_ins", 2, params, lengths);
  }
  // 2: literals in one multi-row INSERT.
  std::string insert = "INSERT INTO " + t + " VALUES ";
  for (std::size_t i = 0; i < n; ++i) {
    insert += (i ? ", (2, " : "(2, ") + std::to_string(i) + ", ";
    append_pg_literal(col, i, insert);
    insert += ')';
  }
  c.exec(insert);

  PgResult r = c.exec("SELECT path, v FROM " + t + " ORDER BY path, i");
  ASSERT_EQ(r.rows(), static_cast<int>(3 * n));
  for (int path = 0; path < 3; ++path) {
    Column back(type);
    for (std::size_t i = 0; i < n; ++i) {
      int row = path * static_cast<int>(n) + static_cast<int>(i);
      std::string shown = r.is_null(row, 1) ? "NULL" : std::string(r.value(row, 1));
      EXPECT_EQ(shown, tc.texts[i]) << "path " << path << " row " << i;
      if (r.is_null(row, 1)) back.append_null();
      else append_pg_text_value(back, r.value(row, 1));
    }
    ASSERT_EQ(back.size(), n);
    for (std::size_t i = 0; i < n; ++i) EXPECT_TRUE(back.value_at(i) == tc.values[i]) << "path " << path << " row " << i;
  }
}

TEST(PgValuesTest, NumbersRoundTrip) {
  round_trip({"BOOLEAN", "boolean", {true, false, Value::null()}, {"t", "f", "NULL"}});
  round_trip({"TINYINT", "smallint", {-128, 127, 0}, {"-128", "127", "0"}});
  round_trip({"SMALLINT", "smallint", {-32768, 32767}, {"-32768", "32767"}});
  round_trip({"INT", "integer", {std::numeric_limits<int>::min(), 42, Value::null()}, {"-2147483648", "42", "NULL"}});
  round_trip({"BIGINT", "bigint", {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()},
              {"-9223372036854775808", "9223372036854775807"}});
  round_trip({"FLOAT", "real",
              {double(0.1f), double(1.5f), double(1e10f), double(-3.4028235e38f),
               std::numeric_limits<double>::infinity()},
              {"0.1", "1.5", "1e+10", "-3.4028235e+38", "Infinity"}});
  round_trip({"DOUBLE", "double precision",
              {0.1, -2.5, 1e300, 5e-324, -std::numeric_limits<double>::infinity(), Value::null()},
              {"0.1", "-2.5", "1e+300", "5e-324", "-Infinity", "NULL"}});
  round_trip({"DECIMAL(10, 2)", "numeric(10, 2)", {Value::decimal(1234567890), Value::decimal(-5), Value::decimal(0)},
              {"12345678.90", "-0.05", "0.00"}});
  Int128 big = Decimal128::pow10(38) - 1;
  round_trip({"DECIMAL(38, 6)", "numeric(38, 6)", {Value::decimal(big), Value::decimal(-big)},
              {"99999999999999999999999999999999.999999", "-99999999999999999999999999999999.999999"}});
}

TEST(PgValuesTest, StringsAndBytesRoundTrip) {
  round_trip({"STRING", "text",
              {"it's", "tab\there\nnew line\\back\rcr", "", "ünïcödé", "NULL", "{a,b}", "\"q\"", Value::null()},
              {"it's", "tab\there\nnew line\\back\rcr", "", "ünïcödé", "NULL", "{a,b}", "\"q\"", "NULL"}});
  round_trip({"VARCHAR(10)", "varchar(10)", {"abc", ""}, {"abc", ""}});
  round_trip({"CHAR(3)", "char(3)", {"abc"}, {"abc"}});
  round_trip({"BYTES", "bytea", {std::string("\0\xff" "a\\'", 5), "", Value::null()}, {"\\x00ff615c27", "\\x", "NULL"}});
  round_trip({"BINARY(2)", "bytea", {std::string("\x01\x02", 2)}, {"\\x0102"}});
}

TEST(PgValuesTest, TemporalValuesRoundTrip) {
  round_trip({"DATE", "date", {0, days(2020, 4, 15), days(1, 1, 1), days(0, 12, 31), days(-43, 3, 15),
                               days(9999, 12, 31), Value::null()},
              {"1970-01-01", "2020-04-15", "0001-01-01", "0001-12-31 BC", "0044-03-15 BC", "9999-12-31", "NULL"}});
  round_trip({"TIME(3)", "time(3)", {0, 29100123, 86399999}, {"00:00:00", "08:05:00.123", "23:59:59.999"}});
  round_trip({"TIMESTAMP(6)", "timestamp(6)",
              {std::int64_t{0}, std::int64_t{-1}, micros(2020, 4, 15, 8, 5, 0, 123456), micros(0, 1, 1, 12, 0, 0),
               micros(12345, 6, 7, 1, 2, 3, 400000)},
              {"1970-01-01 00:00:00", "1969-12-31 23:59:59.999999", "2020-04-15 08:05:00.123456",
               "0001-01-01 12:00:00 BC", "12345-06-07 01:02:03.4"}});
  round_trip({"TIMESTAMP(3)", "timestamp(3)", {micros(2024, 2, 29, 23, 59, 59, 999000)}, {"2024-02-29 23:59:59.999"}});
  round_trip({"TIMESTAMP_LTZ(6)", "timestamptz(6)", {std::int64_t{0}, micros(2020, 4, 15, 8, 5, 0, 1), Value::null()},
              {"1970-01-01 00:00:00+00", "2020-04-15 08:05:00.000001+00", "NULL"}});
  round_trip({"INTERVAL DAY TO SECOND(3)", "interval",
              {std::int64_t{0}, std::int64_t{90061001}, std::int64_t{-1500}, std::int64_t{-86400000LL * 400}},
              {"PT0S", "P1DT1H1M1.001S", "PT-1.5S", "P-400D"}});
  round_trip({"INTERVAL YEAR TO MONTH", "interval", {std::int64_t{14}, std::int64_t{-1}, std::int64_t{0}},
              {"P1Y2M", "P-1M", "PT0S"}});
}

TEST(PgValuesTest, ArraysRoundTrip) {
  round_trip({"ARRAY<INT>", "integer[]", {ValueList{{1, Value::null(), 3}}, ValueList{}, Value::null()},
              {"{1,NULL,3}", "{}", "NULL"}});
  round_trip({"ARRAY<STRING>", "text[]", {ValueList{{"a b", "NULL", "", "q\"\\'", Value::null(), "{x}"}}},
              {"{\"a b\",\"NULL\",\"\",\"q\\\"\\\\'\",NULL,\"{x}\"}"}});
  round_trip({"ARRAY<ARRAY<INT>>", "integer[]", {ValueList{{ValueList{{1, 2}}, ValueList{{3, 4}}}}},
              {"{{1,2},{3,4}}"}});
  round_trip({"ARRAY<DATE>", "date[]", {ValueList{{0, days(0, 1, 1)}}}, {"{1970-01-01,\"0001-01-01 BC\"}"}});
  round_trip({"ARRAY<DECIMAL(5, 1)>", "numeric(5, 1)[]", {ValueList{{Value::decimal(15), Value::decimal(-1)}}},
              {"{1.5,-0.1}"}});
  round_trip({"ARRAY<BYTES>", "bytea[]", {ValueList{{std::string("\x01", 1)}}}, {"{\"\\\\x01\"}"}});
}

TEST(PgValuesTest, RowsAsCompositeTypesRoundTrip) {
  const std::string type = unique_pg_table("pair");
  pg_exec("CREATE TYPE " + type + " AS (a integer, b text)");
  round_trip({"ROW<a INT, b STRING>", type,
              {ValueList{{1, "x y"}}, ValueList{{Value::null(), ""}}, ValueList{{2, "q\"(,)"}}, Value::null()},
              {"(1,\"x y\")", "(,\"\")", "(2,\"q\"\"(,)\")", "NULL"}});
}

TEST(PgValuesTest, MapsAsHstoreRoundTrip) {
  pg_exec("CREATE EXTENSION IF NOT EXISTS hstore");
  round_trip({"MAP<STRING, STRING>", "hstore",
              {ValueList{{"a", "1", "bb", Value::null()}}, ValueList{}, ValueList{{"k\"", "v,=>"}}},
              {"\"a\"=>\"1\", \"bb\"=>NULL", "", "\"k\\\"\"=>\"v,=>\""}});
  round_trip({"MAP<STRING, INT>", "hstore", {ValueList{{"x", 7}}}, {"\"x\"=>\"7\""}});
}

TEST(PgValuesTest, BadTextNamesTheValueAndType) {
  auto fails = [](const std::string& type, const std::string& text, const std::string& message) {
    Column c(parse_logical_type(type));
    try {
      append_pg_text_value(c, text);
      ADD_FAILURE() << type << " accepted '" << text << "'";
    } catch (const PgValueError& e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
    EXPECT_EQ(c.size(), 0u) << type << ": a failed parse appended";
  };
  fails("INT", "12x", "'12x' is not a valid INT value");
  fails("SMALLINT", "40000", "'40000' is not a valid SMALLINT value: out of range");
  fails("DECIMAL(3, 1)", "123.4", "'123.4' is not a valid DECIMAL(3, 1) value: does not fit the precision");
  fails("DATE", "infinity", "'infinity' is not a valid DATE value");
  fails("BYTES", "abc", "'abc' is not a valid BYTES value: not bytea's hex form \\x...");
  fails("ARRAY<INT>", "{1,x}", "'x' is not a valid INT value");
  fails("INTERVAL DAY TO SECOND(3)", "P1M", "'P1M' is not a valid INTERVAL DAY(2) TO SECOND(3) value: it has months, "
                                            "which have no fixed length");
  fails("ROW<a INT, b INT>", "(1)", "'(1)' is not a valid ROW<`a` INT, `b` INT> value: 1 fields for 2");
}

TEST(PgValuesTest, TypeNames) {
  EXPECT_EQ(pg_type_name(parse_logical_type("DECIMAL(10, 2)")), "numeric(10, 2)");
  EXPECT_EQ(pg_type_name(parse_logical_type("STRING")), "text");
  EXPECT_EQ(pg_type_name(parse_logical_type("VARCHAR(5)")), "varchar(5)");
  EXPECT_EQ(pg_type_name(parse_logical_type("TIMESTAMP(3)")), "timestamp(3)");
  EXPECT_EQ(pg_type_name(parse_logical_type("TIMESTAMP_LTZ(9)")), "timestamptz(6)");
  EXPECT_EQ(pg_type_name(parse_logical_type("ARRAY<ARRAY<BIGINT>>")), "bigint[]");
  EXPECT_EQ(pg_type_name(parse_logical_type("BYTES")), "bytea");
  EXPECT_THROW(pg_type_name(parse_logical_type("ROW<a INT>")), PgValueError);
}

}  // namespace
}  // namespace clink::test
