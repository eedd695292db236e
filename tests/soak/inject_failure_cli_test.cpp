// `clink run --inject-failure SPEC`: a malformed spec is refused with its problem and
// position; injected failures are restarted from like any task failure, and fail the
// job when no restart is left.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "../support/clink_process.hpp"
#include "../support/temp_dir.hpp"
#include "soak_check.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class InjectFailureCli : public ::testing::Test {
 protected:
  void SetUp() override {
    // 4000 rows of the soak job's running count, in 0.4 s: checkpoints happen meanwhile.
    std::ofstream(sql_) << "CREATE TABLE src (seq BIGINT, ts AS TO_TIMESTAMP_LTZ(seq, 3), WATERMARK FOR ts AS ts) "
                           "WITH ('connector' = 'datagen', 'rows-per-second' = '10000', 'number-of-rows' = '4000', "
                           "'fields.seq.kind' = 'sequence', 'fields.seq.start' = '0', 'fields.seq.end' = '3999');\n"
                           "CREATE TABLE running (k BIGINT, seq BIGINT, n BIGINT, total BIGINT) WITH ("
                           "'connector' = 'filesystem', 'path' = '" + (dir_.path / "out").string() +
                               "', 'format' = 'csv');\n"
                           "CREATE VIEW keyed AS SELECT MOD(seq, 16) AS k, seq, ts FROM src;\n"
                           "INSERT INTO running SELECT k, seq, COUNT(*) OVER w, SUM(seq) OVER w FROM keyed "
                           "WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW);\n";
  }
  // Runs `clink run <script> <extra>` to its end: the exit code.
  int run(std::vector<std::string> extra) {
    std::vector<std::string> args{"run", sql_.string(), "-q", "--checkpoint-dir", (dir_.path / "chk").string(),
                                  "--checkpoint-interval", "50"};
    args.insert(args.end(), extra.begin(), extra.end());
    proc_ = std::make_unique<ClinkProcess>(args, dir_.path);
    return proc_->wait_for(120000).value_or(-2);
  }
  TempDir dir_{"clink-inject-cli"};
  fs::path sql_ = dir_.path / "job.sql";
  std::unique_ptr<ClinkProcess> proc_;
};

TEST_F(InjectFailureCli, AMalformedSpecIsRefusedWithItsProblemAndPosition) {
  EXPECT_EQ(run({"--inject-failure", "operator=x,after-recs=5"}), 1);
  EXPECT_THAT(proc_->err(), HasSubstr("--inject-failure: failure spec 'operator=x,after-recs=5': unknown key "
                                      "'after-recs' (keys: operator, subtask, after-records, after-checkpoint, "
                                      "during-checkpoint, probability, per, seed, times) at character 12"));
  EXPECT_FALSE(fs::exists(dir_.path / "out"));
}

TEST_F(InjectFailureCli, InjectedFailuresAreRestartedFromAndTheOutputIsExact) {
  ASSERT_EQ(run({"--restart-attempts", "5", "--restart-delay", "0", "--inject-failure",
                 "operator=over_aggregate*,after-records=700,times=2", "--inject-failure", "after-checkpoint=3"}),
            0)
      << proc_->err();
  int restarts = 0;
  std::ifstream in(dir_.path / "run.err");
  for (std::string line; std::getline(in, line);)
    if (line.find(" after: ") != std::string::npos && line.find("injected failure [") != std::string::npos) ++restarts;
  EXPECT_EQ(restarts, 3) << proc_->err();
  EXPECT_THAT(proc_->err(), HasSubstr("injected failure [operator=over_aggregate*,after-records=700,times=2]: "));
  EXPECT_THAT(proc_->err(), HasSubstr("injected failure [after-checkpoint=3]: checkpoint "));
  const auto lines = committed_lines(dir_.path / "out");
  EXPECT_EQ(lines.size(), 4000u);
  for (const auto& problem : check_running(lines, 4000)) ADD_FAILURE() << problem;
}

TEST_F(InjectFailureCli, WithoutRestartsAnInjectedFailureFailsTheRun) {
  EXPECT_EQ(run({"--inject-failure", "operator=over_aggregate*,subtask=0,after-records=100"}), 1);
  EXPECT_THAT(proc_->err(), HasSubstr("(1/1) failed: injected failure [operator=over_aggregate*,subtask=0,after-records=100]: "));
}

}  // namespace
}  // namespace clink::test
