// The binder's lowering of SQL special forms onto registered functions
// (docs/sql-functions.md, "Lowering the binder does"): parse, bind, compile and evaluate
// on a one-row batch, exact values.
#include "expr_test_util.hpp"
#include "plan_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

std::string eval_sql(const std::string& sql) {
  Catalog catalog;
  Binder binder(catalog, FunctionRegistry::builtins());
  ast::ExprPtr e = parse_expression(sql);
  return eval(binder.bind_scalar(*e, Schema(std::vector<RowField>{})));
}

std::string bound_text(const std::string& sql) {
  Catalog catalog;
  Binder binder(catalog, FunctionRegistry::builtins());
  return binder.bind_scalar(*parse_expression(sql), Schema(std::vector<RowField>{}))->to_string();
}

std::string bind_error(const std::string& sql) {
  try {
    bound_text(sql);
  } catch (const SqlError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(BinderSpecialForms, TemporalUnits) {
  EXPECT_EQ(eval_sql("EXTRACT(MONTH FROM DATE '2024-03-15')"), "3");
  EXPECT_EQ(eval_sql("FLOOR(TIMESTAMP '2024-03-15 10:47:12' TO HOUR)"), "2024-03-15 10:00:00");
  EXPECT_EQ(eval_sql("CEIL(TIMESTAMP '2024-03-15 10:47:12' TO DAY)"), "2024-03-16 00:00:00");
  EXPECT_EQ(eval_sql("TIMESTAMPADD(DAY, 3, TIMESTAMP '2024-02-27 10:00:00')"), "2024-03-01 10:00:00");
  EXPECT_EQ(eval_sql("TIMESTAMPADD(MONTH, 1, DATE '2024-01-31')"), "2024-02-29");
  // DATE + a sub-day unit widens to TIMESTAMP(0), as Flink.
  EXPECT_EQ(bound_text("TIMESTAMPADD(HOUR, 5, DATE '2024-01-31')"),
            "TIMESTAMPADD('HOUR', CAST(5 AS BIGINT), CAST(2024-01-31 AS TIMESTAMP(0)))");
  EXPECT_EQ(eval_sql("TIMESTAMPADD(HOUR, 5, DATE '2024-01-31')"), "2024-01-31 05:00:00");
  EXPECT_EQ(eval_sql("TIMESTAMPDIFF(DAY, TIMESTAMP '2024-03-01 00:00:00', TIMESTAMP '2024-03-04 12:00:00')"), "3");
  EXPECT_EQ(eval_sql("TIMESTAMPDIFF(MONTH, DATE '2024-01-31', DATE '2024-03-30')"), "1");
  std::string unknown_unit;
  try {
    eval_sql("TIMESTAMPADD(FORTNIGHT, 1, DATE '2024-01-31')");
  } catch (const clink::ClinkError& e) {
    unknown_unit = e.what();
  }
  EXPECT_EQ(unknown_unit, "line 1, column 14: TIMESTAMPADD: unknown time unit 'FORTNIGHT'");
}

TEST(BinderSpecialForms, StringForms) {
  EXPECT_EQ(eval_sql("TRIM(LEADING 'x' FROM 'xxabcxx')"), "abcxx");
  EXPECT_EQ(eval_sql("TRIM(TRAILING 'x' FROM 'xxabcxx')"), "xxabc");
  EXPECT_EQ(eval_sql("TRIM(BOTH 'x' FROM 'xxabcxx')"), "abc");
  EXPECT_EQ(eval_sql("TRIM('  abc  ')"), "abc");
  EXPECT_EQ(eval_sql("POSITION('c' IN 'abcabc')"), "3");
  EXPECT_EQ(eval_sql("SUBSTRING('abcdef' FROM 2 FOR 3)"), "bcd");
  EXPECT_EQ(eval_sql("SUBSTRING('abcdef' FROM 4)"), "def");
  EXPECT_EQ(eval_sql("'abc' NOT LIKE 'a%'"), "FALSE");
  EXPECT_EQ(eval_sql("'abc' NOT LIKE 'b%'"), "TRUE");
}

TEST(BinderSpecialForms, CurrentTimeFunctionsAreCallsWithoutParentheses) {
  EXPECT_EQ(bound_text("CURRENT_TIMESTAMP"), "CURRENT_TIMESTAMP()");
  EXPECT_EQ(bound_text("CURRENT_DATE"), "CURRENT_DATE()");
  EXPECT_EQ(bound_text("LOCALTIMESTAMP"), "LOCALTIMESTAMP()");
  EXPECT_EQ(eval_sql("CURRENT_DATE > DATE '2020-01-01'"), "TRUE");
}

TEST(BinderSpecialForms, JsonClauses) {
  EXPECT_EQ(eval_sql("JSON_VALUE('{\"a\": 42}', '$.a')"), "42");
  EXPECT_EQ(eval_sql("JSON_VALUE('{\"a\": 42}', '$.a' RETURNING INT) + 1"), "43");
  EXPECT_EQ(eval_sql("JSON_VALUE('{\"a\": 42}', '$.b' DEFAULT 'none' ON EMPTY)"), "none");
  EXPECT_EQ(eval_sql("JSON_VALUE('{\"a\": 42}', '$.b' DEFAULT FALSE ON EMPTY)"), "false");
  EXPECT_EQ(eval_sql("JSON_VALUE('{\"a\": 42}', '$.b' RETURNING INT DEFAULT 7 ON EMPTY)"), "7");
  EXPECT_EQ(eval_sql("JSON_VALUE('not json', '$.a' DEFAULT 'bad' ON ERROR)"), "bad");
  EXPECT_EQ(bind_error("JSON_VALUE('{}', '$.a' ERROR ON EMPTY) IS NULL"), "");
  EXPECT_EQ(eval_sql("JSON_QUERY('{\"a\": [1, 2]}', '$.a')"), "[1,2]");
  EXPECT_EQ(eval_sql("JSON_QUERY('{\"a\": 1}', '$.a' WITH ARRAY WRAPPER)"), "[1]");
  EXPECT_EQ(eval_sql("JSON_QUERY('{\"a\": 1}', '$.b' EMPTY ARRAY ON EMPTY)"), "[]");
  EXPECT_EQ(eval_sql("JSON_QUERY('{\"a\": 1}', '$.a' WITH CONDITIONAL ARRAY WRAPPER)"), "[1]");
  EXPECT_EQ(eval_sql("JSON_EXISTS('{\"a\": 1}', '$.a')"), "TRUE");
  EXPECT_EQ(eval_sql("JSON_EXISTS('{\"a\": 1}', 'strict $.b' TRUE ON ERROR)"), "TRUE");
  EXPECT_EQ(eval_sql("JSON_EXISTS('{\"a\": 1}', 'strict $.b')"), "FALSE");
  EXPECT_EQ(eval_sql("'[1]' IS JSON ARRAY"), "TRUE");
  EXPECT_EQ(eval_sql("'[1]' IS JSON OBJECT"), "FALSE");
  EXPECT_EQ(eval_sql("'{' IS NOT JSON"), "TRUE");
  EXPECT_EQ(eval_sql("'1' IS JSON SCALAR"), "TRUE");
}

}  // namespace clink::test
