// The terminal's view of a cluster: the coordinator's process log and a log file per job
// under --log-dir (Flink's env.log.dir), and `clink sql --coordinator`: an INSERT
// submitted as Flink's SQL client submits it, SHOW JOBS listing the cluster's jobs and
// STOP JOB ... WITH SAVEPOINT stopping one, against a real coordinator process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "coordinator_process.hpp"

namespace clink::test {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;

class ClusterTerminal : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = scratch_dir("clink_terminal_test_"); }
  void TearDown() override {
    coordinator_.reset();
    fs::remove_all(dir_);
  }
  CommandResult sql(const std::string& statements) {
    auto in = dir_ / "stdin.sql";
    std::ofstream(in) << statements;
    return run_clink("sql --coordinator " + coordinator_->address() + " < '" + in.string() + "'", dir_);
  }
  fs::path dir_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
};

TEST_F(ClusterTerminal, SqlClientSubmitsListsAndStopsJobsAndEachJobHasItsLog) {
  const fs::path logs = dir_ / "logs";
  coordinator_ = std::make_unique<CoordinatorProcess>(dir_, std::vector<std::string>{"--log-dir", logs.string()});
  auto& c = *coordinator_;
  // An unbounded job (datagen into blackhole), submitted from the SQL client.
  auto r = sql("CREATE TABLE src (k INT) WITH ('connector'='datagen','rows-per-second'='50');\n"
               "CREATE TABLE snk (k INT) WITH ('connector'='blackhole');\n"
               "INSERT INTO snk SELECT k FROM src;\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("\\[INFO\\] Submitting SQL update statement to the cluster\\.\\.\\.\n"
                                                      "\\[INFO\\] SQL update statement has been successfully submitted to "
                                                      "the cluster:\nJob ID: ([0-9a-f]{32})\n")))
      << r.out;
  const std::string job = m[1];
  EXPECT_EQ(c.wait_for_state(job, "RUNNING"), "RUNNING");

  r = sql("SHOW JOBS;\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ContainsRegex("\\| +job id \\| +job name \\| +status \\| +start time \\|\n"));
  EXPECT_THAT(r.out, ContainsRegex("\\| " + job + " \\| insert-into_snk \\| RUNNING \\| [0-9]{4}-[0-9]{2}-[0-9]{2} "
                                                  "[0-9:]{8}\\.[0-9]{3} \\|\n"));
  EXPECT_THAT(r.out, HasSubstr("1 row in set\n"));

  const fs::path savepoints = dir_ / "savepoints";
  r = sql("SET 'execution.checkpointing.savepoint-dir' = '" + savepoints.string() + "';\nSTOP JOB '" + job +
          "' WITH SAVEPOINT;\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("\\| +savepoint path \\|\n\\+-+\\+\n\\| +(\\S+) \\|\n"))) << r.out;
  EXPECT_TRUE(fs::exists(fs::path(m[1].str()) / "_metadata") || fs::exists(m[1].str())) << m[1];
  EXPECT_EQ(c.wait_for_state(job, "FINISHED"), "FINISHED");
  r = sql("STOP JOB '0123456789abcdef0123456789abcdef';\n");
  EXPECT_THAT(r.err, HasSubstr("0123456789abcdef0123456789abcdef"));

  // The job's own log: submitted, deployed on the worker inside the coordinator, ended.
  std::string job_log;
  for (int i = 0; i < 100 && job_log.find("job FINISHED") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    job_log = slurp_file(logs / (job + ".log"));
  }
  EXPECT_THAT(job_log, ContainsRegex("[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8},[0-9]{3} coordinator INFO  \\[job=" + job +
                                     "\\] job 'insert-into_snk' submitted\n"));
  EXPECT_THAT(job_log, ContainsRegex("INFO  \\[job=" + job + "\\] deploying attempt [0-9]+: 1 local task\\(s\\)\n"));
  EXPECT_THAT(job_log, HasSubstr("INFO  [job=" + job + "] job FINISHED\n"));
  // The process log has every line, the job's and the coordinator's own.
  const std::string process_log = slurp_file(logs / "coordinator.log");
  EXPECT_THAT(process_log, HasSubstr("INFO  leadership granted"));
  EXPECT_THAT(process_log, HasSubstr("INFO  worker local registered"));
  EXPECT_THAT(process_log, HasSubstr("[job=" + job + "] job FINISHED"));
  // stderr has the same lines, in the compact form.
  EXPECT_THAT(c.stderr_text(), ContainsRegex("(^|\n)[0-9:]{8}\\.[0-9]{3} INFO  leadership granted"));
}

}  // namespace
}  // namespace clink::test
