// The refresh schedule of FULL materialized tables (MaterializedTables::refresh_due, the
// one the coordinator's and `clink run --keep-refreshing`'s loops call): refreshes at the
// multiples of the freshness on the creating session's wall clock, the latest missed one once,
// nothing while SUSPENDED, and with 'partition.fields.<f>.date-formatter' only the
// partition of the interval that ended (Flink's periodic refresh). Real refresh jobs run
// in this process; the clock is the test's.
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "clink/sql/handler/statement_runner.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;
using namespace clink::sql;

constexpr std::int64_t kHour = 3'600'000;
constexpr std::int64_t kDay = 24 * kHour;
constexpr std::int64_t kJan2 = 1'704'153'600'000;  // 2024-01-02T00:00:00Z

std::string lines(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class MaterializedSchedule : public ::testing::Test {
 protected:
  MaterializedSchedule() {
    dir_ = fs::temp_directory_path() /
           ("clink_mt_schedule_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "catalog");
    catalog_.set_persistence_dir((dir_ / "catalog").string());
    runner_.set_job_runner([](const nlohmann::json& spec, const ast::Statement&) {
      execute_async(from_spec(spec, builtin_registry())).wait();
    });
  }
  ~MaterializedSchedule() override { fs::remove_all(dir_); }

  void source(const std::string& rows) {
    fs::create_directories(dir_ / "src");
    std::ofstream(dir_ / "src" / "data.json") << rows;
  }
  // The definition's scheduler clock, as a process that scheduled until `ms` left it.
  void scheduled_until(const std::string& name, std::int64_t ms) {
    const fs::path p = dir_ / "catalog" / "materialized" / (name + ".json");
    auto j = nlohmann::json::parse(lines(p));
    j["last_schedule_ms"] = ms;
    std::ofstream(p) << j.dump();
  }
  std::int64_t next(const std::string& name) {
    return runner_.materialized().next_scheduled_refresh(*runner_.materialized().find(name));
  }
  // refresh_due at `now`; the tables it refreshed, in order.
  std::vector<std::string> run_due(std::int64_t now, std::int64_t* next_due = nullptr) {
    std::vector<std::string> refreshed;
    std::int64_t n = runner_.materialized().refresh_due(
        now, runner_.materialized_jobs().run, [&](const std::string& name, const std::exception* failure) {
          EXPECT_EQ(failure, nullptr) << failure->what();
          refreshed.push_back(name);
        });
    if (next_due) *next_due = n;
    return refreshed;
  }

  fs::path dir_;
  Catalog catalog_;
  StatementRunner runner_{catalog_};
};

TEST_F(MaterializedSchedule, APeriodicRefreshRecomputesOnlyTheIntervalsPartition) {
  source("{\"dt\": \"2024-01-01\", \"n\": 1}\n{\"dt\": \"2024-01-02\", \"n\": 2}\n");
  runner_.run("CREATE TABLE events (dt STRING, n BIGINT) WITH ('connector' = 'filesystem', 'path' = '" +
              (dir_ / "src").string() + "', 'format' = 'json');\n"
              "CREATE MATERIALIZED TABLE daily PARTITIONED BY (dt) WITH ('path' = '" + (dir_ / "daily").string() +
              "', 'partition.fields.dt.date-formatter' = 'yyyy-MM-dd') FRESHNESS = INTERVAL '1' DAY "
              "REFRESH_MODE = FULL AS SELECT dt, SUM(n) AS total FROM events GROUP BY dt;");
  const fs::path jan1 = dir_ / "daily" / "dt=2024-01-01" / "part-0.json", jan2 = dir_ / "daily" / "dt=2024-01-02" / "part-0.json";
  EXPECT_EQ(lines(jan1), "{\"total\":1}\n");
  EXPECT_EQ(lines(jan2), "{\"total\":2}\n");

  source("{\"dt\": \"2024-01-01\", \"n\": 10}\n{\"dt\": \"2024-01-02\", \"n\": 20}\n{\"dt\": \"2024-01-02\", \"n\": 2}\n");
  scheduled_until("daily", kJan2);  // the refresh scheduled at 2024-01-02 00:00 ran
  EXPECT_EQ(next("daily"), kJan2 + kDay);
  std::int64_t due = 0;
  EXPECT_TRUE(run_due(kJan2 + kDay - 1, &due).empty());
  EXPECT_EQ(due, kJan2 + kDay);
  // At 2024-01-03 00:00 the day 2024-01-02 ended: only its partition is recomputed.
  EXPECT_EQ(run_due(kJan2 + kDay + 5000, &due), std::vector<std::string>{"daily"});
  EXPECT_EQ(due, kJan2 + 2 * kDay);
  EXPECT_EQ(lines(jan2), "{\"total\":22}\n");
  EXPECT_EQ(lines(jan1), "{\"total\":1}\n");
  EXPECT_EQ(runner_.materialized().find("daily")->last_schedule_ms, kJan2 + kDay);

  // Days missed (the process was down): the latest schedule runs once, for the day before
  // it (2024-01-05, no rows: no partition), and nothing else changes.
  EXPECT_EQ(run_due(kJan2 + 5 * kDay + 7, &due), std::vector<std::string>{"daily"});
  EXPECT_EQ(due, kJan2 + 6 * kDay);
  EXPECT_FALSE(fs::exists(dir_ / "daily" / "dt=2024-01-05"));
  EXPECT_EQ(lines(jan1), "{\"total\":1}\n");

  // ALTER ... REFRESH still refreshes everything.
  runner_.run("ALTER MATERIALIZED TABLE daily REFRESH;");
  EXPECT_EQ(lines(jan1), "{\"total\":10}\n");
}

TEST_F(MaterializedSchedule, WithoutADateFormatterTheWholeTableIsRefreshed) {
  source("{\"dt\": \"2024-01-01\", \"n\": 1}\n");
  runner_.run("CREATE TABLE events (dt STRING, n BIGINT) WITH ('connector' = 'filesystem', 'path' = '" +
              (dir_ / "src").string() + "', 'format' = 'json');\n"
              "CREATE MATERIALIZED TABLE hourly WITH ('path' = '" + (dir_ / "hourly").string() +
              "') FRESHNESS = INTERVAL '2' HOUR REFRESH_MODE = FULL AS SELECT dt, n FROM events;");
  source("{\"dt\": \"2024-01-01\", \"n\": 1}\n{\"dt\": \"2024-01-03\", \"n\": 3}\n");
  scheduled_until("hourly", kJan2 + 3 * kHour);  // between two boundaries: the next is 04:00
  EXPECT_EQ(next("hourly"), kJan2 + 4 * kHour);
  EXPECT_EQ(run_due(kJan2 + 4 * kHour), std::vector<std::string>{"hourly"});
  EXPECT_EQ(lines(dir_ / "hourly" / "part-0.json"), "{\"dt\":\"2024-01-01\",\"n\":1}\n{\"dt\":\"2024-01-03\",\"n\":3}\n");
  EXPECT_EQ(next("hourly"), kJan2 + 6 * kHour);

  // SUSPENDED: never due; RESUME schedules from now on.
  runner_.run("ALTER MATERIALIZED TABLE hourly SUSPEND;");
  EXPECT_EQ(next("hourly"), std::numeric_limits<std::int64_t>::max());
  std::int64_t due = 0;
  EXPECT_TRUE(run_due(kJan2 + 100 * kDay, &due).empty());
  EXPECT_EQ(due, std::numeric_limits<std::int64_t>::max());
  runner_.run("ALTER MATERIALIZED TABLE hourly RESUME;");
  EXPECT_GT(next("hourly"), kJan2 + 100 * kDay);
}

// RESUME WITH (...) of a FULL table: dynamic options of its periodic refreshes' sink
// (Flink's ResumeRefreshWorkflow), not of ALTER ... REFRESH, until the next RESUME.
TEST_F(MaterializedSchedule, ResumeWithOptionsAppliesToThePeriodicRefreshes) {
  source("{\"dt\": \"2024-01-01\", \"n\": 1}\n{\"dt\": null, \"n\": 2}\n");
  runner_.run("CREATE TABLE events (dt STRING, n BIGINT) WITH ('connector' = 'filesystem', 'path' = '" +
              (dir_ / "src").string() + "', 'format' = 'json');\n"
              "CREATE MATERIALIZED TABLE parts PARTITIONED BY (dt) WITH ('path' = '" + (dir_ / "parts").string() +
              "') FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL AS SELECT dt, n FROM events;\n"
              "ALTER MATERIALIZED TABLE parts SUSPEND;\n"
              "ALTER MATERIALIZED TABLE parts RESUME WITH ('partition.default-name' = 'none');");
  const fs::path standard = dir_ / "parts" / "dt=__DEFAULT_PARTITION__", named = dir_ / "parts" / "dt=none";
  EXPECT_TRUE(fs::exists(standard));
  scheduled_until("parts", kJan2);
  EXPECT_EQ(run_due(kJan2 + kHour), std::vector<std::string>{"parts"});
  EXPECT_EQ(lines(named / "part-0.json"), "{\"n\":2}\n");
  EXPECT_FALSE(fs::exists(standard));
  runner_.run("ALTER MATERIALIZED TABLE parts REFRESH;");
  EXPECT_TRUE(fs::exists(standard));
  EXPECT_FALSE(fs::exists(named));
  runner_.run("ALTER MATERIALIZED TABLE parts SUSPEND;\nALTER MATERIALIZED TABLE parts RESUME;");
  scheduled_until("parts", kJan2);
  EXPECT_EQ(run_due(kJan2 + kHour), std::vector<std::string>{"parts"});
  EXPECT_TRUE(fs::exists(standard));
  EXPECT_FALSE(fs::exists(named));
}

// The boundaries are multiples of the freshness on the creating session's wall clock (kept
// with the table, as Flink keeps the session's configuration with the workflow): a daily
// refresh runs at local midnight, 16:00 UTC in Shanghai, whatever the scheduler's session.
TEST_F(MaterializedSchedule, TheScheduleFollowsTheSessionTimeZone) {
  source("{\"dt\": \"2024-01-01\", \"n\": 1}\n");
  runner_.run("SET 'table.local-time-zone' = 'Asia/Shanghai';\n"
              "CREATE TABLE events (dt STRING, n BIGINT) WITH ('connector' = 'filesystem', 'path' = '" +
              (dir_ / "src").string() + "', 'format' = 'json');\n"
              "CREATE MATERIALIZED TABLE daily PARTITIONED BY (dt) WITH ('path' = '" + (dir_ / "daily").string() +
              "', 'partition.fields.dt.date-formatter' = 'yyyy-MM-dd') FRESHNESS = INTERVAL '1' DAY "
              "REFRESH_MODE = FULL AS SELECT dt, SUM(n) AS total FROM events GROUP BY dt;\n"
              "RESET 'table.local-time-zone';");
  scheduled_until("daily", kJan2 + 10 * kHour);  // 18:00 local
  EXPECT_EQ(next("daily"), kJan2 + 16 * kHour);   // 2024-01-03 00:00 local
  source("{\"dt\": \"2024-01-01\", \"n\": 5}\n{\"dt\": \"2024-01-02\", \"n\": 7}\n");
  EXPECT_EQ(run_due(kJan2 + 16 * kHour), std::vector<std::string>{"daily"});
  // The local day that ended is 2024-01-02.
  EXPECT_EQ(lines(dir_ / "daily" / "dt=2024-01-02" / "part-0.json"), "{\"total\":7}\n");
  EXPECT_EQ(lines(dir_ / "daily" / "dt=2024-01-01" / "part-0.json"), "{\"total\":1}\n");
  EXPECT_EQ(next("daily"), kJan2 + kDay + 16 * kHour);
}

}  // namespace
}  // namespace clink::test
