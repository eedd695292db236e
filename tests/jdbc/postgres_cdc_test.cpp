// The postgres-cdc source end to end: Flink SQL jobs run by the `clink` binary against the
// fixture's PostgreSQL server (wal_level = logical), their printed changelogs compared
// with the changes made and with the same query run on the database.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "postgres_cdc_test_env.hpp"

namespace clink::test {
namespace {

using Lines = std::vector<std::string>;

class PostgresCdc : public PostgresCdcTest {
 protected:
  // A job printing `src` (or `select`'s rows into `sink_columns`).
  std::string job(const std::string& table_options, const std::string& columns, const std::string& sink_columns,
                  const std::string& select) {
    return "CREATE TABLE src (" + columns + ") WITH (" + table_options + ");\n" + "CREATE TABLE out (" +
           sink_columns + ") WITH ('connector' = 'print');\n" + "INSERT INTO out " + select + ";\n";
  }
  std::string copy_job(const std::string& table_options, const std::string& columns = "id BIGINT, item STRING, qty INT") {
    return job(table_options, columns, columns, "SELECT * FROM src");
  }
  static Lines tail(const Lines& v, std::size_t from) { return Lines(v.begin() + static_cast<long>(from), v.end()); }
};

TEST_F(PostgresCdc, SnapshotThenInsertsUpdatesAndDeletes) {
  const std::string t = unique_pg_table("cdc_orders");
  pg_exec("CREATE TABLE " + t + " (id bigint PRIMARY KEY, item text, qty integer);"
          "ALTER TABLE " + t + " REPLICA IDENTITY FULL;"
          "INSERT INTO " + t + " VALUES (1, 'apple', 3), (2, 'pear', 5), (3, NULL, NULL)");
  auto& run = start(script(copy_job(pg_cdc_options(t, slot("s")))));
  ASSERT_TRUE(printed(run, 3)) << run.err();
  EXPECT_EQ(changelog_lines(run.out()), (Lines{"+I[1, apple, 3]", "+I[2, pear, 5]", "+I[3, null, null]"}));

  pg_exec("INSERT INTO " + t + " VALUES (4, 'fig', 1)");
  pg_exec("UPDATE " + t + " SET qty = 4 WHERE id = 1");
  pg_exec("DELETE FROM " + t + " WHERE id = 2");
  pg_exec("UPDATE " + t + " SET id = 30, item = 'kiwi' WHERE id = 3");  // a key change: one -U/+U pair
  ASSERT_TRUE(printed(run, 9)) << run.err();
  const Lines lines = changelog_lines(run.out());
  EXPECT_EQ(tail(lines, 3), (Lines{"+I[4, fig, 1]", "-U[1, apple, 3]", "+U[1, apple, 4]", "-D[2, pear, 5]",
                                   "-U[3, null, null]", "+U[30, kiwi, null]"}));
  EXPECT_EQ(fold_retractions(lines), pg_query_rows("SELECT id, item, COALESCE(qty::text, 'null') FROM " + t));
}

// A transaction's changes to two captured tables (one 'table-name' pattern) all reach the
// GROUP BY, which then equals the same query on the database.
TEST_F(PostgresCdc, TransactionTouchingTwoCapturedTables) {
  const std::string base = unique_pg_table("cdc_two");
  for (const char* side : {"_a", "_b"})
    pg_exec("CREATE TABLE " + base + side + " (id bigint PRIMARY KEY, grp text, qty integer);"
            "ALTER TABLE " + base + side + " REPLICA IDENTITY FULL");
  pg_exec("INSERT INTO " + base + "_a VALUES (1, 'x', 1), (2, 'y', 2); INSERT INTO " + base + "_b VALUES (1, 'x', 10)");
  const std::string query = "SELECT grp, count(*), sum(qty) FROM (SELECT grp, qty FROM " + base +
                            "_a UNION ALL SELECT grp, qty FROM " + base + "_b) u GROUP BY grp";
  auto& run = start(script(job(pg_cdc_options(base + "_(a|b)", slot("s")), "id BIGINT, grp STRING, qty INT",
                               "grp STRING, n BIGINT, total INT", "SELECT grp, COUNT(*), SUM(qty) FROM src GROUP BY grp")));
  ASSERT_TRUE(eventually([&] { return fold_upserts(changelog_lines(run.out()), 1) == pg_query_rows(query); }, 30000))
      << run.out() << run.err();
  pg_exec("BEGIN;"
          "INSERT INTO " + base + "_a VALUES (3, 'z', 7);"
          "UPDATE " + base + "_b SET grp = 'y', qty = 11 WHERE id = 1;"
          "DELETE FROM " + base + "_a WHERE id = 1;"
          "INSERT INTO " + base + "_b VALUES (2, 'z', 5);"
          "COMMIT");
  ASSERT_TRUE(eventually([&] { return fold_upserts(changelog_lines(run.out()), 1) == pg_query_rows(query); }, 30000))
      << run.out() << run.err();
  EXPECT_EQ(pg_query_rows(query), (Lines{"y|2|13", "z|2|12"}));
}

// 'changelog-mode' = 'upsert': no REPLICA IDENTITY FULL needed; the planner normalises the
// upserts by the PRIMARY KEY (ChangelogNormalize), so the output is a full changelog.
TEST_F(PostgresCdc, UpsertModeNormalisedByThePrimaryKey) {
  const std::string t = unique_pg_table("cdc_upsert");
  pg_exec("CREATE TABLE " + t + " (id bigint PRIMARY KEY, item text, qty integer);"
          "INSERT INTO " + t + " VALUES (1, 'apple', 3)");
  auto& run = start(script(copy_job(pg_cdc_options(t, slot("s"), ", 'changelog-mode' = 'upsert'"),
                                    "id BIGINT, item STRING, qty INT, PRIMARY KEY (id) NOT ENFORCED")));
  ASSERT_TRUE(printed(run, 1)) << run.err();
  pg_exec("UPDATE " + t + " SET qty = 4 WHERE id = 1");
  pg_exec("DELETE FROM " + t + " WHERE id = 1");
  pg_exec("INSERT INTO " + t + " VALUES (2, 'pear', 1)");
  ASSERT_TRUE(printed(run, 5)) << run.err();
  EXPECT_EQ(changelog_lines(run.out()),
            (Lines{"+I[1, apple, 3]", "-U[1, apple, 3]", "+U[1, apple, 4]", "-D[1, apple, 4]", "+I[2, pear, 1]"}));
}

// The seed's spelling: 'mode' = 'upsert' is changelog-mode upsert, 'mode' = 'cdc' the default.
TEST_F(PostgresCdc, SeedModeSpellings) {
  const std::string t = unique_pg_table("cdc_seed");
  pg_exec("CREATE TABLE " + t + " (id bigint PRIMARY KEY, item text, qty integer);"
          "ALTER TABLE " + t + " REPLICA IDENTITY FULL; INSERT INTO " + t + " VALUES (1, 'apple', 3)");
  auto& cdc = start(script(copy_job(pg_cdc_options(t, slot("s"), ", 'mode' = 'cdc'")), "cdc.sql"));
  auto& upsert = start(script(copy_job(pg_cdc_options(t, slot("u"), ", 'mode' = 'upsert'"),
                                       "id BIGINT, item STRING, qty INT, PRIMARY KEY (id) NOT ENFORCED"),
                              "upsert.sql"));
  ASSERT_TRUE(printed(cdc, 1)) << cdc.err();
  ASSERT_TRUE(printed(upsert, 1)) << upsert.err();
  pg_exec("UPDATE " + t + " SET qty = 4 WHERE id = 1");
  ASSERT_TRUE(printed(cdc, 3)) << cdc.err();
  ASSERT_TRUE(printed(upsert, 3)) << upsert.err();
  const Lines expected{"+I[1, apple, 3]", "-U[1, apple, 3]", "+U[1, apple, 4]"};
  EXPECT_EQ(changelog_lines(cdc.out()), expected);
  EXPECT_EQ(changelog_lines(upsert.out()), expected);
}

// latest-offset: no snapshot, only the changes made after the stream started.
TEST_F(PostgresCdc, LatestOffsetReadsOnlyNewChanges) {
  const std::string t = unique_pg_table("cdc_latest");
  pg_exec("CREATE TABLE " + t + " (id bigint PRIMARY KEY, item text, qty integer);"
          "ALTER TABLE " + t + " REPLICA IDENTITY FULL; INSERT INTO " + t + " VALUES (1, 'old', 1)");
  const std::string s = slot("s");
  auto& run = start(script(copy_job(pg_cdc_options(t, s, ", 'scan.startup.mode' = 'latest-offset'"))));
  ASSERT_TRUE(eventually([&] {
    // Streaming (START_REPLICATION ran), not just creating the slot: a change committed
    // while the slot is still being created falls before its consistent point.
    return pg_query_value("SELECT count(*) FROM pg_replication_slots s JOIN pg_stat_replication r ON r.pid = "
                          "s.active_pid WHERE s.slot_name = '" + s + "' AND r.state = 'streaming'") == "1";
  }, 30000)) << run.err();
  pg_exec("INSERT INTO " + t + " VALUES (2, 'new', 2); UPDATE " + t + " SET qty = 10 WHERE id = 1");
  ASSERT_TRUE(printed(run, 3)) << run.err();
  EXPECT_EQ(changelog_lines(run.out()), (Lines{"+I[2, new, 2]", "-U[1, old, 1]", "+U[1, old, 10]"}));
}

// The slot's confirmed_flush_lsn moves only when a checkpoint completes (and, with
// 'scan.lsn-commit.checkpoints-num-delay', that many checkpoints later).
TEST_F(PostgresCdc, ConfirmedFlushLsnAdvancesOnlyWithCompletedCheckpoints) {
  const std::string t = unique_pg_table("cdc_flush");
  pg_exec("CREATE TABLE " + t + " (id bigint PRIMARY KEY, item text, qty integer);"
          "ALTER TABLE " + t + " REPLICA IDENTITY FULL; INSERT INTO " + t + " VALUES (1, 'a', 1)");
  auto confirmed = [](const std::string& s) {
    return pg_query_value("SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '" + s + "'");
  };
  auto past = [&](const std::string& s, const std::string& lsn) {
    return pg_query_value("SELECT confirmed_flush_lsn > '" + lsn + "'::pg_lsn FROM pg_replication_slots WHERE slot_name = '" + s + "'") == "t";
  };
  struct Case {
    std::string name;
    std::vector<std::string> args;  // checkpointing
    std::string delay;
    bool advances;
  };
  const std::vector<Case> cases = {
      {"no_checkpoints", {}, "0", false},
      {"checkpoints", {"--checkpoint-dir", (dir_ / "chk").string(), "--checkpoint-interval", "100"}, "0", true},
      {"delayed_past_the_run", {"--checkpoint-dir", (dir_ / "chk2").string(), "--checkpoint-interval", "100"}, "1000", false},
  };
  int id = 10;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string s = slot(c.name.substr(0, 5));
    auto& run = start(script(copy_job(pg_cdc_options(t, s, ", 'heartbeat.interval.ms' = '50ms', "
                                                           "'scan.lsn-commit.checkpoints-num-delay' = '" + c.delay + "'")),
                             c.name + ".sql"),
                      c.args);
    ASSERT_TRUE(printed(run, 1)) << run.err();
    const std::string created = confirmed(s);
    const std::string before = pg_query_value("SELECT pg_current_wal_lsn()");
    pg_exec("INSERT INTO " + t + " VALUES (" + std::to_string(++id) + ", 'b', 2)");
    ASSERT_TRUE(printed(run, 2)) << run.err();
    if (c.advances) {
      EXPECT_TRUE(eventually([&] { return past(s, before); }, 20000)) << confirmed(s) << " vs " << before;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // status updates go out every 50 ms
      EXPECT_EQ(confirmed(s), created);
    }
    run.kill(SIGKILL);
  }
}

}  // namespace
}  // namespace clink::test
