// Optimiser passes and EXPLAIN: constant folding, predicate and projection pushdown,
// cost-based join reordering with declared statistics, row estimates, changelog modes.
#include "clink/sql/optimizer/join_reorder.hpp"
#include "clink/sql/planner/cardinality.hpp"
#include "plan_test_util.hpp"

using namespace clink::sql;
using namespace clink::sql::testing;

namespace {

struct Tables : PlanFixture {
  Tables() {
    ddl(R"(CREATE TABLE orders (
        id BIGINT, customer BIGINT, product STRING, amount INT, ts TIMESTAMP(3),
        WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
      ) WITH ('connector' = 'filesystem', 'path' = '/data/orders', 'format' = 'json',
              'statistics.row-count' = '100000', 'statistics.columns.product.ndv' = '50',
              'statistics.columns.customer.ndv' = '5000');
      CREATE TABLE customers (id BIGINT, name STRING, country STRING)
        WITH ('connector' = 'filesystem', 'path' = '/data/customers', 'format' = 'json',
              'statistics.row-count' = '5000', 'statistics.columns.id.ndv' = '5000',
              'statistics.columns.country.ndv' = '20');
      CREATE TABLE countries (code STRING, region STRING)
        WITH ('connector' = 'filesystem', 'path' = '/data/countries', 'format' = 'json',
              'statistics.row-count' = '20', 'statistics.columns.code.ndv' = '20');
      CREATE TABLE gen (a INT, b STRING, c DOUBLE) WITH ('connector' = 'datagen'))");
  }
};

}  // namespace

TEST(PlanOptimizer, FoldsConstantsAndDropsTrueFilters) {
  Tables f;
  EXPECT_GOLDEN(f.optimized("SELECT a + (2 * 3) AS x, CAST('7' AS INT) AS y FROM gen WHERE 1 = 1 AND a > 10 - 4"),
                R"(Calc(select=[+(a, 6) AS x, 7 AS y], where=[>(a, 6)])
  TableSourceScan(table=[gen], fields=[a, b, c])
)");
}

TEST(PlanOptimizer, PushesFiltersThroughProjectionsAndIntoJoinSides) {
  Tables f;
  EXPECT_GOLDEN(f.optimized(R"(SELECT * FROM (SELECT a * 2 AS a2, b FROM gen) AS s WHERE a2 > 10 AND b = 'x')"), R"(Calc(select=[*(a, 2) AS a2, b], where=[AND(>(*(a, 2), 10), =(b, 'x'))])
  TableSourceScan(table=[gen], fields=[a, b, c])
)");
  EXPECT_GOLDEN(f.optimized(R"(SELECT o.id, c.name FROM orders o JOIN customers c ON o.customer = c.id
    WHERE c.country = 'NL' AND o.amount > 100 AND o.amount < c.id)"),
                R"(Calc(select=[id, name])
  Join(joinType=[InnerJoin], where=[AND(<(CAST(amount AS BIGINT), id), =(customer, id))], select=[id, customer, amount, ts, id0, name, country], leftKeys=[customer], rightKeys=[id])
    Calc(select=[id, customer, amount, ts], where=[>(amount, 100)])
      WatermarkAssigner(rowtime=[ts], watermark=[-(ts, +0 00:00:05.000)])
        TableSourceScan(table=[orders], fields=[id, customer, amount, ts])
    Calc(select=[id, name, country], where=[=(country, 'NL')])
      TableSourceScan(table=[customers], fields=[id, name, country])
)");
  EXPECT_GOLDEN(f.optimized(R"(SELECT o.id, c.name FROM orders o LEFT JOIN customers c ON o.customer = c.id
    AND c.country = 'NL' WHERE c.name = 'x' AND o.amount > 1)"),
                R"(Calc(select=[id, name], where=[=(name, 'x')])
  Join(joinType=[LeftOuterJoin], where=[=(customer, id)], select=[id, customer, amount, ts, id0, name, country], leftKeys=[customer], rightKeys=[id])
    Calc(select=[id, customer, amount, ts], where=[>(amount, 1)])
      WatermarkAssigner(rowtime=[ts], watermark=[-(ts, +0 00:00:05.000)])
        TableSourceScan(table=[orders], fields=[id, customer, amount, ts])
    Calc(select=[id, name, country], where=[=(country, 'NL')])
      TableSourceScan(table=[customers], fields=[id, name, country])
)");
}

TEST(PlanOptimizer, PushesFiltersBelowGroupByKeysAndIntoUnionInputs) {
  Tables f;
  EXPECT_GOLDEN(f.optimized(R"(SELECT * FROM (SELECT b, COUNT(*) AS n FROM gen GROUP BY b) AS s WHERE b <> 'z' AND n > 2)"),
                R"(Calc(select=[b, n], where=[>(n, 2)])
  GroupAggregate(groupBy=[b], select=[b, COUNT(*) AS n])
    Calc(select=[b], where=[<>(b, 'z')])
      TableSourceScan(table=[gen], fields=[a, b, c])
)");
  EXPECT_GOLDEN(f.optimized(R"(SELECT * FROM (SELECT a FROM gen UNION ALL SELECT amount FROM orders) AS s WHERE a > 5)"),
                R"(Union(all=[true], union=[a])
  Calc(select=[a], where=[>(a, 5)])
    TableSourceScan(table=[gen], fields=[a, b, c])
  Calc(select=[amount], where=[>(amount, 5)])
    WatermarkAssigner(rowtime=[ts], watermark=[-(ts, +0 00:00:05.000)])
      TableSourceScan(table=[orders], fields=[amount, ts])
)");
}

TEST(PlanOptimizer, ProjectionPushdownNarrowsFilesystemScans) {
  Tables f;
  EXPECT_GOLDEN(f.optimized("SELECT product FROM orders WHERE amount > 3"), R"(Calc(select=[product], where=[>(amount, 3)])
  WatermarkAssigner(rowtime=[ts], watermark=[-(ts, +0 00:00:05.000)])
    TableSourceScan(table=[orders], fields=[product, amount, ts])
)");
  // datagen generates all its fields: the scan keeps them, a Calc narrows.
  EXPECT_GOLDEN(f.optimized("SELECT b FROM gen"), R"(Calc(select=[b])
  TableSourceScan(table=[gen], fields=[a, b, c])
)");
  EXPECT_GOLDEN(f.optimized("SELECT COUNT(*) AS n FROM customers"), R"(GroupAggregate(groupBy=[], select=[COUNT(*) AS n])
  Calc(select=[])
    TableSourceScan(table=[customers], fields=[id])
)");
}

TEST(PlanOptimizer, ReordersInnerJoinsByDeclaredStatistics) {
  Tables f;
  // Written as orders x customers x countries; joining the small dimension tables first
  // is cheaper than joining 100000 orders first.
  const char* q = R"(SELECT o.id, c.name, k.region FROM orders o
    JOIN customers c ON o.customer = c.id
    JOIN countries k ON c.country = k.code)";
  EXPECT_GOLDEN(f.optimized(q), R"(Calc(select=[id, name, region])
  Join(joinType=[InnerJoin], where=[=(customer, id0)], select=[id, customer, ts, id0, name, country, code, region], leftKeys=[customer], rightKeys=[id0])
    WatermarkAssigner(rowtime=[ts], watermark=[-(ts, +0 00:00:05.000)])
      TableSourceScan(table=[orders], fields=[id, customer, ts])
    Join(joinType=[InnerJoin], where=[=(country, code)], select=[id0, name, country, code, region], leftKeys=[country], rightKeys=[code])
      TableSourceScan(table=[customers], fields=[id, name, country])
      TableSourceScan(table=[countries], fields=[code, region])
)");
  EXPECT_GOLDEN(f.explain(std::string("EXPLAIN ") + q), R"(== Optimized Plan ==
Sink(table=[select_1], fields=[id, name, region]) [rows=100000, changelog=insert-only]
  Calc(select=[id, name, region]) [rows=100000, changelog=insert-only]
    Join(joinType=[InnerJoin], where=[=(customer, id0)], select=[id, customer, ts, id0, name, country, code, region], leftKeys=[customer], rightKeys=[id0]) [rows=100000, changelog=insert-only]
      WatermarkAssigner(rowtime=[ts], watermark=[-(ts, +0 00:00:05.000)]) [rows=100000, changelog=insert-only]
        TableSourceScan(table=[orders], fields=[id, customer, ts]) [rows=100000, changelog=insert-only]
      Join(joinType=[InnerJoin], where=[=(country, code)], select=[id0, name, country, code, region], leftKeys=[country], rightKeys=[code]) [rows=5000, changelog=insert-only]
        TableSourceScan(table=[customers], fields=[id, name, country]) [rows=5000, changelog=insert-only]
        TableSourceScan(table=[countries], fields=[code, region]) [rows=20, changelog=insert-only]
)");
}

TEST(PlanOptimizer, KeepsTheWrittenOrderWhenItIsCheapest) {
  Tables f;
  const char* q = R"(SELECT k.region, c.name FROM countries k
    JOIN customers c ON c.country = k.code
    JOIN orders o ON o.customer = c.id)";
  std::string plan = f.optimized(q);
  EXPECT_EQ(plan.find("Calc(select=[region, name])\n  Join(joinType=[InnerJoin], where=[=(customer, id)]"), 0u) << plan;
}

TEST(PlanOptimizer, ExplainShowsEstimatesAndChangelogModes) {
  Tables f;
  f.ddl("CREATE TABLE out (product STRING, cnt BIGINT) WITH ('connector' = 'print')");
  EXPECT_GOLDEN(f.explain(R"(EXPLAIN INSERT INTO out
    SELECT product, COUNT(*) AS cnt FROM orders WHERE amount > 10 GROUP BY product)"),
                R"(== Optimized Plan ==
Sink(table=[out], fields=[product, cnt]) [rows=50, changelog=retract]
  GroupAggregate(groupBy=[product], select=[product, COUNT(*) AS cnt]) [rows=50, changelog=retract]
    Calc(select=[product], where=[>(amount, 10)]) [rows=50000, changelog=insert-only]
      WatermarkAssigner(rowtime=[ts], watermark=[-(ts, +0 00:00:05.000)]) [rows=100000, changelog=insert-only]
        TableSourceScan(table=[orders], fields=[product, amount, ts]) [rows=100000, changelog=insert-only]
)");
  EXPECT_GOLDEN(f.explain(R"(EXPLAIN SELECT window_start, window_end, COUNT(*) AS n
    FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end)"),
                R"(== Optimized Plan ==
Sink(table=[select_1], fields=[window_start, window_end, n]) [rows=1, changelog=insert-only]
  Calc(select=[window_start, window_end, n]) [rows=1, changelog=insert-only]
    WindowAggregate(groupBy=[], window=[TUMBLE(time_col=[ts], size=[1 min])], select=[window_start, window_end, window_time, COUNT(*) AS n]) [rows=1, changelog=insert-only]
      WatermarkAssigner(rowtime=[ts], watermark=[-(ts, +0 00:00:05.000)]) [rows=100000, changelog=insert-only]
        TableSourceScan(table=[orders], fields=[ts]) [rows=100000, changelog=insert-only]
)");
}

TEST(PlanOptimizer, ExplainOfAStatementSet) {
  Tables f;
  f.ddl("CREATE TABLE out1 (product STRING, cnt BIGINT) WITH ('connector' = 'print')");
  f.ddl("CREATE TABLE out2 (a INT) WITH ('connector' = 'blackhole')");
  EXPECT_GOLDEN(f.explain(R"(EXPLAIN EXECUTE STATEMENT SET BEGIN
      INSERT INTO out1 SELECT product, COUNT(*) FROM orders GROUP BY product;
      INSERT INTO out2 SELECT a FROM gen WHERE a > 0;
    END)"),
                R"(== Optimized Plan ==
Sink(table=[out1], fields=[product, cnt]) [rows=50, changelog=retract]
  Calc(select=[product, EXPR$1 AS cnt]) [rows=50, changelog=retract]
    GroupAggregate(groupBy=[product], select=[product, COUNT(*) AS EXPR$1]) [rows=50, changelog=retract]
      Calc(select=[product]) [rows=100000, changelog=insert-only]
        WatermarkAssigner(rowtime=[ts], watermark=[-(ts, +0 00:00:05.000)]) [rows=100000, changelog=insert-only]
          TableSourceScan(table=[orders], fields=[product, ts]) [rows=100000, changelog=insert-only]

Sink(table=[out2], fields=[a]) [rows=500, changelog=insert-only]
  Calc(select=[a], where=[>(a, 0)]) [rows=500, changelog=insert-only]
    TableSourceScan(table=[gen], fields=[a, b, c]) [rows=1000, changelog=insert-only, no stats]
)");
}

TEST(PlanOptimizer, CardinalityUsesNdvForEqualityFilters) {
  Tables f;
  Binder binder(f.catalog, FunctionRegistry::builtins());
  auto q = parse_query("SELECT * FROM orders WHERE product = 'x'");
  auto plan = optimize(binder.bind_select(*q));
  EXPECT_DOUBLE_EQ(estimate_rows(*plan), 100000.0 / 50.0);
  auto g = parse_query("SELECT * FROM gen WHERE a = 1");
  EXPECT_DOUBLE_EQ(estimate_rows(*optimize(binder.bind_select(*g))), kDefaultRowCount * 0.15);
}
