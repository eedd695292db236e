// The planner's partition pushdown into a filesystem scan (Flink's
// PushPartitionIntoTableSourceScanRule): the source gets its partition columns, and the
// deterministic conjuncts of the filter above it that reference partition columns only.
#include "plan_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

struct PartitionedTables : PlanFixture {
  PartitionedTables() {
    ddl(R"(CREATE TABLE logs (msg STRING, n INT, dt STRING, hr INT) PARTITIONED BY (dt, hr)
             WITH ('connector' = 'filesystem', 'path' = '/logs', 'format' = 'json');
           CREATE TABLE plain (msg STRING, dt STRING) WITH ('connector' = 'filesystem', 'path' = '/p', 'format' = 'csv');
           CREATE TABLE out (msg STRING) WITH ('connector' = 'blackhole'))");
  }
  nlohmann::json source_params(const std::string& sql) { return spec(sql).at("ops").at(0).at("params"); }
};

}  // namespace

TEST(PlanPartitionPruning, PartitionConjunctsGoToTheScanAndStayInTheFilter) {
  PartitionedTables f;
  auto spec = f.spec("INSERT INTO out SELECT msg FROM logs WHERE dt = '2024-01-01' AND n > 3 AND (hr < 10 OR hr IS NULL)"
                     " AND CAST(LOCALTIMESTAMP AS STRING) > dt AND CHAR_LENGTH(msg) > 1");
  const auto& src = spec.at("ops").at(0).at("params");
  EXPECT_EQ(src.at("partition_keys"), nlohmann::json::parse("[2,3]"));
  // Output columns of the scan (projected [0, 1, 2, 3]): only the dt and hr conjuncts;
  // the LOCALTIMESTAMP one is not deterministic.
  EXPECT_EQ(src.at("projected"), nlohmann::json::parse("[0,1,2,3]"));
  EXPECT_GOLDEN(src.at("partition_filter").dump(),
                R"({"and":[{"args":[{"col":2,"type":"STRING"},{"lit":"2024-01-01","type":"STRING NOT NULL"}],"call":"=","type":"BOOLEAN"},{"or":[{"args":[{"col":3,"type":"INT"},{"lit":10,"type":"INT NOT NULL"}],"call":"<","type":"BOOLEAN"},{"args":[{"col":3,"type":"INT"}],"call":"IS NULL","type":"BOOLEAN NOT NULL"}],"type":"BOOLEAN"}],"type":"BOOLEAN"})");
  // The filter above keeps every conjunct.
  EXPECT_EQ(spec.at("ops").at(1).at("params").at("filter").at("and").size(), 5u);
}

TEST(PlanPartitionPruning, PartitionKeysWithoutAFilterAndNoneForAnUnpartitionedTable) {
  PartitionedTables f;
  auto src = f.source_params("INSERT INTO out SELECT msg FROM logs");
  EXPECT_EQ(src.at("partition_keys"), nlohmann::json::parse("[2,3]"));
  EXPECT_FALSE(src.contains("partition_filter"));
  src = f.source_params("INSERT INTO out SELECT msg FROM logs WHERE n > 1");
  EXPECT_FALSE(src.contains("partition_filter"));
  src = f.source_params("INSERT INTO out SELECT msg FROM plain WHERE dt = 'x'");
  EXPECT_FALSE(src.contains("partition_keys"));
  EXPECT_FALSE(src.contains("partition_filter"));
}

}  // namespace clink::test
