// The jdbc sink operator against the real server: append and upsert contents, the
// reduction of each key's changes, each flush trigger (max rows, interval, checkpoint, end
// of input), retries over a terminated backend and a restarted server, and its errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "jdbc_sink_harness.hpp"

namespace clink::test {
namespace {

using namespace clink::sql;
using Kind = RowKind;

std::vector<std::string> table_rows(const std::string& t) { return pg_query_rows("SELECT * FROM " + t); }

// The message of the ClinkError `f` throws (empty, and a failure, when it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(JdbcSinkTest, AppendWritesEveryRow) {
  const std::string t = unique_pg_table("append");
  pg_exec("CREATE TABLE " + t + " (id bigint, name text, price numeric(10, 2), ts timestamp(3), ok boolean)");
  JdbcSinkHarness h(t, "id BIGINT, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3), ok BOOLEAN", {});
  h.open();
  h.insert({{1, "a\tb\\c\nd", Value::decimal(1999), std::int64_t{1586937900123000}, true},
            {2, Value::null(), Value::null(), Value::null(), Value::null()},
            {2, "dup", Value::decimal(-5), std::int64_t{0}, false}});
  h.finish();
  EXPECT_EQ(table_rows(t), (std::vector<std::string>{"1|a\tb\\c\nd|19.99|2020-04-15 08:05:00.123|t",
                                                      "2|NULL|NULL|NULL|NULL", "2|dup|-0.05|1970-01-01 00:00:00|f"}));
}

TEST(JdbcSinkTest, UpsertKeepsEachKeysLastChangeAndDeletes) {
  const std::string t = unique_pg_table("upsert");
  pg_exec("CREATE TABLE " + t + " (k text, n int, v bigint, PRIMARY KEY (k, n))");
  pg_exec("INSERT INTO " + t + " VALUES ('old', 1, 7), ('gone', 2, 8)");
  JdbcSinkHarness h(t, "k STRING NOT NULL, n INT NOT NULL, v BIGINT", {"k", "n"}, {{"sink.buffer-flush.max-rows", "0"}});
  h.open();
  h.push({{Kind::kInsert, {"a", 1, 10}},
          {Kind::kInsert, {"b", 1, 20}},
          {Kind::kUpdateBefore, {"a", 1, 10}},
          {Kind::kUpdateAfter, {"a", 1, 11}},
          {Kind::kInsert, {"old", 1, 70}},
          {Kind::kDelete, {"gone", 2, 8}},
          {Kind::kDelete, {"b", 1, 20}},
          {Kind::kInsert, {"c", 2, Value::null()}}});
  EXPECT_EQ(table_rows(t), (std::vector<std::string>{"gone|2|8", "old|1|7"})) << "written before the checkpoint";
  h.checkpoint();
  EXPECT_EQ(table_rows(t), (std::vector<std::string>{"a|1|11", "c|2|NULL", "old|1|70"}));
  // A deleted key comes back; an update-before alone changes nothing.
  h.push({{Kind::kInsert, {"b", 1, 21}}, {Kind::kUpdateBefore, {"a", 1, 11}}, {Kind::kDelete, {"c", 2, Value::null()}}});
  h.finish();
  EXPECT_EQ(table_rows(t), (std::vector<std::string>{"a|1|11", "b|1|21", "old|1|70"}));
}

// Flushes of many keys go through the staging table (COPY, INSERT ... SELECT, DELETE USING).
TEST(JdbcSinkTest, ManyKeysUpsertAndDeleteThroughTheStagingTable) {
  const std::string t = unique_pg_table("staging");
  pg_exec("CREATE TABLE " + t + " (k bigint PRIMARY KEY, v text)");
  pg_exec("INSERT INTO " + t + " SELECT g, 'old' FROM generate_series(1000, 1099) g");
  JdbcSinkHarness h(t, "k BIGINT NOT NULL, v STRING", {"k"}, {{"sink.buffer-flush.max-rows", "0"}});
  h.open();
  std::vector<std::pair<Kind, std::vector<Value>>> rows;
  for (int k = 0; k < 300; ++k) rows.push_back({Kind::kInsert, {k, "v" + std::to_string(k)}});
  for (int k = 0; k < 300; k += 2) rows.push_back({Kind::kUpdateAfter, {k, "u\t" + std::to_string(k)}});
  for (int k = 1000; k < 1100; k += 3) rows.push_back({Kind::kDelete, {k, "old"}});
  for (int k = 0; k < 300; k += 10) rows.push_back({Kind::kDelete, {k, Value::null()}});
  h.push(rows);
  h.checkpoint();
  std::vector<std::string> expected;
  for (int k = 0; k < 300; ++k)
    if (k % 10 != 0) expected.push_back(std::to_string(k) + "|" + (k % 2 ? "v" : "u\t") + std::to_string(k));
  for (int k = 1000; k < 1100; ++k)
    if ((k - 1000) % 3 != 0) expected.push_back(std::to_string(k) + "|old");
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(table_rows(t), expected);
  // The staging table is per session and emptied at commit: the next flush starts clean.
  h.push({{Kind::kDelete, {1, "x"}}});
  h.finish();
  EXPECT_EQ(pg_query_value("SELECT count(*) FROM " + t), std::to_string(expected.size() - 1));
}

TEST(JdbcSinkTest, AKeyOnlyTableIgnoresRepeatedInserts) {
  const std::string t = unique_pg_table("keyonly");
  pg_exec("CREATE TABLE " + t + " (k bigint PRIMARY KEY)");
  JdbcSinkHarness h(t, "k BIGINT NOT NULL", {"k"});
  h.open();
  h.insert({{1}, {2}});
  h.checkpoint();
  h.insert({{1}, {3}});
  h.finish();
  EXPECT_EQ(table_rows(t), (std::vector<std::string>{"1", "2", "3"}));
}

TEST(JdbcSinkTest, FlushesAtMaxRows) {
  const std::string t = unique_pg_table("maxrows");
  pg_exec("CREATE TABLE " + t + " (id bigint)");
  JdbcSinkHarness h(t, "id BIGINT", {}, {{"sink.buffer-flush.max-rows", "3"}, {"sink.buffer-flush.interval", "0"}});
  h.open();
  h.insert({{1}, {2}});
  EXPECT_EQ(pg_query_value("SELECT count(*) FROM " + t), "0");
  h.insert({{3}});
  EXPECT_EQ(pg_query_value("SELECT count(*) FROM " + t), "3");
  h.insert({{4}, {5}, {6}, {7}});  // one batch past the limit: written whole
  EXPECT_EQ(pg_query_value("SELECT count(*) FROM " + t), "7");
  h.finish();
  EXPECT_EQ(pg_query_value("SELECT count(*) FROM " + t), "7");
}

TEST(JdbcSinkTest, UpsertCountsEveryChangeTowardsMaxRows) {
  const std::string t = unique_pg_table("maxrows_upsert");
  pg_exec("CREATE TABLE " + t + " (k bigint PRIMARY KEY, v bigint)");
  JdbcSinkHarness h(t, "k BIGINT NOT NULL, v BIGINT", {"k"}, {{"sink.buffer-flush.max-rows", "3"}});
  h.open();
  h.push({{Kind::kInsert, {1, 1}}, {Kind::kUpdateAfter, {1, 2}}});
  EXPECT_EQ(table_rows(t), std::vector<std::string>{});
  h.push({{Kind::kUpdateAfter, {1, 3}}});  // the third change of one key flushes its last
  EXPECT_EQ(table_rows(t), std::vector<std::string>{"1|3"});
}

TEST(JdbcSinkTest, FlushesEveryInterval) {
  const std::string t = unique_pg_table("interval");
  pg_exec("CREATE TABLE " + t + " (id bigint)");
  JdbcSinkHarness h(t, "id BIGINT", {}, {{"sink.buffer-flush.max-rows", "0"}, {"sink.buffer-flush.interval", "200ms"}});
  h.open();
  h.insert({{1}});
  h.advance_to(1100);
  EXPECT_EQ(pg_query_value("SELECT count(*) FROM " + t), "0");
  h.advance_to(1201);
  EXPECT_EQ(pg_query_value("SELECT count(*) FROM " + t), "1");
  h.insert({{2}});
  h.advance_to(1300);
  EXPECT_EQ(pg_query_value("SELECT count(*) FROM " + t), "1");
  h.advance_to(1402);
  EXPECT_EQ(pg_query_value("SELECT count(*) FROM " + t), "2");
}

TEST(JdbcSinkTest, DefaultsFlushAtOneHundredRowsOrOneSecond) {
  const std::string t = unique_pg_table("defaults");
  pg_exec("CREATE TABLE " + t + " (id bigint)");
  JdbcSinkHarness h(t, "id BIGINT", {});
  h.open();
  std::vector<std::vector<Value>> rows;
  for (int i = 0; i < 99; ++i) rows.push_back({i});
  h.insert(rows);
  h.advance_to(1999);
  EXPECT_EQ(pg_query_value("SELECT count(*) FROM " + t), "0");
  h.insert({{99}});
  EXPECT_EQ(pg_query_value("SELECT count(*) FROM " + t), "100");
  h.insert({{100}});
  h.advance_to(3001);
  EXPECT_EQ(pg_query_value("SELECT count(*) FROM " + t), "101");
}

TEST(JdbcSinkTest, RetriesOverATerminatedBackend) {
  const std::string t = unique_pg_table("terminated");
  pg_exec("CREATE TABLE " + t + " (k bigint PRIMARY KEY, v text)");
  const std::string app = "clink_" + t;
  JdbcSinkHarness h(t, "k BIGINT NOT NULL, v STRING", {"k"}, {{"url", postgres_url() + "&ApplicationName=" + app}});
  h.open();
  h.insert({{1, "a"}, {2, "b"}});
  h.checkpoint();
  h.insert({{1, "a2"}, {3, "c"}});
  EXPECT_EQ(pg_query_value("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '" +
                           app + "'"),
            "1");
  h.finish();  // the first attempt meets the closed connection, the retry reconnects
  EXPECT_EQ(table_rows(t), (std::vector<std::string>{"1|a2", "2|b", "3|c"}));
}

TEST(JdbcSinkTest, WithoutRetriesABrokenConnectionFailsNamingTheTable) {
  const std::string t = unique_pg_table("noretry");
  pg_exec("CREATE TABLE " + t + " (k bigint)");
  const std::string app = "clink_" + t;
  JdbcSinkHarness h(t, "k BIGINT", {}, {{"url", postgres_url() + "&ApplicationName=" + app}, {"sink.max-retries", "0"}});
  h.open();
  h.insert({{1}});
  pg_exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '" + app + "'");
  std::string m = error_of([&] { h.finish(); });
  EXPECT_NE(m.find("jdbc sink of table `sink_" + t + "` (PostgreSQL table '" + t + "'"), std::string::npos) << m;
  EXPECT_NE(m.find("writing 1 rows failed after 0 retries"), std::string::npos) << m;
}

// A server of this test's own (restarting the shared one would break the tests running
// beside it).
class PrivateServer {
 public:
  PrivateServer() : port_(postgres_port() + 1) {
    run("stop");
    if (run("start") != 0) throw std::runtime_error("could not start a server on port " + std::to_string(port_));
  }
  ~PrivateServer() { run("stop"); }
  int run(const std::string& verb) {
    std::string cmd = std::string("'") + CLINK_SOURCE_DIR + "/scripts/postgres' " + verb + " " + std::to_string(port_) +
                      " >/dev/null 2>&1";
    return std::system(cmd.c_str());
  }
  std::string url() const { return "jdbc:postgresql://127.0.0.1:" + std::to_string(port_) + "/postgres?user=postgres"; }

 private:
  int port_;
};

TEST(JdbcSinkTest, RetriesAfterTheServerRestarts) {
  PrivateServer server;
  PgConnection admin(PgConnectOptions{.url = server.url()});
  admin.exec("CREATE TABLE counts (k text PRIMARY KEY, n bigint)");
  JdbcSinkHarness h("counts", "k STRING NOT NULL, n BIGINT", {"k"}, {{"url", server.url()}});
  h.open();
  h.push({{Kind::kInsert, {"x", 1}}, {Kind::kInsert, {"y", 1}}});
  h.checkpoint();
  ASSERT_EQ(server.run("restart"), 0);
  h.push({{Kind::kUpdateAfter, {"x", 2}}, {Kind::kDelete, {"y", 1}}});
  h.checkpoint();
  PgConnection after(PgConnectOptions{.url = server.url()});
  PgResult r = after.exec("SELECT k, n FROM counts ORDER BY k");
  ASSERT_EQ(r.rows(), 1);
  EXPECT_EQ(r.value(0, 0), "x");
  EXPECT_EQ(r.value(0, 1), "2");
}

TEST(JdbcSinkTest, ARefusedRowIsNamed) {
  const std::string t = unique_pg_table("refused");
  pg_exec("CREATE TABLE " + t + " (id bigint, qty integer CHECK (qty >= 0), code integer)");
  {
    JdbcSinkHarness h(t, "id BIGINT, qty INT, code STRING", {});
    h.open();
    h.insert({{1, 5, "12"}, {2, 1, "x7"}, {3, 1, "3"}});
    std::string m = error_of([&] { h.finish(); });
    EXPECT_NE(m.find("the database refused the row +I[2, 1, x7]"), std::string::npos) << m;
    EXPECT_NE(m.find("invalid input syntax for type integer: \"x7\""), std::string::npos) << m;
  }
  {
    JdbcSinkHarness h(t, "id BIGINT, qty INT, code STRING", {});
    h.open();
    h.insert({{4, -1, "1"}});
    std::string m = error_of([&] { h.finish(); });
    EXPECT_NE(m.find("the database refused the row +I[4, -1, 1]"), std::string::npos) << m;
    EXPECT_NE(m.find("violates check constraint"), std::string::npos) << m;
  }
  EXPECT_EQ(pg_query_value("SELECT count(*) FROM " + t), "0") << "a refused flush writes nothing";
}

TEST(JdbcSinkTest, OpenChecksTheTable) {
  const std::string t = unique_pg_table("checked");
  pg_exec("CREATE TABLE " + t + " (id bigint, name text)");
  {
    JdbcSinkHarness h(t + "_missing", "id BIGINT", {});
    std::string m = error_of([&] { h.open(); });
    EXPECT_NE(m.find("(PostgreSQL table '" + t + "_missing' at postgres@127.0.0.1:"), std::string::npos) << m;
    EXPECT_NE(m.find("the table does not exist"), std::string::npos) << m;
  }
  {
    JdbcSinkHarness h(t, "id BIGINT, price DOUBLE", {});
    std::string m = error_of([&] { h.open(); });
    EXPECT_NE(m.find("column `price` is not a column of the database table (its columns: id, name)"),
              std::string::npos)
        << m;
  }
  {
    JdbcSinkHarness h(t, "id BIGINT NOT NULL, name STRING", {"id"});
    std::string m = error_of([&] { h.open(); });
    EXPECT_NE(m.find("the PRIMARY KEY (id) is not a PRIMARY KEY or UNIQUE constraint of the database table"),
              std::string::npos)
        << m;
  }
  // Names fold to lower case as PostgreSQL folds unquoted ones; a UNIQUE constraint serves.
  pg_exec("ALTER TABLE " + t + " ADD UNIQUE (id)");
  JdbcSinkHarness h(t, "ID BIGINT NOT NULL, Name STRING", {"ID"}, {{"table-name", "PUBLIC." + t}});
  h.open();
  h.insert({{1, "x"}, {1, "y"}});
  h.finish();
  EXPECT_EQ(table_rows(t), std::vector<std::string>{"1|y"});
}

TEST(JdbcSinkTest, AFailedConnectionNamesTheServerAndOptions) {
  JdbcSinkHarness h("t", "id BIGINT", {},
                    {{"url", "jdbc:postgresql://127.0.0.1:1/postgres"}, {"username", "u"}, {"password", "p"},
                     {"sink.max-retries", "0"}});
  std::string m = error_of([&] { h.open(); });
  EXPECT_NE(m.find("cannot connect to PostgreSQL u@127.0.0.1:1/postgres"), std::string::npos) << m;
  EXPECT_NE(m.find("check 'url', 'username' and 'password'"), std::string::npos) << m;
}

TEST(JdbcSinkTest, OptionsAreChecked) {
  auto fails = [](std::map<std::string, std::string> options, const std::string& message) {
    std::string m = error_of([&] { JdbcSinkHarness h("t", "id BIGINT", {}, std::move(options)); });
    EXPECT_NE(m.find(message), std::string::npos) << m;
  };
  fails({{"driver", "com.mysql.cj.jdbc.Driver"}},
        "option 'driver' = 'com.mysql.cj.jdbc.Driver': the PostgreSQL URL needs the driver org.postgresql.Driver");
  fails({{"username", "u"}},
        "Either all or none of the following options should be provided: 'username', 'password'");
  fails({{"sink.max-retries", "-1"}}, "The value of 'sink.max-retries' option shouldn't be negative, but is -1.");
  fails({{"url", "jdbc:mysql://h:3306/db"}}, "option 'url' = 'jdbc:mysql://h:3306/db': only PostgreSQL is supported");
  fails({{"url", "jdbc:postgresql://h:x/db"}}, "option 'url': the JDBC URL 'jdbc:postgresql://h:x/db'");
  fails({{"sink.buffer-flush.interval", "soon"}}, "option 'sink.buffer-flush.interval' is not a duration: 'soon'");
  fails({{"sink.buffer-flush.max-rows", "-2"}}, "option 'sink.buffer-flush.max-rows' must be between 0 and");
  fails({{"sink.bufer-flush.max-rows", "2"}}, "unknown option 'sink.bufer-flush.max-rows' = '2'");
  fails({{"connection.max-retry-timeout", "500ms"}},
        "The value of 'connection.max-retry-timeout' option must be in second granularity");
  // Accepted: the driver's name, the source's and lookups' options, both credentials.
  JdbcSinkHarness ok("t", "id BIGINT", {},
                     {{"driver", "org.postgresql.Driver"}, {"username", "postgres"}, {"password", "x"},
                      {"scan.fetch-size", "10"}, {"lookup.cache", "PARTIAL"}, {"sink.parallelism", "2"}});
}

}  // namespace
}  // namespace clink::test
