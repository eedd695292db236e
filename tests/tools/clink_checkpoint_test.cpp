// `clink run` with checkpoints, savepoints and restores, run as a user would: a
// rate-limited datagen job counting per key (keyed state) into an exactly-once
// file_sink; the committed part files must hold exactly the failure-free output.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clink/checkpoint/checkpoint_metadata.hpp"

#include "clink_runner.hpp"

namespace clink::test {

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Every line of the committed part files under `dir` (in-progress files are hidden), sorted.
std::vector<std::string> committed_lines(const fs::path& dir) {
  std::vector<std::string> lines;
  if (!fs::exists(dir)) return lines;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.rfind("part-", 0) != 0) continue;
    std::istringstream in(slurp(e.path()));
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// "(k<i % keys>,<running count>)" for rows 0..n-1: count with emit "every".
std::vector<std::string> running_counts(int n, int keys) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back("(k" + std::to_string(i % keys) + "," + std::to_string(i / keys + 1) + ")");
  std::sort(v.begin(), v.end());
  return v;
}

class ClinkCheckpoint : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = fs::temp_directory_path() / ("clink_ckpt_tool_test_" + std::to_string(::getpid()) + "_" + name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // datagen events 0..n-1 (key_count keys, rate-limited) -> count per event.key with
  // emit "every" (parallelism 2) -> exactly-once file_sink into <dir>/out/.
  // With fixed_source_parallelism false the source follows the job's parallelism (-p).
  std::string write_spec(int n, int keys, int rows_per_second, bool fixed_source_parallelism = true) {
    std::string spec = R"({"name": "checkpointed_counts", "config": {"parallelism": 2},
      "ops": [
        {"id": "events", "type": "datagen", )" +
                       std::string(fixed_source_parallelism ? R"("parallelism": 1,)" : "") + R"(
         "params": {"kind": "sequence", "type": "event", "start": 0, "end": )" +
                       std::to_string(n - 1) + R"(, "key_count": )" + std::to_string(keys) +
                       R"(, "rows_per_second": )" + std::to_string(rows_per_second) + R"(}},
        {"id": "count", "type": "count", "params": {"emit": "every"},
         "inputs": [{"from": "events", "partitioning": "hash", "key": "event.key"}]},
        {"id": "sink", "type": "file_sink", "params": {"path": ")" +
                       (dir_ / "out").string() + R"(/"}, "inputs": [{"from": "count"}]}
      ]})";
    auto p = dir_ / "job.json";
    std::ofstream(p) << spec;
    return p.string();
  }


  Result clink(const std::string& args) { return run_clink(args, dir_); }

  // Starts `clink <args>` in the background; stdout/stderr go to <dir>/bg.out, bg.err.
  pid_t start(const std::vector<std::string>& args) {
    std::vector<std::string> argv_s{CLINK_BINARY};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::string out = (dir_ / "bg.out").string(), err = (dir_ / "bg.err").string();
    pid_t pid = ::fork();
    if (pid == 0) {  // only async-signal-safe calls until exec
      if (::chdir(CLINK_SOURCE_DIR) != 0) ::_exit(126);
      int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (o < 0 || e < 0 || ::dup2(o, 1) < 0 || ::dup2(e, 2) < 0) ::_exit(126);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    return pid;
  }
  // Waits (at most 60 s) for a background clink; its exit code, or -1.
  static int wait_exit(pid_t pid) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return -1;
  }

  // Waits (at most 60 s) until the background job is under way: committed part files
  // when `committed` (a checkpoint completed); else its task threads run (the signal
  // handlers are installed before the job starts), plus half a second of progress. A
  // fixed sleep was too short for an ASan build under load: the signal came before the
  // job ran or checkpointed. (Without checkpoints, the part files stay empty until the
  // savepoint flushes them, so they cannot tell.)
  void wait_for_output(pid_t pid, bool committed) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      if (committed ? !committed_lines(dir_ / "out").empty() : threads_of(pid) >= 3) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!committed) std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  static int threads_of(pid_t pid) {
    std::error_code ec;
    int n = 0;
    for (auto it = fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec); !ec && it != fs::directory_iterator();
         it.increment(ec))
      ++n;
    return n;
  }

  fs::path dir_;
};
INSTANTIATE_TEST_SUITE_P(Backends, ClinkCheckpoint, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

TEST_P(ClinkCheckpoint, PeriodicCheckpointsAndExactlyOnceFileOutput) {
  std::string spec = write_spec(4000, 4, 4000);  // about 1 s
  auto ckpt = dir_ / "checkpoints";
  auto r = clink("run " + spec + " --checkpoint-dir " + ckpt.string() + " --checkpoint-interval 50 --state-backend " +
                 GetParam());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int with_metadata = 0;
  for (const auto& e : fs::directory_iterator(ckpt)) {
    std::string name = e.path().filename().string();
    if (name.rfind("chk-", 0) == 0 && fs::exists(e.path() / "_metadata")) ++with_metadata;
  }
  EXPECT_EQ(with_metadata, 1) << "the latest completed checkpoint is retained";
  EXPECT_EQ(committed_lines(dir_ / "out"), running_counts(4000, 4));
  int parts = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "out")) parts += e.path().filename().string().rfind("part-", 0) == 0;
  EXPECT_GT(parts, 2) << "each checkpoint commits a part file per subtask";
}

// SIGTERM with --savepoint-on-stop: a savepoint, exit 0; a new run from it continues
// the counts (keyed state) and the file output with no gap and no repeat.
TEST_P(ClinkCheckpoint, StopWithSavepointThenRestoreInANewRun) {
  const int n = 20000;
  std::string spec = write_spec(n, 4, 5000);  // about 4 s unless stopped
  auto savepoint = dir_ / "savepoint";
  // --checkpoint-dir without an interval: no periodic checkpoints, RocksDB works in it.
  pid_t pid = start({"run", spec, "--savepoint-on-stop", savepoint.string(), "--state-backend", GetParam(),
                     "--checkpoint-dir", (dir_ / "checkpoints").string()});
  ASSERT_GT(pid, 0);
  wait_for_output(pid, /*committed=*/false);
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int code = wait_exit(pid);
  std::string err = slurp(dir_ / "bg.err");
  ASSERT_EQ(code, 0) << err;
  EXPECT_THAT(err, HasSubstr("savepoint written to " + savepoint.string()));
  ASSERT_TRUE(fs::exists(savepoint / "_metadata"));
  auto first = committed_lines(dir_ / "out");
  EXPECT_LT(first.size(), static_cast<std::size_t>(n)) << "stopped before the end";

  auto r = clink("run " + spec + " --from-savepoint " + savepoint.string() + " --state-backend " + GetParam() +
                 " --checkpoint-dir " + (dir_ / "checkpoints").string() + " --set events.rows_per_second=0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(committed_lines(dir_ / "out"), running_counts(n, 4));
}

// Savepoint at parallelism 2, restore with -p 3: the counts' key groups move.
TEST_P(ClinkCheckpoint, RestoresASavepointAtAnotherParallelism) {
  const int n = 20000;
  std::string spec = write_spec(n, 7, 5000);
  auto savepoint = dir_ / "savepoint";
  // --checkpoint-dir without an interval: no periodic checkpoints, RocksDB works in it.
  pid_t pid = start({"run", spec, "--savepoint-on-stop", savepoint.string(), "--state-backend", GetParam(),
                     "--checkpoint-dir", (dir_ / "checkpoints").string()});
  ASSERT_GT(pid, 0);
  wait_for_output(pid, /*committed=*/false);
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  ASSERT_EQ(wait_exit(pid), 0) << slurp(dir_ / "bg.err");
  auto r = clink("run " + spec + " -p 3 --from-savepoint " + savepoint.string() + " --state-backend " + GetParam() +
                 " --checkpoint-dir " + (dir_ / "checkpoints").string() + " --set events.rows_per_second=0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(committed_lines(dir_ / "out"), running_counts(n, 7));
}

// A source's splits are dealt over its new readers: the source runs at -p 1, is
// cancelled, and restores at -p 3 with exactly the failure-free output.
TEST_P(ClinkCheckpoint, ChangingASourcesParallelismOnRestoreKeepsExactlyOnce) {
  const int n = 20000;
  std::string spec = write_spec(n, 4, 5000, /*fixed_source_parallelism=*/false);
  auto ckpt = dir_ / "checkpoints";
  pid_t pid = start({"run", spec, "-p", "1", "--checkpoint-dir", ckpt.string(), "--checkpoint-interval", "50",
                     "--state-backend", GetParam()});
  ASSERT_GT(pid, 0);
  wait_for_output(pid, /*committed=*/true);
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  EXPECT_EQ(wait_exit(pid), 1);
  EXPECT_THAT(slurp(dir_ / "bg.err"), HasSubstr("job cancelled"));
  auto first = committed_lines(dir_ / "out");
  EXPECT_GT(first.size(), 0u);
  EXPECT_LT(first.size(), static_cast<std::size_t>(n)) << "cancelled before the end";
  auto r = clink("run " + spec + " -p 3 --from-checkpoint " + ckpt.string() + " --checkpoint-dir " + ckpt.string() +
                 " --checkpoint-interval 50 --state-backend " + GetParam() + " --set events.rows_per_second=0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(committed_lines(dir_ / "out"), running_counts(n, 4));
}

// Run part of the job with checkpoints, cancel it (SIGINT without --savepoint-on-stop),
// then restore with --from-checkpoint <checkpoint dir> (its latest chk-<n>).
TEST_P(ClinkCheckpoint, RestartsFromTheLatestCheckpointInACheckpointDirectory) {
  const int n = 20000;
  std::string spec = write_spec(n, 4, 5000);
  auto ckpt = dir_ / "checkpoints";
  pid_t pid = start({"run", spec, "--checkpoint-dir", ckpt.string(), "--checkpoint-interval", "50",
                     "--state-backend", GetParam()});
  ASSERT_GT(pid, 0);
  wait_for_output(pid, /*committed=*/true);
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  EXPECT_EQ(wait_exit(pid), 1);
  EXPECT_THAT(slurp(dir_ / "bg.err"), HasSubstr("job cancelled"));
  auto r = clink("run " + spec + " --from-checkpoint " + ckpt.string() + " --checkpoint-dir " + ckpt.string() +
                 " --checkpoint-interval 50 --state-backend " + GetParam() + " --set events.rows_per_second=0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(committed_lines(dir_ / "out"), running_counts(n, 4));
}

// The killed process: SIGKILL mid-run (no cleanup, staged files left behind), then a
// new run from the latest checkpoint; the committed output is exactly the
// failure-free one, and no in-progress file is left.
TEST_P(ClinkCheckpoint, AKilledProcessRestartsFromItsLatestCheckpointExactlyOnce) {
  const int n = 20000;
  std::string spec = write_spec(n, 5, 5000);
  auto ckpt = dir_ / "checkpoints";
  pid_t pid = start({"run", spec, "--checkpoint-dir", ckpt.string(), "--checkpoint-interval", "50",
                     "--state-backend", GetParam()});
  ASSERT_GT(pid, 0);
  wait_for_output(pid, /*committed=*/true);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  EXPECT_EQ(wait_exit(pid), -1);  // killed, no exit code
  auto r = clink("run " + spec + " --from-checkpoint " + ckpt.string() + " --checkpoint-dir " + ckpt.string() +
                 " --checkpoint-interval 50 --state-backend " + GetParam() + " --set events.rows_per_second=0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(committed_lines(dir_ / "out"), running_counts(n, 5));
  for (const auto& e : fs::directory_iterator(dir_ / "out"))
    EXPECT_EQ(e.path().filename().string().find("inprogress"), std::string::npos) << e.path();
}

TEST_P(ClinkCheckpoint, FromCheckpointWithABadPathFailsClearly) {
  std::string spec = write_spec(100, 4, 0);
  auto missing = dir_ / "no-such-checkpoint";
  auto r = clink("run " + spec + " --from-checkpoint " + missing.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("error: no intact completed checkpoint or savepoint in " + missing.string()));
  EXPECT_FALSE(fs::exists(dir_ / "out")) << "nothing ran";

  fs::create_directories(dir_ / "corrupt" / "chk-3");
  std::ofstream(dir_ / "corrupt" / "chk-3" / "_metadata") << "not json";
  r = clink("run " + spec + " --from-checkpoint " + (dir_ / "corrupt").string());
  EXPECT_EQ(r.exit_code, 1);
  const auto chk = dir_ / "corrupt" / "chk-3";
  EXPECT_THAT(r.err, HasSubstr("WARN  checkpoint " + chk.string() + " is corrupt: " + (chk / "_metadata").string() +
                               " is not valid metadata"));
  EXPECT_THAT(r.err, HasSubstr("error: no intact completed checkpoint or savepoint in " + (dir_ / "corrupt").string()));
  // Named explicitly, the damaged checkpoint fails by name.
  r = clink("run " + spec + " --from-checkpoint " + chk.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("error: checkpoint " + chk.string() + " is corrupt: " + (chk / "_metadata").string() +
                               " is not valid metadata"));
}

// An incomplete newest checkpoint (an empty `_metadata`, as a crash of a file system
// without ordered writes may leave) is passed over: the run restores the previous one
// and the committed output is exactly the failure-free one (issue 16, item 6).
TEST_P(ClinkCheckpoint, AnIncompleteNewestCheckpointFallsBackToThePreviousOne) {
  const int n = 20000;
  std::string spec = write_spec(n, 4, 5000);
  auto ckpt = dir_ / "checkpoints";
  pid_t pid = start({"run", spec, "--checkpoint-dir", ckpt.string(), "--checkpoint-interval", "50",
                     "--checkpoints-retained", "3", "--state-backend", GetParam()});
  ASSERT_GT(pid, 0);
  wait_for_output(pid, /*committed=*/true);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a few checkpoints more
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  EXPECT_EQ(wait_exit(pid), -1);
  std::vector<std::pair<std::int64_t, fs::path>> chks;
  for (const auto& e : fs::directory_iterator(ckpt))
    if (auto id = checkpoint_id_of(e.path().filename().string()); id && fs::exists(e.path() / "_metadata"))
      chks.emplace_back(*id, e.path());
  std::sort(chks.begin(), chks.end());
  ASSERT_GE(chks.size(), 2u);
  fs::resize_file(chks.back().second / "_metadata", 0);
  auto r = clink("run " + spec + " --from-checkpoint " + ckpt.string() + " --checkpoint-dir " + ckpt.string() +
                 " --checkpoint-interval 50 --state-backend " + GetParam() + " --set events.rows_per_second=0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("WARN  checkpoint " + chks.back().second.string() + " is incomplete: " +
                               (chks.back().second / "_metadata").string() + " is empty; passed over"));
  // Restored from the previous checkpoint: the rows committed after it are written again
  // (as in Flink, a fallback's price), each with the count the restored state gives.
  auto lines = committed_lines(dir_ / "out");
  lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  EXPECT_EQ(lines, running_counts(n, 4));
}

TEST_P(ClinkCheckpoint, CheckpointIntervalNeedsACheckpointDirectory) {
  std::string spec = write_spec(100, 4, 0);
  auto r = clink("run " + spec + " --checkpoint-interval 50 --state-backend " + GetParam());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("error: --checkpoint-interval needs --checkpoint-dir"));
  EXPECT_FALSE(fs::exists(dir_ / "out")) << "nothing ran";
}

}  // namespace

}  // namespace clink::test
