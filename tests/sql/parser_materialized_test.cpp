// CREATE / ALTER / REFRESH / DROP MATERIALIZED TABLE and VIEW: what the parser keeps and
// how it prints it back, and its errors (the statements' execution:
// tests/sql/materialized_tables.test).
#include "parser_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

TEST(ParserMaterialized, CreateKeepsEveryClause) {
  auto script = parse(
      "CREATE MATERIALIZED TABLE db.t (CONSTRAINT pk PRIMARY KEY (a, b) NOT ENFORCED) COMMENT 'c' "
      "PARTITIONED BY (a) WITH ('path' = '/x') FRESHNESS = INTERVAL '2' HOUR REFRESH_MODE = FULL AS\n"
      "  SELECT a, b, COUNT(*) AS n FROM s GROUP BY a, b");
  const auto* m = script.statements.at(0).as<ast::MaterializedTable>();
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->action, ast::MaterializedTable::Action::Create);
  EXPECT_FALSE(m->view);
  EXPECT_EQ(m->name, (ast::QualifiedName{"db", "t"}));
  ASSERT_TRUE(m->primary_key);
  EXPECT_EQ(m->primary_key->constraint_name, "pk");
  EXPECT_EQ(m->primary_key->columns, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(m->comment, "c");
  EXPECT_EQ(m->partitioned_by, (std::vector<std::string>{"a"}));
  ASSERT_EQ(m->options.size(), 1u);
  EXPECT_EQ(m->options[0].value, "/x");
  EXPECT_EQ(m->freshness_ms, 7'200'000);
  EXPECT_EQ(m->refresh_mode, "FULL");
  EXPECT_EQ(m->query_sql, "SELECT a, b, COUNT(*) AS n FROM s GROUP BY a, b");
  EXPECT_EQ(m->query_pos.line, 2);
  EXPECT_EQ(m->query_pos.column, 3);
  EXPECT_EQ(ast::to_string(script.statements[0]),
            "CREATE MATERIALIZED TABLE db.t (PRIMARY KEY (a, b) NOT ENFORCED) COMMENT 'c' PARTITIONED BY (a) "
            "WITH ('path' = '/x') FRESHNESS = INTERVAL '7200' SECOND REFRESH_MODE = FULL AS SELECT a, b, COUNT(*) AS n "
            "FROM s GROUP BY a, b");
}

TEST(ParserMaterialized, FreshnessIsOptionalAndUnitsAreFlinks) {
  auto m = parse("CREATE MATERIALIZED TABLE t AS SELECT 1").statements.at(0);
  EXPECT_FALSE(m.as<ast::MaterializedTable>()->freshness_ms);
  EXPECT_EQ(m.as<ast::MaterializedTable>()->refresh_mode, "");
  for (auto [text, ms] : std::initializer_list<std::pair<const char*, std::int64_t>>{
           {"'30' SECOND", 30'000}, {"'5' MINUTE", 300'000}, {"'1' DAY", 86'400'000}}) {
    auto st = parse(std::string("CREATE MATERIALIZED TABLE t FRESHNESS = INTERVAL ") + text + " AS SELECT 1").statements.at(0);
    EXPECT_EQ(st.as<ast::MaterializedTable>()->freshness_ms, ms) << text;
  }
  EXPECT_EQ(error_of("CREATE MATERIALIZED TABLE t FRESHNESS = INTERVAL '0' SECOND AS SELECT 1"),
            "ParseError: line 1, column 41: Materialized table freshness only supports a positive integer interval "
            "value, got '0'");
  EXPECT_EQ(error_of("CREATE MATERIALIZED TABLE t FRESHNESS = INTERVAL '1:30' HOUR TO MINUTE AS SELECT 1"),
            "ParseError: line 1, column 41: Materialized table freshness must be a positive interval of one unit, "
            "e.g. INTERVAL '30' SECOND");
  EXPECT_EQ(error_of("CREATE MATERIALIZED TABLE t REFRESH_MODE = SOMETIMES AS SELECT 1"),
            "ParseError: line 1, column 44: REFRESH_MODE must be CONTINUOUS or FULL, got 'SOMETIMES'");
  EXPECT_EQ(error_of("CREATE MATERIALIZED TABLE t (a INT) AS SELECT 1"),
            "ParseError: line 1, column 30: a materialized table declares no columns (its schema is the query's): "
            "only [CONSTRAINT name] PRIMARY KEY (..) NOT ENFORCED may be written here");
}

TEST(ParserMaterialized, AlterRefreshDropAndTheViewSpelling) {
  auto check = [](const char* sql, const char* printed) {
    SCOPED_TRACE(sql);
    EXPECT_EQ(dump(sql), printed);
  };
  check("ALTER MATERIALIZED TABLE t SUSPEND", "ALTER MATERIALIZED TABLE t SUSPEND");
  check("ALTER MATERIALIZED TABLE t RESUME", "ALTER MATERIALIZED TABLE t RESUME");
  check("ALTER MATERIALIZED TABLE t REFRESH", "ALTER MATERIALIZED TABLE t REFRESH");
  check("DROP MATERIALIZED TABLE IF EXISTS t", "DROP MATERIALIZED TABLE IF EXISTS t");
  check("REFRESH MATERIALIZED VIEW v", "ALTER MATERIALIZED VIEW v REFRESH");
  check("DROP MATERIALIZED VIEW v", "DROP MATERIALIZED VIEW v");
  check("CREATE MATERIALIZED VIEW v WITH (freshness = '5m') AS SELECT 1",
        "CREATE MATERIALIZED VIEW v WITH ('freshness' = '5m') AS SELECT 1");
  auto st = parse("ALTER MATERIALIZED TABLE t REFRESH PARTITION (dt = '2024-01-01', hr = 3)").statements.at(0);
  const auto* m = st.as<ast::MaterializedTable>();
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->partition.size(), 2u);
  EXPECT_EQ(m->partition[0].key, "dt");
  EXPECT_EQ(m->partition[1].value, "3");
  EXPECT_EQ(error_of("ALTER MATERIALIZED TABLE t SET ('a' = 'b')"),
            "TranslationError: line 1, column 28: ALTER MATERIALIZED TABLE ... SET is not supported (SUSPEND, RESUME, "
            "REFRESH, AS <query>, ADD, MODIFY and DROP are)");
  EXPECT_EQ(error_of("ALTER MATERIALIZED TABLE t STOP"),
            "ParseError: line 1, column 28: expected SUSPEND, RESUME, REFRESH, AS, ADD, MODIFY or DROP but found 'STOP'");
  // Flink 2.3's schema changes: one ADD / MODIFY / DROP per statement.
  check("ALTER MATERIALIZED TABLE t ADD (c AS a + 1, WATERMARK FOR ts AS ts)",
        "ALTER MATERIALIZED TABLE t ADD (c AS (a + 1), WATERMARK FOR ts AS ts)");
  check("ALTER MATERIALIZED TABLE t MODIFY a BIGINT", "ALTER MATERIALIZED TABLE t MODIFY (a BIGINT)");
  check("ALTER MATERIALIZED TABLE t DROP (c, d)", "ALTER MATERIALIZED TABLE t DROP (c, d)");
  check("ALTER MATERIALIZED TABLE t DROP CONSTRAINT k", "ALTER MATERIALIZED TABLE t DROP CONSTRAINT k");
  EXPECT_EQ(parse("ALTER MATERIALIZED TABLE t DROP WATERMARK").statements[0].as<ast::MaterializedTable>()->action,
            ast::MaterializedTable::Action::AlterSchema);
  EXPECT_EQ(error_of("ALTER MATERIALIZED TABLE t ADD (c AS 1), ADD (d AS 2)"),
            "ParseError: line 1, column 40: unexpected ','");
  EXPECT_EQ(error_of("ALTER MATERIALIZED TABLE t DROP DISTRIBUTION"),
            "TranslationError: line 1, column 33: ALTER MATERIALIZED TABLE ... DROP DISTRIBUTION is not supported "
            "(clink has no DISTRIBUTED BY: a backing table's files are written per partition, not per bucket)");
  EXPECT_EQ(error_of("CREATE OR REPLACE MATERIALIZED TABLE t AS SELECT 1"),
            "TranslationError: line 1, column 8: CREATE OR REPLACE is not supported for materialized tables: CREATE OR "
            "ALTER changes an existing one's query, or DROP it and CREATE it again");
  // ALTER ... AS and CREATE OR ALTER keep the query as written.
  auto alter = parse("ALTER MATERIALIZED TABLE t AS SELECT a,  b FROM s").statements[0];
  const auto* a = alter.as<ast::MaterializedTable>();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->action, ast::MaterializedTable::Action::AlterQuery);
  EXPECT_EQ(a->query_sql, "SELECT a,  b FROM s");
  EXPECT_EQ(ast::to_string(alter), "ALTER MATERIALIZED TABLE t AS SELECT a, b FROM s");
  auto create = parse("CREATE OR ALTER MATERIALIZED TABLE t FRESHNESS = INTERVAL '1' SECOND AS SELECT 1").statements[0];
  ASSERT_NE(create.as<ast::MaterializedTable>(), nullptr);
  EXPECT_TRUE(create.as<ast::MaterializedTable>()->or_alter);
  EXPECT_EQ(error_of("CREATE OR ALTER MATERIALIZED VIEW v AS SELECT 1"),
            "ParseError: line 1, column 30: expected 'TABLE' but found 'VIEW'");
}

}  // namespace
}  // namespace clink::test
