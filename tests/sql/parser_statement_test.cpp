// Utility statements, INSERT, statement sets and how a script splits into statements.
#include "parser_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

void check_all(std::initializer_list<Case> cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.sql);
    EXPECT_EQ(dump(c.sql), c.expected);
  }
}

TEST(ParserStatement, SetAndReset) {
  check_all({
      {"SET 'table.local-time-zone' = 'Europe/Berlin'", "SET 'table.local-time-zone' = 'Europe/Berlin'"},
      {"SET 'execution.runtime-mode' = 'batch';", "SET 'execution.runtime-mode' = 'batch'"},
      {"SET 'parallelism.default'", "SET 'parallelism.default'"},
      {"SET", "SET"},
      {"set execution.runtime-mode = batch", "SET 'execution.runtime-mode' = 'batch'"},
      {"SET 'pipeline.name' = 'it''s'", "SET 'pipeline.name' = 'it''s'"},
      {"RESET 'table.local-time-zone'", "RESET 'table.local-time-zone'"},
      {"RESET", "RESET"},
      {"RESET execution.runtime-mode", "RESET 'execution.runtime-mode'"},
  });
  auto script = parse("SET 'k' = 'v'; SET; RESET 'k'; RESET");
  ASSERT_EQ(script.statements.size(), 4u);
  const auto* set = script.statements[0].as<ast::Set>();
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(set->key, "k");
  EXPECT_EQ(set->value, "v");
  EXPECT_FALSE(script.statements[1].as<ast::Set>()->key.has_value());
  EXPECT_EQ(script.statements[2].as<ast::Reset>()->key, "k");
  EXPECT_FALSE(script.statements[3].as<ast::Reset>()->key.has_value());
}

TEST(ParserStatement, ShowDescribeAnalyze) {
  check_all({
      {"SHOW TABLES", "SHOW TABLES"},
      {"show views", "SHOW VIEWS"},
      {"SHOW FUNCTIONS", "SHOW FUNCTIONS"},
      {"SHOW USER FUNCTIONS", "SHOW USER FUNCTIONS"},
      {"SHOW CREATE TABLE db.Orders", "SHOW CREATE TABLE db.Orders"},
      {"SHOW CREATE VIEW v", "SHOW CREATE VIEW v"},
      {"SHOW COLUMNS FROM t", "SHOW COLUMNS FROM t"},
      {"SHOW COLUMNS IN t", "SHOW COLUMNS FROM t"},
      // The SQL client's statements.
      {"show catalogs", "SHOW CATALOGS"},
      {"SHOW DATABASES", "SHOW DATABASES"},
      {"SHOW CURRENT CATALOG", "SHOW CURRENT CATALOG"},
      {"SHOW CURRENT DATABASE", "SHOW CURRENT DATABASE"},
      {"SHOW JOBS", "SHOW JOBS"},
      {"SHOW JARS", "SHOW JARS"},
      {"USE CATALOG default_catalog", "USE CATALOG default_catalog"},
      {"USE default_catalog.default_database", "USE default_catalog.default_database"},
      {"USE catalog", "USE catalog"},  // a database named "catalog"
      {"STOP JOB 'a1b2' WITH SAVEPOINT WITH DRAIN", "STOP JOB 'a1b2' WITH SAVEPOINT WITH DRAIN"},
      {"stop job 'a1b2'", "STOP JOB 'a1b2'"},
      {"ADD JAR '/x.jar'", "ADD JAR '/x.jar'"},
      {"REMOVE JAR '/x.jar'", "REMOVE JAR '/x.jar'"},
      {"DESCRIBE Orders", "DESCRIBE Orders"},
      {"DESC `My Table`", "DESCRIBE `My Table`"},
      {"DESCRIBE EXTENDED t", "DESCRIBE EXTENDED t"},
      {"ANALYZE TABLE t COMPUTE STATISTICS", "ANALYZE TABLE t COMPUTE STATISTICS"},
      {"ANALYZE TABLE t COMPUTE STATISTICS FOR ALL COLUMNS", "ANALYZE TABLE t COMPUTE STATISTICS FOR ALL COLUMNS"},
      {"ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS a, b", "ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS a, b"},
      {"ANALYZE TABLE t PARTITION (dt = '2024-01-01') COMPUTE STATISTICS",
       "ANALYZE TABLE t PARTITION ('dt' = '2024-01-01') COMPUTE STATISTICS"},
  });
  auto script = parse("SHOW CREATE TABLE Orders");
  const auto* show = script.statements[0].as<ast::Show>();
  ASSERT_NE(show, nullptr);
  EXPECT_EQ(show->what, ast::Show::What::CreateTable);
  EXPECT_EQ(show->object, (ast::QualifiedName{"Orders"}));
  EXPECT_EQ(error_of("SHOW MODULES"), "TranslationError: line 1, column 6: SHOW MODULES is not supported");
  script = parse("SHOW MATERIALIZED TABLES IN c.db NOT LIKE 'a%'");
  show = script.statements[0].as<ast::Show>();
  ASSERT_NE(show, nullptr);
  EXPECT_EQ(show->what, ast::Show::What::MaterializedTables);
  EXPECT_EQ(show->object, (ast::QualifiedName{"c", "db"}));
  EXPECT_EQ(show->like, "a%");
  EXPECT_TRUE(show->not_like);
  EXPECT_EQ(ast::to_string(script.statements[0]), "SHOW MATERIALIZED TABLES FROM c.db NOT LIKE 'a%'");
  EXPECT_EQ(error_of("SHOW TABLES NOT 'x'"), "ParseError: line 1, column 17: expected 'LIKE' but found string 'x'");
  EXPECT_EQ(error_of("SHOW CREATE VIEW v LIKE 'x'"), "ParseError: line 1, column 20: unexpected 'LIKE'");
  EXPECT_EQ(error_of("ANALYZE TABLE t"), "ParseError: line 1, column 16: expected 'COMPUTE' but found end of input");
  EXPECT_EQ(error_of("ANALYZE TABLE t COMPUTE STATISTICS NOSCAN"),
            "TranslationError: line 1, column 36: ANALYZE ... NOSCAN is not supported");
}

TEST(ParserStatement, Explain) {
  check_all({
      {"EXPLAIN SELECT a FROM t", "EXPLAIN SELECT a FROM t"},
      {"EXPLAIN PLAN FOR SELECT a FROM t", "EXPLAIN SELECT a FROM t"},
      {"EXPLAIN ESTIMATED_COST, CHANGELOG_MODE SELECT a FROM t", "EXPLAIN ESTIMATED_COST, CHANGELOG_MODE SELECT a FROM t"},
      {"EXPLAIN INSERT INTO s SELECT a FROM t", "EXPLAIN INSERT INTO s SELECT a FROM t"},
      {"EXPLAIN STATEMENT SET BEGIN INSERT INTO s SELECT 1; INSERT INTO u SELECT 2; END",
       "EXPLAIN EXECUTE STATEMENT SET BEGIN INSERT INTO s SELECT 1; INSERT INTO u SELECT 2; END"},
  });
  auto script = parse("EXPLAIN\n  SELECT 1");
  const auto* x = script.statements[0].as<ast::Explain>();
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->statement->pos, (SourcePosition{2, 3}));
  EXPECT_NE(x->statement->as<ast::QueryStatement>(), nullptr);
  EXPECT_EQ(error_of("EXPLAIN CREATE TABLE t (a INT)"),
            "TranslationError: line 1, column 9: EXPLAIN supports queries, INSERT and statement sets");
}

TEST(ParserStatement, Insert) {
  check_all({
      {"INSERT INTO sink SELECT * FROM src", "INSERT INTO sink SELECT * FROM src"},
      {"INSERT INTO db.sink (a, b) SELECT x, y FROM src", "INSERT INTO db.sink (a, b) SELECT x, y FROM src"},
      {"INSERT OVERWRITE sink SELECT * FROM src", "INSERT OVERWRITE sink SELECT * FROM src"},
      {"INSERT INTO t PARTITION (dt = '2020', hr = 1) SELECT a FROM s",
       "INSERT INTO t PARTITION ('dt' = '2020', 'hr' = '1') SELECT a FROM s"},
      {"INSERT OVERWRITE t PARTITION (dt = '2020') (a, b) SELECT 1, 2",
       "INSERT OVERWRITE t PARTITION ('dt' = '2020') (a, b) SELECT 1, 2"},
      {"INSERT INTO t VALUES (1, 'a'), (2, 'b')", "INSERT INTO t VALUES (1, 'a'), (2, 'b')"},
      {"INSERT INTO t (SELECT 1)", "INSERT INTO t SELECT 1"},
      {"INSERT INTO t WITH c AS (SELECT 1 AS x) SELECT x FROM c", "INSERT INTO t WITH c AS (SELECT 1 AS x) SELECT x FROM c"},
      {"INSERT INTO t /*+ OPTIONS('sink.parallelism' = '2') */ SELECT 1",
       "INSERT INTO t /*+ OPTIONS('sink.parallelism' = '2') */ SELECT 1"},
      {"EXECUTE INSERT INTO t SELECT 1", "INSERT INTO t SELECT 1"},
  });
  auto script = parse("INSERT INTO `Sink` (`A`) SELECT 1");
  const auto* ins = script.statements[0].as<ast::Insert>();
  ASSERT_NE(ins, nullptr);
  EXPECT_FALSE(ins->overwrite);
  EXPECT_EQ(ins->table, (ast::QualifiedName{"Sink"}));
  EXPECT_EQ(ins->columns, (std::vector<std::string>{"A"}));
  EXPECT_EQ(error_of("INSERT INTO t"), "ParseError: line 1, column 14: expected a query (SELECT, VALUES or WITH) but found end of input");
  EXPECT_EQ(error_of("INSERT t SELECT 1"), "ParseError: line 1, column 8: expected 'INTO' but found 't'");
}

TEST(ParserStatement, StatementSets) {
  auto script = parse(R"(EXECUTE STATEMENT SET
BEGIN
  INSERT INTO pageview_pv_sink
  SELECT page_id, count(1) FROM clicks GROUP BY page_id;
  INSERT INTO pageview_uv_sink
  SELECT page_id, count(distinct user_id) FROM clicks GROUP BY page_id;
END;
SELECT 1;)");
  ASSERT_EQ(script.statements.size(), 2u);
  EXPECT_EQ(ast::to_string(script.statements[0]),
            "EXECUTE STATEMENT SET BEGIN INSERT INTO pageview_pv_sink SELECT page_id, count(1) FROM clicks GROUP BY "
            "page_id; INSERT INTO pageview_uv_sink SELECT page_id, count(DISTINCT user_id) FROM clicks GROUP BY page_id; "
            "END");
  const auto* set = script.statements[0].as<ast::StatementSet>();
  ASSERT_NE(set, nullptr);
  ASSERT_EQ(set->inserts.size(), 2u);
  EXPECT_EQ(set->inserts[1].pos, (SourcePosition{5, 3}));
  EXPECT_EQ(script.statements[1].pos, (SourcePosition{8, 1}));

  // The SQL client's form, with CASE ... END inside an insert.
  auto client = parse(
      "BEGIN STATEMENT SET;\nINSERT INTO a SELECT CASE WHEN x > 0 THEN 1 ELSE 0 END FROM t;\nINSERT INTO b SELECT 2;\nEND;");
  ASSERT_EQ(client.statements.size(), 1u);
  EXPECT_EQ(ast::to_string(client.statements[0]),
            "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT CASE WHEN (x > 0) THEN 1 ELSE 0 END FROM t; INSERT INTO b "
            "SELECT 2; END");
  EXPECT_EQ(error_of("EXECUTE STATEMENT SET BEGIN SELECT 1; END"),
            "TranslationError: line 1, column 29: a statement set holds only INSERT statements");
  EXPECT_EQ(error_of("EXECUTE STATEMENT SET BEGIN END"), "ParseError: line 1, column 29: a statement set needs at least one INSERT");
  EXPECT_EQ(error_of("EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1;"),
            "ParseError: line 1, column 52: statement set is missing its END");
}

TEST(ParserStatement, ScriptSplitting) {
  const char* sql =
      "-- a script\n"
      "CREATE TABLE t (a INT) WITH ('connector' = 'datagen');  ;\n"
      "/* block; comment */ SELECT ';' AS semi, a FROM t;\n"
      "SELECT 2";
  auto script = parse(sql);
  ASSERT_EQ(script.statements.size(), 3u);
  EXPECT_EQ(ast::to_string(script),
            "CREATE TABLE t (a INT) WITH ('connector' = 'datagen');\n"
            "SELECT ';' AS semi, a FROM t;\n"
            "SELECT 2;\n");
  const auto& second = script.statements[1];
  EXPECT_EQ(second.pos, (SourcePosition{3, 22}));
  EXPECT_EQ(second.text, "SELECT ';' AS semi, a FROM t");
  EXPECT_EQ(std::string_view(sql).substr(second.begin, second.end - second.begin), second.text);
  EXPECT_EQ(script.statements[2].text, "SELECT 2");
  EXPECT_TRUE(parse("").statements.empty());
  EXPECT_TRUE(parse("  -- only a comment\n ; ;").statements.empty());
}

TEST(ParserStatement, ParseQueryEntryPoint) {
  EXPECT_EQ(ast::to_string(*parse_query("-- q\nSELECT a FROM t;")), "SELECT a FROM t");
  EXPECT_EQ(ast::to_string(*parse_query("VALUES (1)")), "VALUES (1)");
  EXPECT_EQ(error_of_call([] { parse_query(""); }),
            "ParseError: line 1, column 1: expected a query but found end of input");
  EXPECT_EQ(error_of_call([] { parse_query("CREATE TABLE t (a INT)"); }),
            "ParseError: line 1, column 1: expected a query (SELECT, VALUES or WITH)");
  EXPECT_EQ(error_of_call([] { parse_query("SELECT 1; SELECT 2"); }),
            "ParseError: line 1, column 1: expected one query");
}

TEST(ParserStatement, UnsupportedStatements) {
  EXPECT_EQ(error_of("SELECT 1;\nUPDATE t SET a = 1"), "TranslationError: line 2, column 1: UPDATE statements are not supported");
  EXPECT_EQ(error_of("DELETE FROM t WHERE a = 1"), "TranslationError: line 1, column 1: DELETE statements are not supported");
  EXPECT_EQ(error_of("USE MODULES hive"), "ParseError: line 1, column 13: unexpected 'hive'");
  EXPECT_EQ(error_of("LOAD MODULE hive"), "TranslationError: line 1, column 1: LOAD statements are not supported");
  EXPECT_EQ(error_of("ADD FILE '/x.txt'"), "TranslationError: line 1, column 1: ADD statements are not supported");
  EXPECT_EQ(error_of("TRUNCATE TABLE t"), "TranslationError: line 1, column 1: TRUNCATE statements are not supported");
  EXPECT_EQ(error_of("GRANT SELECT ON t TO u"), "TranslationError: line 1, column 1: GRANT / REVOKE statements are not supported");
  EXPECT_EQ(error_of("COMMIT"), "TranslationError: line 1, column 1: transaction control statements are not supported");
  EXPECT_EQ(error_of("FROBNICATE everything"), "ParseError: line 1, column 1: syntax error at or near \"FROBNICATE\"");
}

}  // namespace
}  // namespace clink::test
