#include <gtest/gtest.h>

#include "clink/sql/common/decimal.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

Int128 dec(std::string_view s, int p, int sc) {
  Int128 v = 0;
  EXPECT_EQ(Decimal128::parse(s, p, sc, v), Decimal128::ParseStatus::kOk) << s;
  return v;
}
std::string str(std::optional<Int128> v, int scale) { return v ? Decimal128::to_string(*v, scale) : "NULL"; }

}  // namespace

TEST(DecimalTest, ParsesAndFormatsWithHalfUpRounding) {
  EXPECT_EQ(Decimal128::to_string(dec("1.2", 10, 2), 2), "1.20");
  EXPECT_EQ(Decimal128::to_string(dec("-0.05", 10, 2), 2), "-0.05");
  EXPECT_EQ(Decimal128::to_string(dec("  12 ", 5, 0), 0), "12");
  EXPECT_EQ(Decimal128::to_string(dec("1.005", 10, 2), 2), "1.01");
  EXPECT_EQ(Decimal128::to_string(dec("-1.005", 10, 2), 2), "-1.01");
  EXPECT_EQ(Decimal128::to_string(dec("1.004999", 10, 2), 2), "1.00");
  EXPECT_EQ(Decimal128::to_string(dec("0.5", 3, 0), 0), "1");
  EXPECT_EQ(Decimal128::to_string(dec("0.05", 3, 0), 0), "0");
  EXPECT_EQ(Decimal128::to_string(dec("1.5e2", 10, 1), 1), "150.0");
  EXPECT_EQ(Decimal128::to_string(dec("12345E-4", 10, 3), 3), "1.235");
  EXPECT_EQ(Decimal128::to_string(dec("+.5", 3, 1), 1), "0.5");
  EXPECT_EQ(Decimal128::to_string(dec("99999999999999999999999999999999999999", 38, 0), 0),
            "99999999999999999999999999999999999999");
  Int128 v;
  EXPECT_EQ(Decimal128::parse("abc", 10, 2, v), Decimal128::ParseStatus::kInvalid);
  EXPECT_EQ(Decimal128::parse("1.2.3", 10, 2, v), Decimal128::ParseStatus::kInvalid);
  EXPECT_EQ(Decimal128::parse("1e", 10, 2, v), Decimal128::ParseStatus::kInvalid);
  EXPECT_EQ(Decimal128::parse("", 10, 2, v), Decimal128::ParseStatus::kInvalid);
  EXPECT_EQ(Decimal128::parse("1000", 5, 2, v), Decimal128::ParseStatus::kOverflow);
  EXPECT_EQ(Decimal128::parse("999.995", 5, 2, v), Decimal128::ParseStatus::kOverflow);
  EXPECT_EQ(Decimal128::parse("1e40", 38, 0, v), Decimal128::ParseStatus::kOverflow);
}

TEST(DecimalTest, ArithmeticIsExactWithFlinkScales) {
  // DECIMAL(10,2) + DECIMAL(5,3) -> DECIMAL(12,3)
  EXPECT_EQ(str(Decimal128::add(dec("1.25", 10, 2), 2, dec("0.125", 5, 3), 3, 12, 3), 3), "1.375");
  EXPECT_EQ(str(Decimal128::subtract(dec("1.25", 10, 2), 2, dec("2.5", 5, 3), 3, 12, 3), 3), "-1.250");
  // DECIMAL(10,2) * DECIMAL(5,3) -> DECIMAL(15,5)
  EXPECT_EQ(str(Decimal128::multiply(dec("1.25", 10, 2), 2, dec("-0.125", 5, 3), 3, 15, 5), 5), "-0.15625");
  // DECIMAL(10,2) / DECIMAL(5,3) -> DECIMAL(19,8)
  EXPECT_EQ(str(Decimal128::divide(dec("1", 10, 2), 2, dec("3", 5, 3), 3, 19, 8), 8), "0.33333333");
  EXPECT_EQ(str(Decimal128::divide(dec("2", 10, 2), 2, dec("3", 5, 3), 3, 19, 8), 8), "0.66666667");
  EXPECT_EQ(str(Decimal128::divide(dec("-2", 10, 2), 2, dec("3", 5, 3), 3, 19, 8), 8), "-0.66666667");
  EXPECT_EQ(str(Decimal128::divide(dec("1", 10, 2), 2, 0, 3, 19, 8), 8), "NULL");
  EXPECT_EQ(str(Decimal128::mod(dec("-7.5", 10, 2), 2, dec("2", 5, 3), 3, 5, 3), 3), "-1.500");
  EXPECT_EQ(str(Decimal128::mod(dec("7.5", 10, 2), 2, 0, 3, 5, 3), 3), "NULL");
}

TEST(DecimalTest, OverflowGivesNullAndWideIntermediatesAreExact) {
  Int128 max38 = dec("99999999999999999999999999999999999999", 38, 0);
  EXPECT_EQ(str(Decimal128::add(max38, 0, 1, 0, 38, 0), 0), "NULL");
  EXPECT_EQ(str(Decimal128::add(max38, 0, -1, 0, 38, 0), 0), "99999999999999999999999999999999999998");
  // (38,10) * (38,10) -> (38,6): the exact product needs 256 bits before rounding.
  Int128 a = dec("1234567890.1234567891", 38, 10);
  EXPECT_EQ(str(Decimal128::multiply(a, 10, a, 10, 38, 6), 6), "1524157875323883675.265966");
  EXPECT_EQ(str(Decimal128::multiply(max38, 0, 10, 0, 38, 0), 0), "NULL");
  // (38,2) / (38,2) -> (38,6) with a numerator scaled past 128 bits.
  Int128 big = dec("123456789012345678901234567890123456.78", 38, 2);
  EXPECT_EQ(str(Decimal128::divide(big, 2, dec("3", 38, 2), 2, 38, 6), 6), "NULL");
  EXPECT_EQ(str(Decimal128::divide(dec("10", 38, 2), 2, dec("3", 38, 2), 2, 38, 6), 6), "3.333333");
  EXPECT_EQ(str(Decimal128::divide(dec("12345678901234567890123456789012.34", 38, 2), 2, dec("7", 38, 2), 2, 38, 6), 6),
            "1763668414462081127160493827001.762857");
}

TEST(DecimalTest, RescaleCastCompareAndConversions) {
  EXPECT_EQ(str(Decimal128::rescale(dec("1.25", 10, 2), 2, 1), 1), "1.3");
  EXPECT_EQ(str(Decimal128::rescale(dec("-1.25", 10, 2), 2, 1), 1), "-1.3");
  EXPECT_EQ(str(Decimal128::rescale(dec("1.24", 10, 2), 2, 4), 4), "1.2400");
  EXPECT_EQ(str(Decimal128::cast(dec("123.45", 10, 2), 2, 4, 2), 2), "NULL");
  EXPECT_EQ(str(Decimal128::cast(dec("123.45", 10, 2), 2, 4, 0), 0), "123");
  EXPECT_EQ(Decimal128::compare(dec("1.5", 10, 1), 1, dec("1.50", 10, 2), 2), 0);
  EXPECT_EQ(Decimal128::compare(dec("-1.5", 10, 1), 1, dec("1.49", 10, 2), 2), -1);
  EXPECT_EQ(Decimal128::compare(dec("-1.5", 10, 1), 1, dec("-1.49", 10, 2), 2), -1);
  EXPECT_EQ(Decimal128::compare(dec("99999999999999999999999999999999999999", 38, 0), 0, dec("1", 38, 37), 37), 1);
  EXPECT_EQ(str(Decimal128::from_double(0.1 + 0.2, 10, 2), 2), "0.30");
  EXPECT_EQ(str(Decimal128::from_double(2.675, 10, 2), 2), "2.68");  // BigDecimal.valueOf(2.675) is 2.675
  EXPECT_EQ(str(Decimal128::from_double(1e20, 10, 2), 2), "NULL");
  EXPECT_EQ(str(Decimal128::from_int64(-42, 5, 2), 2), "-42.00");
  EXPECT_EQ(str(Decimal128::from_int64(1000, 5, 2), 2), "NULL");
  EXPECT_DOUBLE_EQ(Decimal128::to_double(dec("-12.345", 10, 3), 3), -12.345);
  EXPECT_DOUBLE_EQ(Decimal128::to_double(dec("12345678901234567890.5", 38, 1), 1), 12345678901234567890.5);
  EXPECT_EQ(Decimal128::to_int64(dec("-12.9", 10, 1), 1), -12);
  EXPECT_EQ(Decimal128::to_int64(dec("12.9", 10, 1), 1), 12);
}

}  // namespace clink::test
