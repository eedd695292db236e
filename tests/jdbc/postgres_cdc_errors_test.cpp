// postgres-cdc's errors: each names the problem, the table or option and what to do.
#include <gtest/gtest.h>

#include <cstdlib>

#include "../tools/clink_runner.hpp"
#include "postgres_cdc_test_env.hpp"

namespace clink::test {
namespace {

class PostgresCdcErrors : public PostgresCdcTest {
 protected:
  // Runs a job printing `src` until it fails; its stderr.
  std::string failure(const std::string& options, const std::string& columns = "id BIGINT, item STRING, qty INT") {
    auto sql = script("CREATE TABLE src (" + columns + ") WITH (" + options + ");\n" +
                      "CREATE TABLE out (id BIGINT, item STRING, qty INT) WITH ('connector' = 'print');\n"
                      "INSERT INTO out SELECT id, item, qty FROM src;\n");
    Result r = run_clink("run '" + sql.string() + "'", dir_);
    EXPECT_NE(r.exit_code, 0) << r.out;
    return r.err;
  }
  std::string table() {
    const std::string t = unique_pg_table("cdc_err");
    pg_exec("CREATE TABLE " + t + " (id bigint PRIMARY KEY, item text, qty integer); INSERT INTO " + t +
            " VALUES (1, 'a', 1)");
    return t;
  }
};

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST_F(PostgresCdcErrors, MissingTableAndColumn) {
  EXPECT_HAS(failure(pg_cdc_options("no_such_table_anywhere", slot("s"))),
             "no table of database postgres@127.0.0.1:");
  EXPECT_HAS(failure(pg_cdc_options(table(), slot("s")), "id BIGINT, item STRING, qty INT, colour STRING"),
             "has no column `colour` (its columns: id, item, qty)");
}

TEST_F(PostgresCdcErrors, OptionsAreChecked) {
  const std::string t = table();
  EXPECT_HAS(failure(pg_cdc_options(t, slot("s"), ", 'decoding.plugin.name' = 'decoderbufs'")),
             "option 'decoding.plugin.name' = 'decoderbufs': postgres-cdc decodes only 'pgoutput'");
  EXPECT_HAS(failure(pg_cdc_options(t, slot("s"), ", 'scan.startup.mode' = 'earliest'")),
             "Invalid value for option 'scan.startup.mode'. Supported values are [initial, latest-offset], but was: "
             "earliest");
  EXPECT_HAS(failure(pg_cdc_options(t, slot("s"), ", 'changelog-mode' = 'upsert'")),
             "Primary key must be present when upsert mode is selected.");
  EXPECT_HAS(failure(pg_cdc_options(t, "Bad-Slot")), "option 'slot.name' = 'Bad-Slot'");
  EXPECT_HAS(failure(pg_cdc_options(t, slot("s"), ", 'scan.snapshot.fetchsize' = '5'")),
             "unknown option 'scan.snapshot.fetchsize'");
  // Debezium's pass-through options are accepted.
  auto& run = start(script("CREATE TABLE src (id BIGINT, item STRING, qty INT) WITH (" +
                           pg_cdc_options(t, slot("s"), ", 'debezium.snapshot.mode' = 'initial'") +
                           ");\nCREATE TABLE out (id BIGINT, item STRING, qty INT) WITH ('connector' = 'print');\n"
                           "INSERT INTO out SELECT * FROM src;\n"));
  EXPECT_TRUE(printed(run, 1)) << run.err();
}

// The default changelog mode needs the old rows: an update without them fails with Flink
// CDC's message, naming the table and the fix.
TEST_F(PostgresCdcErrors, UpdateWithoutReplicaIdentityFull) {
  const std::string t = table();
  auto& run = start(script("CREATE TABLE src (id BIGINT, item STRING, qty INT) WITH (" + pg_cdc_options(t, slot("s")) +
                           ");\nCREATE TABLE out (id BIGINT, item STRING, qty INT) WITH ('connector' = 'print');\n"
                           "INSERT INTO out SELECT * FROM src;\n"));
  ASSERT_TRUE(printed(run, 1)) << run.err();
  pg_exec("UPDATE " + t + " SET qty = 2");
  ASSERT_TRUE(run.wait_for(30000).has_value());
  EXPECT_HAS(run.err(), "please check the Postgres table has been set REPLICA IDENTITY to FULL level");
  EXPECT_HAS(run.err(), "'ALTER TABLE public." + t + " REPLICA IDENTITY FULL'");
}

TEST_F(PostgresCdcErrors, NoReplicationPrivilege) {
  const std::string t = table();
  const std::string s = slot("s");
  const std::string user = unique_pg_table("cdc_user");
  pg_exec("CREATE ROLE " + user + " LOGIN; GRANT SELECT ON " + t + " TO " + user + "; CREATE PUBLICATION " + s +
          " FOR TABLE " + t);
  std::string options = pg_cdc_options(t, s);
  options.replace(options.find("'username' = 'postgres'"), 23, "'username' = '" + user + "'");
  const std::string err = failure(options);
  pg_exec("DROP OWNED BY " + user + "; DROP ROLE " + user);
  EXPECT_HAS(err, "cannot open a replication connection (the user needs the REPLICATION attribute");
  EXPECT_HAS(err, "must be superuser or replication role");
}

TEST_F(PostgresCdcErrors, SlotActiveInAnotherJob) {
  const std::string t = table();
  const std::string s = slot("s");
  auto& first = start(script("CREATE TABLE src (id BIGINT, item STRING, qty INT) WITH (" + pg_cdc_options(t, s) +
                             ");\nCREATE TABLE out (id BIGINT, item STRING, qty INT) WITH ('connector' = 'print');\n"
                             "INSERT INTO out SELECT * FROM src;\n", "first.sql"));
  ASSERT_TRUE(printed(first, 1)) << first.err();
  EXPECT_HAS(failure(pg_cdc_options(t, s)), "replication slot \"" + s + "\" is active for PID");
}

// A server without wal_level = logical (a second, throwaway one) is named as the cause.
TEST_F(PostgresCdcErrors, WalLevelNotLogical) {
  const int port = postgres_port() + 9;
  const std::string script_path = std::string(CLINK_SOURCE_DIR) + "/scripts/postgres";
  ASSERT_EQ(std::system(("CLINK_POSTGRES_CONF='wal_level = replica' '" + script_path + "' start " +
                         std::to_string(port) + " >/dev/null").c_str()), 0);
  std::string options = pg_cdc_options("anything", slot("s"));
  options.replace(options.find(std::to_string(postgres_port())), std::to_string(port).size(), std::to_string(port));
  const std::string err = failure(options);
  std::system(("'" + script_path + "' stop " + std::to_string(port) + " >/dev/null").c_str());
  EXPECT_HAS(err, "the server's wal_level is 'replica', logical decoding needs wal_level = logical");
}

}  // namespace
}  // namespace clink::test
