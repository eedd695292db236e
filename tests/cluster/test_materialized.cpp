// Materialized tables on a coordinator (docs/materialized-tables.md): created through
// its SQL (POST /api/v1/jobs/sql, the SQL gateway's sessions), kept in its HA catalog
// store, FULL tables refreshed by its scheduler on their freshness, CONTINUOUS tables'
// maintenance jobs run on its workers. Real coordinator processes, real jobs.
#include <chrono>
#include <csignal>
#include <filesystem>
#include <regex>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../support/clink_process.hpp"
#include "coordinator_process.hpp"

namespace clink::test {
namespace {

using Clock = std::chrono::steady_clock;

// Replaces the source's one file atomically (a refresh reads the old rows or the new).
void write_source(const fs::path& dir, const std::string& rows) {
  fs::create_directories(dir);
  std::ofstream(dir / ".data.tmp") << rows;
  fs::rename(dir / ".data.tmp", dir / "data.json");
}

std::vector<std::string> lines_of(const fs::path& file) {
  std::vector<std::string> out;
  std::istringstream in(slurp_file(file));
  for (std::string l; std::getline(in, l);) out.push_back(l);
  std::sort(out.begin(), out.end());
  return out;
}

template <class F>
bool eventually(F pred, int seconds = 30) {
  auto deadline = Clock::now() + std::chrono::seconds(seconds);
  while (Clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return pred();
}

Rest post_sql(CoordinatorProcess& c, const std::string& script) {
  return c.post("/api/v1/jobs/sql", nlohmann::json{{"script", script}}.dump());
}

// The names of the coordinator's jobs in `state` (any state when empty).
std::multiset<std::string> job_names(CoordinatorProcess& c, const std::string& state = {}) {
  std::multiset<std::string> names;
  auto r = c.get("/jobs/overview");
  if (!r.body.is_object()) return names;
  for (const auto& j : r.body["jobs"])
    if (state.empty() || j.value("state", "") == state) names.insert(j.value("name", ""));
  return names;
}

std::vector<std::string> job_ids(CoordinatorProcess& c, const std::string& name, const std::string& state) {
  std::vector<std::string> ids;
  auto r = c.get("/jobs/overview");
  if (!r.body.is_object()) return ids;
  for (const auto& j : r.body["jobs"])
    if (j.value("name", "") == name && j.value("state", "") == state) ids.push_back(j.value("jid", ""));
  return ids;
}

// A coordinator whose HA stores live in <dir>/ha (high-availability.type NONE with a
// storageDir): a restarted one has its predecessor's catalog. Each process's output goes
// to a directory of its own (<dir>/<name>).
std::vector<std::string> coordinator_args(const fs::path& dir);
std::unique_ptr<CoordinatorProcess> coordinator(const fs::path& dir, const std::string& name) {
  fs::create_directories(dir / name);
  return std::make_unique<CoordinatorProcess>(dir / name, coordinator_args(dir));
}

std::vector<std::string> coordinator_args(const fs::path& dir) {
  const fs::path config = dir / "config.yaml";
  if (!fs::exists(config)) std::ofstream(config) << "high-availability.storageDir: " << (dir / "ha").string() << "\n";
  return {"--config", config.string(), "--rest-port", "0"};
}

// A FULL table of one-second freshness: the coordinator's scheduler refreshes it after a
// source change (exact rows), not while it is SUSPENDED, again after RESUME, on after the
// coordinator is restarted (the schedule is in its catalog store), and never after DROP.
TEST(ClusterMaterialized, TheCoordinatorRefreshesAFullTableOnItsFreshness) {
  const fs::path dir = scratch_dir("clink_mt_cluster_");
  const fs::path src = dir / "src", backing = dir / "totals" / "part-0.json";
  write_source(src, "{\"shop\":\"a\",\"amount\":1}\n{\"shop\":\"a\",\"amount\":2}\n");
  auto first = coordinator(dir, "first");
  ASSERT_TRUE(first->running());
  auto r = post_sql(*first, "CREATE TABLE orders (shop STRING, amount BIGINT) WITH ('connector' = 'filesystem', "
                            "'path' = '" + src.string() + "', 'format' = 'json');\n"
                            "CREATE MATERIALIZED TABLE totals WITH ('path' = '" + (dir / "totals").string() + "') "
                            "FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = FULL AS "
                            "SELECT shop, SUM(amount) AS total FROM orders GROUP BY shop;\n");
  ASSERT_EQ(r.status, 202) << r.body.dump() << first->stderr_text();
  // CREATE ran the first refresh before it answered.
  EXPECT_EQ(lines_of(backing), (std::vector<std::string>{R"({"shop":"a","total":3})"}));

  write_source(src, "{\"shop\":\"a\",\"amount\":1}\n{\"shop\":\"b\",\"amount\":5}\n");
  const std::vector<std::string> second_rows{R"({"shop":"a","total":1})", R"({"shop":"b","total":5})"};
  EXPECT_TRUE(eventually([&] { return lines_of(backing) == second_rows; })) << first->stderr_text();
  // The refreshes are jobs of the coordinator, run on its worker, one at a time.
  EXPECT_TRUE(eventually([&] { return job_names(*first, "FINISHED").count("refresh_totals") >= 3; }));
  EXPECT_LE(job_names(*first, "RUNNING").count("refresh_totals"), 1u);

  r = post_sql(*first, "ALTER MATERIALIZED TABLE totals SUSPEND;");
  ASSERT_EQ(r.status, 202) << r.body.dump();
  // A refresh that started before the SUSPEND ends first (the statement waited for it).
  const std::size_t refreshed = job_names(*first).count("refresh_totals");
  write_source(src, "{\"shop\":\"c\",\"amount\":7}\n");
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(lines_of(backing), second_rows);
  EXPECT_EQ(job_names(*first).count("refresh_totals"), refreshed);

  r = post_sql(*first, "ALTER MATERIALIZED TABLE totals RESUME;");
  ASSERT_EQ(r.status, 202) << r.body.dump();
  const std::vector<std::string> third_rows{R"({"shop":"c","total":7})"};
  EXPECT_TRUE(eventually([&] { return lines_of(backing) == third_rows; })) << first->stderr_text();

  // Restarted: the new process has the table (its catalog store) and goes on refreshing.
  EXPECT_EQ(first->stop(), 0) << first->stderr_text();
  first.reset();
  write_source(src, "{\"shop\":\"d\",\"amount\":8}\n{\"shop\":\"d\",\"amount\":9}\n");
  auto second = coordinator(dir, "second");
  ASSERT_TRUE(second->running());
  const std::vector<std::string> fourth_rows{R"({"shop":"d","total":17})"};
  EXPECT_TRUE(eventually([&] { return lines_of(backing) == fourth_rows; })) << second->stderr_text();
  EXPECT_GE(job_names(*second, "FINISHED").count("refresh_totals"), 1u);
  // The table is readable through the new coordinator's catalog.
  r = post_sql(*second, "CREATE TABLE copy (shop STRING, total BIGINT) WITH ('connector' = 'filesystem', 'path' = '" +
                            (dir / "copy").string() + "', 'format' = 'json');\nINSERT INTO copy SELECT * FROM totals;\n");
  ASSERT_EQ(r.status, 202) << r.body.dump();
  const std::string copy_job = r.body["jobids"][0];
  EXPECT_EQ(second->wait_for_state(copy_job, "FINISHED"), "FINISHED");
  std::vector<std::string> copied;
  for (const auto& e : fs::directory_iterator(dir / "copy"))
    if (e.path().filename().string()[0] != '.')
      for (const auto& l : lines_of(e.path())) copied.push_back(l);
  EXPECT_EQ(copied, fourth_rows);

  r = post_sql(*second, "DROP MATERIALIZED TABLE totals;");
  ASSERT_EQ(r.status, 202) << r.body.dump();
  const std::size_t before = job_names(*second).count("refresh_totals");
  write_source(src, "{\"shop\":\"e\",\"amount\":1}\n");
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(job_names(*second).count("refresh_totals"), before);
  EXPECT_EQ(lines_of(backing), fourth_rows);
  EXPECT_EQ(second->stop(), 0);
  // Dropped for good: a third coordinator over the same store has no such table.
  auto third = coordinator(dir, "third");
  r = post_sql(*third, "ALTER MATERIALIZED TABLE totals REFRESH;");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["errors"][0], "line 1, column 1: Materialized table `totals` does not exist");
  write_source(src, "{\"shop\":\"f\",\"amount\":1}\n");
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(lines_of(backing), fourth_rows);
  fs::remove_all(dir);
}

// A CONTINUOUS table's maintenance job is a job of the coordinator: SUSPEND cancels it,
// RESUME starts a new one, DROP cancels that.
TEST(ClusterMaterialized, AContinuousTablesJobRunsOnTheCoordinator) {
  const fs::path dir = scratch_dir("clink_mt_cluster_");
  auto process = coordinator(dir, "c");
  CoordinatorProcess& c = *process;
  ASSERT_TRUE(c.running());
  auto r = post_sql(c, "CREATE TABLE ticks (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '20', "
                       "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '1000000');\n"
                       "CREATE MATERIALIZED TABLE evens WITH ('path' = '" + (dir / "evens").string() + "') "
                       "FRESHNESS = INTERVAL '1' SECOND AS SELECT id FROM ticks WHERE MOD(id, 2) = 0;\n");
  ASSERT_EQ(r.status, 202) << r.body.dump() << c.stderr_text();
  const std::string job = "materialized-table_evens";
  ASSERT_TRUE(eventually([&] { return job_ids(c, job, "RUNNING").size() == 1; })) << c.stderr_text();
  const std::string first = job_ids(c, job, "RUNNING")[0];

  ASSERT_EQ(post_sql(c, "ALTER MATERIALIZED TABLE evens SUSPEND;").status, 202);
  EXPECT_EQ(c.wait_for_state(first, "CANCELED"), "CANCELED");
  EXPECT_TRUE(job_ids(c, job, "RUNNING").empty());

  ASSERT_EQ(post_sql(c, "ALTER MATERIALIZED TABLE evens RESUME;").status, 202);
  ASSERT_TRUE(eventually([&] { return job_ids(c, job, "RUNNING").size() == 1; })) << c.stderr_text();
  const std::string second = job_ids(c, job, "RUNNING")[0];
  EXPECT_NE(second, first);

  ASSERT_EQ(post_sql(c, "DROP MATERIALIZED TABLE evens;").status, 202);
  EXPECT_EQ(c.wait_for_state(second, "CANCELED"), "CANCELED");
  EXPECT_EQ(post_sql(c, "ALTER MATERIALIZED TABLE evens RESUME;").status, 400);
  fs::remove_all(dir);
}

// `clink run --coordinator` / `clink sql --coordinator` plan on the client, but hand a
// materialized-table statement to the coordinator's SQL with CREATE ... IF NOT EXISTS of
// the tables it reads: the table is the coordinator's (its catalog store, its scheduler).
TEST(ClusterMaterialized, AClientWithCoordinatorHandsMaterializedTablesToIt) {
  const fs::path dir = scratch_dir("clink_mt_cluster_");
  const fs::path src = dir / "src", backing = dir / "totals" / "part-0.json";
  write_source(src, "{\"shop\":\"a\",\"amount\":1}\n{\"shop\":\"a\",\"amount\":2}\n");
  auto process = coordinator(dir, "c");
  CoordinatorProcess& c = *process;
  ASSERT_TRUE(c.running());
  const fs::path script = dir / "create.sql";
  std::ofstream(script) << "CREATE TABLE orders (shop STRING, amount BIGINT) WITH ('connector' = 'filesystem', "
                           "'path' = '" + src.string() + "', 'format' = 'json');\n"
                           "CREATE VIEW big AS SELECT * FROM orders WHERE amount > 1;\n"
                           "CREATE MATERIALIZED TABLE totals WITH ('path' = '" + (dir / "totals").string() + "') "
                           "FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = FULL AS "
                           "SELECT shop, SUM(amount) AS total FROM big GROUP BY shop;\n";
  auto r = run_clink("run " + script.string() + " --coordinator " + c.address(), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err << c.stderr_text();
  // CREATE ran the first refresh on the coordinator's worker before it answered.
  EXPECT_EQ(lines_of(backing), (std::vector<std::string>{R"({"shop":"a","total":2})"}));
  // The coordinator's scheduler refreshes it on its freshness.
  write_source(src, "{\"shop\":\"b\",\"amount\":5}\n");
  EXPECT_TRUE(eventually([&] { return lines_of(backing) == std::vector<std::string>{R"({"shop":"b","total":5})"}; }))
      << c.stderr_text();
  EXPECT_GE(job_names(c, "FINISHED").count("refresh_totals"), 2u);

  // `clink sql --coordinator` suspends it there; the coordinator's catalog has the table
  // and the view (a second CREATE TABLE of orders would fail: IF NOT EXISTS was sent).
  std::ofstream(dir / "suspend.sql") << "ALTER MATERIALIZED TABLE totals SUSPEND;\n";
  r = run_clink("sql --coordinator " + c.address() + " < '" + (dir / "suspend.sql").string() + "'", dir);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("[INFO] Execute statement succeeded."), std::string::npos) << r.out;
  const std::size_t refreshed = job_names(c).count("refresh_totals");
  write_source(src, "{\"shop\":\"c\",\"amount\":7}\n");
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(lines_of(backing), (std::vector<std::string>{R"({"shop":"b","total":5})"}));
  EXPECT_EQ(job_names(c).count("refresh_totals"), refreshed);
  auto shown = post_sql(c, "CREATE TABLE orders (x INT) WITH ('connector' = 'datagen');");
  EXPECT_EQ(shown.status, 400) << shown.body.dump();

  // ALTER ... ADD (Flink 2.3's schema change) goes to the coordinator too: its table has
  // the column afterwards (a second ADD of it is refused there).
  std::ofstream(dir / "add.sql") << "ALTER MATERIALIZED TABLE totals ADD (doubled AS total * 2);\n";
  r = run_clink("run " + (dir / "add.sql").string() + " --coordinator " + c.address(), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err << c.stderr_text();
  r = run_clink("run " + (dir / "add.sql").string() + " --coordinator " + c.address(), dir);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("(HTTP 400): line 1, column 38: Failed to execute ALTER MATERIALIZED TABLE statement.\n"
                       "Column `doubled` already exists in the materialized table."),
            std::string::npos)
      << r.err;

  // A statement the coordinator refuses fails the client, naming the coordinator's error.
  std::ofstream(dir / "again.sql") << "ALTER MATERIALIZED TABLE totals SUSPEND;\n";
  r = run_clink("run " + (dir / "again.sql").string() + " --coordinator " + c.address(), dir);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("again.sql: line 1, column 1: coordinator " + c.address() +
                       " (HTTP 400): line 1, column 1: Materialized table `totals` is already suspended"),
            std::string::npos)
      << r.err;
  fs::remove_all(dir);
}

// Under ZooKeeper HA: the leader is killed (SIGKILL) between refreshes; the standby that
// takes over has the table (the HA catalog store) and refreshes it on its freshness.
TEST(ClusterMaterialized, ANewLeaderGoesOnRefreshing) {
  const char* quorum = std::getenv("CLINK_ZOOKEEPER_QUORUM");
  if (!quorum) GTEST_SKIP() << "needs CLINK_ZOOKEEPER_QUORUM (ctest's zookeeper fixture sets it)";
  const fs::path dir = scratch_dir("clink_mt_cluster_");
  const fs::path src = dir / "src", backing = dir / "totals" / "part-0.json";
  std::ofstream(dir / "config.yaml") << "high-availability.type: zookeeper\n"
                                     << "high-availability.zookeeper.quorum: " << quorum << "\n"
                                     << "high-availability.storageDir: " << (dir / "ha").string() << "\n"
                                     << "high-availability.cluster-id: /mt-" << ::getpid() << "\n"
                                     << "high-availability.zookeeper.client.session-timeout: 2000\n"
                                     << "rest.port: 0\njobmanager.rpc.port: 0\n";
  auto start = [&](const std::string& name) {
    fs::create_directories(dir / name);
    return std::make_unique<ClinkProcess>(
        std::vector<std::string>{"coordinator", "--config", (dir / "config.yaml").string(), "--local-slots", "2"},
        dir / name);
  };
  // The REST address a coordinator prints once it leads.
  auto leading = [](ClinkProcess& p, int seconds) -> std::string {
    static const std::regex line(R"(\nrest: http://([^\s]+)\n)");
    std::string rest;
    eventually([&] {
      std::smatch m;
      std::string out = "\n" + p.out();
      if (std::regex_search(out, m, line)) rest = m[1];
      return !rest.empty();
    }, seconds);
    return rest;
  };
  auto sql = [](const std::string& rest, const std::string& script) {
    return cluster::RestClient(rest).post("/api/v1/jobs/sql", nlohmann::json{{"script", script}}.dump());
  };
  write_source(src, "{\"shop\":\"a\",\"amount\":1}\n");
  auto first = start("first");
  const std::string first_rest = leading(*first, 30);
  ASSERT_FALSE(first_rest.empty()) << first->err();
  auto second = start("second");
  auto r = sql(first_rest, "CREATE TABLE orders (shop STRING, amount BIGINT) WITH ('connector' = 'filesystem', "
                           "'path' = '" + src.string() + "', 'format' = 'json');\n"
                           "CREATE MATERIALIZED TABLE totals WITH ('path' = '" + (dir / "totals").string() + "') "
                           "FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = FULL AS "
                           "SELECT shop, SUM(amount) AS total FROM orders GROUP BY shop;\n");
  ASSERT_EQ(r.status, 202) << r.body;
  write_source(src, "{\"shop\":\"b\",\"amount\":2}\n");
  EXPECT_TRUE(eventually([&] { return lines_of(backing) == std::vector<std::string>{R"({"shop":"b","total":2})"}; }))
      << first->err();

  first->kill(SIGKILL);
  const std::string second_rest = leading(*second, 40);
  ASSERT_FALSE(second_rest.empty()) << second->err();
  write_source(src, "{\"shop\":\"c\",\"amount\":3}\n{\"shop\":\"c\",\"amount\":4}\n");
  EXPECT_TRUE(eventually([&] { return lines_of(backing) == std::vector<std::string>{R"({"shop":"c","total":7})"}; }))
      << second->err();
  EXPECT_NE(second->err().find("refreshed materialized table totals"), std::string::npos) << second->err();
  second->kill(SIGTERM);
  second->wait_for(30'000);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace clink::test
