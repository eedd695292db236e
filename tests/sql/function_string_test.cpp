#include <gtest/gtest.h>

#include "expr_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {
ExprPtr nstr() { return null_of(LogicalType::string()); }
}  // namespace

TEST(StringFunctionTest, LengthCaseAndConcat) {
  EXPECT_EQ(eval_call("CHAR_LENGTH", {str("héllo")}), "5");
  EXPECT_EQ(eval_call("CHARACTER_LENGTH", {str("")}), "0");
  EXPECT_EQ(eval_call("CHAR_LENGTH", {nstr()}), "NULL");
  EXPECT_EQ(eval_call("UPPER", {str("abc-Éé ß")}), "ABC-ÉÉ ß");
  EXPECT_EQ(eval_call("LOWER", {str("ÀBC Привет ΣΑ")}), "àbc привет σα");
  EXPECT_EQ(eval_call("UPPER", {nstr()}), "NULL");
  EXPECT_EQ(eval_call("INITCAP", {str("hello wORLD-foo 9x")}), "Hello World-Foo 9x");
  EXPECT_EQ(eval_call("CONCAT", {str("a"), str("b"), str("c")}), "abc");
  EXPECT_EQ(eval_call("CONCAT", {str("a"), nstr()}), "NULL");
  EXPECT_EQ(eval_call("CONCAT_WS", {str("-"), str("a"), nstr(), str("c")}), "a-c");
  EXPECT_EQ(eval_call("CONCAT_WS", {nstr(), str("a")}), "NULL");
  EXPECT_EQ(eval_call("CONCAT_WS", {str(","), nstr()}), "");
}

TEST(StringFunctionTest, SubstringTrimPadReplacePosition) {
  EXPECT_EQ(eval_call("SUBSTRING", {str("hello"), i32(2)}), "ello");
  EXPECT_EQ(eval_call("SUBSTRING", {str("hello"), i32(2), i32(3)}), "ell");
  EXPECT_EQ(eval_call("SUBSTRING", {str("hello"), i32(0), i32(2)}), "he");
  EXPECT_EQ(eval_call("SUBSTRING", {str("hello"), i32(-3), i32(2)}), "ll");
  EXPECT_EQ(eval_call("SUBSTRING", {str("hello"), i32(9)}), "");
  EXPECT_EQ(eval_call("SUBSTRING", {str("héllo"), i32(2), i32(2)}), "él");
  EXPECT_EQ(eval_call("SUBSTRING", {str("hello"), i32(1), i32(-1)}), "NULL");
  EXPECT_EQ(eval_call("SUBSTRING", {str("hello"), null_of(LogicalType::int_type())}), "NULL");
  EXPECT_EQ(eval_call("TRIM", {str("  a b  ")}), "a b");
  EXPECT_EQ(eval_call("LTRIM", {str("  a  ")}), "a  ");
  EXPECT_EQ(eval_call("RTRIM", {str("  a  ")}), "  a");
  EXPECT_EQ(eval_call("TRIM", {str("xxaxx"), str("x")}), "a");
  EXPECT_EQ(eval_call("LTRIM", {str("ababc"), str("ab")}), "c");
  EXPECT_EQ(eval_call("LPAD", {str("hi"), i32(5), str("xy")}), "xyxhi");
  EXPECT_EQ(eval_call("RPAD", {str("hi"), i32(5), str("xy")}), "hixyx");
  EXPECT_EQ(eval_call("LPAD", {str("hello"), i32(2), str("x")}), "he");
  EXPECT_EQ(eval_call("LPAD", {str("hi"), i32(-1), str("x")}), "NULL");
  EXPECT_EQ(eval_call("RPAD", {str("hi"), i32(4), str("")}), "hi");
  EXPECT_EQ(eval_call("REPLACE", {str("banana"), str("an"), str("AN")}), "bANANa");
  EXPECT_EQ(eval_call("REPLACE", {str("abc"), str(""), str("x")}), "abc");
  EXPECT_EQ(eval_call("POSITION", {str("lo"), str("hello")}), "4");
  EXPECT_EQ(eval_call("POSITION", {str("z"), str("hello")}), "0");
  EXPECT_EQ(eval_call("POSITION", {str("l"), str("héllo")}), "3");
  EXPECT_EQ(eval_call("SPLIT_INDEX", {str("a,b,,c"), str(","), i32(2)}), "");
  EXPECT_EQ(eval_call("SPLIT_INDEX", {str("a,b,,c"), str(","), i32(3)}), "c");
  EXPECT_EQ(eval_call("SPLIT_INDEX", {str("a,b"), str(","), i32(2)}), "NULL");
  EXPECT_EQ(eval_call("SPLIT_INDEX", {str("a::b"), str("::"), i32(1)}), "b");
  EXPECT_EQ(eval_call("SPLIT_INDEX", {str("a,b"), str(","), i32(-1)}), "NULL");
}

TEST(StringFunctionTest, LikeWithEscapeAndSimilarTo) {
  EXPECT_EQ(eval_call("LIKE", {str("hello"), str("h%o")}), "TRUE");
  EXPECT_EQ(eval_call("LIKE", {str("hello"), str("h_llo")}), "TRUE");
  EXPECT_EQ(eval_call("LIKE", {str("héllo"), str("h_llo")}), "TRUE");
  EXPECT_EQ(eval_call("LIKE", {str("hello"), str("%ll%")}), "TRUE");
  EXPECT_EQ(eval_call("LIKE", {str("hello"), str("%lo")}), "TRUE");
  EXPECT_EQ(eval_call("LIKE", {str("hello"), str("%le%")}), "FALSE");
  EXPECT_EQ(eval_call("LIKE", {str("hello"), str("hello_")}), "FALSE");
  EXPECT_EQ(eval_call("LIKE", {str("ab"), str("%b%b%")}), "FALSE");
  EXPECT_EQ(eval_call("LIKE", {str("abcb"), str("%b_")}), "FALSE");
  EXPECT_EQ(eval_call("LIKE", {str("abcbd"), str("%b_")}), "TRUE");
  EXPECT_EQ(eval_call("LIKE", {str(""), str("%")}), "TRUE");
  EXPECT_EQ(eval_call("LIKE", {str("50%"), str("50!%"), str("!")}), "TRUE");
  EXPECT_EQ(eval_call("LIKE", {str("501"), str("50!%"), str("!")}), "FALSE");
  EXPECT_EQ(eval_call("LIKE", {str("a_b"), str("a\\_b"), str("\\")}), "TRUE");
  EXPECT_EQ(eval_call("LIKE", {str("a\\b"), str("a\\b")}), "TRUE");  // no ESCAPE: '\' is literal
  EXPECT_EQ(eval_call("LIKE", {nstr(), str("%")}), "NULL");
  EXPECT_THROW(eval_call("LIKE", {str("x"), str("a!b"), str("!")}), SqlRuntimeError);
  EXPECT_EQ(eval_call("SIMILAR TO", {str("abc"), str("a(b|x)c")}), "TRUE");
  EXPECT_EQ(eval_call("SIMILAR TO", {str("abc"), str("a%")}), "TRUE");
  EXPECT_EQ(eval_call("SIMILAR TO", {str("abc"), str("b%")}), "FALSE");
  EXPECT_EQ(eval_call("SIMILAR TO", {str("a.c"), str("a.c")}), "TRUE");
  EXPECT_EQ(eval_call("SIMILAR TO", {str("abc"), str("a.c")}), "FALSE");
  // A pattern that varies per row.
  auto schema = make_schema({{"s", LogicalType::string()}, {"p", LogicalType::string()}});
  ColumnBatch b(schema);
  b.append_row({"abc", "a%"});
  b.append_row({"abc", "%x"});
  b.append_row({"abc", Value::null()});
  auto e = call("LIKE", {expr::column(0, LogicalType::string()), expr::column(1, LogicalType::string())});
  EXPECT_EQ(eval_rows(e, b), (std::vector<std::string>{"TRUE", "FALSE", "NULL"}));
}

TEST(StringFunctionTest, RegularExpressions) {
  EXPECT_EQ(eval_call("REGEXP", {str("foo123"), str("[0-9]+")}), "TRUE");
  EXPECT_EQ(eval_call("REGEXP", {str("foo"), str("^o")}), "FALSE");
  EXPECT_EQ(eval_call("REGEXP_EXTRACT", {str("foothebar"), str("foo(.*?)(bar)"), i32(2)}), "bar");
  EXPECT_EQ(eval_call("REGEXP_EXTRACT", {str("foothebar"), str("foo(.*?)(bar)"), i32(1)}), "the");
  EXPECT_EQ(eval_call("REGEXP_EXTRACT", {str("foothebar"), str("o+")}), "oo");
  EXPECT_EQ(eval_call("REGEXP_EXTRACT", {str("foothebar"), str("x(y)"), i32(1)}), "NULL");
  EXPECT_EQ(eval_call("REGEXP_EXTRACT", {str("foothebar"), str("(o)"), i32(3)}), "NULL");
  EXPECT_EQ(eval_call("REGEXP_EXTRACT", {str("abc"), str("(")}), "NULL");  // invalid regex
  EXPECT_EQ(eval_call("REGEXP_REPLACE", {str("foobar"), str("oo|ar"), str("")}), "fb");
  EXPECT_EQ(eval_call("REGEXP_REPLACE", {str("a1b22"), str("[0-9]+"), str("$1\\")}), "a$1\\b$1\\");
  EXPECT_EQ(eval_call("REGEXP_REPLACE", {nstr(), str("x"), str("y")}), "NULL");
}

}  // namespace clink::test
