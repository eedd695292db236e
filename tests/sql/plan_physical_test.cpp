// PhysicalPlanner: the exact JobGraphSpec JSON of the contract's factories, changelog
// rejections, unsupported nodes, and the StatementRunner around it.
#include "plan_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

// One op per line (compact JSON), after the job's name and config.
std::string spec_text(const nlohmann::json& spec) {
  std::string out = spec.at("name").get<std::string>() + " " + spec.at("config").dump() + "\n";
  for (const auto& op : spec.at("ops")) {
    nlohmann::json o = op;
    // Schemas are checked separately; keep the lines readable.
    o["params"].erase("input_schemas");
    out += o.dump() + "\n";
  }
  return out;
}

struct Tables : PlanFixture {
  Tables() {
    ddl(R"(CREATE TABLE orders (
        id BIGINT, product STRING, amount INT, ts TIMESTAMP(3),
        WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
      ) WITH ('connector' = 'filesystem', 'path' = '/data/orders.json', 'format' = 'json',
              'json.ignore-parse-errors' = 'true');
      CREATE TABLE clicks (url STRING, ts TIMESTAMP(3)) WITH ('connector' = 'datagen',
        'number-of-rows' = '100', 'event_time_column' = 'ts', 'watermark_lag_ms' = '1000',
        'allowed_lateness_ms' = '500', 'late_records_to_dlq' = 'true');
      CREATE TABLE totals (product STRING, total BIGINT) WITH ('connector' = 'print', 'print-identifier' = 't');
      CREATE TABLE file_sink (product STRING, total BIGINT) WITH ('connector' = 'filesystem', 'path' = '/out',
        'format' = 'csv');
      CREATE TABLE windows (ws TIMESTAMP(3), we TIMESTAMP(3), url STRING, n BIGINT)
        WITH ('connector' = 'collect', 'name' = 'w'))");
  }
};

}  // namespace

TEST(PlanPhysical, GroupAggregateIntoPrint) {
  Tables f;
  auto spec = f.spec("INSERT INTO totals SELECT product, SUM(amount) FROM orders WHERE amount > 10 GROUP BY product");
  // Every non-source op names its input schema, equal to its upstream's output schema
  // (a source's output: its table schema restricted to `projected`).
  const auto& ops = spec.at("ops");
  nlohmann::json source_output = nlohmann::json::array();
  for (const auto& i : ops[0]["params"]["projected"]) source_output.push_back(ops[0]["params"]["schema"][i.get<int>()]);
  EXPECT_EQ(ops[1]["params"]["input_schemas"][0], source_output);
  for (std::size_t i = 2; i < ops.size(); ++i)
    EXPECT_EQ(ops[i]["params"]["input_schemas"][0], ops[i - 1]["params"]["schema"]) << ops[i]["id"];
}

TEST(PlanPhysical, StatementSetIsOneJob) {
  Tables f;
  auto results = f.runner.run(R"(EXECUTE STATEMENT SET BEGIN
    INSERT INTO totals SELECT product, id FROM orders;
    INSERT INTO file_sink SELECT url, CAST(1 AS BIGINT) FROM clicks;
  END)");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_GOLDEN(spec_text(results[0].spec), R"x(insert-into_totals,file_sink {"parallelism":1}
{"id":"filesystem_source_1","params":{"format":"json","json.ignore-parse-errors":"true","path":"/data/orders.json","projected":[0,1,3],"schema":[{"name":"id","type":"BIGINT"},{"name":"product","type":"STRING"},{"name":"amount","type":"INT"},{"name":"ts","type":"TIMESTAMP(3)"}],"watermark":{"bounds_assigner":true,"watermark":{"args":[{"col":2,"type":"TIMESTAMP(3)"},{"lit":5000,"type":"INTERVAL SECOND(3) NOT NULL"}],"call":"-","type":"TIMESTAMP(3)"}}},"type":"sql_filesystem_source"}
{"id":"watermark_assigner_2","inputs":[{"from":"filesystem_source_1"}],"params":{"alignment":null,"data_driven":true,"emit":"on-periodic","idle_timeout_ms":0,"interval_ms":200,"rowtime":2,"schema":[{"name":"id","type":"BIGINT"},{"name":"product","type":"STRING"},{"name":"ts","type":"TIMESTAMP(3)"}],"source_bounded":true,"watermark":{"args":[{"col":2,"type":"TIMESTAMP(3)"},{"lit":5000,"type":"INTERVAL SECOND(3) NOT NULL"}],"call":"-","type":"TIMESTAMP(3)"}},"type":"sql_watermark_assigner"}
{"id":"calc_3","inputs":[{"from":"watermark_assigner_2"}],"params":{"filter":null,"projections":[{"col":1,"type":"STRING"},{"col":0,"type":"BIGINT"}],"schema":[{"name":"product","type":"STRING"},{"name":"total","type":"BIGINT"}]},"type":"sql_calc"}
{"id":"print_sink_4","inputs":[{"from":"calc_3"}],"params":{"print-identifier":"t","schema":[{"name":"product","type":"STRING"},{"name":"total","type":"BIGINT"}]},"type":"sql_print_sink"}
{"id":"datagen_source_5","params":{"number-of-rows":"100","schema":[{"name":"url","type":"STRING"},{"name":"ts","type":"TIMESTAMP(3)"}]},"type":"sql_datagen_source"}
{"id":"watermark_assigner_6","inputs":[{"from":"datagen_source_5"}],"params":{"alignment":null,"data_driven":true,"emit":"on-periodic","idle_timeout_ms":0,"interval_ms":200,"rowtime":1,"schema":[{"name":"url","type":"STRING"},{"name":"ts","type":"TIMESTAMP(3)"}],"watermark":{"args":[{"col":1,"type":"TIMESTAMP(3)"},{"lit":1000,"type":"INTERVAL SECOND(3) NOT NULL"}],"call":"-","type":"TIMESTAMP(3)"}},"type":"sql_watermark_assigner"}
{"id":"calc_7","inputs":[{"from":"watermark_assigner_6"}],"params":{"filter":null,"projections":[{"col":0,"type":"STRING"},{"lit":1,"type":"BIGINT NOT NULL"}],"schema":[{"name":"product","type":"STRING"},{"name":"total","type":"BIGINT NOT NULL"}]},"type":"sql_calc"}
{"id":"filesystem_sink_8","inputs":[{"from":"calc_7"}],"params":{"format":"csv","overwrite":false,"partition_by":[],"path":"/out","schema":[{"name":"product","type":"STRING"},{"name":"total","type":"BIGINT NOT NULL"}]},"type":"sql_filesystem_sink"}
)x");
}

// Found by the SQL test matrix: at parallelism 2 INSERT OVERWRITE planned its sink at 2,
// which the overwriting sink refuses ("overwrite needs the sink at parallelism 1").
TEST(PlanPhysical, AnOverwritingSinkRunsAtParallelismOne) {
  Tables f;
  f.ddl("SET 'parallelism.default' = '2'");
  auto spec = f.spec("INSERT OVERWRITE file_sink SELECT product, id FROM orders");
  EXPECT_EQ(spec.at("config").dump(), R"({"parallelism":2})");
  const nlohmann::json& sink = spec.at("ops").back();
  EXPECT_EQ(sink.at("type"), "sql_filesystem_sink");
  EXPECT_EQ(sink.at("parallelism"), 1);
  EXPECT_EQ(sink.at("inputs").dump(), R"([{"from":"calc_3","partitioning":"rebalance"}])");
}

TEST(PlanPhysical, UpdatingQueryIntoAnInsertOnlySinkIsRejected) {
  Tables f;
  EXPECT_GOLDEN(f.error("INSERT INTO file_sink\nSELECT product, COUNT(*)\nFROM orders GROUP BY product"), R"(line 1, column 1: INSERT INTO file_sink: the query produces updates (GROUP BY at line 3, column 22) but the filesystem sink only accepts inserts)");
  EXPECT_GOLDEN(f.error("INSERT INTO file_sink SELECT DISTINCT product, id FROM orders"), R"(line 1, column 1: INSERT INTO file_sink: the query produces updates (DISTINCT at line 1, column 23) but the filesystem sink only accepts inserts)");
  EXPECT_GOLDEN(f.error("INSERT INTO totals SELECT product, c FROM (SELECT product, COUNT(*) AS c FROM orders "
                        "GROUP BY product) AS s ORDER BY c"),
                R"(line 1, column 118: ORDER BY cannot consume updates, but its input produces them (GROUP BY at line 1, column 95))");
}

// A join reads its inputs on input 0 (left) and 1 (right), each hash-partitioned by its
// key columns; an interval join gets its time columns and bounds; no keys: parallelism 1.
TEST(PlanPhysical, JoinsAreTwoInputOpsKeyedBySides) {
  Tables f;
  auto join_line = [](const nlohmann::json& spec) {
    for (const auto& op : spec.at("ops"))
      if (op.at("type").get<std::string>().find("join") != std::string::npos) {
        nlohmann::json o = op;
        o["params"].erase("input_schemas");
        o["params"].erase("schema");
        return o.dump();
      }
    return std::string("no join");
  };
  f.ddl("SET 'parallelism.default' = '2'; SET 'table.exec.state.ttl' = '1 h'");
  // Self-joins: both sides read one source and its WATERMARK (scan_reuse.cpp), each side
  // its columns (a calc where they are not the union's).
  EXPECT_GOLDEN(join_line(f.spec("INSERT INTO totals SELECT o.product, p.id FROM orders o LEFT JOIN orders p "
                                 "ON o.id = p.id AND o.amount < p.amount")),
                R"({"id":"join_4","inputs":[{"from":"watermark_assigner_2","input":0,"key":"sql_columns:0","partitioning":"hash"},{"from":"calc_3","input":1,"key":"sql_columns:0","partitioning":"hash"}],"params":{"condition":{"args":[{"col":2,"type":"INT"},{"col":5,"type":"INT"}],"call":"<","type":"BOOLEAN"},"filter_nulls":[true],"join_type":"left","left_insert_only":true,"left_keys":[0],"right_insert_only":true,"right_keys":[0],"state_ttl_ms":3600000},"type":"sql_join"})");
  EXPECT_GOLDEN(join_line(f.spec("INSERT INTO totals SELECT o.product, p.id FROM orders o JOIN orders p ON o.product = "
                                 "p.product AND o.ts BETWEEN p.ts - INTERVAL '1' MINUTE AND p.ts + INTERVAL '10' SECOND")),
                R"({"id":"interval_join_4","inputs":[{"from":"calc_3","input":0,"key":"sql_columns:0","partitioning":"hash"},{"from":"watermark_assigner_2","input":1,"key":"sql_columns:1","partitioning":"hash"}],"params":{"condition":null,"filter_nulls":[true],"join_type":"inner","left_keys":[0],"left_time":1,"lower_ms":-60000,"right_keys":[1],"right_time":2,"upper_ms":10000},"type":"sql_interval_join"})");
  EXPECT_GOLDEN(join_line(f.spec("INSERT INTO totals SELECT o.product, p.id FROM orders o JOIN orders p ON o.amount > p.amount")),
                R"({"id":"join_5","inputs":[{"from":"calc_3","input":0,"key":"sql_columns:","partitioning":"hash"},{"from":"calc_4","input":1,"key":"sql_columns:","partitioning":"hash"}],"parallelism":1,"params":{"condition":{"args":[{"col":1,"type":"INT"},{"col":4,"type":"INT"}],"call":">","type":"BOOLEAN"},"filter_nulls":[],"join_type":"inner","left_insert_only":true,"left_keys":[],"right_insert_only":true,"right_keys":[],"state_ttl_ms":3600000},"type":"sql_join"})");
}

TEST(PlanPhysical, UnsupportedNodesFailAtTheirPosition) {
  Tables f;
  f.ddl("CREATE TABLE k (a STRING, b BIGINT) WITH ('connector' = 'mongodb')");
  EXPECT_GOLDEN(f.error("INSERT INTO totals SELECT a, b FROM k"), R"(line 1, column 37: table `k`: unknown connector 'mongodb' (sources: datagen, filesystem, jdbc, kafka, nexmark, postgres-cdc, upsert-kafka))");
  EXPECT_GOLDEN(f.error("INSERT INTO clicks SELECT product, ts FROM orders"), R"(line 1, column 1: INSERT INTO clicks: the datagen connector can only be read)");
}

TEST(PlanPhysical, RunnerExecutesStatementsInOrder) {
  Catalog catalog;
  StatementRunner runner(catalog);
  std::vector<std::string> jobs;
  runner.on_job([&](const nlohmann::json& spec, const ast::Statement& st) {
    jobs.push_back(spec.at("name").get<std::string>() + " <- " + st.text);
  });
  auto results = runner.run(R"(
    CREATE TABLE src (a INT, b STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
    CREATE TABLE dst (b STRING, a INT) WITH ('connector' = 'blackhole');
    SET 'parallelism.default' = '3';
    SHOW TABLES;
    INSERT INTO dst SELECT b, a FROM src;
    SELECT a FROM src WHERE a > 1;
    RESET 'parallelism.default';
    SET;
  )");
  ASSERT_EQ(results.size(), 8u);
  EXPECT_EQ(results[0].kind, StatementResult::Kind::kOk);
  EXPECT_EQ(results[3].text, "+------------+\n| table name |\n+------------+\n|        dst |\n|        src |\n+------------+\n2 rows in set\n");
  EXPECT_EQ(results[4].spec["config"]["parallelism"], 3);
  EXPECT_EQ(results[5].spec["ops"].back()["type"], "sql_collect_sink");
  EXPECT_EQ(results[5].spec["ops"].back()["params"]["name"], "select_1");
  EXPECT_EQ(results[7].text, "Empty set\n");
  EXPECT_EQ(jobs, (std::vector<std::string>{"insert-into_dst <- INSERT INTO dst SELECT b, a FROM src",
                                            "select_1 <- SELECT a FROM src WHERE a > 1"}));
}

TEST(PlanPhysical, ExpressionJson) {
  Tables f;
  auto spec = f.spec(R"(INSERT INTO totals SELECT CASE WHEN amount IN (1, 2) THEN product ELSE 'x' END,
    COALESCE(id, 0) FROM orders WHERE amount > 1 OR product IS NULL)");
  EXPECT_GOLDEN(spec["ops"][2]["params"]["projections"].dump() + "\n" + spec["ops"][2]["params"]["filter"].dump(), R"([{"case":[{"in":[{"col":2,"type":"INT"},{"lit":1,"type":"INT NOT NULL"},{"lit":2,"type":"INT NOT NULL"}],"negated":false,"type":"BOOLEAN"},{"col":1,"type":"STRING"},{"lit":"x","type":"STRING NOT NULL"}],"type":"STRING"},{"coalesce":[{"col":0,"type":"BIGINT"},{"lit":0,"type":"BIGINT NOT NULL"}],"type":"BIGINT NOT NULL"}]
{"or":[{"args":[{"col":2,"type":"INT"},{"lit":1,"type":"INT NOT NULL"}],"call":">","type":"BOOLEAN"},{"args":[{"col":1,"type":"STRING"}],"call":"IS NULL","type":"BOOLEAN NOT NULL"}],"type":"BOOLEAN"})");
}

TEST(PlanPhysical, GroupingSetsHashOnlyOnSharedKeys) {
  Tables f;
  f.ddl("SET 'parallelism.default' = '2'");
  auto spec = f.spec("INSERT INTO totals SELECT product, COUNT(*) FROM orders GROUP BY GROUPING SETS ((product, id), (product))");
  const auto& agg = spec["ops"][3];
  EXPECT_EQ(agg["type"], "sql_group_aggregate");
  EXPECT_EQ(agg["params"]["grouping_sets"].dump(), "[[0,1],[0]]");
  EXPECT_EQ(agg["inputs"].dump(), R"([{"from":"calc_3","key":"sql_columns:0","partitioning":"hash"}])");
  auto cube = f.spec("INSERT INTO totals SELECT product, COUNT(*) FROM orders GROUP BY CUBE (product)");
  EXPECT_EQ(cube["ops"][3]["parallelism"], 1);
  EXPECT_EQ(cube["ops"][3]["inputs"].dump(), R"([{"from":"calc_3","key":"sql_columns:","partitioning":"hash"}])");
}

// SET 'table.exec.state.ttl' reaches the GROUP BY (Flink's GroupAggFunction state TTL); without
// it the op has no state_ttl_ms (state never expires).
TEST(PlanPhysical, GroupAggregateTakesTheStateTtl) {
  Tables f;
  const std::string query = "INSERT INTO totals SELECT product, COUNT(DISTINCT id) FROM orders GROUP BY product";
  EXPECT_FALSE(f.spec(query)["ops"][3]["params"].contains("state_ttl_ms"));
  f.ddl("SET 'table.exec.state.ttl' = '90 s'");
  const auto spec = f.spec(query);
  EXPECT_EQ(spec["ops"][3]["type"], "sql_group_aggregate");
  EXPECT_EQ(spec["ops"][3]["params"]["state_ttl_ms"], 90000);
}

}  // namespace clink::test

namespace clink::test {

// Nested projection push-down: a json filesystem scan reads a ROW column narrowed to the
// fields the query reads through `col.field` (in the declared order), through the
// computed column, the watermark and the WHERE; a ROW used whole, or any ROW under
// json.fail-on-missing-field, is read whole.
TEST(PlanPhysical, JsonScanReadsOnlyTheNestedFieldsUsed) {
  PlanFixture f;
  f.ddl(R"(CREATE TABLE events (
      kind INT,
      a ROW<id BIGINT, name STRING, ts TIMESTAMP(3)>,
      b ROW<x BIGINT, y STRING, z STRING, ts TIMESTAMP(3)>,
      ts AS CASE WHEN kind = 0 THEN a.ts ELSE b.ts END,
      WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
    ) WITH ('connector' = 'filesystem', 'path' = '/data/e.json', 'format' = 'json');
    CREATE TABLE strict_events (kind INT, b ROW<x BIGINT, y STRING>)
      WITH ('connector' = 'filesystem', 'path' = '/data/s.json', 'format' = 'json',
            'json.fail-on-missing-field' = 'true');
    CREATE TABLE out2 (x BIGINT, y STRING) WITH ('connector' = 'blackhole');
    CREATE TABLE out_row (k INT, b ROW<x BIGINT, y STRING, z STRING, ts TIMESTAMP(3)>) WITH ('connector' = 'blackhole'))");
  auto source_schema = [&](const std::string& sql) { return f.spec(sql).at("ops")[0]["params"]["schema"].dump(); };
  EXPECT_EQ(source_schema("INSERT INTO out2 SELECT b.x, b.z FROM events WHERE kind = 2"),
            R"([{"name":"kind","type":"INT"},{"name":"a","type":"ROW<`ts` TIMESTAMP(3)>"},)"
            R"({"name":"b","type":"ROW<`x` BIGINT, `z` STRING, `ts` TIMESTAMP(3)>"}])");
  // The whole ROW to the sink: read whole.
  EXPECT_EQ(source_schema("INSERT INTO out_row SELECT kind, b FROM events WHERE b.y = 'k'"),
            R"([{"name":"kind","type":"INT"},{"name":"a","type":"ROW<`ts` TIMESTAMP(3)>"},)"
            R"({"name":"b","type":"ROW<`x` BIGINT, `y` STRING, `z` STRING, `ts` TIMESTAMP(3)>"}])");
  EXPECT_EQ(source_schema("INSERT INTO out2 SELECT b.x, b.y FROM strict_events"),
            R"([{"name":"kind","type":"INT"},{"name":"b","type":"ROW<`x` BIGINT, `y` STRING>"}])");
  // The consumers read the narrowed ROW: FIELD by name finds the field in it.
  const auto ops = f.spec("INSERT INTO out2 SELECT b.x, b.z FROM events WHERE kind = 2").at("ops");
  EXPECT_EQ(ops[1]["params"]["input_schemas"][0].dump(),
            R"([{"name":"kind","type":"INT"},{"name":"a","type":"ROW<`ts` TIMESTAMP(3)>"},)"
            R"({"name":"b","type":"ROW<`x` BIGINT, `z` STRING, `ts` TIMESTAMP(3)>"}])");
}

}  // namespace clink::test
