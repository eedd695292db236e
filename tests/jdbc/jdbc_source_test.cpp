// The jdbc table source against the real server: Flink SQL scripts run by the `clink`
// binary (scans, projections, partitioned parallel reads, filter pushdown, option
// errors), and its reader checkpointed mid-split and restored (no row lost or repeated).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <regex>
#include <string>
#include <vector>

#include "../support/manual_clock.hpp"
#include "../tools/clink_runner.hpp"
#include "clink/connectors/jdbc/jdbc_source.hpp"
#include "clink/runtime/key_group.hpp"
#include "clink/runtime/runtime_context.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "pg_test_env.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;
using namespace clink::sql;

class JdbcSource : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / unique_pg_table("clink-jdbc-source");
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

  // CREATE TABLE `name` (columns) over the database table `table`, with `extra` options.
  static std::string jdbc_table(const std::string& name, const std::string& columns, const std::string& table,
                                const std::string& extra = "") {
    return "CREATE TABLE " + name + " (" + columns + ") WITH ('connector' = 'jdbc', 'url' = '${URL}', " +
           "'table-name' = '" + table + "'" + extra + ");\n";
  }
  static std::string print_sink(const std::string& columns) {
    return "CREATE TABLE out (" + columns + ") WITH ('connector' = 'print');\n";
  }

  fs::path dir_;
};

TEST_F(JdbcSource, ScansEveryRowWithTheProjectedColumnsTyped) {
  const std::string t = unique_pg_table("scan");
  pg_exec("CREATE TABLE " + t + " (id bigint PRIMARY KEY, name text, price numeric(10, 2), ts timestamp(3), "
          "day date, ok boolean, tags text[])");
  pg_exec("INSERT INTO " + t + " VALUES (1, 'apple', 1.50, '2020-04-15 08:05:00.123', '2020-04-15', true, "
          "'{a,b}'), (2, NULL, NULL, NULL, NULL, NULL, NULL), (3, 'it''s', -0.05, '1970-01-01 00:00:00', "
          "'1969-12-31', false, '{}')");
  auto r = run(jdbc_table("src",
                          "id BIGINT, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3), `day` DATE, ok BOOLEAN, "
                          "tags ARRAY<STRING>",
                          t) +
               print_sink("ok BOOLEAN, id BIGINT, tags ARRAY<STRING>, ts TIMESTAMP(3), price DECIMAL(10, 2), "
                          "name STRING, `day` DATE") +
               "INSERT INTO out SELECT ok, id, tags, ts, price, name, `day` FROM src;\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.sorted_lines(), (std::vector<std::string>{
                                  "+I[false, 3, [], 1970-01-01T00:00, -0.05, it's, 1969-12-31]",
                                  "+I[null, 2, null, null, null, null, null]",
                                  "+I[true, 1, [a, b], 2020-04-15T08:05:00.123, 1.50, apple, 2020-04-15]"}));
}

// Flink's scan.partition.*: [lower, upper] cut into `num` BETWEEN ranges over the subtasks;
// rows outside the bounds (or NULL there) are not read, as in Flink.
TEST_F(JdbcSource, PartitionedReadsCoverTheBoundsOnceAtAnyParallelism) {
  const std::string t = unique_pg_table("parts");
  pg_exec("CREATE TABLE " + t + " (id int, v text)");
  pg_exec("INSERT INTO " + t + " SELECT g, 'v' || g FROM generate_series(1, 1000) g");
  pg_exec("INSERT INTO " + t + " VALUES (NULL, 'null id'), (0, 'below'), (1001, 'above')");
  for (const char* p : {"1", "3"}) {
    SCOPED_TRACE(p);
    auto r = run(jdbc_table("src", "id INT, v STRING", t,
                            ", 'scan.partition.column' = 'id', 'scan.partition.num' = '7', "
                            "'scan.partition.lower-bound' = '1', 'scan.partition.upper-bound' = '1000', "
                            "'scan.fetch-size' = '33'") +
                     "CREATE TABLE out (n BIGINT, s BIGINT, lo INT, hi INT) WITH ('connector' = 'print');\n"
                     "INSERT INTO out SELECT COUNT(*), SUM(id), MIN(id), MAX(id) FROM src;\n",
                 std::string("-p ") + p);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_FALSE(r.lines().empty());
    EXPECT_EQ(r.lines().back().substr(r.lines().back().find("[")), "[1000, 500500, 1, 1000]");
  }
}

TEST(JdbcPartitionRanges, CutAsFlinksNumericBetweenParametersProvider) {
  using R = std::vector<std::pair<std::int64_t, std::int64_t>>;
  EXPECT_EQ(jdbc_partition_ranges(1, 10, 3), (R{{1, 4}, {5, 7}, {8, 10}}));
  EXPECT_EQ(jdbc_partition_ranges(0, 9, 5), (R{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}}));
  EXPECT_EQ(jdbc_partition_ranges(5, 6, 4), (R{{5, 5}, {6, 6}})) << "no more ranges than values";
  EXPECT_EQ(jdbc_partition_ranges(-3, -3, 2), (R{{-3, -3}}));
}

// The filter's conjuncts PostgreSQL evaluates as clink go into the query: a row they
// exclude is never fetched, so a value in it that does not decode is never seen. A
// conjunct that is not sent (a function of a column) lets that row through, and the
// value's error names the table, column and row.
TEST_F(JdbcSource, PushedDownFiltersKeepExcludedRowsInTheDatabase) {
  const std::string t = unique_pg_table("filter");
  pg_exec("CREATE TABLE " + t + " (id int, name varchar(10), n text)");
  pg_exec("INSERT INTO " + t + " VALUES (1, 'a', '10'), (2, 'b', 'oops'), (3, 'c', '30'), (4, NULL, '40')");
  const std::string src = jdbc_table("src", "id INT, name STRING, n INT", t);
  const std::string sink = print_sink("id INT, n INT");
  for (const std::string where :
       {"id <> 2", "name = 'a' OR name = 'c' OR name IS NULL", "id IN (1, 3, 4)", "NOT (id = 2)",
        "id >= 3 OR id < 2", "name LIKE '_' AND name <> 'b' OR id = 4", "CAST(id AS BIGINT) <> 2"}) {
    SCOPED_TRACE(where);
    auto r = run(src + sink + "INSERT INTO out SELECT id, n FROM src WHERE " + where + ";\n");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.sorted_lines(), (std::vector<std::string>{"+I[1, 10]", "+I[3, 30]", "+I[4, 40]"}));
  }
  auto r = run(src + sink + "INSERT INTO out SELECT id, n FROM src WHERE id + 0 <> 2;\n");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("column n, row 2 of split 0: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("oops"), std::string::npos) << r.err;
}

TEST_F(JdbcSource, OptionAndTableErrorsNameTheProblem) {
  const std::string t = unique_pg_table("errors");
  pg_exec("CREATE TABLE " + t + " (id int, v text)");
  const std::string sink = print_sink("id INT") + "INSERT INTO out SELECT id FROM src;\n";
  auto some = run(jdbc_table("src", "id INT", t, ", 'scan.partition.column' = 'id'") + sink);
  EXPECT_NE(some.err.find("Either all or none of the following options should be provided:\nscan.partition.column"),
            std::string::npos)
      << some.err;
  auto bounds = run(jdbc_table("src", "id INT", t,
                               ", 'scan.partition.column' = 'id', 'scan.partition.num' = '2', "
                               "'scan.partition.lower-bound' = '9', 'scan.partition.upper-bound' = '1'") +
                    sink);
  EXPECT_NE(bounds.err.find("'scan.partition.lower-bound'='9' must not be larger than "
                            "'scan.partition.upper-bound'='1'."),
            std::string::npos)
      << bounds.err;
  auto type = run(jdbc_table("src", "id INT, v STRING", t,
                             ", 'scan.partition.column' = 'v', 'scan.partition.num' = '2', "
                             "'scan.partition.lower-bound' = '1', 'scan.partition.upper-bound' = '9'") +
                  sink);
  EXPECT_NE(type.err.find("option 'scan.partition.column' = 'v' must be a column of an integer type"),
            std::string::npos)
      << type.err;
  auto missing = run(jdbc_table("src", "id INT", t + "_nope") + sink);
  EXPECT_NE(missing.err.find("table '" + t + "_nope' does not exist"), std::string::npos) << missing.err;
  auto column = run(jdbc_table("src", "id INT, w STRING", t) + print_sink("w STRING") +
                    "INSERT INTO out SELECT w FROM src;\n");
  EXPECT_NE(column.err.find("has no column 'w' (its columns: id, v)"), std::string::npos) << column.err;
}

// A reader checkpointed in the middle of its splits and restored at another parallelism
// reads exactly the rows it had not emitted, in both the primary-key order and the heap
// order of a table without a key.
TEST(JdbcSourceRestore, ASplitRestoredMidwayEmitsEachRowOnce) {
  for (const bool keyed : {true, false}) {
    SCOPED_TRACE(keyed ? "primary key" : "no key");
    const std::string t = unique_pg_table("restore");
    pg_exec("CREATE TABLE " + t + " (id int" + (keyed ? " PRIMARY KEY" : "") + ", v text)");
    // Inserted out of key order, so the key order is not the heap order.
    pg_exec("INSERT INTO " + t + " SELECT (g * 7919) % 1000 + 1, 'v' || g FROM generate_series(1, 1000) g");
    JdbcSourceConfig c;
    c.connection.url = postgres_url();
    c.table_name = t;
    c.table_schema = make_schema({{"id", LogicalType::int_type()}, {"v", LogicalType::string()}});
    c.projected = {0};
    c.partition_column = "id";
    c.partitions = jdbc_partition_ranges(1, 1000, 4);
    c.fetch_size = 50;
    JdbcSqlSource source(std::move(c));
    ManualClock clock{0};
    std::multiset<std::int32_t> seen;
    auto drain = [&](SqlSourceReader& reader, std::size_t max_polls) {
      for (std::size_t i = 0; i < max_polls; ++i) {
        ColumnBatch b(source.output_schema());
        auto status = reader.poll(b, 64);
        for (std::size_t r = 0; r < b.size(); ++r) seen.insert(b.column(0).values<std::int32_t>()[r]);
        if (status == SqlSourceReader::Status::kEnd) return true;
      }
      return false;
    };
    // Two readers read a while; their splits are checkpointed and dealt to three.
    std::vector<std::string> state;
    for (int s = 0; s < 2; ++s) {
      RuntimeContext ctx("src", "src", s, 2, kDefaultMaxParallelism, nullptr, std::make_shared<OperatorMetrics>(), clock);
      auto reader = source.create_reader(s, 2);
      reader->open(ctx);
      ASSERT_FALSE(drain(*reader, 5 + 3 * s));
      for (auto& split : reader->snapshot_splits()) state.push_back(split);
      reader->close();
    }
    for (int s = 0; s < 3; ++s) {
      RuntimeContext ctx("src", "src", s, 3, kDefaultMaxParallelism, nullptr, std::make_shared<OperatorMetrics>(), clock);
      auto reader = source.create_reader(s, 3);
      reader->open(ctx);
      std::vector<std::string> mine;
      for (std::size_t i = s; i < state.size(); i += 3) mine.push_back(state[i]);
      reader->restore_splits(mine);
      ASSERT_TRUE(drain(*reader, 1000));
    }
    std::multiset<std::int32_t> all;
    for (int i = 1; i <= 1000; ++i) all.insert(i);
    EXPECT_EQ(seen, all);
  }
}

}  // namespace
}  // namespace clink::test
