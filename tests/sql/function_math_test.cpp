#include <gtest/gtest.h>

#include "clink/sql/function/function_udf.hpp"
#include "expr_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

TEST(MathFunctionTest, TranscendentalFunctions) {
  EXPECT_EQ(eval_call("POWER", {i32(2), i32(10)}), "1024.0");
  EXPECT_EQ(eval_call("SQRT", {i32(16)}), "4.0");
  EXPECT_EQ(eval_call("SQRT", {i32(-1)}), "NaN");
  EXPECT_EQ(eval_call("LN", {f64(1)}), "0.0");
  EXPECT_EQ(eval_call("LN", {i32(0)}), "-Infinity");
  EXPECT_EQ(eval_call("LOG10", {i32(1000)}), "3.0");
  EXPECT_EQ(eval_call("LOG2", {i32(8)}), "3.0");
  EXPECT_EQ(eval_call("LOG", {i32(2), i32(8)}), "3.0");
  EXPECT_EQ(eval_call("EXP", {i32(0)}), "1.0");
  EXPECT_EQ(eval_call("PI", {}), "3.141592653589793");
  EXPECT_EQ(eval_call("POWER", {null_of(LogicalType::double_type()), i32(2)}), "NULL");
}

TEST(MathFunctionTest, FloorCeilRoundTruncateSign) {
  EXPECT_EQ(eval_call("FLOOR", {f64(-1.5)}), "-2.0");
  EXPECT_EQ(eval_call("CEIL", {f64(-1.5)}), "-1.0");
  EXPECT_EQ(eval_call("FLOOR", {i32(7)}), "7");
  auto fl = call("FLOOR", {dec("-1.25", 5, 2)});
  EXPECT_EQ(fl->type.to_string(), "DECIMAL(4, 0) NOT NULL");
  EXPECT_EQ(eval(fl), "-2");
  EXPECT_EQ(eval_call("CEIL", {dec("1.25", 5, 2)}), "2");
  EXPECT_EQ(eval_call("CEIL", {dec("-1.25", 5, 2)}), "-1");
  auto r = call("ROUND", {dec("1.255", 5, 3), i32(2)});
  EXPECT_EQ(r->type.to_string(), "DECIMAL(5, 2) NOT NULL");  // constant arguments: the value is known
  EXPECT_EQ(eval(r), "1.26");
  EXPECT_EQ(eval_call("ROUND", {dec("-1.255", 5, 3), i32(2)}), "-1.26");
  EXPECT_EQ(eval_call("ROUND", {dec("1.5", 2, 1)}), "2");
  EXPECT_EQ(eval_call("ROUND", {dec("155.5", 4, 1), i32(-1)}), "160");
  EXPECT_EQ(eval_call("ROUND", {f64(2.675), i32(2)}), "2.68");  // BigDecimal.valueOf semantics
  EXPECT_EQ(eval_call("ROUND", {f64(-2.5)}), "-3.0");
  EXPECT_EQ(eval_call("ROUND", {f64(1234.5), i32(-2)}), "1200.0");
  EXPECT_EQ(eval_call("ROUND", {i32(1250), i32(-2)}), "1300");
  EXPECT_EQ(eval_call("ROUND", {i32(2147483647), i32(-1)}), "NULL");
  EXPECT_EQ(eval_call("TRUNCATE", {f64(2.679), i32(2)}), "2.67");
  EXPECT_EQ(eval_call("TRUNCATE", {dec("-1.259", 5, 3), i32(2)}), "-1.25");
  EXPECT_EQ(eval_call("TRUNCATE", {i32(1299), i32(-2)}), "1200");
  EXPECT_THROW(call("ROUND", {dec("1.5", 2, 1), expr::column(0, LogicalType::int_type())}), SqlTypeError);
  EXPECT_EQ(eval_call("SIGN", {i32(-5)}), "-1");
  EXPECT_EQ(eval_call("SIGN", {f64(0)}), "0.0");
  EXPECT_EQ(eval_call("SIGN", {dec("2.50", 4, 2)}), "1.00");
}

TEST(FunctionRegistryTest, NamesAreCaseInsensitiveAndListed) {
  const auto& r = FunctionRegistry::builtins();
  EXPECT_TRUE(r.has_scalar("upper"));
  EXPECT_TRUE(r.has_aggregate("count"));
  EXPECT_FALSE(r.has_scalar("count"));
  auto names = r.scalar_names();
  for (const char* n : {"ABS", "CAST_NOT_A_FUNCTION"})
    EXPECT_EQ(std::find(names.begin(), names.end(), n) != names.end(), std::string(n) == "ABS");
  try {
    call("count", {i32(1)});
    FAIL();
  } catch (const SqlTypeError& e) {
    EXPECT_STREQ(e.what(), "aggregate function COUNT is not allowed here");
  }
  // The exact overload wins over one needing a cast.
  EXPECT_EQ(call("SUBSTRING", {str("abc"), i32(1)})->args.size(), 2u);
}

TEST(FunctionRegistryTest, UserDefinedScalarFunctions) {
  auto r = FunctionRegistry::with_builtins();
  register_scalar_udf(r, "add_tax", [](double price) { return price * 1.5; });
  register_scalar_udf(r, "greet", [](std::string_view s) { return "hi " + std::string(s); });
  register_scalar_udf(r, "nvl0", [](std::optional<std::int64_t> v) -> std::int64_t { return v.value_or(0); });
  register_scalar_udf(r, "half", [](std::int64_t v) -> std::optional<std::int64_t> {
    if (v % 2 != 0) return std::nullopt;
    return v / 2;
  });
  auto schema = make_schema({{"n", LogicalType::bigint()}, {"s", LogicalType::string()}});
  ColumnBatch b(schema);
  b.append_row({4, "ann"});
  b.append_row({3, Value::null()});
  b.append_row({Value::null(), "bo"});
  auto n = expr::column(0, LogicalType::bigint(), "n");
  auto s = expr::column(1, LogicalType::string(), "s");
  EXPECT_EQ(eval_rows(expr::call(r, "ADD_TAX", {n}), b), (std::vector<std::string>{"6.0", "4.5", "NULL"}));
  EXPECT_EQ(eval_rows(expr::call(r, "greet", {s}), b), (std::vector<std::string>{"hi ann", "NULL", "hi bo"}));
  EXPECT_EQ(eval_rows(expr::call(r, "nvl0", {n}), b), (std::vector<std::string>{"4", "3", "0"}));
  EXPECT_EQ(eval_rows(expr::call(r, "half", {n}), b), (std::vector<std::string>{"2", "NULL", "NULL"}));
  EXPECT_EQ(expr::call(r, "add_tax", {i32(2)})->args[0]->type.to_string(), "DOUBLE NOT NULL");
  EXPECT_FALSE(FunctionRegistry::builtins().has_scalar("greet"));
}

}  // namespace clink::test
