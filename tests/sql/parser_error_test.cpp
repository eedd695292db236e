// Errors name the problem and its line and column in the ORIGINAL text, also after the
// shim rewrote earlier lines (backticks, types, intervals, table functions).
#include "parser_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

TEST(ParserError, SyntaxErrorOnLineThreeOfAScript) {
  EXPECT_EQ(error_of("SELECT a FROM t;\nSELECT b FROM u;\nSELECT c FROM WHERE x = 1;"),
            "ParseError: line 3, column 15: syntax error at or near \"WHERE\"");
}

TEST(ParserError, PositionsSurviveRewritesOnEarlierLines) {
  const char* sql =
      "CREATE TABLE `My Table` (m MAP<STRING, ARRAY<INT>>, `select` ROW<a INT, b STRING>, ts TIMESTAMP_LTZ(3));\n"
      "SELECT `select`, CAST(m AS MAP<STRING, ARRAY<INT>>), INTERVAL '10' MINUTES FROM `My Table`;\n"
      "SELECT * FROM TABLE(TUMBLE(TABLE `My Table`, DESCRIPTOR(ts), INTERVAL '1' HOURS)) WHERE `select` = = 2";
  EXPECT_EQ(error_of(sql), "ParseError: line 3, column 100: syntax error at or near \"=\"");
  // The same mistake inside a rewritten construct on the same line.
  EXPECT_EQ(error_of("SELECT `a b`, CAST(`c d` AS MAP<STRING, INT>) FROM t WHERE x IN (1,, 2)"),
            "ParseError: line 1, column 68: syntax error at or near \",\"");
  EXPECT_EQ(error_of("SELECT TRY_CAST(x AS ROW<a INT>) + FROM t"),
            "ParseError: line 1, column 36: syntax error at or near \"FROM\"");
}

TEST(ParserError, ColumnsCountCharactersAndLinesSurviveCrLf) {
  // 'äöü' and `naïve` are wider in bytes than in characters.
  EXPECT_EQ(error_of("SELECT 'äöü', `naïve` FROM WHERE"), "ParseError: line 1, column 28: syntax error at or near \"WHERE\"");
  EXPECT_EQ(error_of("SELECT 1;\r\nSELECT\r\n  x FROM FROM t"), "ParseError: line 3, column 10: syntax error at or near \"FROM\"");
  auto script = parse("SELECT 1;\r\nSELECT\r\n  x FROM t");
  ASSERT_EQ(script.statements.size(), 2u);
  EXPECT_EQ(script.statements[1].pos, (SourcePosition{2, 1}));
  EXPECT_EQ(script.statements[1].text, "SELECT\r\n  x FROM t");
  const auto& sel = std::get<ast::Select>(script.statements[1].as<ast::QueryStatement>()->query->body);
  EXPECT_EQ(sel.items.at(0).pos, (SourcePosition{3, 3}));
}

TEST(ParserError, ErrorsInsideDdlExpressions) {
  EXPECT_EQ(error_of("CREATE TABLE t (\n  a INT,\n  b AS a + * 2,\n  ts TIMESTAMP(3)\n)"),
            "ParseError: line 3, column 12: syntax error at or near \"*\"");
  EXPECT_EQ(error_of("CREATE TABLE t (\n  ts TIMESTAMP(3),\n  WATERMARK FOR ts AS ts - INTERVAL '5'\n)"),
            "ParseError: line 4, column 1: expected a time unit (YEAR, MONTH, DAY, HOUR, MINUTE, SECOND, ...) but "
            "found ')'");
}

TEST(ParserError, ErrorsInsideWindowTableFunctions) {
  EXPECT_EQ(error_of("SELECT * FROM TABLE(\n  TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' MINUTES +))"),
            "ParseError: line 2, column 58: syntax error at end of input");
  EXPECT_EQ(error_of("SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(), INTERVAL '1' HOUR))"),
            "ParseError: line 1, column 48: expected a column name but found ')'");
  EXPECT_EQ(error_of("SELECT * FROM TABLE(TUMBLE(TABLE t,, INTERVAL '1' HOUR))"),
            "ParseError: line 1, column 36: expected an argument but found ','");
  // MY_TVF(TABLE t) is a process table function call (binder_ptf.cpp); without a TABLE
  // argument it is neither.
  EXPECT_EQ(error_of("SELECT * FROM TABLE(MY_TVF(1))"),
            "TranslationError: line 1, column 21: table function MY_TVF is not supported (supported: TUMBLE, HOP, "
            "CUMULATE, SESSION, VECTOR_SEARCH, ML_PREDICT, and process table functions with a TABLE argument)");
  EXPECT_EQ(error_of("SELECT * FROM TABLE(TUMBLE(TABLE t PARTITION k, DESCRIPTOR(ts), INTERVAL '1' HOUR))"),
            "ParseError: line 1, column 46: expected 'BY' but found 'k'");
}

TEST(ParserError, LexicalErrors) {
  EXPECT_EQ(error_of("SELECT 1;\nSELECT 'abc"), "ParseError: line 2, column 8: unterminated string literal");
  EXPECT_EQ(error_of("SELECT `abc"), "ParseError: line 1, column 8: unterminated quoted identifier");
  EXPECT_EQ(error_of("SELECT 1 /* never closed"), "ParseError: line 1, column 10: unterminated comment");
  EXPECT_EQ(error_of("SELECT ``"), "ParseError: line 1, column 8: empty quoted identifier");
}

TEST(ParserError, UnsupportedQueryConstructs) {
  EXPECT_EQ(error_of("SELECT *\nFROM Orders AS o\n  JOIN (SELECT * FROM Rates) FOR SYSTEM_TIME AS OF o.ts AS r ON o.c = r.c"),
            "ParseError: line 3, column 30: FOR SYSTEM_TIME AS OF must follow a table name");
  EXPECT_EQ(error_of("SELECT * FROM Orders AS o JOIN Rates FOR SYSTEM_TIME AS OF AS r ON o.c = r.c"),
            "ParseError: line 1, column 60: expected an expression after FOR SYSTEM_TIME AS OF but found 'AS'");
  EXPECT_EQ(error_of("SELECT * FROM t, ROWS FROM (f(a), g(b)) AS x"),
            "TranslationError: line 1, column 29: ROWS FROM (...) is not supported");
  // MATCH_RECOGNIZE's own clause parser (match_recognize_parse.cpp) reports its errors.
  EXPECT_EQ(error_of("SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts)"),
            "ParseError: line 1, column 60: expected 'PATTERN' but found ')'");
  EXPECT_EQ(error_of("SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A (B C)+) DEFINE A AS a > 1)"),
            "TranslationError: line 1, column 57: Group patterns are not supported yet: a quantifier applies to a "
            "single pattern variable");
  EXPECT_EQ(error_of("SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A{3,2}) DEFINE A AS a > 1)"),
            "ParseError: line 1, column 56: the quantifier's upper bound 2 is below its lower bound 3");
  EXPECT_EQ(error_of("SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES A.x PATTERN (A) DEFINE A AS a > 1)"),
            "ParseError: line 1, column 55: a MEASURES item needs a name: <expression> AS <name>");
  EXPECT_EQ(error_of("SELECT /*+ BROADCAST(t) */ * FROM t"),
            "TranslationError: line 1, column 8: query hints (/*+ ... */ after SELECT) are not supported yet");
  EXPECT_EQ(error_of("SELECT * FROM t /*+ LOOKUP('table'='t') */"),
            "TranslationError: line 1, column 21: table hint LOOKUP is not supported (only OPTIONS)");
  EXPECT_EQ(error_of("SELECT DISTINCT ON (a) a FROM t"), "TranslationError: line 1, column 21: DISTINCT ON is not supported");
  EXPECT_EQ(error_of("SELECT SUM(a) OVER (ORDER BY ts GROUPS 1 PRECEDING) FROM t"),
            "TranslationError: line 1, column 8: GROUPS frames are not supported");
  EXPECT_EQ(error_of("WITH RECURSIVE r AS (SELECT 1) SELECT * FROM r"),
            "TranslationError: line 1, column 16: WITH RECURSIVE is not supported");
  EXPECT_EQ(error_of("SELECT a FROM t FOR UPDATE"), "TranslationError: line 1, column 1: FOR UPDATE / FOR SHARE is not supported");
  EXPECT_EQ(error_of("SELECT a FROM t ORDER BY a FETCH FIRST 1 ROWS WITH TIES"),
            "TranslationError: line 1, column 1: FETCH ... WITH TIES is not supported");
}

TEST(ParserError, UnsupportedExpressions) {
  EXPECT_EQ(expr_error_of("x::int"), "TranslationError: line 1, column 2: the :: cast syntax is not supported, use CAST(x AS type)");
  EXPECT_EQ(expr_error_of("a ILIKE 'x'"), "TranslationError: line 1, column 3: ILIKE is not supported (use LOWER(x) LIKE ...)");
  EXPECT_EQ(expr_error_of("a = ANY(ARRAY[1])"), "TranslationError: line 1, column 3: ANY / ALL comparisons are not supported");
  EXPECT_EQ(expr_error_of("a > ALL (SELECT b FROM t)"),
            "TranslationError: line 1, column 3: subquery comparison ALL_SUBLINK is not supported");
  EXPECT_EQ(expr_error_of("$1 + 1"), "ParseError: line 1, column 1: syntax error at or near \"$\"");
  EXPECT_EQ(expr_error_of("a ~ 'x'"), "TranslationError: line 1, column 3: operator ~ is not supported");
  EXPECT_EQ(expr_error_of("CURRENT_USER"), "TranslationError: line 1, column 1: CURRENT_USER is not supported");
  EXPECT_EQ(expr_error_of("ts AT TIME ZONE 'UTC'"), "TranslationError: line 1, column 4: AT TIME ZONE is not supported");
  EXPECT_EQ(expr_error_of("string_agg(a ORDER BY b)"),
            "TranslationError: line 1, column 1: ORDER BY inside a function call is not supported");
  EXPECT_EQ(expr_error_of("SUM(a) OVER (ORDER BY b ROWS 1 PRECEDING EXCLUDE CURRENT ROW)"),
            "TranslationError: line 1, column 1: frame EXCLUDE clauses are not supported");
  EXPECT_EQ(expr_error_of("CAST(x AS TIMESTAMP WITH TIME ZONE)"),
            "TranslationError: line 1, column 21: TIMESTAMP WITH TIME ZONE is not supported (use TIMESTAMP_LTZ / WITH "
            "LOCAL TIME ZONE)");
  EXPECT_EQ(expr_error_of("CAST(x AS GEOMETRY)"), "TranslationError: line 1, column 11: unknown data type 'GEOMETRY'");
}

TEST(ParserError, ExpressionSyntaxErrors) {
  EXPECT_EQ(expr_error_of("a +"), "ParseError: line 1, column 4: syntax error at end of input");
  EXPECT_EQ(expr_error_of("1, 2"), "ParseError: line 1, column 4: expected a single expression");
  EXPECT_EQ(expr_error_of("a AS b"), "ParseError: line 1, column 1: expected a single expression, not an aliased one");
  EXPECT_EQ(expr_error_of(""), "ParseError: line 1, column 1: expected an expression but found end of input");
  EXPECT_EQ(expr_error_of("CAST(x)"), "ParseError: line 1, column 7: expected AS <type> in CAST");
  EXPECT_EQ(expr_error_of("CAST(x AS)"), "ParseError: line 1, column 10: expected a data type but found ')'");
  EXPECT_EQ(expr_error_of("CAST(x AS INT INT)"), "ParseError: line 1, column 15: unexpected 'INT' after the data type");
  EXPECT_EQ(expr_error_of("CAST(x AS DECIMAL(10,))"), "ParseError: line 1, column 22: expected an integer type parameter but found ')'");
  EXPECT_EQ(expr_error_of("INTERVAL '1'"), "ParseError: line 1, column 13: expected a time unit (YEAR, MONTH, DAY, HOUR, MINUTE, SECOND, ...) but found end of input");
  EXPECT_EQ(expr_error_of("INTERVAL '1' FORTNIGHT"),
            "ParseError: line 1, column 14: expected a time unit (YEAR, MONTH, DAY, HOUR, MINUTE, SECOND, ...) but found 'FORTNIGHT'");
  EXPECT_EQ(expr_error_of("FLOOR(ts TO FORTNIGHT)"),
            "ParseError: line 1, column 13: expected a time unit after TO but found 'FORTNIGHT'");
  EXPECT_EQ(expr_error_of("MAP['a']"), "ParseError: line 1, column 1: MAP[...] needs key/value pairs (an even number of elements)");
  EXPECT_EQ(expr_error_of("X'0G'"), "ParseError: line 1, column 2: a binary literal X'...' needs an even number of hex digits");
  EXPECT_EQ(expr_error_of("X'0'"), "ParseError: line 1, column 2: a binary literal X'...' needs an even number of hex digits");
  EXPECT_EQ(expr_error_of("f((a)"), "ParseError: line 1, column 6: syntax error at end of input");
  EXPECT_EQ(expr_error_of("CAST((a AS INT)"), "ParseError: line 1, column 5: '(' is never closed");
}

TEST(ParserError, ErrorTypesAndAccessors) {
  try {
    parse("SELECT 1;\n\n  SELECT FROM FROM");
    FAIL() << "expected a ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.column(), 15);
    EXPECT_EQ(e.position(), (SourcePosition{3, 15}));
    EXPECT_EQ(e.detail(), "syntax error at or near \"FROM\"");
    EXPECT_STREQ(e.what(), "line 3, column 15: syntax error at or near \"FROM\"");
    const ClinkError& base = e;  // both errors are ClinkErrors
    EXPECT_NE(std::string(base.what()).find("line 3"), std::string::npos);
  }
  try {
    parse("DELETE FROM t");
    FAIL() << "expected a TranslationError";
  } catch (const TranslationError& e) {
    EXPECT_EQ(e.position(), (SourcePosition{1, 1}));
  }
}

}  // namespace
}  // namespace clink::test
