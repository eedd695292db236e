// The jdbc sink in SQL scripts run by the real `clink` binary against the test server:
// append from an insert-only query, upsert from a GROUP BY, sink.parallelism, and the
// planner's answer to updates without a PRIMARY KEY.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <chrono>
#include <vector>

#include "../tools/clink_runner.hpp"
#include "pg_test_env.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;

class SqlJdbcSink : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / unique_pg_table("clink-sql-jdbc");
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `sql` (${URL}: the server's JDBC URL) through `clink run`, plus `args`.
  Result run(std::string sql, const std::string& args = "") {
    sql = std::regex_replace(sql, std::regex("\\$\\{URL\\}"), postgres_url());
    auto path = dir_ / "job.sql";
    std::ofstream(path) << sql;
    return run_clink("run '" + path.string() + "' " + args, dir_);
  }

  // datagen rows id = 1..n (NOT NULL), k = id mod 7.
  static std::string numbers(int n) {
    return "CREATE TABLE nums (id BIGINT NOT NULL) WITH ('connector' = 'datagen', 'number-of-rows' = '" +
           std::to_string(n) + "', 'rows-per-second' = '100000000', 'fields.id.kind' = 'sequence', "
           "'fields.id.start' = '1', 'fields.id.end' = '" + std::to_string(n) + "');\n";
  }

  fs::path dir_;
};

TEST_F(SqlJdbcSink, AppendsAnInsertOnlyQuery) {
  const std::string t = unique_pg_table("sql_append");
  pg_exec("CREATE TABLE " + t + " (id bigint, label text, amount numeric(12, 2), at timestamptz(3), tags text[])");
  Result r = run(numbers(1000) + "CREATE TABLE out (id BIGINT, label STRING, amount DECIMAL(12, 2), at TIMESTAMP_LTZ(3), "
                 "tags ARRAY<STRING>) WITH ('connector' = 'jdbc', 'url' = '${URL}', 'table-name' = '" + t +
                 "', 'driver' = 'org.postgresql.Driver', 'sink.buffer-flush.max-rows' = '64', "
                 "'sink.buffer-flush.interval' = '50ms', 'sink.max-retries' = '2');\n"
                 "INSERT INTO out SELECT id, CONCAT('n', CAST(id AS STRING)), CAST(CAST(id AS DECIMAL(12, 2)) / 4 AS DECIMAL(12, 2)), "
                 "TO_TIMESTAMP_LTZ(1704067200000 + id * 1001, 3), ARRAY[CAST(MOD(id, 3) AS STRING), 'x'] "
                 "FROM nums WHERE MOD(id, 2) = 0;\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(pg_query_value("SELECT count(*) FROM " + t), "500");
  EXPECT_EQ(pg_query_rows("SELECT * FROM " + t + " WHERE id IN (2, 1000)"),
            (std::vector<std::string>{"1000|n1000|250.00|2024-01-01 00:16:41+00|{1,x}", "2|n2|0.50|2024-01-01 00:00:02.002+00|{2,x}"}));
  EXPECT_EQ(pg_query_value("SELECT sum(id) FROM " + t), "250500");
}

TEST_F(SqlJdbcSink, UpsertsAGroupByByItsPrimaryKey) {
  const std::string t = unique_pg_table("sql_upsert");
  pg_exec("CREATE TABLE " + t + " (k bigint PRIMARY KEY, c bigint, s bigint)");
  pg_exec("INSERT INTO " + t + " VALUES (100, 0, 0)");  // a row the job does not touch stays
  Result r = run(numbers(70000) + "CREATE TABLE agg (k BIGINT, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH "
                 "('connector' = 'jdbc', 'url' = '${URL}', 'table-name' = '" + t + "');\n"
                 "INSERT INTO agg SELECT COALESCE(MOD(id, 7), 0), COUNT(*), SUM(id) FROM nums "
                 "GROUP BY COALESCE(MOD(id, 7), 0);\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> expected{"100|0|0"};
  for (int k = 0; k < 7; ++k) {
    long long s = 0;
    for (long long id = 1; id <= 70000; ++id)
      if (id % 7 == k) s += id;
    expected.push_back(std::to_string(k) + "|10000|" + std::to_string(s));
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(pg_query_rows("SELECT * FROM " + t), expected);
}

TEST_F(SqlJdbcSink, DeletesWhatTheQueryRetracts) {
  // How many keys have each count: as keys gain rows, a count's group empties and is
  // deleted (every change flushed at once, so the deletes reach the table).
  const std::string t = unique_pg_table("sql_delete");
  pg_exec("CREATE TABLE " + t + " (c bigint PRIMARY KEY, n bigint)");
  Result r = run(numbers(20) + "CREATE TABLE hist (c BIGINT, n BIGINT, PRIMARY KEY (c) NOT ENFORCED) WITH "
                 "('connector' = 'jdbc', 'url' = '${URL}', 'table-name' = '" + t + "', "
                 "'sink.buffer-flush.max-rows' = '1');\n"
                 "INSERT INTO hist SELECT c, COUNT(*) FROM (SELECT COALESCE(MOD(id, 8), 0) AS k, COUNT(*) AS c "
                 "FROM nums GROUP BY COALESCE(MOD(id, 8), 0)) GROUP BY c;\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // ids 1..20: keys 1..4 have 3 ids, keys 0 and 5..7 have 2; the count 1 is gone.
  EXPECT_EQ(pg_query_rows("SELECT * FROM " + t), (std::vector<std::string>{"2|4", "3|4"}));
}

TEST_F(SqlJdbcSink, RunsAtSinkParallelism) {
  const std::string t = unique_pg_table("sql_parallel");
  pg_exec("CREATE TABLE " + t + " (k bigint PRIMARY KEY, c bigint)");
  Result r = run(numbers(5000) + "CREATE TABLE agg (k BIGINT, c BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH "
                 "('connector' = 'jdbc', 'url' = '${URL}&ApplicationName=" + t + "', 'table-name' = '" + t +
                 "', 'sink.parallelism' = '3');\n"
                 "INSERT INTO agg SELECT COALESCE(MOD(id, 50), 0), COUNT(*) FROM nums GROUP BY COALESCE(MOD(id, 50), 0);\n",
                 "-p 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(pg_query_value("SELECT count(*) || ',' || sum(c) || ',' || min(c) || ',' || max(c) FROM " + t),
            "50,5000,100,100");
  // Every subtask's connection is closed (its backend exits a moment after the client).
  std::string open_connections;
  for (int i = 0; i < 100; ++i) {
    open_connections = pg_query_value("SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + t + "'");
    if (open_connections == "0") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(open_connections, "0");
}

TEST_F(SqlJdbcSink, UpdatesNeedAPrimaryKey) {
  const std::string t = unique_pg_table("sql_nokey");
  pg_exec("CREATE TABLE " + t + " (k bigint, c bigint)");
  Result r = run(numbers(10) + "CREATE TABLE agg (k BIGINT, c BIGINT) WITH ('connector' = 'jdbc', 'url' = '${URL}', "
                 "'table-name' = '" + t + "');\n"
                 "INSERT INTO agg SELECT MOD(id, 2), COUNT(*) FROM nums GROUP BY MOD(id, 2);\n");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("but the jdbc sink takes them only by a PRIMARY KEY, which the table does not declare"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace clink::test
