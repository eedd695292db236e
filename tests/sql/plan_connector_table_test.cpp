// The planner asks the connector table, never a connector's name: each sink row decides
// whether an updating query may go in, each source row whether a scan ends.
#include "clink/sql/spec/connector_table.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "plan_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

// An updating query (a GROUP BY) into a table of every sink connector: the rows that accept
// updates plan it, the others reject it with the planner's message.
TEST(PlanConnectorTable, UpdatingQueryIntoEachSink) {
  PlanFixture f;
  f.ddl("CREATE TABLE src (k STRING NOT NULL, v INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10')");
  const std::map<std::string, std::string> options = {
      {"filesystem", ", 'path' = '/out', 'format' = 'csv'"},
      {"filesystem-snapshot", ", 'path' = '/out', 'format' = 'json'"},
      {"kafka", ", 'topic' = 't', 'properties.bootstrap.servers' = 'b:1', 'format' = 'json'"},
      {"upsert-kafka", ", 'topic' = 't', 'properties.bootstrap.servers' = 'b:1', 'key.format' = 'json', "
                       "'value.format' = 'json'"},
      {"jdbc", ", 'url' = 'jdbc:postgresql://h/db', 'table-name' = 't'"}};
  int checked = 0;
  for (const auto& d : sql_connector_table()) {
    if (!d.is_sink()) continue;
    std::string table = "out_" + d.name;
    std::replace(table.begin(), table.end(), '-', '_');
    auto it = options.find(d.name);
    // upsert-kafka and jdbc take updates by a PRIMARY KEY; kafka in json (not a changelog format) only inserts.
    const std::string key = d.name == "upsert-kafka" || d.name == "jdbc" ? ", PRIMARY KEY (k) NOT ENFORCED" : "";
    f.ddl(fmt::format("CREATE TABLE {} (k STRING, n BIGINT{}) WITH ('connector' = '{}'{})", table, key, d.name,
                      it == options.end() ? "" : it->second));
    const std::string error = f.error(fmt::format("INSERT INTO {}\nSELECT k, COUNT(*) FROM src GROUP BY k", table));
    if (d.name != "filesystem" && d.name != "kafka") {
      EXPECT_EQ(error, "") << d.name;
    } else {
      EXPECT_EQ(error, fmt::format("line 1, column 1: INSERT INTO {}: the query produces updates (GROUP BY at line 2, "
                                   "column 38) but the {} sink only accepts inserts",
                                   table, d.name))
          << d.name;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

TEST(PlanConnectorTable, InsertOnlySinkRejectsUpdatesWithTodaysMessage) {
  PlanFixture f;
  f.ddl(R"(CREATE TABLE src (k STRING NOT NULL, v INT) WITH ('connector' = 'datagen');
    CREATE TABLE files (k STRING, n BIGINT) WITH ('connector' = 'filesystem', 'path' = '/out', 'format' = 'json');
    CREATE TABLE keyed (k STRING, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'filesystem',
      'path' = '/out', 'format' = 'json'))");
  EXPECT_GOLDEN(f.error("INSERT INTO files SELECT DISTINCT k, CAST(v AS BIGINT) FROM src"),
                R"(line 1, column 1: INSERT INTO files: the query produces updates (DISTINCT at line 1, column 19) but the filesystem sink only accepts inserts)");
  // A primary key does not make an insert-only sink an upsert one.
  EXPECT_GOLDEN(f.error("INSERT INTO keyed SELECT k, COUNT(*) FROM src GROUP BY k"),
                R"(line 1, column 1: INSERT INTO keyed: the query produces updates (GROUP BY at line 1, column 56) but the filesystem sink only accepts inserts)");
  EXPECT_EQ(f.error("INSERT INTO files SELECT k, CAST(v AS BIGINT) FROM src"), "");
}

// The collect sink takes updates by its primary key when the table declares one (upsert),
// else as retractions.
TEST(PlanConnectorTable, CollectSinkModeFollowsTheKey) {
  PlanFixture f;
  f.ddl(R"(CREATE TABLE src (k STRING NOT NULL, v INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
    CREATE TABLE by_key (k STRING, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'collect');
    CREATE TABLE no_key (k STRING, n BIGINT) WITH ('connector' = 'collect', 'name' = 'r'))");
  auto sink = [&](const std::string& sql) { return f.spec(sql)["ops"].back()["params"]; };
  auto p = sink("INSERT INTO by_key SELECT k, COUNT(*) FROM src GROUP BY k");
  EXPECT_EQ(p["mode"], "upsert");
  EXPECT_EQ(p["name"], "by_key");
  EXPECT_EQ(p["primary_key"].dump(), "[0]");
  p = sink("INSERT INTO no_key SELECT k, COUNT(*) FROM src GROUP BY k");
  EXPECT_EQ(p["mode"], "retract");
  EXPECT_EQ(p["name"], "r");
  p = sink("INSERT INTO by_key SELECT k, CAST(v AS BIGINT) FROM src");
  EXPECT_EQ(p["mode"], "retract");  // insert-only input
}

// ANALYZE TABLE reads bounded sources only: the rows' predicates over the table's options.
TEST(PlanConnectorTable, AnalyzeNeedsABoundedSource) {
  PlanFixture f;
  f.ddl(R"(CREATE TABLE endless (a INT) WITH ('connector' = 'datagen');
    CREATE TABLE monitored (a INT) WITH ('connector' = 'filesystem', 'path' = '/d', 'format' = 'json',
      'source.monitor-interval' = '1 s');
    CREATE TABLE bids (a INT) WITH ('connector' = 'nexmark'))");
  EXPECT_GOLDEN(f.error("ANALYZE TABLE monitored COMPUTE STATISTICS"),
                R"(line 1, column 1: ANALYZE TABLE monitored: the filesystem source is unbounded (ANALYZE runs bounded sources: filesystem without 'source.monitor-interval', datagen with 'number-of-rows', kafka with 'scan.bounded.mode', upsert-kafka with 'scan.bounded.mode', jdbc always))");
  EXPECT_GOLDEN(f.error("ANALYZE TABLE bids COMPUTE STATISTICS"),
                R"(line 1, column 1: ANALYZE TABLE bids: the nexmark source is unbounded (ANALYZE runs bounded sources: filesystem without 'source.monitor-interval', datagen with 'number-of-rows', kafka with 'scan.bounded.mode', upsert-kafka with 'scan.bounded.mode', jdbc always))");
}

TEST(PlanConnectorTable, UnknownAndWrongWayConnectorsKeepTheirMessages) {
  PlanFixture f;
  f.ddl(R"(CREATE TABLE src (a INT) WITH ('connector' = 'datagen');
    CREATE TABLE k (a INT) WITH ('connector' = 'mongodb');
    CREATE TABLE p (a INT) WITH ('connector' = 'print'))");
  EXPECT_GOLDEN(f.error("INSERT INTO p SELECT a FROM k"),
                R"(line 1, column 29: table `k`: unknown connector 'mongodb' (sources: datagen, filesystem, jdbc, kafka, nexmark, postgres-cdc, upsert-kafka))");
  EXPECT_GOLDEN(f.error("INSERT INTO k SELECT a FROM src"),
                R"(line 1, column 1: INSERT INTO k: unknown connector 'mongodb' (sinks: blackhole, collect, filesystem, filesystem-snapshot, jdbc, kafka, print, upsert-kafka))");
  EXPECT_GOLDEN(f.error("INSERT INTO p SELECT a FROM p"),
                R"(line 1, column 29: table `p`: the print connector can only be written to)");
  EXPECT_GOLDEN(f.error("INSERT INTO src SELECT a FROM src"),
                R"(line 1, column 1: INSERT INTO src: the datagen connector can only be read)");
  EXPECT_GOLDEN(f.error("INSERT OVERWRITE p SELECT a FROM src"),
                R"(line 1, column 1: INSERT OVERWRITE p: only the filesystem sink can overwrite)");
}

}  // namespace
}  // namespace clink::test
