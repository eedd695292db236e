// Catalog and DDL: CREATE TABLE (LIKE, IF NOT EXISTS, seed options), views, SQL
// functions, DROP, ALTER with dependent views, SHOW / DESCRIBE, persistence.
#include <filesystem>

#include "plan_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

const char* kOrders = R"(CREATE TABLE orders (
  `user` BIGINT NOT NULL,
  product VARCHAR(32),
  amount INT,
  ts TIMESTAMP(3),
  price AS amount * 2,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND,
  PRIMARY KEY (`user`) NOT ENFORCED
) WITH ('connector' = 'datagen', 'rows-per-second' = '10'))";

std::string scratch_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("clink_catalog_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir.string();
}

}  // namespace

TEST(CatalogDdl, ShowCreateTableInFlinkFormat) {
  PlanFixture f;
  f.ddl(kOrders);
  EXPECT_GOLDEN(f.explain("SHOW CREATE TABLE orders"), R"(CREATE TABLE `default_catalog`.`default_database`.`orders` (
  `user` BIGINT NOT NULL,
  `product` VARCHAR(32),
  `amount` INT,
  `ts` TIMESTAMP(3),
  `price` AS `amount` * 2,
  WATERMARK FOR `ts` AS `ts` - INTERVAL '1' SECOND,
  CONSTRAINT `PK_user` PRIMARY KEY (`user`) NOT ENFORCED
)
WITH (
  'connector' = 'datagen',
  'rows-per-second' = '10'
)
)");
}

TEST(CatalogDdl, DescribeInFlinkColumns) {
  PlanFixture f;
  f.ddl(kOrders);
  EXPECT_GOLDEN(f.explain("DESCRIBE orders"), R"(+---------+------------------------+-------+-----------+-----------------+----------------------------+
|    name |                   type |  null |       key |          extras |                  watermark |
+---------+------------------------+-------+-----------+-----------------+----------------------------+
|    user |                 BIGINT | FALSE | PRI(user) |                 |                            |
| product |            VARCHAR(32) |  TRUE |           |                 |                            |
|  amount |                    INT |  TRUE |           |                 |                            |
|      ts | TIMESTAMP(3) *ROWTIME* |  TRUE |           |                 | `ts` - INTERVAL '1' SECOND |
|   price |                    INT |  TRUE |           | AS `amount` * 2 |                            |
+---------+------------------------+-------+-----------+-----------------+----------------------------+
5 rows in set
)");
}

TEST(CatalogDdl, ShowTablesViewsAndUserFunctions) {
  PlanFixture f;
  f.ddl(kOrders);
  f.ddl("CREATE TABLE b (x INT) WITH ('connector' = 'blackhole')");
  f.ddl("CREATE VIEW v AS SELECT product FROM orders");
  f.ddl("CREATE FUNCTION with_tax(amount BIGINT) RETURNS BIGINT AS 'amount + amount / 10' LANGUAGE SQL");
  EXPECT_GOLDEN(f.explain("SHOW TABLES"), R"(+------------+
| table name |
+------------+
|          b |
|     orders |
|          v |
+------------+
3 rows in set
)");
  EXPECT_GOLDEN(f.explain("SHOW VIEWS"), R"(+-----------+
| view name |
+-----------+
|         v |
+-----------+
1 row in set
)");
  EXPECT_GOLDEN(f.explain("SHOW USER FUNCTIONS"), R"(+---------------+
| function name |
+---------------+
|      with_tax |
+---------------+
1 row in set
)");
}

TEST(CatalogDdl, CreateTableTwiceFailsUnlessIfNotExists) {
  PlanFixture f;
  f.ddl(kOrders);
  EXPECT_EQ(f.error("CREATE TABLE IF NOT EXISTS orders (a INT) WITH ('connector' = 'datagen')"), "");
  EXPECT_EQ(f.catalog.table("orders")->columns.size(), 5u);
  EXPECT_GOLDEN(f.error("CREATE TABLE orders (a INT) WITH ('connector' = 'datagen')"), R"(line 1, column 1: table `orders` already exists)");
}

TEST(CatalogDdl, TypeErrorsCarryPositions) {
  PlanFixture f;
  EXPECT_GOLDEN(f.error("CREATE TABLE t (a INT, b AS a + 'x') WITH ('connector' = 'datagen')"), R"(line 1, column 29: table `t`: computed column `b`: Cannot apply + to arguments of type +(INT, CHAR(1) NOT NULL). Supported signatures:
  +(NUMERIC, NUMERIC)
  +(NUMERIC)
  +(TEMPORAL, INTERVAL))");
  EXPECT_GOLDEN(f.error("CREATE TABLE t (a INT, WATERMARK FOR a AS a) WITH ('connector' = 'datagen')"), R"(line 1, column 24: table `t`: the rowtime column `a` must be TIMESTAMP(p) or TIMESTAMP_LTZ(p) with p from 0 to 3, got INT)");
  EXPECT_GOLDEN(f.error("CREATE TABLE t (a INT, b INT, a STRING) WITH ('connector' = 'datagen')"), R"(line 1, column 31: table `t`: duplicate column `a`)");
  EXPECT_GOLDEN(f.error("CREATE TABLE t (a INT, PRIMARY KEY (z) NOT ENFORCED) WITH ('connector' = 'datagen')"), R"(line 1, column 24: table `t`: the primary key column `z` does not exist)");
}

TEST(CatalogDdl, SeedOptionsBecomeTheWatermark) {
  PlanFixture f;
  f.ddl("CREATE TABLE clicks (url STRING, ts TIMESTAMP(3)) WITH ('connector' = 'filesystem', 'path' = '/x', "
        "'format' = 'json', 'event_time_column' = 'ts', 'watermark_lag_ms' = '2500', 'idle_timeout_ms' = '1000')");
  const TableDef* t = f.catalog.table("clicks");
  ASSERT_TRUE(t->watermark.has_value());
  EXPECT_EQ(t->watermark->rowtime_column, "ts");
  EXPECT_EQ(t->watermark->expr_sql, "ts - INTERVAL '2.500' SECOND");
  EXPECT_EQ(t->option("scan.watermark.idle-timeout"), "1000 ms");
  EXPECT_GOLDEN(f.error("CREATE TABLE bad (ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen', "
                        "'event_time_column' = 'ts')"),
                R"(line 1, column 1: table `bad` declares both WATERMARK FOR and 'event_time_column')");
}

TEST(CatalogDdl, LikeMergesFeaturesAsFlink) {
  PlanFixture f;
  f.ddl(kOrders);
  // Flink's documentation example: a new table reusing the schema with other options.
  f.ddl(R"(CREATE TABLE orders_copy (
      extra STRING,
      WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
    ) WITH ('rows-per-second' = '100')
    LIKE orders (OVERWRITING WATERMARKS OVERWRITING OPTIONS EXCLUDING GENERATED))");
  EXPECT_GOLDEN(f.explain("SHOW CREATE TABLE orders_copy"), R"(CREATE TABLE `default_catalog`.`default_database`.`orders_copy` (
  `user` BIGINT NOT NULL,
  `product` VARCHAR(32),
  `amount` INT,
  `ts` TIMESTAMP(3),
  `extra` VARCHAR(2147483647),
  WATERMARK FOR `ts` AS `ts` - INTERVAL '5' SECOND,
  CONSTRAINT `PK_user` PRIMARY KEY (`user`) NOT ENFORCED
)
WITH (
  'connector' = 'datagen',
  'rows-per-second' = '100'
)
)");
  EXPECT_GOLDEN(f.error("CREATE TABLE c2 (WATERMARK FOR ts AS ts) LIKE orders"), R"(line 1, column 42: a watermark is defined in both `orders` and the new table (use OVERWRITING WATERMARKS))");
  EXPECT_GOLDEN(f.error("CREATE TABLE c3 (amount INT) LIKE orders"), R"(line 1, column 30: a column named `amount` already exists in the base table `orders`)");
  EXPECT_GOLDEN(f.error("CREATE TABLE c4 (x INT) WITH ('connector' = 'print') LIKE orders (INCLUDING OPTIONS)"), R"(line 1, column 54: option 'connector' is defined in both `orders` and the new table (use OVERWRITING OPTIONS))");
}

TEST(CatalogDdl, DropIsKindChecked) {
  PlanFixture f;
  f.ddl(kOrders);
  f.ddl("CREATE VIEW v AS SELECT product FROM orders");
  EXPECT_GOLDEN(f.error("DROP VIEW orders"), R"(line 1, column 1: DROP VIEW orders: `orders` is a table, not a view (use DROP TABLE orders))");
  EXPECT_GOLDEN(f.error("DROP TABLE v"), R"(line 1, column 1: DROP TABLE v: `v` is a view, not a table (use DROP VIEW v))");
  EXPECT_GOLDEN(f.error("DROP TABLE missing"), R"(line 1, column 1: table `missing` does not exist)");
  EXPECT_EQ(f.error("DROP TABLE IF EXISTS missing"), "");
  EXPECT_EQ(f.error("DROP VIEW v"), "");
  EXPECT_EQ(f.error("DROP TABLE orders"), "");
  EXPECT_TRUE(f.catalog.table_names().empty());
  EXPECT_TRUE(f.catalog.view_names().empty());
}

TEST(CatalogDdl, ViewsWithAliasesAndCycleCheck) {
  PlanFixture f;
  f.ddl(kOrders);
  f.ddl("CREATE VIEW v (p, n) AS SELECT product, amount FROM orders");
  EXPECT_GOLDEN(f.explain("DESCRIBE v"), R"(+------+-------------+------+-----+--------+-----------+
| name |        type | null | key | extras | watermark |
+------+-------------+------+-----+--------+-----------+
|    p | VARCHAR(32) | TRUE |     |        |           |
|    n |         INT | TRUE |     |        |           |
+------+-------------+------+-----+--------+-----------+
2 rows in set
)");
  EXPECT_GOLDEN(f.explain("SHOW CREATE VIEW v"), R"(CREATE VIEW `default_catalog`.`default_database`.`v` (
  `p`,
  `n`
)
AS SELECT product, amount FROM orders
)");
  EXPECT_GOLDEN(f.error("CREATE VIEW w (a) AS SELECT product, amount FROM orders"), R"(line 1, column 1: view `w`: 1 column aliases for a query of 2 columns)");
  EXPECT_GOLDEN(f.error("CREATE VIEW w AS SELECT product, product FROM orders"), R"(line 1, column 1: view `w`: duplicate column name `product` (give the columns aliases))");
  // A view referring to itself through another view: x -> y -> x.
  f.ddl("CREATE TABLE x (a INT) WITH ('connector' = 'datagen')");
  f.ddl("CREATE VIEW y AS SELECT a FROM x");
  f.ddl("DROP TABLE x");
  EXPECT_GOLDEN(f.error("CREATE VIEW x AS SELECT a FROM y"), R"(line 1, column 1: view `x` would reference itself (a cycle through its query))");
}

TEST(CatalogDdl, SqlFunctionsAreCheckedAndInlined) {
  PlanFixture f;
  f.ddl(kOrders);
  f.ddl("CREATE FUNCTION with_tax(amount BIGINT) RETURNS BIGINT AS 'amount + amount / 10' LANGUAGE SQL");
  EXPECT_GOLDEN(f.bound("SELECT with_tax(amount) AS t FROM orders"), R"(Calc(select=[+(CAST(amount AS BIGINT), /(CAST(amount AS BIGINT), CAST(10 AS BIGINT))) AS t])
  WatermarkAssigner(rowtime=[ts], watermark=[-(ts, +0 00:00:01.000)])
    Calc(select=[user, product, amount, ts, *(amount, 2) AS price])
      TableSourceScan(table=[orders], fields=[user, product, amount, ts])
)");
  EXPECT_GOLDEN(f.error("CREATE FUNCTION bad(x INT) RETURNS INT AS 'y + 1' LANGUAGE SQL"), R"(line 1, column 1: CREATE FUNCTION bad: Column 'y' not found in any table)");
  EXPECT_GOLDEN(f.error("CREATE FUNCTION with_tax(x INT) RETURNS INT AS 'x' LANGUAGE SQL"), R"(line 1, column 1: function `with_tax` already exists)");
  EXPECT_EQ(f.error("CREATE OR REPLACE FUNCTION with_tax(x INT) RETURNS INT AS 'x * 2' LANGUAGE SQL"), "");
  EXPECT_GOLDEN(f.error("SELECT with_tax(product) FROM orders"), R"(line 1, column 17: function with_tax: argument `x` takes INT, got VARCHAR(32))");
}

TEST(CatalogDdl, AlterTableAppliesActionsInOrder) {
  PlanFixture f;
  f.ddl(kOrders);
  f.ddl("ALTER TABLE orders ADD (note STRING COMMENT 'free text')");
  f.ddl("ALTER TABLE orders MODIFY (amount BIGINT)");
  f.ddl("ALTER TABLE orders RENAME product TO item");
  f.ddl("ALTER TABLE orders SET ('rows-per-second' = '5', 'fields.item.length' = '3')");
  f.ddl("ALTER TABLE orders RESET ('fields.item.length')");
  f.ddl("ALTER TABLE orders DROP note");
  EXPECT_GOLDEN(f.explain("SHOW CREATE TABLE orders"), R"(CREATE TABLE `default_catalog`.`default_database`.`orders` (
  `user` BIGINT NOT NULL,
  `item` VARCHAR(32),
  `amount` BIGINT,
  `ts` TIMESTAMP(3),
  `price` AS `amount` * 2,
  WATERMARK FOR `ts` AS `ts` - INTERVAL '1' SECOND,
  CONSTRAINT `PK_user` PRIMARY KEY (`user`) NOT ENFORCED
)
WITH (
  'connector' = 'datagen',
  'rows-per-second' = '5'
)
)");
  EXPECT_GOLDEN(f.error("ALTER TABLE orders DROP ts"), R"(line 1, column 20: ALTER TABLE orders: column `ts` is the watermark's rowtime column)");
  EXPECT_GOLDEN(f.error("ALTER TABLE orders DROP amount"), R"(line 1, column 1: ALTER TABLE orders: table `orders`: computed column `price`: Column 'amount' not found in any table)");
  EXPECT_GOLDEN(f.error("ALTER TABLE orders DROP `user`"), R"(line 1, column 20: ALTER TABLE orders: column `user` is part of the primary key)");
}

TEST(CatalogDdl, AlterTableRollsBackWhenADependentViewBreaks) {
  PlanFixture f;
  f.ddl(kOrders);
  f.ddl("CREATE VIEW by_product AS SELECT product, SUM(amount) AS total FROM orders GROUP BY product");
  EXPECT_GOLDEN(f.error("ALTER TABLE orders RENAME product TO item"), R"(line 1, column 1: ALTER TABLE orders rolled back: the view `by_product` no longer binds: Column 'product' not found in any table; drop or recreate the view first)");
  EXPECT_GOLDEN(f.error("ALTER TABLE orders RENAME TO orders2"), R"(line 1, column 1: ALTER TABLE orders rolled back: the view `by_product` references `orders` by name; drop or recreate the view first)");
  EXPECT_TRUE(f.catalog.table("orders")->column("product") != nullptr);
  EXPECT_TRUE(f.catalog.table("orders2") == nullptr);
  // A compatible change re-binds the view and updates its column types.
  f.ddl("ALTER TABLE orders MODIFY (amount BIGINT)");
  EXPECT_EQ(f.catalog.view("by_product")->schema.to_string(), "(`product` VARCHAR(32), `total` BIGINT)");
}

// CREATE VIEW binds the views it reads as they were bound (a chain of views is linear to
// define) only while no table, function or model changed since; then it expands them.
TEST(CatalogDdl, AViewOverViewsSeesTheCatalogAsItIsNow) {
  PlanFixture f;
  f.ddl(kOrders);
  f.ddl("CREATE VIEW by_product AS SELECT product, SUM(amount) AS total FROM orders GROUP BY product");
  f.ddl("CREATE VIEW big AS SELECT product, total FROM by_product WHERE total > 10");
  f.ddl("CREATE VIEW big_totals AS SELECT total FROM big");
  EXPECT_EQ(f.catalog.view("big_totals")->schema.to_string(), "(`total` INT)");
  f.ddl("ALTER TABLE orders MODIFY (amount BIGINT)");
  f.ddl("CREATE VIEW big_totals2 AS SELECT total FROM big");
  EXPECT_EQ(f.catalog.view("big_totals2")->schema.to_string(), "(`total` BIGINT)");
  f.ddl("CREATE TABLE x (a INT) WITH ('connector' = 'datagen')");
  f.ddl("CREATE VIEW y AS SELECT a FROM x");
  f.ddl("DROP TABLE x");
  EXPECT_GOLDEN(f.error("CREATE VIEW z AS SELECT a FROM y"), R"(line 1, column 32: view `y` cannot be expanded: line 1, column 32: Object 'x' not found)");
  f.ddl("CREATE TABLE x (a STRING) WITH ('connector' = 'datagen')");
  f.ddl("CREATE VIEW z AS SELECT a FROM y");
  EXPECT_EQ(f.catalog.view("z")->schema.to_string(), "(`a` STRING)");
}

TEST(CatalogDdl, PersistsOneJsonFilePerObjectAndReloads) {
  std::string dir = scratch_dir("persist");
  {
    PlanFixture f;
    f.catalog.set_persistence_dir(dir);
    f.ddl(kOrders);
    f.ddl("CREATE VIEW v (p, a) AS SELECT product, amount FROM orders WHERE amount > 3");
    f.ddl("CREATE TEMPORARY VIEW t AS SELECT product FROM orders");
    f.ddl("CREATE FUNCTION twice(x INT) RETURNS INT AS 'x * 2' LANGUAGE SQL");
  }
  EXPECT_TRUE(std::filesystem::exists(dir + "/tables/orders.json"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/views/v.json"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/views/t.json"));  // temporary objects are not persisted
  EXPECT_TRUE(std::filesystem::exists(dir + "/functions/TWICE.json"));
  PlanFixture g;
  g.catalog.load_from_dir(dir);
  PlanFixture h;
  h.ddl(kOrders);
  EXPECT_EQ(g.explain("SHOW CREATE TABLE orders"), h.explain("SHOW CREATE TABLE orders"));
  EXPECT_GOLDEN(g.explain("SHOW CREATE VIEW v"), R"(CREATE VIEW `default_catalog`.`default_database`.`v` (
  `p`,
  `a`
)
AS SELECT product, amount FROM orders WHERE (amount > 3)
)");
  EXPECT_GOLDEN(g.bound("SELECT twice(a) AS y FROM v"), R"(Calc(select=[*(a, 2) AS y])
  Calc(select=[product AS p, amount AS a])
    Calc(select=[product, amount], where=[>(amount, 3)])
      WatermarkAssigner(rowtime=[ts], watermark=[-(ts, +0 00:00:01.000)])
        Calc(select=[user, product, amount, ts, *(amount, 2) AS price])
          TableSourceScan(table=[orders], fields=[user, product, amount, ts])
)");
  g.catalog.set_persistence_dir(dir);
  g.ddl("DROP VIEW v");
  EXPECT_FALSE(std::filesystem::exists(dir + "/views/v.json"));
  std::filesystem::remove_all(dir);
}

// A table name is never a path: `../../x` is written as a file inside the catalog
// directory (issue 16, item 8), reloads under its name, and DROP removes that file.
TEST(CatalogDdl, ObjectNamesAreNotPaths) {
  std::string dir = scratch_dir("names");
  {
    PlanFixture f;
    f.catalog.set_persistence_dir(dir);
    f.ddl("CREATE TABLE `../../x` (a INT) WITH ('connector' = 'datagen')");
  }
  EXPECT_TRUE(std::filesystem::exists(dir + "/tables/%2E.%2F..%2Fx.json"));
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(dir).parent_path() / "x.json"));
  PlanFixture g;
  g.catalog.load_from_dir(dir);
  EXPECT_NE(g.catalog.table("../../x"), nullptr);
  g.catalog.set_persistence_dir(dir);
  g.ddl("DROP TABLE `../../x`");
  EXPECT_FALSE(std::filesystem::exists(dir + "/tables/%2E.%2F..%2Fx.json"));
  std::filesystem::remove_all(dir);
}

TEST(CatalogDdl, AnalyzeNeedsARunnerAndABoundedSource) {
  PlanFixture f;
  f.ddl(kOrders);
  f.ddl("CREATE TABLE files (a INT, b STRING) WITH ('connector' = 'filesystem', 'path' = '/x', 'format' = 'csv')");
  EXPECT_GOLDEN(f.error("ANALYZE TABLE orders COMPUTE STATISTICS"), R"(line 1, column 1: ANALYZE TABLE orders: the datagen source is unbounded (ANALYZE runs bounded sources: filesystem without 'source.monitor-interval', datagen with 'number-of-rows', kafka with 'scan.bounded.mode', upsert-kafka with 'scan.bounded.mode', jdbc always))");
  EXPECT_GOLDEN(f.error("ANALYZE TABLE files COMPUTE STATISTICS FOR ALL COLUMNS"), R"(line 1, column 1: ANALYZE TABLE files: no job runner is available here to read the source; declare 'statistics.row-count' (and 'statistics.columns.<col>.ndv') in the table options)");
  f.runner.set_analyzer([](const TableDef& t, const std::vector<std::string>& cols) {
    TableStatistics s;
    s.row_count = 42;
    for (const auto& c : cols) s.columns[c].ndv = static_cast<std::int64_t>(t.name.size() + c.size());
    return s;
  });
  f.ddl("ANALYZE TABLE files COMPUTE STATISTICS FOR COLUMNS a");
  auto stats = f.catalog.table("files")->statistics();
  EXPECT_TRUE(stats.analyzed);
  EXPECT_EQ(stats.row_count, 42);
  EXPECT_EQ(stats.columns.at("a").ndv, 6);
}

}  // namespace clink::test
