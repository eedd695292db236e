// What a terminal user sees of `clink`: the progress line (its rendering pinned as a pure
// function, and on a real pseudo-terminal), log levels and the log lines' job / task /
// subtask, and the Flink SQL client's catalog, job and jar statements in `clink sql`.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "../../tools/clink/progress_line.hpp"
#include "clink_runner.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

class Terminal : public ClinkCliTest {
 protected:
  Terminal() : ClinkCliTest("clink_terminal_") {}
  // `clink sql` with `statements` on stdin.
  Result sql(const std::string& statements, const std::string& args = "") {
    return clink("sql " + args + " < '" + write("stdin.sql", statements) + "'");
  }
};

TEST(ProgressLine, RendersTheSampleExactly) {
  cli::ProgressSample s;
  s.records_read = 1234567;
  s.elapsed = std::chrono::milliseconds(10'400);
  EXPECT_EQ(cli::render_progress(s), "records 1,234,567 (118,708/s) | checkpoints 0 | 0:10");
  s.bytes_read = 12 * 1024 * 1024;
  s.bytes_total = 48 * 1024 * 1024;
  s.watermark = 1'796'181'307'123;  // 2026-12-02 03:15:07.123 UTC
  s.checkpoints = 3;
  s.failed_checkpoints = 1;
  s.restarts = 2;
  EXPECT_EQ(cli::render_progress(s),
            "records 1,234,567 (118,708/s) | files 12.0 MiB of 48.0 MiB 25% ETA 0:31 | watermark 2026-12-02 03:15:07.123 | "
            "checkpoints 3 (1 failed) | restarts 2 | 0:10");
  // Under a second: no rate, no ETA yet; an hour on: h:mm:ss; cut to the terminal's width.
  cli::ProgressSample early;
  early.records_read = 999;
  early.bytes_read = 10;
  early.bytes_total = 100;
  early.elapsed = std::chrono::milliseconds(500);
  EXPECT_EQ(cli::render_progress(early), "records 999 | files 10 B of 100 B 10% | checkpoints 0 | 0:00");
  early.elapsed = std::chrono::hours(1) + std::chrono::seconds(5);
  EXPECT_EQ(cli::render_progress(early, 20), "records 999 (0/s) | ");
  EXPECT_THAT(cli::render_progress(early), HasSubstr("| 1:00:05"));
}

// The sample of a running job: records its sources emitted, and the bytes of the file
// sources (those telling pendingBytes) read of their total, numBytesIn + pendingBytes.
TEST(ProgressLine, SamplesTheFileSourcesBytesFromTheirMetrics) {
  JobGraph g;
  g.add_node(JobNode{.id = "files", .num_inputs = 0});
  g.add_node(JobNode{.id = "kafka", .num_inputs = 0});
  g.add_node(JobNode{.id = "sink", .num_inputs = 2});
  MetricRegistry r;
  auto files0 = r.operator_metrics("files", 0, nullptr), files1 = r.operator_metrics("files", 1, nullptr);
  auto kafka = r.operator_metrics("kafka", 0, nullptr);
  files0->records_out = 10;
  files0->bytes_in = 100;
  files0->pending_bytes = 300;
  files1->records_out = 5;
  files1->bytes_in = 50;
  files1->pending_bytes = 0;
  kafka->records_out = 7;
  kafka->bytes_in = 999;  // not a file source: no pendingBytes
  kafka->pending_records = 12;
  auto s = cli::sample_progress(g, r, CheckpointCounts{}, std::chrono::milliseconds(2000));
  EXPECT_EQ(s.records_read, 22);
  EXPECT_EQ(s.bytes_read, 150);
  EXPECT_EQ(s.bytes_total, 450);
  EXPECT_EQ(cli::render_progress(s), "records 22 (11/s) | files 150 B of 450 B 33% ETA 0:04 | checkpoints 0 | 0:02");
  // No file source: no files part.
  JobGraph only_kafka;
  only_kafka.add_node(JobNode{.id = "kafka", .num_inputs = 0});
  s = cli::sample_progress(only_kafka, r, CheckpointCounts{}, std::chrono::milliseconds(2000));
  EXPECT_EQ(s.bytes_read, -1);
  EXPECT_EQ(s.bytes_total, -1);
}

TEST_F(Terminal, LogLinesCarryLevelJobTaskAndSubtask) {
  // A job failing at every attempt: its source reads a file that is not there.
  const std::string spec = write("failing.json", R"({"name": "logtest", "ops": [
      {"id": "lines", "type": "file_source", "params": {"path": "/nonexistent/clink/input.txt"}},
      {"id": "print", "type": "print", "inputs": [{"from": "lines"}]}]})");
  Result r = clink("run '" + spec + "' --restart-attempts 1 --restart-delay 10");
  EXPECT_EQ(r.exit_code, 1);
  // The restart is a warning of the job (its id: `clink run` registers its jobs as a
  // coordinator does); the failure is the command's error line.
  EXPECT_THAT(r.err, ContainsRegex("(^|\n)[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3} WARN  \\[job=[0-9a-f]{32}\\] restart 1 in 10 ms "
                                   "after: .*/nonexistent/clink/input.txt"));
  EXPECT_THAT(r.err, ContainsRegex("\nerror: .*/nonexistent/clink/input.txt"));
  EXPECT_THAT(r.err, Not(HasSubstr("DEBUG")));
  // debug: the task's own line, in its context (task and subtask).
  r = clink("run '" + spec + "' --log-level debug");
  EXPECT_THAT(r.err, ContainsRegex("DEBUG \\[job=[0-9a-f]{32}\\] submitted job 'logtest'\n"));
  EXPECT_THAT(r.err, ContainsRegex("DEBUG \\[job=[0-9a-f]{32} task=\"lines\" subtask=1/1\\] task failed: "));
  // error: no warnings of restarts; the error line stays.
  r = clink("run '" + spec + "' --restart-attempts 1 --restart-delay 10 --log-level error");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, Not(HasSubstr("WARN")));
  EXPECT_THAT(r.err, HasSubstr("error: "));
  // --quiet silences info lines only: with debug asked for too, it wins.
  r = clink("run '" + spec + "' --log-level debug --quiet");
  EXPECT_THAT(r.err, Not(HasSubstr("DEBUG")));
  r = clink("version --log-level loud");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--log-level: loud not in {trace,debug,info,warn,error,off}"));
}

// `clink run` on a pseudo-terminal: the progress line comes and goes; with --quiet none.
std::string run_on_pty(const std::vector<std::string>& args, int& exit_code, const std::string& input = "") {
  int fd = -1;
  winsize ws{};
  ws.ws_row = 40;
  ws.ws_col = 200;
  pid_t pid = forkpty(&fd, nullptr, nullptr, &ws);
  if (pid == 0) {
    if (::chdir(CLINK_SOURCE_DIR) != 0) _exit(127);
    std::vector<char*> argv{const_cast<char*>(CLINK_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(CLINK_BINARY, argv.data());
    _exit(127);
  }
  if (!input.empty() && ::write(fd, input.data(), input.size()) != static_cast<ssize_t>(input.size())) ADD_FAILURE();
  std::string out;
  char buf[4096];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) {
      ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n <= 0) break;  // EIO: the child closed the terminal
      out.append(buf, static_cast<std::size_t>(n));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      break;
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(fd);
  exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

TEST_F(Terminal, ProgressLineOnATerminalOnly) {
  // ~1.5 s of generated rows into a blackhole, checkpointing.
  const std::string script = write("progress.sql", R"(
CREATE TABLE src (k BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '2000', 'number-of-rows' = '3000');
CREATE TABLE snk (k BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT k FROM src;
)");
  const std::string chk = (dir_ / "chk").string();
  int code = -1;
  std::string out = run_on_pty({"run", script, "--checkpoint-dir", chk, "--checkpoint-interval", "200"}, code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_THAT(out, ContainsRegex("\r(\x1b\\[K)?records [0-9,]+ .*\\| checkpoints [0-9]+ \\| 0:0[0-9]\x1b\\[K"));
  EXPECT_THAT(out, HasSubstr("/s) |"));  // a rate once a second passed
  EXPECT_TRUE(out.size() >= 4 && out.rfind("\r\x1b[K") != std::string::npos) << "the line is cleared at the end";
  // Cleared: nothing of it after the last clear.
  EXPECT_THAT(out.substr(out.rfind("\r\x1b[K")), Not(HasSubstr("records")));
  out = run_on_pty({"run", script, "--quiet"}, code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_THAT(out, Not(HasSubstr("records")));
  // Not a terminal: no line (stderr stays empty).
  Result r = clink("run '" + script + "'");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
}

// A bounded filesystem source on the line: its files' bytes read of their total (all of
// them once it is done, while a slow datagen keeps the job running ~1.5 s).
TEST_F(Terminal, ProgressLineShowsTheBytesOfTheFilesRead) {
  fs::create_directories(dir_ / "in");
  write("in/a.json", "{\"k\": 1}\n{\"k\": 2}\n");  // 18 bytes
  write("in/b.json", "{\"k\": 30}\n");              // 10 bytes
  const std::string script = write("files.sql", R"(
CREATE TABLE src (k BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '2000', 'number-of-rows' = '3000');
CREATE TABLE f (k BIGINT) WITH ('connector' = 'filesystem', 'path' = ')" + (dir_ / "in").string() + R"(', 'format' = 'json');
CREATE TABLE snk (k BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT k FROM src UNION ALL SELECT k FROM f;
)");
  int code = -1;
  std::string out = run_on_pty({"run", script}, code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_THAT(out, ContainsRegex("\rrecords [0-9,]+ .*\\| files 28 B of 28 B 100% \\| checkpoints 0 \\| 0:0[0-9]\x1b\\[K"));
}

// The SQL client's result modes on a terminal: changelog shows the changes with their
// `op`, table the rows they leave.
TEST_F(Terminal, SqlClientResultModesOnATerminal) {
  const std::string query =
      "SELECT k, COUNT(*) AS c FROM (VALUES (1), (2), (1)) AS t(k) GROUP BY k;\n";
  int code = -1;
  std::string out = run_on_pty({"sql"}, code, "SET 'sql-client.execution.result-mode' = 'changelog';\n" + query + "QUIT;\n");
  EXPECT_EQ(code, 0) << out;
  EXPECT_THAT(out, ContainsRegex("\\| op \\| +k \\| +c \\|"));
  EXPECT_THAT(out, ContainsRegex("\\| -U \\| +1 \\| +1 \\|"));
  EXPECT_THAT(out, ContainsRegex("\\| \\+U \\| +1 \\| +2 \\|"));
  EXPECT_THAT(out, HasSubstr("Received a total of 4 rows"));
  EXPECT_THAT(out, HasSubstr("[INFO] Query finished."));
  out = run_on_pty({"sql"}, code, "SET 'sql-client.execution.result-mode' = 'table';\n" + query + "QUIT;\n");
  EXPECT_EQ(code, 0) << out;
  EXPECT_THAT(out, Not(HasSubstr("| op |")));
  EXPECT_THAT(out, ContainsRegex("\\| +1 \\| +2 \\|"));
}

TEST_F(Terminal, SqlClientCatalogAndDatabaseStatements) {
  Result r = sql("SHOW CATALOGS;\nSHOW DATABASES;\nSHOW CURRENT CATALOG;\nSHOW CURRENT DATABASE;\n"
                 "USE CATALOG default_catalog;\nUSE default_database;\nUSE default_catalog.default_database;\nSHOW JARS;\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "+-----------------+\n|    catalog name |\n+-----------------+\n| default_catalog |\n+-----------------+\n"
            "1 row in set\n"
            "+------------------+\n|    database name |\n+------------------+\n| default_database |\n+------------------+\n"
            "1 row in set\n"
            "+----------------------+\n| current catalog name |\n+----------------------+\n|      default_catalog |\n"
            "+----------------------+\n1 row in set\n"
            "+-----------------------+\n| current database name |\n+-----------------------+\n|      default_database |\n"
            "+-----------------------+\n1 row in set\n"
            "[INFO] Execute statement succeeded.\n[INFO] Execute statement succeeded.\n[INFO] Execute statement succeeded.\n"
            "Empty set\n");
  EXPECT_EQ(r.err, "");
  r = sql("USE CATALOG hive;\n");
  EXPECT_EQ(r.err, "[ERROR] line 1, column 1: A catalog with name [hive] does not exist. (clink has one catalog, "
                   "default_catalog)\n");
  r = sql("USE sales;\n");
  EXPECT_EQ(r.err, "[ERROR] line 1, column 1: A database with name [sales] does not exist in the catalog: "
                   "[default_catalog]. (clink has one database, default_database)\n");
  r = sql("ADD JAR '/opt/udfs.jar';\n");
  EXPECT_THAT(r.err, HasSubstr("[ERROR] line 1, column 1: ADD JAR '/opt/udfs.jar': clink runs no Java code"));
  r = sql("REMOVE JAR '/opt/udfs.jar';\n");
  EXPECT_THAT(r.err, HasSubstr("jar or artifact resource [/opt/udfs.jar] not found"));
  r = sql("SET 'sql-client.execution.result-mode' = 'chart';\n");
  EXPECT_EQ(r.err, "[ERROR] line 1, column 1: SET 'sql-client.execution.result-mode' = 'chart': expected 'table', "
                   "'changelog' or 'tableau'\n");
  r = sql("SET 'sql-client.execution.result-mode' = 'changelog';\nSET 'sql-client.execution.result-mode' = 'TABLEAU';\n");
  EXPECT_EQ(r.out, "[INFO] Execute statement succeeded.\n[INFO] Execute statement succeeded.\n");
}

TEST_F(Terminal, SqlClientShowJobsAndStopJobEmbedded) {
  Result r = sql("SHOW JOBS;\n");
  EXPECT_EQ(r.out, "Empty set\n");
  r = sql("CREATE TABLE src (k BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');\n"
          "CREATE TABLE snk (k BIGINT) WITH ('connector' = 'blackhole');\n"
          "INSERT INTO snk SELECT k FROM src;\nSHOW JOBS;\nSTOP JOB '0123456789abcdef0123456789abcdef';\n");
  EXPECT_THAT(r.out, ContainsRegex("\\| +job id \\| +job name \\| +status \\| +start time \\|\n"));
  EXPECT_THAT(r.out, ContainsRegex("\\| [0-9a-f]{32} \\| insert-into_snk \\| FINISHED \\| 20[0-9]{2}-[0-9]{2}-[0-9]{2} "
                                   "[0-9:]{8}\\.[0-9]{3} \\|\n"));
  EXPECT_THAT(r.err, HasSubstr("[ERROR] line 1, column 1: Could not stop job 0123456789abcdef0123456789abcdef: it is not "
                               "running."));
}

}  // namespace
}  // namespace clink::test
