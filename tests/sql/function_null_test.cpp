#include <gtest/gtest.h>

#include "expr_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

// Every NULL-propagating built-in: a NULL in any argument position gives NULL, and the
// same call without NULLs gives a value.
TEST(FunctionNullTest, NullInAnyArgumentGivesNull) {
  struct Case {
    const char* name;
    std::vector<ExprPtr> args;
  };
  std::vector<Case> cases = {
      {"+", {i32(1), i32(2)}}, {"-", {i64(1), i64(2)}}, {"*", {dec("1.5", 2, 1), i32(2)}}, {"/", {f64(1), f64(2)}},
      {"%", {i32(5), i32(2)}}, {"MOD", {i32(5), i32(2)}}, {"-", {i32(1)}}, {"ABS", {f64(-1)}},
      {"=", {i32(1), i32(1)}}, {"<>", {str("a"), str("b")}}, {"<", {f64(1), i32(2)}}, {"<=", {i32(1), i32(1)}},
      {">", {dec("1", 1, 0), i32(0)}}, {">=", {str("b"), str("a")}}, {"NOT", {boolean(true)}},
      {"POWER", {i32(2), i32(2)}}, {"SQRT", {i32(4)}}, {"LN", {i32(1)}}, {"LOG10", {i32(10)}}, {"LOG2", {i32(2)}},
      {"LOG", {i32(1)}}, {"LOG", {i32(2), i32(4)}}, {"EXP", {i32(1)}}, {"FLOOR", {f64(1.5)}}, {"CEIL", {dec("1.5", 2, 1)}},
      {"ROUND", {f64(1.25), i32(1)}}, {"TRUNCATE", {i32(15), i32(-1)}}, {"SIGN", {i32(-2)}},
      {"CHAR_LENGTH", {str("ab")}}, {"UPPER", {str("ab")}}, {"LOWER", {str("AB")}}, {"INITCAP", {str("ab")}},
      {"CONCAT", {str("a"), str("b")}}, {"SUBSTRING", {str("abc"), i32(2)}}, {"SUBSTRING", {str("abc"), i32(1), i32(2)}},
      {"TRIM", {str(" a ")}}, {"LTRIM", {str(" a")}}, {"RTRIM", {str("a ")}}, {"TRIM", {str("xax"), str("x")}},
      {"LPAD", {str("a"), i32(3), str("x")}}, {"RPAD", {str("a"), i32(3), str("x")}},
      {"REPLACE", {str("aa"), str("a"), str("b")}}, {"POSITION", {str("b"), str("abc")}},
      {"SPLIT_INDEX", {str("a,b"), str(","), i32(1)}}, {"LIKE", {str("ab"), str("a%")}},
      {"LIKE", {str("a%"), str("a!%"), str("!")}}, {"SIMILAR TO", {str("ab"), str("a%")}},
      {"REGEXP", {str("ab"), str("b")}}, {"REGEXP_EXTRACT", {str("ab"), str("(b)"), i32(1)}},
      {"REGEXP_REPLACE", {str("ab"), str("b"), str("c")}}, {"GREATEST", {i32(1), i32(2)}}, {"LEAST", {str("a"), str("b")}},
  };
  for (const auto& c : cases) {
    std::string label = c.name + std::string("/") + std::to_string(c.args.size());
    EXPECT_NE(eval_call(c.name, c.args), "NULL") << label;
    for (std::size_t k = 0; k < c.args.size(); ++k) {
      auto args = c.args;
      args[k] = null_of(c.args[k]->type.with_nullable(true));
      EXPECT_EQ(eval_call(c.name, args), "NULL") << label << " with NULL argument " << k;
      auto e = call(c.name, args);
      EXPECT_TRUE(e->type.nullable()) << label;
    }
  }
}

TEST(FunctionNullTest, NullAwareFunctionsNeverReturnNull) {
  auto n = null_of(LogicalType::int_type());
  for (const char* f : {"IS NULL", "IS NOT NULL"}) EXPECT_NE(eval_call(f, {n}), "NULL") << f;
  auto nb = null_of(LogicalType::boolean());
  for (const char* f : {"IS TRUE", "IS FALSE", "IS NOT TRUE", "IS NOT FALSE"}) EXPECT_NE(eval_call(f, {nb}), "NULL") << f;
  EXPECT_EQ(call("IS NULL", {n})->type.to_string(), "BOOLEAN NOT NULL");
}

}  // namespace clink::test
