// The acceptance test of the REST API: Flink's own command-line client (`flink`, from the
// apache-flink PyPI package that tests/flink/setup installs) lists, savepoints, stops and
// cancels jobs on a clink coordinator, and a job stopped by it resumes in an embedded
// `clink run` with no gap and no repeat. Skipped, saying why, when that venv or Java is
// missing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "coordinator_process.hpp"

namespace clink::test {
namespace {

using ::testing::ElementsAre;
using ::testing::MatchesRegex;

// The `flink` script of the PyFlink venv ($CLINK_FLINK_VENV, else ~/.cache/clink/flink-venv),
// or "" with the reason in `why`.
std::string find_flink_cli(std::string& why) {
  const char* env = std::getenv("CLINK_FLINK_VENV");
  const char* home = std::getenv("HOME");
  fs::path venv = env ? fs::path(env) : fs::path(home ? home : "/root") / ".cache/clink/flink-venv";
  if (!fs::exists(venv)) {
    why = "no PyFlink venv at " + venv.string() + " (tests/flink/setup installs it)";
    return "";
  }
  std::error_code ec;
  for (const auto& lib : fs::directory_iterator(venv / "lib", ec)) {
    fs::path flink = lib.path() / "site-packages/pyflink/bin/flink";
    if (fs::exists(flink)) {
      if (std::system("command -v java >/dev/null 2>&1") != 0) {
        why = "no java on PATH (Flink's CLI needs a JDK 11 or 17)";
        return "";
      }
      return flink.string();
    }
  }
  why = "the venv " + venv.string() + " has no pyflink/bin/flink (tests/flink/setup installs apache-flink)";
  return "";
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

class FlinkCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    flink_ = find_flink_cli(why);
    if (flink_.empty()) GTEST_SKIP() << "Flink's CLI is not installed here: " << why;
    dir_ = scratch_dir("clink_rest_flink_cli_test_");
  }
  void TearDown() override {
    coordinator_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  // `flink <args> -m HOST:PORT`-style commands; the CLI's own log goes to the scratch dir.
  CommandResult flink(const std::string& args) {
    return run_command("FLINK_LOG_DIR='" + dir_.string() + "' '" + flink_ + "' " + args, dir_);
  }
  std::string submit(const std::string& file, const std::string& flags = "") {
    auto r = run_clink("run " + file + " --coordinator " + coordinator_->address() + " " + flags, dir_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::string id = r.out.substr(0, r.out.find('\n'));
    EXPECT_TRUE(is_hex32(id)) << r.out;
    return id;
  }

  std::string flink_;
  fs::path dir_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
};

TEST_F(FlinkCli, ListSavepointStopAndCancelAgainstAClinkCoordinator) {
  coordinator_ = std::make_unique<CoordinatorProcess>(dir_);
  auto& c = *coordinator_;
  ASSERT_TRUE(c.running());
  const std::string m = "-m " + c.address();

  // Job A: counts into an exactly-once file sink (about 60 s unless stopped: each JVM
  // start of Flink's CLI takes seconds); job B: SQL.
  const int n = 120000;
  std::string spec = write_counts_spec(dir_, n, 2000);
  std::string a = submit(spec, "--checkpoint-dir " + (dir_ / "ck").string());
  ASSERT_EQ(c.wait_for_state(a, "RUNNING"), "RUNNING");
  auto sql = dir_ / "job.sql";
  std::ofstream(sql) << "CREATE TABLE src (k INT) WITH ('connector'='datagen','rows-per-second'='50');\n"
                        "CREATE TABLE snk (k INT) WITH ('connector'='blackhole');\n"
                        "INSERT INTO snk SELECT k FROM src;\n";
  std::string b = submit(sql.string());
  ASSERT_EQ(c.wait_for_state(b, "RUNNING"), "RUNNING");

  auto list = flink("list " + m);
  ASSERT_EQ(list.exit_code, 0) << list.out << list.err;
  const std::string when = "[0-9]{2}\\.[0-9]{2}\\.[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}";  // POSIX regex: no \d
  EXPECT_THAT(lines_of(list.out),
              ElementsAre("Waiting for response...", "------------------ Running/Restarting Jobs -------------------",
                          MatchesRegex(when + " : " + a + " : checkpointed_counts \\(RUNNING\\)"),
                          MatchesRegex(when + " : " + b + " : insert-into_snk \\(RUNNING\\)"),
                          "--------------------------------------------------------------", "No scheduled jobs."));

  auto savepoint = flink("savepoint " + m + " " + a + " " + (dir_ / "sp").string());
  ASSERT_EQ(savepoint.exit_code, 0) << savepoint.out << savepoint.err;
  const std::string sp_path = (dir_ / "sp").string() + "/savepoint-" + a.substr(0, 6) + "-[0-9a-f]{12}";
  auto sp_lines = lines_of(savepoint.out);
  EXPECT_THAT(sp_lines, ElementsAre("Triggering savepoint for job " + a + ".", "Waiting for response...",
                                    MatchesRegex("Savepoint completed\\. Path: " + sp_path),
                                    "You can resume your program from this savepoint with the run command."));
  const std::string completed = "Savepoint completed. Path: ";
  if (sp_lines.size() == 4) {
    EXPECT_TRUE(fs::exists(fs::path(sp_lines[2].substr(completed.size())) / "_metadata")) << sp_lines[2];
  }
  EXPECT_EQ(c.get("/jobs/" + a).body["state"], "RUNNING");

  auto stop = flink("stop " + m + " --savepointPath " + (dir_ / "stop").string() + " " + a);
  ASSERT_EQ(stop.exit_code, 0) << stop.out << stop.err;
  auto stop_lines = lines_of(stop.out);
  EXPECT_THAT(stop_lines, ElementsAre("Suspending job \"" + a + "\" with a CANONICAL savepoint.",
                                      "Triggering stop-with-savepoint for job " + a + ".", "Waiting for response...",
                                      MatchesRegex("Savepoint completed\\. Path: " + (dir_ / "stop").string() +
                                                   "/savepoint-" + a.substr(0, 6) + "-[0-9a-f]{12}")));
  EXPECT_EQ(c.wait_for_state(a, "FINISHED"), "FINISHED");

  auto cancel = flink("cancel " + m + " " + b);
  ASSERT_EQ(cancel.exit_code, 0) << cancel.out << cancel.err;
  EXPECT_THAT(lines_of(cancel.out), ElementsAre("Cancelling job " + b + ".", "Cancelled job " + b + "."));
  EXPECT_EQ(c.wait_for_state(b, "CANCELED"), "CANCELED");

  auto all = flink("list -a " + m);
  ASSERT_EQ(all.exit_code, 0) << all.out << all.err;
  EXPECT_THAT(lines_of(all.out),
              ElementsAre("Waiting for response...", "No running jobs.", "No scheduled jobs.",
                          "---------------------- Terminated Jobs -----------------------",
                          MatchesRegex(when + " : " + a + " : checkpointed_counts \\(FINISHED\\)"),
                          MatchesRegex(when + " : " + b + " : insert-into_snk \\(CANCELED\\)"),
                          "--------------------------------------------------------------"));

  // The job `flink stop` stopped goes on in an embedded run: no gap, no repeat.
  ASSERT_EQ(stop_lines.size(), 4u);
  std::string stopped_at = stop_lines[3].substr(completed.size());
  auto before = committed_lines(dir_ / "out");
  EXPECT_GT(before.size(), 0u);
  EXPECT_LT(before.size(), static_cast<std::size_t>(n)) << "stopped before the end";
  auto resumed = run_clink("run " + spec + " --from-savepoint " + stopped_at + " --set events.rows_per_second=0", dir_);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(committed_lines(dir_ / "out"), running_counts(n, 4));
}

}  // namespace
}  // namespace clink::test
