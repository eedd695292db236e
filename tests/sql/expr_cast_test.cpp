#include <gtest/gtest.h>

#include "clink/sql/common/temporal.hpp"
#include "clink/sql/function/cast.hpp"
#include "expr_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

std::string cast_str(const std::string& text, const LogicalType& to, bool try_cast = false, const SessionContext& s = {}) {
  auto e = try_cast ? expr::try_cast(str(text), to) : expr::cast(str(text), to);
  return eval(e, s);
}
std::string cast_to_string(ExprPtr e, const SessionContext& s = {}) { return eval(expr::cast(e, LogicalType::string()), s); }

}  // namespace

TEST(CastTest, StringToNumbersAndBooleans) {
  EXPECT_EQ(cast_str(" 42 ", LogicalType::int_type()), "42");
  EXPECT_EQ(cast_str("-7", LogicalType::tinyint()), "-7");
  EXPECT_EQ(cast_str("1.9", LogicalType::bigint()), "1");  // the fraction is dropped, as Flink
  EXPECT_THROW(cast_str("abc", LogicalType::int_type()), SqlRuntimeError);
  EXPECT_THROW(cast_str("128", LogicalType::tinyint()), SqlRuntimeError);
  EXPECT_EQ(cast_str("abc", LogicalType::int_type(), true), "NULL");
  EXPECT_EQ(cast_str("9223372036854775808", LogicalType::bigint(), true), "NULL");
  EXPECT_EQ(cast_str("1.5e3", LogicalType::double_type()), "1500.0");
  EXPECT_EQ(cast_str("NaN", LogicalType::double_type()), "NaN");
  EXPECT_EQ(cast_str("-Infinity", LogicalType::float_type()), "-Infinity");
  EXPECT_EQ(cast_str("1.005", LogicalType::decimal(5, 2)), "1.01");
  EXPECT_EQ(cast_str("12345", LogicalType::decimal(5, 2)), "NULL");  // overflow is NULL, as Flink
  EXPECT_THROW(cast_str("1,5", LogicalType::decimal(5, 2)), SqlRuntimeError);
  EXPECT_EQ(cast_str("yes", LogicalType::boolean()), "TRUE");
  EXPECT_EQ(cast_str(" F ", LogicalType::boolean()), "FALSE");
  EXPECT_EQ(cast_str("maybe", LogicalType::boolean(), true), "NULL");
  try {
    cast_str("abc", LogicalType::int_type());
    FAIL();
  } catch (const SqlRuntimeError& e) {
    EXPECT_STREQ(e.what(), "Cannot cast 'abc' of type STRING to INT");
  }
}

TEST(CastTest, StringToTemporal) {
  EXPECT_EQ(cast_str("2020-04-15", LogicalType::date()), "2020-04-15");
  EXPECT_EQ(cast_str("2020-04-15 08:05:00", LogicalType::date()), "2020-04-15");
  EXPECT_EQ(cast_str("08:05:07.123", LogicalType::time(0)), "08:05:07");
  EXPECT_EQ(cast_str("2020-04-15 08:05:00.123456", LogicalType::timestamp(3)), "2020-04-15 08:05:00.123");
  EXPECT_EQ(cast_str("2020-04-15T08:05:00", LogicalType::timestamp(6)), "2020-04-15 08:05:00.000000");
  EXPECT_THROW(cast_str("2020-02-30", LogicalType::date()), SqlRuntimeError);
  EXPECT_EQ(cast_str("2020-02-30", LogicalType::date(), true), "NULL");
  SessionContext shanghai{TimeZone::of("Asia/Shanghai")};
  // A TIMESTAMP_LTZ from local text is read in the session zone and shown in it again.
  EXPECT_EQ(cast_str("2020-04-15 08:05:00", LogicalType::timestamp_ltz(3), false, shanghai), "2020-04-15 08:05:00.000");
  auto ltz = expr::cast(str("2020-04-15 08:05:00Z"), LogicalType::timestamp_ltz(3));
  EXPECT_EQ(eval(expr::cast(ltz, LogicalType::string()), shanghai), "2020-04-15 16:05:00.000");
  EXPECT_EQ(eval(expr::cast(ltz, LogicalType::timestamp(3)), shanghai), "2020-04-15 16:05:00.000");
  EXPECT_EQ(eval(expr::cast(ltz, LogicalType::bigint())), "1586937900");
  EXPECT_EQ(eval(expr::cast(i64(1586937900), LogicalType::timestamp_ltz(0))), "2020-04-15 08:05:00");
}

TEST(CastTest, EveryTypeToStringLikeFlink) {
  EXPECT_EQ(cast_to_string(f64(1.0)), "1.0");
  EXPECT_EQ(cast_to_string(f64(0.1 + 0.2)), "0.30000000000000004");
  EXPECT_EQ(cast_to_string(f64(1e10)), "1.0E10");
  EXPECT_EQ(cast_to_string(f64(1234567.0)), "1234567.0");
  EXPECT_EQ(cast_to_string(f64(12345678.9)), "1.23456789E7");
  EXPECT_EQ(cast_to_string(f64(0.001)), "0.001");
  EXPECT_EQ(cast_to_string(f64(0.0001)), "1.0E-4");
  EXPECT_EQ(cast_to_string(f64(-2.5e-10)), "-2.5E-10");
  EXPECT_EQ(cast_to_string(expr::cast(f64(0.1), LogicalType::float_type())), "0.1");
  EXPECT_EQ(cast_to_string(dec("-0.50", 5, 2)), "-0.50");
  EXPECT_EQ(cast_to_string(boolean(true)), "TRUE");
  EXPECT_EQ(cast_to_string(i64(-42)), "-42");
  EXPECT_EQ(cast_to_string(expr::literal(Value(std::int64_t{18367}), LogicalType::date())), "2020-04-15");
  EXPECT_EQ(cast_to_string(expr::literal(Value(std::int64_t{29100123}), LogicalType::time(3))), "08:05:00.123");
  auto arr = expr::literal(Value(ValueList{{1, Value::null(), 3}}), LogicalType::array(LogicalType::int_type()));
  EXPECT_EQ(cast_to_string(arr), "[1, NULL, 3]");
  auto map = expr::literal(Value(ValueList{{"a", 1}}), LogicalType::map(LogicalType::string(), LogicalType::int_type()));
  EXPECT_EQ(cast_to_string(map), "{a=1}");
  auto row = expr::literal(Value(ValueList{{1, "x"}}), LogicalType::row({{"a", LogicalType::int_type()}, {"b", LogicalType::string()}}));
  EXPECT_EQ(cast_to_string(row), "(1, x)");
  EXPECT_EQ(eval(expr::cast(str("ab"), LogicalType::char_type(4))), "ab  ");
  EXPECT_EQ(eval(expr::cast(str("abcdef"), LogicalType::varchar(3))), "abc");
  EXPECT_EQ(eval(expr::cast(str("äöü"), LogicalType::varchar(2))), "äö");
  EXPECT_EQ(eval(expr::cast(i64(123456), LogicalType::char_type(3))), "123");
}

TEST(CastTest, NumericConversions) {
  EXPECT_EQ(eval(expr::cast(i32(300), LogicalType::tinyint())), "44");  // wraps, as Java
  EXPECT_EQ(eval(expr::cast(f64(-2.7), LogicalType::int_type())), "-2");
  EXPECT_EQ(eval(expr::cast(f64(1e20), LogicalType::int_type())), "2147483647");
  EXPECT_EQ(eval(expr::cast(f64(1e20), LogicalType::bigint())), "9223372036854775807");
  EXPECT_EQ(eval(expr::cast(dec("-12.99", 4, 2), LogicalType::int_type())), "-12");
  EXPECT_EQ(eval(expr::cast(f64(2.675), LogicalType::decimal(4, 2))), "2.68");
  EXPECT_EQ(eval(expr::cast(f64(1e5), LogicalType::decimal(4, 2))), "NULL");
  EXPECT_EQ(eval(expr::cast(dec("12.345", 5, 3), LogicalType::decimal(4, 2))), "12.35");
  EXPECT_EQ(eval(expr::cast(dec("12.345", 5, 3), LogicalType::double_type())), "12.345");
  EXPECT_EQ(eval(expr::cast(i32(0), LogicalType::boolean())), "FALSE");
  EXPECT_EQ(eval(expr::cast(boolean(true), LogicalType::int_type())), "1");
  EXPECT_EQ(eval(expr::cast(i32(7), LogicalType::double_type())), "7.0");
  EXPECT_EQ(eval(expr::cast(null_of(), LogicalType::int_type())), "NULL");
  EXPECT_EQ(eval(expr::cast(expr::literal(Value(std::int64_t{18367}), LogicalType::date()), LogicalType::timestamp(3))),
            "2020-04-15 00:00:00.000");
}

TEST(CastTest, CastValueHelperAndNestedCasts) {
  SessionContext s;
  EXPECT_EQ(cast_value(Value("12"), LogicalType::string(), LogicalType::bigint(), s), Value(std::int64_t{12}));
  EXPECT_EQ(cast_value(Value::null(), LogicalType::string(), LogicalType::bigint(), s), Value::null());
  EXPECT_EQ(cast_value(Value("x"), LogicalType::string(), LogicalType::bigint(), s, true), Value::null());
  auto arr = cast_value(Value(ValueList{{"1", "2"}}), LogicalType::array(LogicalType::string()),
                        LogicalType::array(LogicalType::int_type()), s);
  EXPECT_EQ(arr, Value(ValueList{{1, 2}}));
}

TEST(CastTest, BinaryTimeAndIntervalText) {
  EXPECT_EQ(eval(expr::cast(expr::cast(str("hi"), LogicalType::bytes()), LogicalType::string())), "hi");
  EXPECT_EQ(eval(expr::cast(str("abc"), LogicalType::binary(5))), std::string("abc\0\0", 5));
  EXPECT_EQ(eval(expr::cast(str("abcdef"), LogicalType::varbinary(2))), "ab");
  EXPECT_EQ(cast_to_string(expr::literal(Value(std::int64_t{29100000}), LogicalType::time(0))), "08:05:00");
  auto dt = expr::literal(Value(std::int64_t{93784005}), LogicalType::interval_day_time());
  EXPECT_EQ(cast_to_string(dt), "+1 02:03:04.005");
  auto ym = expr::literal(Value(std::int64_t{-14}), LogicalType::interval_year_month());
  EXPECT_EQ(cast_to_string(ym), "-1-02");
  EXPECT_EQ(eval(expr::cast(dt, LogicalType::bigint())), "93784005");
  EXPECT_THROW(expr::cast(str("1"), LogicalType::interval_day_time()), SqlTypeError);
}

}  // namespace clink::test
