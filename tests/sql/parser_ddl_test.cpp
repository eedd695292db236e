// CREATE TABLE / VIEW / FUNCTION, DROP and ALTER TABLE, including Flink's documentation
// examples verbatim and the seed's option spellings.
#include "parser_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

TEST(ParserDdl, FlinkDocsCreateTableWithMetadataColumn) {
  EXPECT_EQ(dump(R"(CREATE TABLE MyTable (
  `user_id` BIGINT,
  `name` STRING,
  `record_time` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp'
) WITH (
  'connector' = 'kafka'
);)"),
            "CREATE TABLE MyTable (user_id BIGINT, name STRING, record_time TIMESTAMP_LTZ(3) METADATA FROM "
            "'timestamp') WITH ('connector' = 'kafka')");
}

TEST(ParserDdl, FlinkDocsComputedColumn) {
  EXPECT_EQ(dump(R"(CREATE TABLE MyTable (
  `user_id` BIGINT,
  `price` DOUBLE,
  `quantity` DOUBLE,
  `cost` AS price * quanitity  -- evaluate expression and supply the result to queries
) WITH (
  'connector' = 'kafka'
);)"),
            "CREATE TABLE MyTable (user_id BIGINT, price DOUBLE, quantity DOUBLE, cost AS (price * quanitity)) WITH "
            "('connector' = 'kafka')");
}

TEST(ParserDdl, FlinkDocsWatermarkAndLike) {
  EXPECT_EQ(dump(R"(CREATE TABLE Orders_in_file (
    `user` BIGINT,
    product STRING,
    order_time_string STRING,
    order_time AS to_timestamp(order_time)

)
PARTITIONED BY (`user`)
WITH (
    'connector' = 'filesystem',
    'path' = '...'
);)"),
            "CREATE TABLE Orders_in_file (`user` BIGINT, product STRING, order_time_string STRING, order_time AS "
            "to_timestamp(order_time)) PARTITIONED BY (`user`) WITH ('connector' = 'filesystem', 'path' = '...')");
  // The docs elide the Kafka options with "...", which is not SQL: the error points at it.
  EXPECT_EQ(error_of(R"(CREATE TABLE Orders_in_kafka (
    -- Add watermark definition
    WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND
) WITH (
    'connector' = 'kafka',
    ...
)
LIKE Orders_in_file (
    -- Exclude everything besides the computed columns which we need to generate the watermark for.
    -- We do not want to have the partitions or filesystem options as those do not apply to kafka.
    EXCLUDING ALL
    INCLUDING GENERATED
);)"),
            "ParseError: line 6, column 5: expected an option key (a quoted string) but found '.'");
  EXPECT_EQ(dump(R"(CREATE TABLE Orders_in_kafka (
    -- Add watermark definition
    WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND
) WITH (
    'connector' = 'kafka'
)
LIKE Orders_in_file (
    -- Exclude everything besides the computed columns which we need to generate the watermark for.
    -- We do not want to have the partitions or filesystem options as those do not apply to kafka.
    EXCLUDING ALL
    INCLUDING GENERATED
);)"),
            "CREATE TABLE Orders_in_kafka (WATERMARK FOR order_time AS (order_time - INTERVAL '5' SECOND)) WITH "
            "('connector' = 'kafka') LIKE Orders_in_file (EXCLUDING ALL, INCLUDING GENERATED)");
}

TEST(ParserDdl, FlinkDocsMetadataVirtualAndPrimaryKey) {
  EXPECT_EQ(dump(R"(CREATE TABLE MyTable (
  `timestamp` TIMESTAMP_LTZ(3) METADATA,
  `offset` BIGINT METADATA VIRTUAL,
  `user_id` BIGINT,
  `name` STRING,
  PRIMARY KEY (`user_id`) NOT ENFORCED
) WITH (
  'connector' = 'kafka'
))"),
            "CREATE TABLE MyTable (`timestamp` TIMESTAMP_LTZ(3) METADATA, `offset` BIGINT METADATA VIRTUAL, user_id "
            "BIGINT, name STRING, PRIMARY KEY (user_id) NOT ENFORCED) WITH ('connector' = 'kafka')");
}

TEST(ParserDdl, ColumnStructure) {
  auto script = parse(R"(CREATE TEMPORARY TABLE IF NOT EXISTS cat.db.Events (
  Id INT NOT NULL COMMENT 'the id',
  ts TIMESTAMP(3),
  ts2 AS ts + INTERVAL '1' HOUR COMMENT 'later',
  part INT METADATA FROM 'partition' VIRTUAL,
  CONSTRAINT pk PRIMARY KEY (Id, ts) NOT ENFORCED,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECONDS
) COMMENT 'events' WITH ('connector' = 'datagen', 'rows-per-second' = '10'))");
  ASSERT_EQ(script.statements.size(), 1u);
  const auto* t = script.statements[0].as<ast::CreateTable>();
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->temporary);
  EXPECT_TRUE(t->if_not_exists);
  EXPECT_EQ(t->name, (ast::QualifiedName{"cat", "db", "Events"}));
  ASSERT_EQ(t->schema.columns.size(), 4u);
  const auto& id = t->schema.columns[0];
  EXPECT_EQ(id.kind, ast::ColumnDef::Kind::Physical);
  EXPECT_EQ(id.name, "Id");
  EXPECT_EQ(id.type.name, "INT");
  EXPECT_FALSE(id.type.nullable);
  EXPECT_EQ(id.comment, "the id");
  EXPECT_EQ(id.pos, (SourcePosition{2, 3}));
  const auto& ts2 = t->schema.columns[2];
  EXPECT_EQ(ts2.kind, ast::ColumnDef::Kind::Computed);
  EXPECT_EQ(ast::to_string(ts2.expr), "(ts + INTERVAL '1' HOUR)");
  EXPECT_EQ(ts2.comment, "later");
  EXPECT_EQ(ts2.expr->pos, (SourcePosition{4, 10}));
  const auto& part = t->schema.columns[3];
  EXPECT_EQ(part.kind, ast::ColumnDef::Kind::Metadata);
  EXPECT_EQ(part.metadata_key, "partition");
  EXPECT_TRUE(part.is_virtual);
  ASSERT_TRUE(t->schema.primary_key);
  EXPECT_EQ(t->schema.primary_key->constraint_name, "pk");
  EXPECT_EQ(t->schema.primary_key->columns, (std::vector<std::string>{"Id", "ts"}));
  ASSERT_EQ(t->schema.watermarks.size(), 1u);
  EXPECT_EQ(t->schema.watermarks[0].column, "ts");
  EXPECT_EQ(ast::to_string(t->schema.watermarks[0].expr), "(ts - INTERVAL '5' SECOND)");
  EXPECT_EQ(t->schema.watermarks[0].pos, (SourcePosition{7, 3}));
  EXPECT_EQ(t->comment, "events");
  ASSERT_EQ(t->options.size(), 2u);
  EXPECT_EQ(t->options[1].key, "rows-per-second");
  EXPECT_EQ(t->options[1].value, "10");
  EXPECT_EQ(t->options[1].pos, (SourcePosition{8, 51}));
}

TEST(ParserDdl, InlinePrimaryKey) {
  EXPECT_EQ(dump("CREATE TABLE t (id BIGINT PRIMARY KEY NOT ENFORCED, v STRING)"),
            "CREATE TABLE t (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED)");
  EXPECT_EQ(dump("CREATE TABLE t (id BIGINT NOT NULL CONSTRAINT k PRIMARY KEY NOT ENFORCED)"),
            "CREATE TABLE t (id BIGINT NOT NULL, CONSTRAINT k PRIMARY KEY (id) NOT ENFORCED)");
}

TEST(ParserDdl, WithOptionsKeepSpellingAndOrder) {
  EXPECT_EQ(dump("CREATE TABLE t (a INT) WITH ('Connector' = 'kafka', 'properties.bootstrap.servers' = 'h:9092', "
                 "'scan.startup.mode' = 'earliest-offset', 'format' = 'json')"),
            "CREATE TABLE t (a INT) WITH ('Connector' = 'kafka', 'properties.bootstrap.servers' = 'h:9092', "
            "'scan.startup.mode' = 'earliest-offset', 'format' = 'json')");
  // The seed's own spellings: unquoted keys and numeric / boolean values.
  EXPECT_EQ(dump("CREATE TABLE clicks (user_id BIGINT, ts TIMESTAMP(3)) WITH (connector = 'file', format = 'json', "
                 "path = '/tmp/in.json', event_time_column = 'ts', watermark_lag_ms = 1000, idle_timeout_ms = '5000', "
                 "allowed_lateness_ms = 200, late_records_to_dlq = true)"),
            "CREATE TABLE clicks (user_id BIGINT, ts TIMESTAMP(3)) WITH ('connector' = 'file', 'format' = 'json', "
            "'path' = '/tmp/in.json', 'event_time_column' = 'ts', 'watermark_lag_ms' = '1000', 'idle_timeout_ms' = "
            "'5000', 'allowed_lateness_ms' = '200', 'late_records_to_dlq' = 'true')");
  EXPECT_EQ(dump("CREATE TABLE t (a INT) WITH (scan.startup.mode = 'latest-offset', 'k' = -1, 'q' = 'it''s')"),
            "CREATE TABLE t (a INT) WITH ('scan.startup.mode' = 'latest-offset', 'k' = '-1', 'q' = 'it''s')");
  EXPECT_EQ(dump("CREATE TABLE t (a INT) WITH ()"), "CREATE TABLE t (a INT)");
}

TEST(ParserDdl, CreateTableLike) {
  EXPECT_EQ(dump("CREATE TABLE t2 WITH ('connector' = 'print') LIKE t1"),
            "CREATE TABLE t2 WITH ('connector' = 'print') LIKE t1");
  EXPECT_EQ(dump("CREATE TABLE t2 (x INT) LIKE db.t1 (INCLUDING ALL OVERWRITING OPTIONS EXCLUDING WATERMARKS)"),
            "CREATE TABLE t2 (x INT) LIKE db.t1 (INCLUDING ALL, OVERWRITING OPTIONS, EXCLUDING WATERMARKS)");
  EXPECT_EQ(dump("CREATE TABLE t2 LIKE t1 (EXCLUDING PARTITIONS, INCLUDING METADATA, EXCLUDING CONSTRAINTS)"),
            "CREATE TABLE t2 LIKE t1 (EXCLUDING PARTITIONS, INCLUDING METADATA, EXCLUDING CONSTRAINTS)");
}

TEST(ParserDdl, ComplexColumnTypes) {
  EXPECT_EQ(dump("CREATE TABLE t (a ARRAY<STRING>, b MAP<STRING, ARRAY<INT NOT NULL>>, c ROW<x INT, `y z` STRING>, "
                 "d ROW(x INT, y DOUBLE) NOT NULL, e MULTISET<BIGINT>, f INT ARRAY, g BYTES, h DECIMAL(38, 18))"),
            "CREATE TABLE t (a ARRAY<STRING>, b MAP<STRING, ARRAY<INT NOT NULL>>, c ROW<x INT, `y z` STRING>, d "
            "ROW<x INT, y DOUBLE> NOT NULL, e MULTISET<BIGINT>, f ARRAY<INT>, g BYTES, h DECIMAL(38, 18))");
}

TEST(ParserDdl, CreateView) {
  EXPECT_EQ(dump("CREATE VIEW v AS SELECT a FROM t"), "CREATE VIEW v AS SELECT a FROM t");
  EXPECT_EQ(dump("CREATE TEMPORARY VIEW IF NOT EXISTS v (x, `Y`) COMMENT 'c' AS SELECT a, b FROM t WHERE a > 1"),
            "CREATE TEMPORARY VIEW IF NOT EXISTS v (x, Y) COMMENT 'c' AS SELECT a, b FROM t WHERE (a > 1)");
  EXPECT_EQ(dump("CREATE VIEW v AS WITH c AS (SELECT 1 AS one) SELECT * FROM c"),
            "CREATE VIEW v AS WITH c AS (SELECT 1 AS one) SELECT * FROM c");
  EXPECT_EQ(dump("CREATE VIEW v AS VALUES (1), (2)"), "CREATE VIEW v AS VALUES (1), (2)");
  EXPECT_EQ(dump("CREATE OR REPLACE VIEW v AS SELECT 1"), "CREATE OR REPLACE VIEW v AS SELECT 1");
  EXPECT_EQ(error_of("CREATE OR REPLACE VIEW IF NOT EXISTS v AS SELECT 1"),
            "ParseError: line 1, column 38: OR REPLACE and IF NOT EXISTS cannot be combined");
  auto script = parse("CREATE VIEW v (a) AS\n  SELECT x FROM t");
  const auto* v = script.statements.at(0).as<ast::CreateView>();
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->query->pos, (SourcePosition{2, 3}));
}

TEST(ParserDdl, CreateFunction) {
  EXPECT_EQ(dump("CREATE FUNCTION f AS 'com.example.F'"), "CREATE FUNCTION f AS 'com.example.F' LANGUAGE JAVA");
  EXPECT_EQ(dump("CREATE TEMPORARY FUNCTION IF NOT EXISTS db.f AS 'com.example.F' LANGUAGE JAVA"),
            "CREATE TEMPORARY FUNCTION IF NOT EXISTS db.f AS 'com.example.F' LANGUAGE JAVA");
  EXPECT_EQ(dump("CREATE TEMPORARY SYSTEM FUNCTION g AS com.example.G LANGUAGE scala"),
            "CREATE TEMPORARY SYSTEM FUNCTION g AS 'com.example.G' LANGUAGE SCALA");
  EXPECT_EQ(dump("CREATE FUNCTION w(x INT, y DOUBLE) RETURNS DOUBLE AS 'mod.wasm', 'export_name' LANGUAGE wasm"),
            "CREATE FUNCTION w(x INT, y DOUBLE) RETURNS DOUBLE AS 'mod.wasm', 'export_name' LANGUAGE WASM");
}

TEST(ParserDdl, CreateFunctionLanguageSql) {
  // The seed's example, and PostgreSQL's clause order.
  auto script = parse(
      "CREATE FUNCTION with_tax(amount BIGINT) RETURNS BIGINT AS 'amount + amount / 10' LANGUAGE SQL;\n"
      "CREATE OR REPLACE FUNCTION label(x BIGINT, s STRING) RETURNS STRING LANGUAGE SQL\n"
      "  AS 'CASE WHEN x > 0 THEN s ELSE ''neg'' END'");
  ASSERT_EQ(script.statements.size(), 2u);
  const auto* f = script.statements[0].as<ast::CreateFunction>();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->language, "SQL");
  ASSERT_EQ(f->params.size(), 1u);
  EXPECT_EQ(f->params[0].name, "amount");
  EXPECT_EQ(f->params[0].type.name, "BIGINT");
  EXPECT_EQ(to_string(*f->returns), "BIGINT");
  EXPECT_EQ(ast::to_string(f->body), "(amount + (amount / 10))");
  const auto* g = script.statements[1].as<ast::CreateFunction>();
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(g->or_replace);
  EXPECT_EQ(g->definitions, (std::vector<std::string>{"CASE WHEN x > 0 THEN s ELSE 'neg' END"}));
  EXPECT_EQ(ast::to_string(g->body), "CASE WHEN (x > 0) THEN s ELSE 'neg' END");
  // Positions inside the body point into the string literal, '' escapes included.
  const auto* c = g->body->as<ast::Case>();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->otherwise->pos, (SourcePosition{3, 35}));
  EXPECT_EQ(error_of("CREATE FUNCTION f(x INT) RETURNS INT AS 'x +' LANGUAGE SQL"),
            "ParseError: line 1, column 44: syntax error at end of input");
  EXPECT_EQ(error_of("CREATE FUNCTION f(x INT) AS 'x + 1' LANGUAGE SQL"),
            "ParseError: line 1, column 49: a LANGUAGE SQL function needs RETURNS <type>");
}

TEST(ParserDdl, Drop) {
  EXPECT_EQ(dump("DROP TABLE t"), "DROP TABLE t");
  EXPECT_EQ(dump("DROP TABLE IF EXISTS db.t"), "DROP TABLE IF EXISTS db.t");
  EXPECT_EQ(dump("DROP TEMPORARY TABLE t"), "DROP TEMPORARY TABLE t");
  EXPECT_EQ(dump("DROP VIEW v"), "DROP VIEW v");
  EXPECT_EQ(dump("DROP TEMPORARY VIEW IF EXISTS v"), "DROP TEMPORARY VIEW IF EXISTS v");
  EXPECT_EQ(dump("DROP FUNCTION f"), "DROP FUNCTION f");
  EXPECT_EQ(dump("DROP FUNCTION IF EXISTS f, g"), "DROP FUNCTION IF EXISTS f, g");
  EXPECT_EQ(dump("DROP TEMPORARY SYSTEM FUNCTION f"), "DROP TEMPORARY SYSTEM FUNCTION f");
  auto script = parse("DROP VIEW v");
  EXPECT_EQ(script.statements[0].as<ast::Drop>()->kind, ast::Drop::Kind::View);
}

TEST(ParserDdl, AlterTable) {
  const Case cases[] = {
      {"ALTER TABLE t ADD c INT", "ALTER TABLE t ADD (c INT)"},
      {"ALTER TABLE t ADD COLUMN c2 BIGINT NOT NULL", "ALTER TABLE t ADD (c2 BIGINT NOT NULL)"},
      {"ALTER TABLE t ADD (c INT COMMENT 'x', d AS c + 1, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)",
       "ALTER TABLE t ADD (c INT COMMENT 'x', d AS (c + 1), WATERMARK FOR ts AS (ts - INTERVAL '1' SECOND))"},
      {"ALTER TABLE t ADD PRIMARY KEY (id) NOT ENFORCED", "ALTER TABLE t ADD (PRIMARY KEY (id) NOT ENFORCED)"},
      {"ALTER TABLE t ADD WATERMARK FOR ts AS ts", "ALTER TABLE t ADD (WATERMARK FOR ts AS ts)"},
      {"ALTER TABLE IF EXISTS t MODIFY c STRING NOT NULL", "ALTER TABLE IF EXISTS t MODIFY (c STRING NOT NULL)"},
      {"ALTER TABLE t MODIFY (a BIGINT, b AS a * 2)", "ALTER TABLE t MODIFY (a BIGINT, b AS (a * 2))"},
      {"ALTER TABLE t DROP c", "ALTER TABLE t DROP (c)"},
      {"ALTER TABLE t DROP COLUMN c", "ALTER TABLE t DROP (c)"},
      {"ALTER TABLE t DROP (a, b)", "ALTER TABLE t DROP (a, b)"},
      {"ALTER TABLE t DROP PRIMARY KEY", "ALTER TABLE t DROP PRIMARY KEY"},
      {"ALTER TABLE t DROP CONSTRAINT pk", "ALTER TABLE t DROP CONSTRAINT pk"},
      {"ALTER TABLE t DROP WATERMARK", "ALTER TABLE t DROP WATERMARK"},
      {"ALTER TABLE t ALTER COLUMN a TYPE BIGINT", "ALTER TABLE t ALTER COLUMN a TYPE BIGINT"},
      {"ALTER TABLE t ALTER a SET DATA TYPE DECIMAL(20, 4)", "ALTER TABLE t ALTER COLUMN a TYPE DECIMAL(20, 4)"},
      {"ALTER TABLE t SET ('k' = 'v', 'k2' = 'v2')", "ALTER TABLE t SET ('k' = 'v', 'k2' = 'v2')"},
      {"ALTER TABLE t SET (primary_key = 'id')", "ALTER TABLE t SET ('primary_key' = 'id')"},
      {"ALTER TABLE t RESET ('k', k2, scan.startup.mode)", "ALTER TABLE t RESET ('k', 'k2', 'scan.startup.mode')"},
      {"ALTER TABLE t RENAME a TO b", "ALTER TABLE t RENAME a TO b"},
      {"ALTER TABLE t RENAME COLUMN `A` TO `B b`", "ALTER TABLE t RENAME A TO `B b`"},
      {"ALTER TABLE t RENAME TO db.t2", "ALTER TABLE t RENAME TO db.t2"},
      {"ALTER TABLE t SET (primary_key = 'b'), DROP COLUMN a, ADD COLUMN c INT",
       "ALTER TABLE t SET ('primary_key' = 'b'), DROP (a), ADD (c INT)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.sql);
    EXPECT_EQ(dump(c.sql), c.expected);
  }
  auto script = parse("ALTER TABLE t ADD c INT,\n  RENAME a TO b");
  const auto* alter = script.statements[0].as<ast::AlterTable>();
  ASSERT_NE(alter, nullptr);
  ASSERT_EQ(alter->actions.size(), 2u);
  EXPECT_EQ(alter->actions[0].kind, ast::AlterAction::Kind::Add);
  EXPECT_EQ(alter->actions[1].kind, ast::AlterAction::Kind::RenameColumn);
  EXPECT_EQ(alter->actions[1].pos, (SourcePosition{2, 3}));
}

TEST(ParserDdl, UnsupportedDdlIsATranslationErrorWithPosition) {
  EXPECT_EQ(error_of("CREATE TABLE t (a INT, PRIMARY KEY (a))"),
            "TranslationError: line 1, column 39: PRIMARY KEY must be declared NOT ENFORCED (Flink does not enforce keys)");
  EXPECT_EQ(error_of("CREATE TABLE t (a INT) WITH ('connector' = 'x') AS SELECT 1"),
            "TranslationError: line 1, column 49: CREATE TABLE ... AS SELECT is not supported (create the table, then "
            "INSERT INTO it)");
  EXPECT_EQ(error_of("CREATE TABLE t (a INT)\nDISTRIBUTED BY (a)"),
            "TranslationError: line 2, column 1: DISTRIBUTED BY is not supported");
  EXPECT_EQ(error_of("CREATE OR REPLACE TABLE t (a INT)"),
            "TranslationError: line 1, column 19: CREATE OR REPLACE is only supported for views and functions");
  EXPECT_EQ(error_of("CREATE DATABASE d"), "TranslationError: line 1, column 8: CREATE DATABASE is not supported");
  EXPECT_EQ(error_of("CREATE CATALOG c WITH ('type' = 'x')"),
            "TranslationError: line 1, column 8: CREATE CATALOG is not supported");
  EXPECT_EQ(error_of("CREATE INDEX i ON t (a)"), "TranslationError: line 1, column 1: CREATE INDEX statements are not supported");
  EXPECT_EQ(error_of("CREATE SEQUENCE s"), "TranslationError: line 1, column 1: CREATE SEQUENCE statements are not supported");
  EXPECT_EQ(error_of("DROP DATABASE d"), "TranslationError: line 1, column 6: DROP DATABASE is not supported");
  EXPECT_EQ(error_of("DROP TABLE t CASCADE"), "TranslationError: line 1, column 14: DROP ... CASCADE / RESTRICT is not supported");
  EXPECT_EQ(error_of("ALTER TABLE t ALTER COLUMN a SET NOT NULL"),
            "TranslationError: line 1, column 30: ALTER COLUMN ... SET NOT NULL / DEFAULT is not supported (clink does "
            "not enforce column constraints)");
  EXPECT_EQ(error_of("ALTER TABLE t ALTER COLUMN a TYPE INT USING a::int"),
            "TranslationError: line 1, column 39: ALTER COLUMN ... TYPE ... USING is not supported (there are no "
            "stored rows to convert)");
  EXPECT_EQ(error_of("ALTER TABLE t ADD c INT FIRST"),
            "TranslationError: line 1, column 25: column positions (FIRST / AFTER) are not supported");
  EXPECT_EQ(error_of("CREATE FUNCTION f AS 'C' USING JAR '/x.jar'"),
            "TranslationError: line 1, column 26: CREATE FUNCTION ... USING JAR is not supported");
  EXPECT_EQ(error_of("CREATE TABLE t (a RAW('x', 'y'))"), "TranslationError: line 1, column 19: the RAW data type is not supported");
}

TEST(ParserDdl, DdlSyntaxErrors) {
  EXPECT_EQ(error_of("CREATE TABLE t (a INT,)"), "ParseError: line 1, column 23: expected a column name but found ')'");
  EXPECT_EQ(error_of("CREATE TABLE t (a INT) WITH ('k' 'v')"), "ParseError: line 1, column 34: expected '=' but found string 'v'");
  EXPECT_EQ(error_of("CREATE TABLE t (a INT, WATERMARK FOR a AS)"), "ParseError: line 1, column 42: expected an expression but found ')'");
  EXPECT_EQ(error_of("CREATE TABLE t (a INT, b AS a +)"), "ParseError: line 1, column 32: syntax error at end of input");
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY NOT ENFORCED, PRIMARY KEY (a) NOT ENFORCED)"),
            "ParseError: line 1, column 49: a table can have only one PRIMARY KEY");
  EXPECT_EQ(error_of("CREATE TABLE t (a INT) LIKE s (INCLUDING EVERYTHING)"),
            "ParseError: line 1, column 42: expected a LIKE feature (ALL, CONSTRAINTS, GENERATED, METADATA, OPTIONS, "
            "PARTITIONS, WATERMARKS) but found 'EVERYTHING'");
  EXPECT_EQ(error_of("CREATE VIEW v SELECT 1"), "ParseError: line 1, column 15: expected 'AS' but found 'SELECT'");
  EXPECT_EQ(error_of("DROP TABLE"), "ParseError: line 1, column 11: expected a name but found end of input");
  EXPECT_EQ(error_of("ALTER TABLE t FROB x"),
            "ParseError: line 1, column 15: expected ADD, MODIFY, DROP, ALTER, SET, RESET or RENAME but found 'FROB'");
}

}  // namespace
}  // namespace clink::test
