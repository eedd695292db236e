// Expressions: every construct prints back as canonical, fully parenthesised SQL.
#include "parser_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

void check_all(std::initializer_list<Case> cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.sql);
    EXPECT_EQ(expr(c.sql), c.expected);
  }
}

TEST(ParserExpression, Literals) {
  check_all({
      {"1", "1"},
      {"0", "0"},
      {"-2", "-2"},
      {"- 7", "-7"},
      {"99999999999", "99999999999"},
      {"1.50", "1.50"},
      {".5", ".5"},
      {"1.5E3", "1.5E3"},
      {"2e-5", "2e-5"},
      {"'it''s'", "'it''s'"},
      {"''", "''"},
      {"TRUE", "TRUE"},
      {"false", "FALSE"},
      {"NULL", "NULL"},
      {"DATE '2020-04-15'", "DATE '2020-04-15'"},
      {"TIME '08:05:00'", "TIME '08:05:00'"},
      {"X'0aFF'", "X'0aFF'"},
      {"x''", "X''"},
      {"TIMESTAMP '2020-04-15 08:05:00.000'", "TIMESTAMP '2020-04-15 08:05:00.000'"},
  });
}

TEST(ParserExpression, LiteralKinds) {
  auto kind = [](const char* sql) { return parse_expression(sql)->as<ast::Literal>()->kind; };
  EXPECT_EQ(kind("12"), ast::Literal::Kind::Integer);
  EXPECT_EQ(kind("-12"), ast::Literal::Kind::Integer);
  EXPECT_EQ(kind("12345678901234567890"), ast::Literal::Kind::Integer);
  EXPECT_EQ(kind("1.25"), ast::Literal::Kind::Decimal);
  EXPECT_EQ(kind("1.25e2"), ast::Literal::Kind::Double);
  EXPECT_EQ(kind("'x'"), ast::Literal::Kind::String);
  EXPECT_EQ(kind("TRUE"), ast::Literal::Kind::Boolean);
  EXPECT_EQ(kind("X'00'"), ast::Literal::Kind::Binary);
  EXPECT_EQ(kind("NULL"), ast::Literal::Kind::Null);
  EXPECT_EQ(kind("DATE '2020-01-01'"), ast::Literal::Kind::Date);
  EXPECT_EQ(kind("TIME '00:00:01'"), ast::Literal::Kind::Time);
  EXPECT_EQ(kind("TIMESTAMP '2020-01-01 00:00:00'"), ast::Literal::Kind::Timestamp);
  EXPECT_EQ(parse_expression("'a''b'")->as<ast::Literal>()->text, "a'b");
  EXPECT_EQ(parse_expression("12345678901234567890")->as<ast::Literal>()->text, "12345678901234567890");
}

TEST(ParserExpression, Intervals) {
  check_all({
      {"INTERVAL '10' SECOND", "INTERVAL '10' SECOND"},
      {"INTERVAL '10' SECONDS", "INTERVAL '10' SECOND"},
      {"INTERVAL '1' MINUTE", "INTERVAL '1' MINUTE"},
      {"INTERVAL '10' MINUTES", "INTERVAL '10' MINUTE"},
      {"interval '2' hours", "INTERVAL '2' HOUR"},
      {"INTERVAL '3' DAYS", "INTERVAL '3' DAY"},
      {"INTERVAL '1' WEEK", "INTERVAL '1' WEEK"},
      {"INTERVAL '2' MONTHS", "INTERVAL '2' MONTH"},
      {"INTERVAL '1' YEAR", "INTERVAL '1' YEAR"},
      {"INTERVAL '10' SECOND(3)", "INTERVAL '10' SECOND(3)"},
      {"INTERVAL '1 2:03:04' DAY TO SECOND", "INTERVAL '1 2:03:04' DAY TO SECOND"},
      {"INTERVAL '1 2:03:04.5' DAY(2) TO SECOND(3)", "INTERVAL '1 2:03:04.5' DAY(2) TO SECOND(3)"},
      {"INTERVAL '1-2' YEAR TO MONTH", "INTERVAL '1-2' YEAR TO MONTH"},
      {"INTERVAL -'1' DAY", "INTERVAL -'1' DAY"},
      {"ts - INTERVAL '5' SECOND", "(ts - INTERVAL '5' SECOND)"},
  });
  ast::ExprPtr iv_expr = parse_expression("INTERVAL '1 2:03:04' DAY(2) TO SECOND(3)");
  auto iv = iv_expr->as<ast::IntervalLiteral>();
  ASSERT_NE(iv, nullptr);
  EXPECT_EQ(iv->value, "1 2:03:04");
  EXPECT_EQ(iv->from_unit, "DAY");
  EXPECT_EQ(iv->from_precision, 2);
  EXPECT_EQ(iv->to_unit, "SECOND");
  EXPECT_EQ(iv->to_precision, 3);
  EXPECT_FALSE(iv->negative);
}

TEST(ParserExpression, ColumnReferencesKeepTheirCase) {
  check_all({
      {"a", "a"},
      {"MyColumn", "MyColumn"},
      {"t.MyColumn", "t.MyColumn"},
      {"cat.db.t.c", "cat.db.t.c"},
      {"`Mixed Case`", "`Mixed Case`"},
      {"`select`", "`select`"},
      {"`a``b`", "`a``b`"},
      {"\"Quoted\"", "Quoted"},
      // Keywords PostgreSQL would fold when used as names keep the spelling written.
      {"Name", "Name"},
      {"t.Value", "t.Value"},
      {"DATA + Key", "(DATA + Key)"},
  });
  ast::ExprPtr ref_expr = parse_expression("T1.Col");
  auto ref = ref_expr->as<ast::ColumnRef>();
  ASSERT_NE(ref, nullptr);
  EXPECT_EQ(ref->names, (ast::QualifiedName{"T1", "Col"}));
}

TEST(ParserExpression, Operators) {
  check_all({
      {"a + b * c", "(a + (b * c))"},
      {"(a + b) * c", "((a + b) * c)"},
      {"a - b - c", "((a - b) - c)"},
      {"a / b % c", "((a / b) % c)"},
      {"-a", "(- a)"},
      {"+a", "(+ a)"},
      {"a = 1", "(a = 1)"},
      {"a <> 1", "(a <> 1)"},
      {"a != 1", "(a <> 1)"},
      {"a < 1 AND b <= 2", "((a < 1) AND (b <= 2))"},
      {"a > 1 OR b >= 2", "((a > 1) OR (b >= 2))"},
      {"a AND b AND c", "((a AND b) AND c)"},
      {"NOT a AND b OR c", "(((NOT a) AND b) OR c)"},
      {"NOT (a OR b)", "(NOT (a OR b))"},
      {"a || b || 'c'", "((a || b) || 'c')"},
      {"a IS NULL", "(a IS NULL)"},
      {"a IS NOT NULL", "(a IS NOT NULL)"},
      {"a IS TRUE", "(a IS TRUE)"},
      {"a IS NOT TRUE", "(a IS NOT TRUE)"},
      {"a IS FALSE", "(a IS FALSE)"},
      {"a IS NOT FALSE", "(a IS NOT FALSE)"},
      {"a IS UNKNOWN", "(a IS UNKNOWN)"},
      {"a IS DISTINCT FROM b", "(a IS DISTINCT FROM b)"},
      {"s IS JSON", "(s IS JSON VALUE)"},
      {"s IS NOT JSON OBJECT", "(s IS NOT JSON OBJECT)"},
      {"s || t IS JSON ARRAY AND u IS JSON SCALAR", "(((s || t) IS JSON ARRAY) AND (u IS JSON SCALAR))"},
      {"a IS NOT DISTINCT FROM b", "(a IS NOT DISTINCT FROM b)"},
      {"a BETWEEN 1 AND 2", "(a BETWEEN 1 AND 2)"},
      {"a NOT BETWEEN 1 AND 2", "(a NOT BETWEEN 1 AND 2)"},
      {"a BETWEEN SYMMETRIC 2 AND 1", "(a BETWEEN SYMMETRIC 2 AND 1)"},
      {"a NOT BETWEEN SYMMETRIC 2 AND 1", "(a NOT BETWEEN SYMMETRIC 2 AND 1)"},
      {"a BETWEEN b + 1 AND c", "(a BETWEEN (b + 1) AND c)"},
      {"a IN (1, 2, 3)", "(a IN (1, 2, 3))"},
      {"a NOT IN ('x')", "(a NOT IN ('x'))"},
      {"a LIKE 'x%'", "(a LIKE 'x%')"},
      {"a NOT LIKE 'x%'", "(a NOT LIKE 'x%')"},
      {"a LIKE 'x!%' ESCAPE '!'", "(a LIKE 'x!%' ESCAPE '!')"},
      {"a NOT LIKE 'x!%' ESCAPE '!'", "(a NOT LIKE 'x!%' ESCAPE '!')"},
      {"a SIMILAR TO '(a|b)+'", "(a SIMILAR TO '(a|b)+')"},
      {"a NOT SIMILAR TO 'y'", "(a NOT SIMILAR TO 'y')"},
      {"a SIMILAR TO 'y' ESCAPE '#'", "(a SIMILAR TO 'y' ESCAPE '#')"},
  });
}

TEST(ParserExpression, Subqueries) {
  check_all({
      {"a IN (SELECT b FROM t)", "(a IN (SELECT b FROM t))"},
      {"a NOT IN (SELECT b FROM t WHERE c > 0)", "(a NOT IN (SELECT b FROM t WHERE (c > 0)))"},
      {"EXISTS (SELECT 1 FROM t)", "(EXISTS (SELECT 1 FROM t))"},
      {"NOT EXISTS (SELECT 1 FROM t)", "(NOT (EXISTS (SELECT 1 FROM t)))"},
      {"(SELECT MAX(b) FROM t) + 1", "((SELECT MAX(b) FROM t) + 1)"},
  });
  ast::ExprPtr in_expr = parse_expression("x NOT IN (SELECT y FROM t)");
  auto in = in_expr->as<ast::InSubquery>();
  ASSERT_NE(in, nullptr);
  EXPECT_TRUE(in->negated);
}

TEST(ParserExpression, FunctionCalls) {
  check_all({
      {"COUNT(*)", "COUNT(*)"},
      {"count(*)", "count(*)"},
      {"COUNT(DISTINCT a)", "COUNT(DISTINCT a)"},
      {"SUM(a) FILTER (WHERE b > 1)", "SUM(a) FILTER (WHERE (b > 1))"},
      {"COUNT(DISTINCT a) FILTER (WHERE b)", "COUNT(DISTINCT a) FILTER (WHERE b)"},
      {"UPPER(name)", "UPPER(name)"},
      {"MyUdf(a, 'x', 1)", "MyUdf(a, 'x', 1)"},
      {"db.MyUdf(a)", "db.MyUdf(a)"},
      {"NOW()", "NOW()"},
      {"PROCTIME()", "PROCTIME()"},
      {"CURRENT_WATERMARK(ts)", "CURRENT_WATERMARK(ts)"},
      {"IF(a > 1, 'x', 'y')", "IF((a > 1), 'x', 'y')"},
      {"COALESCE(a, b, 0)", "COALESCE(a, b, 0)"},
      {"NULLIF(a, 0)", "NULLIF(a, 0)"},
      {"GREATEST(a, b)", "GREATEST(a, b)"},
      {"LEAST(a, b)", "LEAST(a, b)"},
      {"REGEXP_EXTRACT(s, '(\\d+)', 1)", "REGEXP_EXTRACT(s, '(\\d+)', 1)"},
      {"SPLIT_INDEX(s, ',', 0)", "SPLIT_INDEX(s, ',', 0)"},
      {"JSON_VALUE(j, '$.a.b')", "JSON_VALUE(j, '$.a.b')"},
      {"DATE_FORMAT(ts, 'yyyy-MM-dd')", "DATE_FORMAT(ts, 'yyyy-MM-dd')"},
      {"TIMESTAMPADD(DAY, 1, ts)", "TIMESTAMPADD(DAY, 1, ts)"},
      {"TIMESTAMPDIFF(HOUR, a, b)", "TIMESTAMPDIFF(HOUR, a, b)"},
      {"TO_TIMESTAMP_LTZ(ms, 3)", "TO_TIMESTAMP_LTZ(ms, 3)"},
      {"MD5(s)", "MD5(s)"},
      {"GROUPING(a, b)", "GROUPING(a, b)"},
      {"TUMBLE_START(ts, INTERVAL '1' HOUR)", "TUMBLE_START(ts, INTERVAL '1' HOUR)"},
      {"HOP_END(ts, INTERVAL '5' MINUTE, INTERVAL '1' HOUR)", "HOP_END(ts, INTERVAL '5' MINUTE, INTERVAL '1' HOUR)"},
      {"SESSION_ROWTIME(ts, INTERVAL '10' MINUTE)", "SESSION_ROWTIME(ts, INTERVAL '10' MINUTE)"},
      {"TUMBLE_PROCTIME(pt, INTERVAL '1' DAY)", "TUMBLE_PROCTIME(pt, INTERVAL '1' DAY)"},
      {"f(a => 1, b => 'x')", "f(A => 1, B => 'x')"},
  });
  ast::ExprPtr call_expr = parse_expression("Sum(DISTINCT x) FILTER (WHERE y)");
  auto call = call_expr->as<ast::FunctionCall>();
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->name, (ast::QualifiedName{"Sum"}));
  EXPECT_TRUE(call->distinct);
  EXPECT_FALSE(call->star);
  ASSERT_NE(call->filter, nullptr);
  EXPECT_TRUE(parse_expression("COUNT(*)")->as<ast::FunctionCall>()->star);
}

TEST(ParserExpression, JsonFunctions) {
  check_all({
      {"JSON_VALUE(j, '$.a')", "JSON_VALUE(j, '$.a')"},
      {"JSON_VALUE(j, '$.price' RETURNING DOUBLE)", "JSON_VALUE(j, '$.price' RETURNING DOUBLE)"},
      {"JSON_VALUE(j, 'lax $.b' RETURNING INT DEFAULT 0 ON EMPTY ERROR ON ERROR)",
       "JSON_VALUE(j, 'lax $.b' RETURNING INT DEFAULT 0 ON EMPTY ERROR ON ERROR)"},
      {"JSON_VALUE(j, '$.b' DEFAULT a + 1 ON ERROR)", "JSON_VALUE(j, '$.b' DEFAULT (a + 1) ON ERROR)"},
      {"JSON_VALUE(j, '$.b' NULL ON EMPTY)", "JSON_VALUE(j, '$.b' NULL ON EMPTY)"},
      {"JSON_QUERY(j, '$.a' WITH CONDITIONAL ARRAY WRAPPER EMPTY ARRAY ON EMPTY)",
       "JSON_QUERY(j, '$.a' WITH CONDITIONAL ARRAY WRAPPER EMPTY ARRAY ON EMPTY)"},
      {"JSON_QUERY(j, '$.a' WITH WRAPPER)", "JSON_QUERY(j, '$.a' WITH UNCONDITIONAL ARRAY WRAPPER)"},
      {"JSON_QUERY(j, '$.a' WITHOUT ARRAY WRAPPER EMPTY OBJECT ON ERROR)",
       "JSON_QUERY(j, '$.a' WITHOUT ARRAY WRAPPER EMPTY OBJECT ON ERROR)"},
      {"JSON_QUERY(j, '$.a' RETURNING ARRAY<STRING>)", "JSON_QUERY(j, '$.a' RETURNING ARRAY<STRING>)"},
      {"JSON_EXISTS(j, '$.a' FALSE ON ERROR)", "JSON_EXISTS(j, '$.a' FALSE ON ERROR)"},
      {"json_value(CONCAT('{', s, '}'), '$.x' RETURNING BIGINT) + 1",
       "(json_value(CONCAT('{', s, '}'), '$.x' RETURNING BIGINT) + 1)"},
  });
  ast::ExprPtr e = parse_expression("JSON_VALUE(j, '$.a' RETURNING DECIMAL(10, 2) DEFAULT -1 ON EMPTY)");
  const auto* call = e->as<ast::FunctionCall>();
  ASSERT_TRUE(call && call->json);
  ASSERT_EQ(call->args.size(), 2u);
  EXPECT_EQ(to_string(*call->json->returning), "DECIMAL(10, 2)");
  ASSERT_TRUE(call->json->on_empty);
  EXPECT_EQ(call->json->on_empty->kind, ast::JsonBehavior::Kind::Default);
  EXPECT_EQ(ast::to_string(call->json->on_empty->default_value), "-1");
  EXPECT_FALSE(call->json->on_error);
  EXPECT_EQ(expr_error_of("JSON_VALUE(j, '$.a' DEFAULT 1)"),
            "ParseError: line 1, column 29: expected a DEFAULT value followed by ON EMPTY or ON ERROR but found '1'");
  EXPECT_EQ(expr_error_of("JSON_VALUE(j, '$.a' NULL ON EMPTY NULL ON EMPTY)"),
            "ParseError: line 1, column 35: ON EMPTY is given twice");
}

TEST(ParserExpression, JsonConstructors) {
  check_all({
      {"JSON_OBJECT(KEY 'a' VALUE 1, 'b' VALUE x)", "JSON_OBJECT(KEY 'a' VALUE 1, KEY 'b' VALUE x)"},
      {"JSON_OBJECT('a' VALUE JSON_ARRAY(1, y NULL ON NULL) ABSENT ON NULL)",
       "JSON_OBJECT(KEY 'a' VALUE JSON_ARRAY(1, y NULL ON NULL) ABSENT ON NULL)"},
      {"JSON_OBJECT('k' VALUE CASE WHEN a THEN 1 END)", "JSON_OBJECT(KEY 'k' VALUE CASE WHEN a THEN 1 END)"},
      {"JSON_OBJECT(NULL ON NULL)", "JSON_OBJECT(NULL ON NULL)"},
      {"JSON_ARRAY(a, (b + 1), 'x' ABSENT ON NULL)", "JSON_ARRAY(a, (b + 1), 'x' ABSENT ON NULL)"},
      {"JSON_ARRAY()", "JSON_ARRAY()"},
  });
  ast::ExprPtr object = parse_expression("JSON_OBJECT(KEY 'a' VALUE 1 ABSENT ON NULL)");
  const auto* call = object->as<ast::FunctionCall>();
  ASSERT_TRUE(call && call->json);
  EXPECT_EQ(call->args.size(), 2u);
  EXPECT_EQ(call->json->on_null, "ABSENT");
  EXPECT_TRUE(call->json->key_value);
  EXPECT_EQ(expr_error_of("JSON_OBJECT('a' VALUE)"),
            "ParseError: line 1, column 22: expected a value after VALUE in JSON_OBJECT but found ')'");
  EXPECT_EQ(expr_error_of("JSON_ARRAY(1, , 2)"),
            "ParseError: line 1, column 15: expected a value in JSON_ARRAY but found ','");
}

TEST(ParserExpression, OverWindows) {
  check_all({
      {"ROW_NUMBER() OVER (PARTITION BY a ORDER BY b DESC)", "ROW_NUMBER() OVER (PARTITION BY a ORDER BY b DESC)"},
      {"SUM(x) OVER (PARTITION BY k, j ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)",
       "SUM(x) OVER (PARTITION BY k, j ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)"},
      {"SUM(x) OVER (ORDER BY ts RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW)",
       "SUM(x) OVER (ORDER BY ts RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW)"},
      {"COUNT(*) OVER (ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)",
       "COUNT(*) OVER (ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"},
      {"MAX(x) OVER (ORDER BY ts ROWS UNBOUNDED PRECEDING)", "MAX(x) OVER (ORDER BY ts ROWS UNBOUNDED PRECEDING)"},
      {"MAX(x) OVER (ORDER BY ts ROWS BETWEEN CURRENT ROW AND 3 FOLLOWING)",
       "MAX(x) OVER (ORDER BY ts ROWS BETWEEN CURRENT ROW AND 3 FOLLOWING)"},
      {"MAX(x) OVER (ORDER BY ts ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING)",
       "MAX(x) OVER (ORDER BY ts ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING)"},
      {"RANK() OVER (ORDER BY a NULLS FIRST, b ASC NULLS LAST)", "RANK() OVER (ORDER BY a NULLS FIRST, b NULLS LAST)"},
      {"LAG(x, 1) OVER ()", "LAG(x, 1) OVER ()"},
  });
  ast::ExprPtr call_expr = parse_expression("SUM(x) OVER (ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)");
  auto call = call_expr->as<ast::FunctionCall>();
  ASSERT_TRUE(call && call->over && call->over->frame);
  EXPECT_EQ(call->over->frame->mode, ast::WindowFrame::Mode::Rows);
  EXPECT_EQ(call->over->frame->start.kind, ast::FrameBound::Kind::Preceding);
  EXPECT_EQ(ast::to_string(call->over->frame->start.offset), "2");
  ASSERT_TRUE(call->over->frame->end);
  EXPECT_EQ(call->over->frame->end->kind, ast::FrameBound::Kind::CurrentRow);
}

TEST(ParserExpression, SpecialSyntax) {
  check_all({
      {"CASE a WHEN 1 THEN 'x' WHEN 2 THEN 'y' ELSE 'z' END", "CASE a WHEN 1 THEN 'x' WHEN 2 THEN 'y' ELSE 'z' END"},
      {"CASE WHEN a > 0 THEN 1 END", "CASE WHEN (a > 0) THEN 1 END"},
      {"CAST(x AS INT)", "CAST(x AS INT)"},
      {"CAST(x AS DECIMAL(10, 2))", "CAST(x AS DECIMAL(10, 2))"},
      {"CAST(x AS STRING)", "CAST(x AS STRING)"},
      {"CAST(x AS TIMESTAMP_LTZ(3))", "CAST(x AS TIMESTAMP_LTZ(3))"},
      {"CAST(x AS MAP<STRING, INT>)", "CAST(x AS MAP<STRING, INT>)"},
      {"CAST(x AS ROW<a INT, b ARRAY<STRING>>)", "CAST(x AS ROW<a INT, b ARRAY<STRING>>)"},
      {"CAST(CAST(x AS STRING) AS BIGINT)", "CAST(CAST(x AS STRING) AS BIGINT)"},
      {"TRY_CAST(x AS INT)", "TRY_CAST(x AS INT)"},
      {"try_cast(s AS DATE)", "TRY_CAST(s AS DATE)"},
      {"CAST(a + 1 AS DOUBLE) / 2", "(CAST((a + 1) AS DOUBLE) / 2)"},
      {"EXTRACT(YEAR FROM ts)", "EXTRACT(YEAR FROM ts)"},
      {"EXTRACT(DOW FROM ts)", "EXTRACT(DOW FROM ts)"},
      {"EXTRACT(epoch FROM ts)", "EXTRACT(EPOCH FROM ts)"},
      {"POSITION('a' IN s)", "POSITION('a' IN s)"},
      {"SUBSTRING(s FROM 2 FOR 3)", "SUBSTRING(s FROM 2 FOR 3)"},
      {"SUBSTRING(s FROM 2)", "SUBSTRING(s FROM 2)"},
      {"SUBSTRING(s, 2, 3)", "SUBSTRING(s, 2, 3)"},  // a plain call: the binder resolves it
      {"TRIM(s)", "TRIM(BOTH FROM s)"},
      {"TRIM(BOTH FROM s)", "TRIM(BOTH FROM s)"},
      {"TRIM(LEADING 'x' FROM s)", "TRIM(LEADING 'x' FROM s)"},
      {"TRIM(TRAILING FROM s)", "TRIM(TRAILING FROM s)"},
      {"OVERLAY(s PLACING 'ab' FROM 2 FOR 1)", "OVERLAY(s PLACING 'ab' FROM 2 FOR 1)"},
      {"OVERLAY(s PLACING 'ab' FROM 2)", "OVERLAY(s PLACING 'ab' FROM 2)"},
      {"FLOOR(ts TO DAY)", "FLOOR(ts TO DAY)"},
      {"CEIL(ts TO HOUR)", "CEIL(ts TO HOUR)"},
      {"FLOOR(ts TO MINUTES)", "FLOOR(ts TO MINUTE)"},
      {"FLOOR(x)", "FLOOR(x)"},
      {"CEIL(x / 2)", "CEIL((x / 2))"},
      {"CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP"},
      {"CURRENT_DATE", "CURRENT_DATE"},
      {"CURRENT_TIME", "CURRENT_TIME"},
      {"LOCALTIMESTAMP", "LOCALTIMESTAMP"},
      {"LOCALTIME", "LOCALTIME"},
      {"LOCALTIMESTAMP(3)", "LOCALTIMESTAMP(3)"},
      {"ARRAY[1, 2, 3]", "ARRAY[1, 2, 3]"},
      {"ARRAY['a']", "ARRAY['a']"},
      {"MAP['a', 1, 'b', 2]", "MAP['a', 1, 'b', 2]"},
      {"ROW(1, 'a')", "ROW(1, 'a')"},
      {"(1, 'a')", "(1, 'a')"},
      {"arr[1]", "arr[1]"},
      {"ARRAY[1, 2][1]", "ARRAY[1, 2][1]"},
      {"MAP['a', 1]['a']", "MAP['a', 1]['a']"},
      {"ARRAY[ARRAY[1], ARRAY[2]][1][1]", "ARRAY[ARRAY[1], ARRAY[2]][1][1]"},
      {"m['key']", "m['key']"},
      {"arr[i + 1]", "arr[(i + 1)]"},
      {"(r).f", "(r).f"},
      {"(r).f.g", "((r).f).g"},
      {"t.r.f", "t.r.f"},
  });
  ast::ExprPtr cast_expr = parse_expression("TRY_CAST(x AS INT)");
  auto cast = cast_expr->as<ast::Cast>();
  ASSERT_NE(cast, nullptr);
  EXPECT_TRUE(cast->try_cast);
  EXPECT_EQ(cast->type.name, "INT");
  EXPECT_FALSE(parse_expression("CAST(x AS INT)")->as<ast::Cast>()->try_cast);
  ast::ExprPtr floor_expr = parse_expression("FLOOR(ts TO DAY)");
  auto floor = floor_expr->as<ast::FloorCeil>();
  ASSERT_NE(floor, nullptr);
  EXPECT_FALSE(floor->ceil);
  EXPECT_EQ(floor->unit, "DAY");
  EXPECT_NE(parse_expression("MAP['a', 1]")->as<ast::MapConstructor>(), nullptr);
  EXPECT_NE(parse_expression("ARRAY['a', 1]")->as<ast::ArrayConstructor>(), nullptr);
}

TEST(ParserExpression, KeywordsInsideStringsAndCommentsAreNotRewritten) {
  check_all({
      {"'CAST(x AS MAP<a, b>)'", "'CAST(x AS MAP<a, b>)'"},
      {"'INTERVAL ''1'' MINUTES'", "'INTERVAL ''1'' MINUTES'"},
      {"'TABLE(TUMBLE(TABLE t))' || x", "('TABLE(TUMBLE(TABLE t))' || x)"},
      {"a -- MAP[ and TRY_CAST(\n + 1", "(a + 1)"},
      {"a /* FLOOR(x TO DAY) */ + 1", "(a + 1)"},
      {"`FLOOR` + `CAST`", "(FLOOR + `CAST`)"},  // reserved words print quoted
      {"'DATE ''x'''", "'DATE ''x'''"},
  });
}

TEST(ParserExpression, NodePositions) {
  // Positions are 1-based line/column of the node's first token in the original text.
  auto e = parse_expression("a +\n  CAST(`b c` AS MAP<STRING, INT>)");
  EXPECT_EQ(e->pos, (SourcePosition{1, 1}));
  const auto* bin = e->as<ast::Binary>();
  ASSERT_NE(bin, nullptr);
  EXPECT_EQ(bin->right->pos, (SourcePosition{2, 3}));
  const auto* cast = bin->right->as<ast::Cast>();
  ASSERT_NE(cast, nullptr);
  EXPECT_EQ(cast->value->pos, (SourcePosition{2, 8}));
  EXPECT_EQ(cast->type.pos, (SourcePosition{2, 17}));

  EXPECT_EQ(parse_expression("\n  a IS NOT TRUE")->pos, (SourcePosition{2, 3}));
  EXPECT_EQ(parse_expression("  a IS NULL")->pos, (SourcePosition{1, 3}));
  auto lit = parse_expression("  x = INTERVAL '1' DAY");
  EXPECT_EQ(lit->as<ast::Binary>()->right->pos, (SourcePosition{1, 7}));
  // Columns count characters, not bytes.
  auto utf = parse_expression("'äöü' || `naïve`");
  EXPECT_EQ(utf->as<ast::Binary>()->right->pos, (SourcePosition{1, 10}));
}

}  // namespace
}  // namespace clink::test
