// Optimiser passes and EXPLAIN: constant folding, predicate and projection pushdown,
// cost-based join reordering with declared statistics, row estimates, changelog modes.
#include "clink/sql/optimizer/join_reorder.hpp"
#include "clink/sql/planner/cardinality.hpp"
#include "plan_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

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

TEST(PlanOptimizer, KeepsTheWrittenOrderWhenItIsCheapest) {
  Tables f;
  const char* q = R"(SELECT k.region, c.name FROM countries k
    JOIN customers c ON c.country = k.code
    JOIN orders o ON o.customer = c.id)";
  std::string plan = f.optimized(q);
  EXPECT_EQ(plan.find("Calc(select=[region, name])\n  Join(joinType=[InnerJoin], where=[=(customer, id)]"), 0u) << plan;
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

}  // namespace clink::test
