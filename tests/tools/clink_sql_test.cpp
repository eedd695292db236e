// The SQL entry points of the real `clink` binary: `clink run script.sql` (tableau
// output of SELECTs, print sinks, errors with line and column), `clink explain
// script.sql`, `--catalog-dir` persistence, and the `clink sql` shell fed through a pipe.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "clink_runner.hpp"

namespace clink::test {

namespace {

namespace fs = std::filesystem;

class ClinkSqlTest : public ClinkCliTest {
 protected:
  ClinkSqlTest() : ClinkCliTest("clink_sql_cli_") {}
};

const char* kBidsTable =
    "CREATE TABLE Bid (bidtime TIMESTAMP(3), price DECIMAL(10, 2), item STRING, supplier_id STRING,\n"
    "  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND)\n"
    "WITH ('connector' = 'filesystem', 'path' = 'examples/data/bids.json', 'format' = 'json');\n";

TEST_F(ClinkSqlTest, RunPrintsSelectsInTableauForm) {
  auto r = run_clink("run examples/sql/bids_json.sql", dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> expected = {
      "+----+-------------------------+-------------------------+------------------------------------------+",
      "| op |            window_start |              window_end |                              total_price |",
      "+----+-------------------------+-------------------------+------------------------------------------+",
      "| +I | 2020-04-15 08:00:00.000 | 2020-04-15 08:10:00.000 |                                    11.00 |",
      "| +I | 2020-04-15 08:10:00.000 | 2020-04-15 08:20:00.000 |                                    10.00 |",
      "+----+-------------------------+-------------------------+------------------------------------------+",
      "Received a total of 2 rows",
      "+----+--------------------------------+----------------------+------------------------------------------+",
      "| op |                    supplier_id |                 bids |                                    total |",
      "+----+--------------------------------+----------------------+------------------------------------------+",
      "| +I |                      supplier1 |                    1 |                                     4.00 |",
      "| -U |                      supplier1 |                    1 |                                     4.00 |",
      "| +U |                      supplier1 |                    2 |                                     6.00 |",
      "| +I |                      supplier2 |                    1 |                                     5.00 |",
      "| -U |                      supplier2 |                    1 |                                     5.00 |",
      "| +U |                      supplier2 |                    2 |                                     8.00 |",
      "| -U |                      supplier1 |                    2 |                                     6.00 |",
      "| +U |                      supplier1 |                    3 |                                     7.00 |",
      "| -U |                      supplier2 |                    2 |                                     8.00 |",
      "| +U |                      supplier2 |                    3 |                                    14.00 |",
      "+----+--------------------------------+----------------------+------------------------------------------+",
      "Received a total of 10 rows",
  };
  EXPECT_EQ(r.lines(), expected);
}

TEST_F(ClinkSqlTest, RunsTheDatagenExampleToCompletion) {
  auto r = run_clink("run examples/sql/datagen_tumble_print.sql", dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // 1000 orders over products 1..3: the printed counts add up to 1000.
  long total = 0;
  for (const auto& l : r.lines()) {
    ASSERT_EQ(l.rfind("+I[", 0), 0u) << l;
    auto last = l.rfind(", ");
    auto prev = l.rfind(", ", last - 1);
    total += std::stol(l.substr(prev + 2, last - prev - 2));
  }
  EXPECT_EQ(total, 1000);
}

// Flink's random datagen stamps TIMESTAMP columns with the current time per row, so an
// unbounded table with a WATERMARK sees event time advance and its windows close while it
// runs (the quickstarts' datagen -> TUMBLE -> print), not only when it is stopped.
TEST_F(ClinkSqlTest, UnboundedDatagenWindowsCloseWhileItRuns) {
  std::string script = write("job.sql",
                             "CREATE TABLE clicks (n INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (\n"
                             "  'connector' = 'datagen', 'rows-per-second' = '200');\n"
                             "CREATE TABLE counts (window_start TIMESTAMP(3), window_end TIMESTAMP(3), c BIGINT)"
                             " WITH ('connector' = 'print');\n"
                             "INSERT INTO counts SELECT window_start, window_end, COUNT(*) FROM\n"
                             "  TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end;\n");
  // Cancelled after 3.5 s: only windows that closed while the job ran are printed.
  Result r;
  r.exit_code = std::system(("timeout -s INT 3.5 '" + std::string(CLINK_BINARY) + "' run '" + script + "' >'" +
                             (dir_ / "out").string() + "' 2>'" + (dir_ / "err").string() + "'").c_str());
  r.out = slurp(dir_ / "out");
  ASSERT_GE(r.lines().size(), 2u) << r.out << slurp(dir_ / "err");
  for (const auto& l : r.lines()) {
    ASSERT_EQ(l.rfind("+I[", 0), 0u) << l;
    EXPECT_GT(std::stol(l.substr(l.rfind(", ") + 2)), 0) << l;  // each window counted rows
  }
}

TEST_F(ClinkSqlTest, PrintSinkInsertAndDetectionByContent) {
  std::string script = write("job.txt", std::string(kBidsTable) +
                                            "CREATE TABLE out_t (item STRING, price DECIMAL(10, 2)) WITH ('connector' = 'print');\n"
                                            "INSERT INTO out_t SELECT item, price FROM Bid WHERE price > 4;\n");
  auto r = run_clink("run " + script, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.lines(), (std::vector<std::string>{"+I[D, 5.00]", "+I[F, 6.00]"}));
}

TEST_F(ClinkSqlTest, ErrorsCarryLineAndColumnAndExitNonZero) {
  std::string script = write("bad.sql", std::string(kBidsTable) + "SELECT item,\n  nope FROM Bid;\n");
  auto r = run_clink("run " + script, dir_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "error: " + script + ": line 5, column 3: Column 'nope' not found in any table\n");
  auto syntax = run_clink("run " + write("syntax.sql", "SELECT FROM WHERE;\n"), dir_);
  EXPECT_EQ(syntax.exit_code, 1);
  EXPECT_NE(syntax.err.find(": line 1, column "), std::string::npos) << syntax.err;
}

TEST_F(ClinkSqlTest, ExplainPrintsThePlanAndWithSpecTheJobGraph) {
  std::string script = write("q.sql", std::string(kBidsTable) + "SELECT supplier_id, COUNT(*) FROM Bid GROUP BY supplier_id;\n");
  auto r = run_clink("explain " + script, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = r.lines();
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], "== Optimized Plan ==");
  EXPECT_NE(r.out.find("GroupAggregate(groupBy=[supplier_id]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("changelog=retract"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("== JobGraphSpec =="), std::string::npos);
  auto spec = run_clink("explain --spec " + script, dir_);
  ASSERT_EQ(spec.exit_code, 0) << spec.err;
  EXPECT_NE(spec.out.find("== JobGraphSpec =="), std::string::npos);
  EXPECT_NE(spec.out.find("\"sql_group_aggregate\""), std::string::npos);
}

TEST_F(ClinkSqlTest, CatalogDirKeepsTablesAcrossRuns) {
  std::string catalog = (dir_ / "catalog").string();
  auto create = run_clink("run --catalog-dir " + catalog + " " + write("ddl.sql", kBidsTable), dir_);
  ASSERT_EQ(create.exit_code, 0) << create.err;
  auto show = run_clink("run --catalog-dir " + catalog + " " + write("show.sql", "SHOW TABLES;\n"), dir_);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_EQ(show.lines(), (std::vector<std::string>{"+------------+", "| table name |", "+------------+",
                                                    "|        Bid |", "+------------+", "1 row in set"}));
}

TEST_F(ClinkSqlTest, AnalyzeTableFeedsTheEstimates) {
  std::string data = write("s.csv", "1,a\n2,b\n");
  std::string script = write("a.sql", "CREATE TABLE s (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = '" +
                                          data + "', 'format' = 'csv');\n"
                                                 "ANALYZE TABLE s COMPUTE STATISTICS FOR ALL COLUMNS;\n"
                                                 "EXPLAIN SELECT name FROM s WHERE id > 1;\n");
  auto r = run_clink("run " + script, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.lines(), (std::vector<std::string>{
                           "== Optimized Plan ==",
                           "Sink(table=[select_1], fields=[name]) [rows=1, changelog=insert-only]",
                           "  Calc(select=[name], where=[>(id, 1)]) [rows=1, changelog=insert-only]",
                           "    TableSourceScan(table=[s], fields=[id, name]) [rows=2, changelog=insert-only]",
                       }));
}

TEST_F(ClinkSqlTest, ShellReadsMultiLineStatementsFromAPipe) {
  std::string input = write("input.sql", std::string(kBidsTable) +
                                             "SET 'table.local-time-zone' = 'UTC';\n"
                                             "SELECT item\n  FROM Bid\n  WHERE price < 3;\n"
                                             "SELECT nope FROM Bid;\n"
                                             "quit;\n"
                                             "SELECT 'never' FROM Bid;\n");
  auto r = run_clink("sql < " + input, dir_);
  EXPECT_EQ(r.exit_code, 1);  // one statement failed
  std::vector<std::string> expected = {
      "[INFO] Execute statement succeeded.",
      "[INFO] Execute statement succeeded.",
      "+----+--------------------------------+",
      "| op |                           item |",
      "+----+--------------------------------+",
      "| +I |                              A |",
      "| +I |                              E |",
      "+----+--------------------------------+",
      "Received a total of 2 rows",
  };
  EXPECT_EQ(r.lines(), expected);
  EXPECT_EQ(r.err, "[ERROR] line 1, column 8: Column 'nope' not found in any table\n");
}

TEST_F(ClinkSqlTest, ValuesRunWithoutATableInRunAndInTheShell) {
  std::string script = write("values.sql",
                             "CREATE TABLE out_t (id INT, name STRING) WITH ('connector' = 'print');\n"
                             "INSERT INTO out_t VALUES (1, 'a'), (2, 'b');\n"
                             "SELECT 1 + 1, UPPER('x');\n"
                             "SELECT name, COUNT(*) AS c FROM (VALUES (1, 'a'), (2, 'b'), (3, 'a')) AS t(id, name)\n"
                             "  GROUP BY name;\n");
  std::vector<std::string> selects = {
      "+----+-------------+--------------------------------+",
      "| op |      EXPR$0 |                         EXPR$1 |",
      "+----+-------------+--------------------------------+",
      "| +I |           2 |                              X |",
      "+----+-------------+--------------------------------+",
      "Received a total of 1 row",
      "+----+------+----------------------+",
      "| op | name |                    c |",
      "+----+------+----------------------+",
      "| +I |    a |                    1 |",
      "| +I |    b |                    1 |",
      "| -U |    a |                    1 |",
      "| +U |    a |                    2 |",
      "+----+------+----------------------+",
      "Received a total of 4 rows",
  };
  auto r = run_clink("run " + script, dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> expected = {"+I[1, a]", "+I[2, b]"};
  expected.insert(expected.end(), selects.begin(), selects.end());
  EXPECT_EQ(r.lines(), expected);
  auto shell = run_clink("sql < " + script, dir_);
  ASSERT_EQ(shell.exit_code, 0) << shell.err;
  expected = {"[INFO] Execute statement succeeded.", "+I[1, a]", "+I[2, b]", "[INFO] Job finished."};
  expected.insert(expected.end(), selects.begin(), selects.end());
  EXPECT_EQ(shell.lines(), expected);
}

TEST_F(ClinkSqlTest, ShellReportsAnUnfinishedStatement) {
  auto r = run_clink("sql < " + write("in.sql", "SHOW TABLES\n"), dir_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "[ERROR] The input ended inside a statement (missing ';')\n");
}

}  // namespace

}  // namespace clink::test
