#include <gtest/gtest.h>

#include "clink/sql/common/row_kind.hpp"
#include "clink/sql/common/types.hpp"

namespace clink::test {

using namespace clink::sql;

TEST(LogicalTypeTest, PrintsFlinkSummaryStrings) {
  EXPECT_EQ(LogicalType::decimal(10, 2).to_string(), "DECIMAL(10, 2)");
  EXPECT_EQ(LogicalType::timestamp(3).to_string(), "TIMESTAMP(3)");
  EXPECT_EQ(LogicalType::timestamp_ltz(3).to_string(), "TIMESTAMP_LTZ(3)");
  EXPECT_EQ(LogicalType::string().to_string(), "STRING");
  EXPECT_EQ(LogicalType::varchar(10).to_string(), "VARCHAR(10)");
  EXPECT_EQ(LogicalType::bytes().to_string(), "BYTES");
  EXPECT_EQ(LogicalType::char_type(3).not_null().to_string(), "CHAR(3) NOT NULL");
  EXPECT_EQ(LogicalType::int_type().not_null().to_string(), "INT NOT NULL");
  EXPECT_EQ(LogicalType::time(0).to_string(), "TIME(0)");
  EXPECT_EQ(LogicalType::null_type().to_string(), "NULL");
  EXPECT_EQ(LogicalType::array(LogicalType::int_type()).to_string(), "ARRAY<INT>");
  EXPECT_EQ(LogicalType::map(LogicalType::string(), LogicalType::bigint().not_null()).to_string(),
            "MAP<STRING, BIGINT NOT NULL>");
  EXPECT_EQ(LogicalType::row({{"a", LogicalType::int_type()}, {"b", LogicalType::string()}}).to_string(),
            "ROW<`a` INT, `b` STRING>");
  EXPECT_EQ(LogicalType::interval_day_time(IntervalUnit::kSecond, 2, 3).to_string(), "INTERVAL SECOND(3)");
  EXPECT_EQ(LogicalType::interval_day_time().to_string(), "INTERVAL DAY(2) TO SECOND(6)");
  EXPECT_EQ(LogicalType::interval_year_month().to_string(), "INTERVAL YEAR(2) TO MONTH");
  EXPECT_EQ(LogicalType::interval_year_month(IntervalUnit::kMonth).to_string(), "INTERVAL MONTH");
}

TEST(LogicalTypeTest, ParsesWhatItPrintsAndSqlSpellings) {
  std::vector<LogicalType> types = {
      LogicalType::boolean(), LogicalType::tinyint(), LogicalType::smallint(), LogicalType::int_type().not_null(),
      LogicalType::bigint(), LogicalType::float_type(), LogicalType::double_type(), LogicalType::decimal(38, 18),
      LogicalType::char_type(5), LogicalType::varchar(7), LogicalType::string(), LogicalType::binary(2),
      LogicalType::varbinary(9), LogicalType::bytes(), LogicalType::date(), LogicalType::time(3),
      LogicalType::timestamp(9), LogicalType::timestamp_ltz(3), LogicalType::interval_day_time(),
      LogicalType::interval_day_time(IntervalUnit::kSecond, 2, 3), LogicalType::interval_year_month(),
      LogicalType::interval_year_month(IntervalUnit::kMonth), LogicalType::array(LogicalType::string().not_null()),
      LogicalType::map(LogicalType::int_type(), LogicalType::array(LogicalType::double_type())),
      LogicalType::row({{"a b", LogicalType::int_type()}, {"c", LogicalType::row({{"d", LogicalType::date()}})}}),
      LogicalType::null_type()};
  for (const auto& t : types) EXPECT_EQ(parse_logical_type(t.to_string()), t) << t.to_string();
  EXPECT_EQ(parse_logical_type("integer"), LogicalType::int_type());
  EXPECT_EQ(parse_logical_type("NUMERIC"), LogicalType::decimal(10, 0));
  EXPECT_EQ(parse_logical_type("DEC(5)"), LogicalType::decimal(5, 0));
  EXPECT_EQ(parse_logical_type("double precision"), LogicalType::double_type());
  EXPECT_EQ(parse_logical_type("CHARACTER VARYING(4)"), LogicalType::varchar(4));
  EXPECT_EQ(parse_logical_type("VARCHAR"), LogicalType::varchar(1));
  EXPECT_EQ(parse_logical_type("VARCHAR(2147483647)"), LogicalType::string());
  EXPECT_EQ(parse_logical_type("TIMESTAMP"), LogicalType::timestamp(6));
  EXPECT_EQ(parse_logical_type("TIMESTAMP(3) WITHOUT TIME ZONE"), LogicalType::timestamp(3));
  EXPECT_EQ(parse_logical_type("TIMESTAMP(3) WITH LOCAL TIME ZONE"), LogicalType::timestamp_ltz(3));
  EXPECT_EQ(parse_logical_type("INT ARRAY"), LogicalType::array(LogicalType::int_type()));
  EXPECT_EQ(parse_logical_type("ROW(a INT, b STRING)"),
            LogicalType::row({{"a", LogicalType::int_type()}, {"b", LogicalType::string()}}));
  EXPECT_EQ(parse_logical_type("INTERVAL DAY TO SECOND(3)"),
            LogicalType::interval_day_time(IntervalUnit::kDayToSecond, 2, 3));
}

TEST(LogicalTypeTest, RejectsBadTypesWithPosition) {
  try {
    parse_logical_type("DECIMAL(10, 2) FOO");
    FAIL();
  } catch (const SqlTypeError& e) {
    EXPECT_STREQ(e.what(), "cannot parse type 'DECIMAL(10, 2) FOO': unexpected text after the type at offset 15");
  }
  EXPECT_THROW(parse_logical_type("DECIMAL(39, 0)"), SqlTypeError);
  EXPECT_THROW(parse_logical_type("DECIMAL(5, 6)"), SqlTypeError);
  EXPECT_THROW(parse_logical_type("VARCHAR(0)"), SqlTypeError);
  EXPECT_THROW(parse_logical_type("WIBBLE"), SqlTypeError);
  EXPECT_THROW(parse_logical_type("ARRAY<INT"), SqlTypeError);
}

TEST(LogicalTypeTest, DecimalResultTypesFollowFlink) {
  EXPECT_EQ(decimal_add_type(10, 2, 5, 3), LogicalType::decimal(12, 3));
  EXPECT_EQ(decimal_multiply_type(10, 2, 5, 3), LogicalType::decimal(15, 5));
  EXPECT_EQ(decimal_divide_type(10, 2, 5, 3), LogicalType::decimal(19, 8));
  EXPECT_EQ(decimal_mod_type(10, 2, 5, 3), LogicalType::decimal(5, 3));
  // Capped at 38 keeping min(s, 6) fractional digits.
  EXPECT_EQ(decimal_multiply_type(38, 10, 38, 10), LogicalType::decimal(38, 6));
  EXPECT_EQ(decimal_divide_type(38, 2, 38, 2), LogicalType::decimal(38, 6));
  EXPECT_EQ(decimal_add_type(38, 2, 38, 2), LogicalType::decimal(38, 2));
  EXPECT_EQ(sum_result_type(LogicalType::decimal(10, 2)), LogicalType::decimal(38, 2));
  EXPECT_EQ(avg_result_type(LogicalType::decimal(10, 2)), LogicalType::decimal(38, 6));
  EXPECT_EQ(avg_result_type(LogicalType::decimal(20, 8)), LogicalType::decimal(38, 8));
  EXPECT_EQ(sum_result_type(LogicalType::bigint().not_null()), LogicalType::bigint());
  EXPECT_EQ(avg_result_type(LogicalType::int_type()), LogicalType::int_type());
}

TEST(LogicalTypeTest, ArithmeticResultTypes) {
  auto r = [](ArithmeticOp op, LogicalType a, LogicalType b) { return arithmetic_result_type(op, a, b)->to_string(); };
  EXPECT_EQ(r(ArithmeticOp::kPlus, LogicalType::int_type().not_null(), LogicalType::int_type().not_null()), "INT NOT NULL");
  EXPECT_EQ(r(ArithmeticOp::kPlus, LogicalType::int_type(), LogicalType::bigint().not_null()), "BIGINT");
  EXPECT_EQ(r(ArithmeticOp::kMod, LogicalType::bigint(), LogicalType::smallint()), "SMALLINT");
  EXPECT_EQ(r(ArithmeticOp::kPlus, LogicalType::int_type(), LogicalType::decimal(5, 2)), "DECIMAL(13, 2)");
  EXPECT_EQ(r(ArithmeticOp::kDivide, LogicalType::decimal(5, 2), LogicalType::int_type()), "DECIMAL(16, 13)");
  EXPECT_EQ(r(ArithmeticOp::kMultiply, LogicalType::decimal(5, 2), LogicalType::double_type()), "DOUBLE");
  EXPECT_EQ(r(ArithmeticOp::kMultiply, LogicalType::float_type(), LogicalType::int_type()), "FLOAT");
  EXPECT_FALSE(arithmetic_result_type(ArithmeticOp::kPlus, LogicalType::string(), LogicalType::int_type()));
}

TEST(LogicalTypeTest, ImplicitCastsAndCommonTypes) {
  EXPECT_TRUE(supports_implicit_cast(LogicalType::int_type(), LogicalType::bigint()));
  EXPECT_FALSE(supports_implicit_cast(LogicalType::bigint(), LogicalType::int_type()));
  EXPECT_TRUE(supports_implicit_cast(LogicalType::int_type(), LogicalType::decimal(10, 0)));
  EXPECT_FALSE(supports_implicit_cast(LogicalType::int_type(), LogicalType::decimal(9, 0)));
  EXPECT_TRUE(supports_implicit_cast(LogicalType::decimal(5, 2), LogicalType::double_type()));
  EXPECT_TRUE(supports_implicit_cast(LogicalType::char_type(3), LogicalType::string()));
  EXPECT_FALSE(supports_implicit_cast(LogicalType::string(), LogicalType::int_type()));
  EXPECT_TRUE(supports_implicit_cast(LogicalType::null_type(), LogicalType::date()));
  EXPECT_TRUE(supports_implicit_cast(LogicalType::date(), LogicalType::timestamp(3)));
  EXPECT_TRUE(supports_explicit_cast(LogicalType::string(), LogicalType::int_type()));
  EXPECT_TRUE(supports_explicit_cast(LogicalType::array(LogicalType::int_type()), LogicalType::string()));
  EXPECT_FALSE(supports_explicit_cast(LogicalType::date(), LogicalType::int_type()));

  auto common = [](std::vector<LogicalType> ts) {
    auto t = find_common_type(ts);
    return t ? t->to_string() : std::string("none");
  };
  EXPECT_EQ(common({LogicalType::int_type().not_null(), LogicalType::bigint().not_null()}), "BIGINT NOT NULL");
  EXPECT_EQ(common({LogicalType::int_type().not_null(), LogicalType::null_type()}), "INT");
  EXPECT_EQ(common({LogicalType::int_type(), LogicalType::decimal(5, 2)}), "DECIMAL(12, 2)");
  EXPECT_EQ(common({LogicalType::decimal(5, 2), LogicalType::double_type()}), "DOUBLE");
  EXPECT_EQ(common({LogicalType::char_type(3), LogicalType::char_type(5)}), "VARCHAR(5)");
  EXPECT_EQ(common({LogicalType::char_type(3), LogicalType::char_type(3)}), "CHAR(3)");
  EXPECT_EQ(common({LogicalType::date(), LogicalType::timestamp(3)}), "TIMESTAMP(3)");
  EXPECT_EQ(common({LogicalType::string(), LogicalType::int_type()}), "none");
}

TEST(SchemaTest, LooksUpCaseInsensitivelyAndPrints) {
  Schema s({{"id", LogicalType::bigint().not_null()}, {"Name", LogicalType::string()}});
  EXPECT_EQ(s.index_of("NAME"), 1u);
  EXPECT_EQ(s.index_of("nope"), std::nullopt);
  EXPECT_EQ(s.to_string(), "(`id` BIGINT NOT NULL, `Name` STRING)");
}

TEST(RowKindTest, ShortStringsRoundTrip) {
  for (auto k : {RowKind::kInsert, RowKind::kUpdateBefore, RowKind::kUpdateAfter, RowKind::kDelete})
    EXPECT_EQ(parse_row_kind(row_kind_short_string(k)), k);
  EXPECT_EQ(row_kind_short_string(RowKind::kUpdateBefore), "-U");
  EXPECT_EQ(parse_row_kind("+X"), std::nullopt);
  EXPECT_TRUE(is_retract(RowKind::kDelete));
  EXPECT_TRUE(is_accumulate(RowKind::kUpdateAfter));
}

}  // namespace clink::test
