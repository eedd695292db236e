// Every prefix of valid scripts either parses or fails with a ParseError /
// TranslationError: never a crash, a foreign exception or a silent success on garbage.
#include "parser_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

const char* const kScripts[] = {
    "CREATE TABLE `Orders` (id BIGINT NOT NULL, m MAP<STRING, ARRAY<INT>>, r ROW<a INT, `b c` STRING>,\n"
    "  cost AS price * qty COMMENT 'c', ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,\n"
    "  WATERMARK FOR ts AS ts - INTERVAL '5' SECONDS, PRIMARY KEY (id) NOT ENFORCED)\n"
    "  PARTITIONED BY (id) WITH ('connector' = 'kafka', event_time_column = 'ts') LIKE src (EXCLUDING ALL);",
    "SELECT window_start, COUNT(DISTINCT a) FILTER (WHERE b > 1), TRY_CAST(x AS DECIMAL(10, 2)),\n"
    "  FLOOR(ts TO DAY), MAP['k', ARRAY[1, 2][1]], JSON_VALUE(j, '$.a' RETURNING INT DEFAULT 0 ON EMPTY)\n"
    "FROM TABLE(HOP(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SLIDE => INTERVAL '5' MINUTES,\n"
    "  SIZE => INTERVAL '10' MINUTES)) AS w JOIN t /*+ OPTIONS('k'='v') */ ON w.id = t.id\n"
    "GROUP BY window_start, window_end, GROUPING SETS ((a, b), (a), ()) HAVING COUNT(*) > 1\n"
    "ORDER BY 1 DESC NULLS LAST LIMIT 10;",
    "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT CASE WHEN x THEN 1 ELSE 2 END FROM t;\n"
    "INSERT OVERWRITE b PARTITION (dt = '1') (c) SELECT SUM(x) OVER (PARTITION BY k ORDER BY ts\n"
    "  ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM t; END;",
    "CREATE FUNCTION f(x BIGINT) RETURNS BIGINT AS 'CASE WHEN x > 0 THEN x ELSE ''neg'' END' LANGUAGE SQL;\n"
    "ALTER TABLE t ADD (c INT, WATERMARK FOR ts AS ts), DROP (a, b), RENAME x TO y, SET ('k' = 'v');\n"
    "SET 'table.local-time-zone' = 'UTC'; SHOW CREATE TABLE t; EXPLAIN CHANGELOG_MODE SELECT 1;",
    "WITH c (x) AS (SELECT 1) SELECT * FROM (VALUES (1, 'a')) AS v(a, b) LEFT JOIN c USING (x)\n"
    "WHERE a NOT IN (SELECT x FROM c) AND b NOT LIKE 'x!%' ESCAPE '!' AND EXTRACT(YEAR FROM d) BETWEEN 1 AND 2\n"
    "UNION ALL SELECT POSITION('a' IN s), SUBSTRING(s FROM 1 FOR 2), TRIM(LEADING 'x' FROM s) FROM u;",
};

TEST(ParserRobustness, EveryPrefixParsesOrFailsCleanly) {
  size_t parsed = 0, failed = 0;
  for (const char* script : kScripts) {
    std::string_view full(script);
    ASSERT_NO_THROW(parse(full)) << full;
    for (size_t n = 0; n < full.size(); ++n) {
      std::string_view prefix = full.substr(0, n);
      try {
        parse(prefix);
        ++parsed;
      } catch (const SqlError& e) {
        ++failed;
        EXPECT_TRUE(e.position().known() || prefix.empty()) << prefix;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "foreign exception " << e.what() << " for: " << prefix;
      }
    }
  }
  // Sanity: most prefixes of a statement are incomplete.
  EXPECT_GT(failed, parsed);
}

TEST(ParserRobustness, UnbalancedBracketsInsideRewrittenConstructs) {
  const char* inputs[] = {
      "SELECT CAST(x AS INT",
      "SELECT TRY_CAST((x AS INT)",
      "SELECT FLOOR(ts TO DAY",
      "SELECT JSON_VALUE(j, '$' RETURNING INT",
      "SELECT MAP['a', 1",
      "SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' HOUR)",
      "SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts, INTERVAL '1' HOUR))",
      "CREATE TABLE t (c AS CAST(x AS INT)",
      "CREATE TABLE t (c AS FLOOR(x TO DAY)",
      "SELECT a FROM t /*+ OPTIONS('k'='v' */",
      "SELECT a FROM t /*+ OPTIONS */",
      "INSERT INTO t /*+ OPTIONS('k') */ SELECT 1",
  };
  for (const char* sql : inputs) {
    SCOPED_TRACE(sql);
    std::string err = error_of(sql);
    EXPECT_TRUE(err.rfind("ParseError: line 1, column ", 0) == 0 || err.rfind("TranslationError: line 1, column ", 0) == 0)
        << err;
  }
}

// Found by fuzz_sql_frontend: a byte that is not UTF-8 outside any literal passed the
// parser and the planner and failed far away, in the JobGraphSpec's JSON, with no position.
TEST(ParserRobustness, TextThatIsNotUtf8IsAParseErrorAtTheByte) {
  EXPECT_EQ(error_of("VALUES (1, 'x'),\n (2,\xff 'yy');"),
            "ParseError: line 2, column 5: the SQL text is not valid UTF-8 here (byte 255)");
  EXPECT_EQ(error_of("SELECT 'caf\xc3' AS x;"),  // a sequence cut short
            "ParseError: line 1, column 12: the SQL text is not valid UTF-8 here (byte 195)");
  EXPECT_EQ(error_of("SELECT 'caf\xc3\xa9' AS x"), "no error");  // café: fine
}

// The rewritten text names placeholders __clink_lit_N, __clink_ctype_N, ...: a script's
// own name spelled so was taken for one (an out-of-range index, a foreign exception).
TEST(ParserRobustness, NamesLikeThePlaceholdersAreRefusedWhereTheyStand) {
  EXPECT_EQ(error_of("SELECT a FROM t WHERE ts > __clink_lit_e;"),
            "ParseError: line 1, column 28: '__clink_lit_e': names starting with __clink_ are reserved for clink's own use");
  EXPECT_EQ(error_of("SELECT CAST(a AS INT) AS `__CLINK_ctype_0` FROM t"),
            "ParseError: line 1, column 26: '__CLINK_ctype_0': names starting with __clink_ are reserved for clink's own use");
  EXPECT_EQ(error_of("SELECT _clink_lit_0, clink_lit FROM t"), "no error");
}

}  // namespace
}  // namespace clink::test
