// postgres-cdc under failures: the `clink` process SIGKILLed at random points while a
// writer commits transactions, each run restarted from the latest checkpoint; the
// downstream GROUP BY must end equal to the same query on the database (a restore neither
// loses nor repeats a change, also when a checkpoint fell inside a transaction).
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <set>
#include <thread>

#include "postgres_cdc_test_env.hpp"

namespace clink::test {
namespace {

bool has_checkpoint(const std::filesystem::path& dir) {
  if (!std::filesystem::exists(dir)) return false;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().starts_with("chk-") && std::filesystem::exists(e.path() / "_metadata")) return true;
  return false;
}

// Commits transactions of 1..40 random inserts, updates (value and group) and deletes,
// and every fifth one a bulk update of a quarter of the table (thousands of changes: it
// spans many polls of the reader, so checkpoints fall inside it), until stopped.
void write_changes(const std::string& table, std::atomic<bool>& stop, std::atomic<int>& commits, std::uint32_t seed) {
  sql::PgConnection conn = pg_connect();
  std::mt19937 rng(seed);
  std::set<long> live;
  for (long id = 1; id <= 20000; ++id) live.insert(id);
  long next_id = 20001;
  auto pick = [&] {
    auto it = live.begin();
    std::advance(it, std::uniform_int_distribution<std::size_t>(0, live.size() - 1)(rng));
    return *it;
  };
  while (!stop.load()) {
    std::string sql = "BEGIN;";
    if (commits % 5 == 4)
      sql += "UPDATE " + table + " SET qty = qty % 100 + 1 WHERE id % 4 = " + std::to_string(commits % 4) + ";";
    const int ops = std::uniform_int_distribution<int>(1, 40)(rng);
    for (int i = 0; i < ops; ++i) {
      const int what = std::uniform_int_distribution<int>(0, 9)(rng);
      const std::string grp = "'g" + std::to_string(std::uniform_int_distribution<int>(0, 9)(rng)) + "'";
      const std::string qty = std::to_string(std::uniform_int_distribution<int>(1, 100)(rng));
      if (what < 4 || live.size() < 20) {
        sql += "INSERT INTO " + table + " VALUES (" + std::to_string(next_id) + ", " + grp + ", " + qty + ");";
        live.insert(next_id++);
      } else if (what < 8) {
        sql += "UPDATE " + table + " SET qty = " + qty + (what == 7 ? ", grp = " + grp : "") +
               " WHERE id = " + std::to_string(pick()) + ";";
      } else {
        long id = pick();
        live.erase(id);
        sql += "DELETE FROM " + table + " WHERE id = " + std::to_string(id) + ";";
      }
    }
    conn.exec(sql + "COMMIT");
    ++commits;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

class PostgresCdcRestart : public PostgresCdcTest {};

TEST_F(PostgresCdcRestart, KilledMidStreamAndRestartedFromCheckpointsGroupByEqualsTheDatabase) {
  const std::string t = unique_pg_table("cdc_restart");
  pg_exec("CREATE TABLE " + t + " (id bigint PRIMARY KEY, grp text NOT NULL, qty integer NOT NULL);"
          "ALTER TABLE " + t + " REPLICA IDENTITY FULL;"
          "INSERT INTO " + t + " SELECT i, 'g' || (i % 10), i % 50 FROM generate_series(1, 20000) i");
  const std::string query = "SELECT grp, count(*), sum(qty) FROM " + t + " GROUP BY grp";
  const auto sql = script("CREATE TABLE src (id BIGINT, grp STRING, qty INT) WITH (" + pg_cdc_options(t, slot("s")) +
                          ");\nCREATE TABLE out (grp STRING, n BIGINT, total INT) WITH ('connector' = 'print');\n"
                          "INSERT INTO out SELECT grp, COUNT(*), SUM(qty) FROM src GROUP BY grp;\n");
  const auto checkpoints = dir_ / "chk";
  auto args = [&] {
    std::vector<std::string> a{"--checkpoint-dir", checkpoints.string(), "--checkpoint-interval", "50"};
    if (has_checkpoint(checkpoints)) {
      a.push_back("--from-checkpoint");
      a.push_back(checkpoints.string());
    }
    return a;
  };
  auto all_lines = [&] {
    std::vector<std::string> lines;
    for (const auto& j : jobs_)
      for (auto& l : changelog_lines(j->out())) lines.push_back(std::move(l));
    return lines;
  };

  // The first run checkpoints at least once (a run killed before its first checkpoint
  // starts afresh: a new snapshot, whose groups would not retract the killed run's).
  ClinkProcess& first = start(sql, args());
  ASSERT_TRUE(eventually([&] { return has_checkpoint(checkpoints) || first.wait_for(0).has_value(); }, 30000))
      << first.err();
  std::atomic<bool> stop{false};
  std::atomic<int> commits{0};
  std::thread writer(write_changes, t, std::ref(stop), std::ref(commits), 20261201u);
  std::mt19937 rng(7);
  int kills = 0;
  for (int i = 0; i < 10; ++i) {
    ClinkProcess& run = i == 0 ? first : start(sql, args());
    auto code = run.wait_for(std::uniform_int_distribution<int>(150, 700)(rng));
    if (code) {
      stop = true;
      writer.join();
      FAIL() << "run " << i << " exited with " << *code << ": " << run.err();
    }
    run.kill(SIGKILL);
    ++kills;
  }
  stop = true;
  writer.join();
  EXPECT_GE(commits.load(), 20);
  ClinkProcess& last = start(sql, args());
  const bool converged =
      eventually([&] { return fold_upserts(all_lines(), 1) == pg_query_rows(query); }, 60000);
  EXPECT_TRUE(converged) << last.err();
  EXPECT_EQ(fold_upserts(all_lines(), 1), pg_query_rows(query));
  EXPECT_EQ(kills, 10);
}

}  // namespace
}  // namespace clink::test
