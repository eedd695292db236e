// The planner's lookup joins (`JOIN t FOR SYSTEM_TIME AS OF o.proc_time`): chosen as
// Flink chooses them (a processing-time AS OF over a table whose connector serves
// lookups), Flink's messages for what it rejects, its EXPLAIN line, predicate pushdown
// below the probe side, the fetched columns pruned, and the sql_lookup_join op's params.
#include "plan_test_util.hpp"

namespace clink::test {
namespace {

struct LookupTables : PlanFixture {
  LookupTables() {
    ddl("CREATE TABLE orders (id BIGINT, customer INT, amount INT, ts TIMESTAMP(3), proc_time AS PROCTIME(), "
        "WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen')");
    ddl("CREATE TABLE customers (id INT, name STRING, country STRING, active BOOLEAN) WITH ('connector' = 'jdbc', "
        "'url' = 'jdbc:postgresql://localhost:5432/shop', 'table-name' = 'customers')");
    ddl("CREATE TABLE enrich (id INT, score DOUBLE) WITH ('connector' = 'lookup', 'lookup_function' = 'scores')");
    ddl("CREATE TABLE plain (id INT, name STRING) WITH ('connector' = 'datagen')");
  }
};

// As Flink 2.3 prints a jdbc lookup join (checked there): no async=[...] unless the
// session sets the async lookup options, the table's own column names in select when
// only some of its columns are fetched.
TEST(PlanLookupJoin, ExplainsFlinksLookupJoinWithPushdown) {
  LookupTables f;
  EXPECT_GOLDEN(f.optimized("SELECT o.id, c.name FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c "
                            "ON o.customer = c.id AND c.active WHERE o.amount > 100 AND c.country = 'NL' AND o.id < c.id"),
                R"(Calc(select=[id, name])
  LookupJoin(table=[customers], joinType=[InnerJoin], lookup=[id=customer, country='NL'], where=[active], joinCondition=[<(id, CAST(id0 AS BIGINT))], select=[id, customer, amount, ts, id, name, country, active])
    Calc(select=[id, customer, amount, ts], where=[>(amount, 100)])
      WatermarkAssigner(rowtime=[ts], watermark=[ts])
        TableSourceScan(table=[orders], fields=[id, customer, amount, ts])
)");
}

// LEFT: a WHERE on the probe side still goes below; one on the table stays above (it
// sees the padded NULLs); ON conditions on the probe side are the pre-filter.
TEST(PlanLookupJoin, LeftJoinKeepsTableConditionsAboveAndProbeOnesInTheJoin) {
  LookupTables f;
  EXPECT_GOLDEN(f.optimized("SELECT o.id, c.name FROM orders AS o LEFT JOIN customers FOR SYSTEM_TIME AS OF o.proc_time "
                            "AS c ON o.customer = c.id AND o.amount > 5 WHERE o.amount < 1000 AND c.name IS NULL"),
                R"(Calc(select=[id, name], where=[IS NULL(name)])
  LookupJoin(table=[customers], joinType=[LeftOuterJoin], lookup=[id=customer], joinCondition=[>(amount, 5)], select=[id, customer, amount, ts, id, name])
    Calc(select=[id, customer, amount, ts], where=[<(amount, 1000)])
      WatermarkAssigner(rowtime=[ts], watermark=[ts])
        TableSourceScan(table=[orders], fields=[id, customer, amount, ts])
)");
}

TEST(PlanLookupJoin, TheOpGetsTheSplitConditionAndTheSessionsAsyncSettings) {
  LookupTables f;
  f.ddl("CREATE TABLE out (id BIGINT, score DOUBLE) WITH ('connector' = 'blackhole')");
  f.ddl("SET 'table.exec.async-lookup.output-mode' = 'ALLOW_UNORDERED'");
  f.ddl("SET 'table.exec.async-lookup.buffer-capacity' = '7'");
  auto spec = f.spec("INSERT INTO out SELECT o.id, e.score FROM orders AS o LEFT JOIN enrich FOR SYSTEM_TIME AS OF "
                     "o.proc_time AS e ON e.id = o.customer + 1 AND o.amount > 2 AND e.score > o.amount");
  const nlohmann::json* op = nullptr;
  for (const auto& o : spec.at("ops"))
    if (o.at("type") == "sql_lookup_join") op = &o;
  ASSERT_NE(op, nullptr) << spec.dump();
  const auto& p = op->at("params");
  EXPECT_EQ(p.at("lookup"), "lookup_function");
  EXPECT_EQ(p.at("join_type"), "left");
  EXPECT_EQ(p.at("options"), nlohmann::json({{"lookup_function", "scores"}}));
  EXPECT_EQ(p.at("dim_columns"), nlohmann::json({0, 1}));
  EXPECT_EQ(p.at("keys").size(), 1u);
  EXPECT_EQ(p.at("keys")[0].at("column"), 0);
  EXPECT_EQ(p.at("keys")[0].at("value").at("call"), "+");  // an expression of the probe row
  EXPECT_TRUE(p.at("pre_filter").is_object());              // amount > 2
  EXPECT_TRUE(p.at("dim_filter").is_null());
  EXPECT_TRUE(p.at("condition").is_object());  // score > amount
  EXPECT_EQ(p.at("async"), nlohmann::json({{"capacity", 7}, {"output_mode", "ALLOW_UNORDERED"}, {"timeout_ms", 180000}}));
  EXPECT_FALSE(op->contains("parallelism"));  // row-local: at the input's parallelism, forward
  EXPECT_FALSE(op->at("inputs")[0].contains("partitioning"));
}

// Only the table's columns the query reads (and the keys) are fetched.
TEST(PlanLookupJoin, FetchesOnlyTheColumnsRead) {
  LookupTables f;
  f.ddl("CREATE TABLE out (id BIGINT, country STRING) WITH ('connector' = 'blackhole')");
  auto spec = f.spec("INSERT INTO out SELECT o.id, c.country FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF "
                     "o.proc_time AS c ON o.customer = c.id");
  for (const auto& o : spec.at("ops"))
    if (o.at("type") == "sql_lookup_join") {
      EXPECT_EQ(o.at("params").at("dim_columns"), nlohmann::json({0, 2}));
    }
}

TEST(PlanLookupJoin, RejectsWhatFlinkRejects) {
  LookupTables f;
  auto q = [](const std::string& right, const std::string& on, const std::string& join = "JOIN",
              const std::string& as_of = "o.proc_time") {
    return "SELECT * FROM orders AS o " + join + " " + right + " FOR SYSTEM_TIME AS OF " + as_of + " AS d ON " + on;
  };
  // A table that cannot be looked up: Flink takes the join for a processing-time temporal
  // join of a versioned table (and names the missing primary key first).
  EXPECT_NE(f.error(q("plain", "o.customer = d.id"))
                .find("Temporal Table Join requires primary key in versioned table, but no primary key can be found. "
                      "(`plain` is not a lookup table: a lookup join reads a table whose connector serves lookups: "
                      "jdbc, lookup)"),
            std::string::npos);
  f.ddl("CREATE TABLE keyed (id INT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'datagen')");
  EXPECT_NE(f.error(q("keyed", "o.customer = d.id")).find("Processing-time temporal join is not supported yet. (`keyed`"),
            std::string::npos);
  EXPECT_NE(f.error(q("customers", "o.customer + 1 = d.id + 2"))
                .find("Temporal table join requires an equality condition on fields of table [customers]."),
            std::string::npos);
  EXPECT_NE(f.error(q("customers", "o.customer IS NOT DISTINCT FROM d.id"))
                .find("LookupJoin doesn't support join condition contains 'a IS NOT DISTINCT FROM b'"),
            std::string::npos);
  EXPECT_NE(f.error(q("customers", "o.customer = d.id", "RIGHT JOIN"))
                .find("Temporal table join currently only supports INNER JOIN and LEFT JOIN, but was RIGHT JOIN."),
            std::string::npos);
  EXPECT_NE(f.error(q("customers", "o.customer = d.id", "JOIN", "PROCTIME()"))
                .find("Querying a temporal table using 'FOR SYSTEM TIME AS OF' syntax with an expression call "
                      "'PROCTIME()' is not supported yet."),
            std::string::npos);
  // A key value may be any expression of the probe row.
  EXPECT_EQ(f.error(q("customers", "CAST(o.amount AS STRING) = d.name")), "");
  f.ddl("CREATE TABLE computed (id INT, twice AS id * 2) WITH ('connector' = 'lookup', 'lookup_function' = 'x')");
  EXPECT_NE(f.error(q("computed", "o.customer = d.id")).find("the computed column `twice` is not supported"),
            std::string::npos);
  f.ddl("CREATE TABLE bad_cache (id INT) WITH ('connector' = 'lookup', 'lookup_function' = 'x', 'lookup.cache' = "
        "'PARTIAL')");
  EXPECT_NE(f.error(q("bad_cache", "o.customer = d.id")).find("lookup table `bad_cache`: Missing "
                                                              "'lookup.partial-cache.expire-after-access'"),
            std::string::npos);
  f.ddl("SET 'table.exec.async-lookup.output-mode' = 'SOMETIMES'");
  EXPECT_NE(f.error(q("customers", "o.customer = d.id")).find("'table.exec.async-lookup.output-mode' must be ORDERED or "
                                                              "ALLOW_UNORDERED, got 'SOMETIMES'"),
            std::string::npos);
}

// An event-time AS OF over the same table is still an event-time temporal join (which
// needs a versioned table): the lookup path is for processing time only.
TEST(PlanLookupJoin, EventTimeAsOfIsNotALookupJoin) {
  LookupTables f;
  EXPECT_NE(f.error("SELECT * FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.ts AS d ON o.customer = d.id")
                .find("Event-Time Temporal Table Join requires both primary key and row time attribute"),
            std::string::npos);
}

}  // namespace
}  // namespace clink::test
