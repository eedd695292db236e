// The acceptance test of the jdbc upsert sink: GROUP BY jobs into an upsert table, run by
// the real `clink` binary, SIGKILLed at random points and restarted from their latest
// checkpoint, must leave exactly the table a failure-free run leaves (idempotent upserts
// flushed at every checkpoint: Flink's "effectively exactly-once").
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "../support/clink_process.hpp"
#include "../support/kill_restart.hpp"
#include "pg_test_env.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;

constexpr long long kRows = 200000;
constexpr int kGroups = 97;
constexpr long long kEarly = 20000;

struct Job {
  std::string name;
  std::string table_ddl;  // the PostgreSQL table (${T})
  std::string sink_ddl;   // the clink table (${T}, ${URL})
  std::string insert;
  std::vector<std::string> expected;  // the failure-free table, as pg_query_rows gives it
};

// id = 1..kRows at 100000 rows/s (a run takes about 2 s, so kills land mid-stream).
const char* kSource =
    "CREATE TABLE nums (id BIGINT NOT NULL) WITH ('connector' = 'datagen', 'number-of-rows' = '200000', "
    "'rows-per-second' = '100000', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', "
    "'fields.id.end' = '200000');\n";

std::vector<Job> jobs() {
  // Per group g = id mod 97: count, sum, max.
  std::map<long long, std::array<long long, 3>> groups, early;
  for (long long id = 1; id <= kEarly; ++id) {
    auto& g = early[id % kGroups];
    g[0] += 1;
    g[1] += id;
  }
  std::vector<std::string> per_early_group;
  for (const auto& [k, g] : early)
    per_early_group.push_back(std::to_string(k) + "|" + std::to_string(g[0]) + "|" + std::to_string(g[1]));
  std::sort(per_early_group.begin(), per_early_group.end());
  for (long long id = 1; id <= kRows; ++id) {
    auto& g = groups[id % kGroups];
    g[0] += 1;
    g[1] += id;
    g[2] = std::max(g[2], id);
  }
  std::vector<std::string> per_group;
  std::map<long long, long long> histogram;  // count -> groups with it
  for (const auto& [k, g] : groups) {
    per_group.push_back(std::to_string(k) + "|" + std::to_string(g[0]) + "|" + std::to_string(g[1]) + "|" +
                        std::to_string(g[2]));
    histogram[g[0]] += 1;
  }
  std::sort(per_group.begin(), per_group.end());
  std::vector<std::string> hist;
  for (const auto& [c, n] : histogram) hist.push_back(std::to_string(c) + "|" + std::to_string(n));
  std::sort(hist.begin(), hist.end());
  const std::string with = "WITH ('connector' = 'jdbc', 'url' = '${URL}', 'table-name' = '${T}', "
                           "'sink.buffer-flush.max-rows' = '50', 'sink.buffer-flush.interval' = '20ms')";
  return {
      {"group_by", "CREATE TABLE ${T} (g bigint PRIMARY KEY, c bigint, s bigint, m bigint)",
       "CREATE TABLE agg (g BIGINT, c BIGINT, s BIGINT, m BIGINT, PRIMARY KEY (g) NOT ENFORCED) " + with + ";\n",
       "INSERT INTO agg SELECT COALESCE(MOD(id, 97), 0), COUNT(*), SUM(id), MAX(id) FROM nums "
       "GROUP BY COALESCE(MOD(id, 97), 0);\n",
       per_group},
      // Groups of a count empty as their keys move on: upserts and deletes.
      {"histogram", "CREATE TABLE ${T} (c bigint PRIMARY KEY, n bigint)",
       "CREATE TABLE hist (c BIGINT, n BIGINT, PRIMARY KEY (c) NOT ENFORCED) " + with + ";\n",
       "INSERT INTO hist SELECT c, COUNT(*) FROM (SELECT COALESCE(MOD(id, 97), 0) AS g, COUNT(*) AS c FROM nums "
       "GROUP BY COALESCE(MOD(id, 97), 0)) GROUP BY c;\n",
       hist},
      // Changes only in the first fifth of the stream, written only at checkpoints: the
      // runs restored after it write nothing, so the table is what the checkpoints flushed.
      {"flushed_by_checkpoints", "CREATE TABLE ${T} (g bigint PRIMARY KEY, c bigint, s bigint)",
       "CREATE TABLE agg (g BIGINT, c BIGINT, s BIGINT, PRIMARY KEY (g) NOT ENFORCED) WITH ('connector' = 'jdbc', "
       "'url' = '${URL}', 'table-name' = '${T}', 'sink.buffer-flush.max-rows' = '0', "
       "'sink.buffer-flush.interval' = '0');\n",
       "INSERT INTO agg SELECT COALESCE(MOD(id, 97), 0), COUNT(*), SUM(id) FROM nums WHERE id <= 20000 "
       "GROUP BY COALESCE(MOD(id, 97), 0);\n",
       per_early_group},
  };
}

class JdbcExactlyOnce : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / unique_pg_table("clink-jdbc-eo");
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string fill(std::string text, const std::string& table) {
    text = std::regex_replace(text, std::regex("\\$\\{T\\}"), table);
    return std::regex_replace(text, std::regex("\\$\\{URL\\}"), postgres_url());
  }

  fs::path script(const Job& job, const std::string& table) {
    fs::path p = dir_ / (table + ".sql");
    std::ofstream(p) << fill(std::string(kSource) + job.sink_ddl + job.insert, table);
    return p;
  }

  std::unique_ptr<ClinkProcess> start(std::vector<std::string> args) {
    args.insert(args.begin(), "run");
    return std::make_unique<ClinkProcess>(args, dir_);
  }

  fs::path dir_;
};

TEST_P(JdbcExactlyOnce, FailureFreeRunWritesTheExpectedTable) {
  for (const Job& job : jobs()) {
    SCOPED_TRACE(job.name);
    const std::string t = unique_pg_table("eo_ref_" + job.name);
    pg_exec(fill(job.table_ddl, t));
    auto run = start({script(job, t).string(), "--checkpoint-dir", (dir_ / ("ref-" + job.name)).string(),
                      "--checkpoint-interval", "50", "--state-backend", GetParam()});
    ASSERT_EQ(run->wait_for(120000), std::optional<int>(0)) << run->err();
    EXPECT_EQ(pg_query_rows("SELECT * FROM " + t), job.expected);
  }
}

// SIGKILL at >= 12 random points, each run restarted from the latest checkpoint (or from
// scratch before the first), then run to the end.
TEST_P(JdbcExactlyOnce, KilledAtRandomPointsAndRestarted) {
  std::mt19937 rng(20261201);
  for (const Job& job : jobs()) {
    SCOPED_TRACE(job.name);
    const std::string t = unique_pg_table("eo_" + job.name);
    pg_exec(fill(job.table_ddl, t));
    const fs::path sql = script(job, t);
    const fs::path checkpoints = dir_ / ("chk-" + job.name);
    const auto r = run_killed_and_restarted(
        [&](std::vector<std::string> args) { return start(std::move(args)); },
        {sql.string(), "--checkpoint-dir", checkpoints.string(), "--checkpoint-interval", "50", "--state-backend",
         GetParam()},
        checkpoints, rng, {.kills = 12, .min_ms = 30, .max_ms = 250});
    ASSERT_EQ(r.exit_code, std::optional<int>(0)) << r.error;
    EXPECT_GE(r.kills, 12);
    EXPECT_GE(r.restored, 4) << "later runs restore the checkpoints of earlier ones";
    EXPECT_EQ(pg_query_rows("SELECT * FROM " + t), job.expected);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, JdbcExactlyOnce, ::testing::Values("memory", "rocksdb"));

}  // namespace
}  // namespace clink::test
