// The physical plan of ranks: sql_rank (strategy, range, rank output, state TTL),
// sql_deduplicate and sql_window_rank with their params, hash-partitioned on the partition
// keys (a global Top-N at parallelism 1), as docs/sql-runtime-contract.md fixes them.
#include "plan_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

struct Tables : PlanFixture {
  Tables() {
    ddl(R"(CREATE TABLE orders (
        id BIGINT, product STRING, amount INT, ts TIMESTAMP(3),
        WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
      ) WITH ('connector' = 'filesystem', 'path' = '/data/orders.json', 'format' = 'json');
      CREATE TABLE stream_orders (product STRING, amount INT) WITH ('connector' = 'datagen');
      CREATE TABLE out_rows (product STRING, amount INT) WITH ('connector' = 'print');
      SET 'parallelism.default' = '2';
      SET 'table.exec.state.ttl' = '1 h')");
  }
  // The rank op's line: its inputs, parallelism and params without the schemas.
  std::string rank_line(const std::string& query) {
    const nlohmann::json job = spec("INSERT INTO out_rows " + query);
    for (const auto& op : job.at("ops")) {
      const std::string type = op.at("type").get<std::string>();
      if (type != "sql_rank" && type != "sql_deduplicate" && type != "sql_window_rank") continue;
      nlohmann::json o = op;
      o["params"].erase("input_schemas");
      o["params"].erase("schema");
      o["params"].erase("session");
      return o.dump();
    }
    return "no rank";
  }
};

}  // namespace

TEST(PlanRank, TopNIsARankHashedOnThePartitionKeys) {
  Tables f;
  EXPECT_GOLDEN(f.rank_line("SELECT product, amount FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY product ORDER BY "
                            "amount DESC) AS rn FROM orders) WHERE rn <= 3"),
                R"({"id":"rank_3","inputs":[{"from":"watermark_assigner_2","key":"sql_columns:0","partitioning":"hash"}],"params":{"keys":[0],"order":[{"column":1,"descending":true,"nulls_first":false}],"output_rank_number":false,"rank_end":3,"rank_start":1,"state_ttl_ms":3600000,"strategy":"append"},"type":"sql_rank"})");
}

TEST(PlanRank, AGlobalTopNOverUpdatesRetractsAtParallelismOne) {
  Tables f;
  EXPECT_GOLDEN(f.rank_line("SELECT product, CAST(total AS INT) FROM (SELECT product, total, ROW_NUMBER() OVER (ORDER BY "
                            "total DESC) AS rn FROM (SELECT product, SUM(amount) AS total FROM orders GROUP BY product)) "
                            "WHERE rn BETWEEN 2 AND 5"),
                R"({"id":"rank_5","inputs":[{"from":"group_aggregate_4","key":"sql_columns:","partitioning":"hash"}],"parallelism":1,"params":{"keys":[],"order":[{"column":1,"descending":true,"nulls_first":false}],"output_rank_number":false,"rank_end":5,"rank_start":2,"state_ttl_ms":3600000,"strategy":"retract"},"type":"sql_rank"})");
}

TEST(PlanRank, DeduplicationKeepsItsTimeColumn) {
  Tables f;
  EXPECT_GOLDEN(f.rank_line("SELECT product, amount FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY ts DESC) "
                            "AS rn FROM orders) WHERE rn = 1"),
                R"({"id":"deduplicate_3","inputs":[{"from":"watermark_assigner_2","key":"sql_columns:0","partitioning":"hash"}],"params":{"keep_last":true,"keys":[0],"rowtime":true,"state_ttl_ms":3600000,"time_column":3},"type":"sql_deduplicate"})");
}

TEST(PlanRank, WindowTopNKeysIncludeTheWindow) {
  Tables f;
  EXPECT_GOLDEN(f.rank_line("SELECT product, amount FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, "
                            "window_end ORDER BY amount DESC) AS rn FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), "
                            "INTERVAL '1' MINUTE))) WHERE rn <= 2"),
                R"({"id":"window_rank_4","inputs":[{"from":"window_assign_3","key":"sql_columns:3,4","partitioning":"hash"}],"params":{"keys":[3,4],"order":[{"column":1,"descending":true,"nulls_first":false}],"output_rank_number":false,"rank_end":2,"rank_start":1,"window_end":4},"type":"sql_window_rank"})");
}

// ORDER BY ... LIMIT over an unbounded input (datagen) is Flink's SortLimit: a global
// ROW_NUMBER Top-N at parallelism 1, ranks offset + 1 .. offset + limit, the rank not output.
TEST(PlanRank, OrderByLimitOnAStreamIsAGlobalTopN) {
  Tables f;
  EXPECT_GOLDEN(f.rank_line("SELECT product, amount FROM stream_orders ORDER BY amount DESC, product LIMIT 3 OFFSET 1"),
                R"({"id":"rank_2","inputs":[{"from":"datagen_source_1","key":"sql_columns:","partitioning":"hash"}],"parallelism":1,"params":{"keys":[],"order":[{"column":1,"descending":true,"nulls_first":false},{"column":0,"descending":false,"nulls_first":true}],"output_rank_number":false,"rank_end":4,"rank_start":2,"state_ttl_ms":3600000,"strategy":"append"},"type":"sql_rank"})");
  EXPECT_GOLDEN(f.rank_line("SELECT product, CAST(total AS INT) AS total FROM (SELECT product, SUM(amount) AS total FROM orders "
                            "GROUP BY product) ORDER BY total DESC LIMIT 2"),
                R"({"id":"rank_6","inputs":[{"from":"calc_5","key":"sql_columns:","partitioning":"hash"}],"parallelism":1,"params":{"keys":[],"order":[{"column":1,"descending":true,"nulls_first":false}],"output_rank_number":false,"rank_end":2,"rank_start":1,"state_ttl_ms":3600000,"strategy":"retract"},"type":"sql_rank"})");
}

// Over a bounded insert-only input the sort stays the batch sort, emitting at end of input.
TEST(PlanRank, OrderByLimitOnABoundedInputIsNotARank) {
  Tables f;
  EXPECT_GOLDEN(f.rank_line("SELECT product, amount FROM orders ORDER BY amount DESC LIMIT 3"), "no rank");
}

}  // namespace clink::test
