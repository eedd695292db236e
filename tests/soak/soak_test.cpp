// The soak test (Flink's all-round job idea, issue 16): a stateful SQL job - a per-key
// running COUNT/SUM (OVER, keyed state and timers) and a per-key TUMBLE window count -
// over a datagen sequence, into exactly-once filesystem sinks, run by the real `clink`
// binary through injected failures (--inject-failure: seeded random ones on every
// operator, and failures after and during checkpoints), SIGKILLs of the process
// (restarted from its newest checkpoint) and rescales (SIGTERM with a savepoint at one
// parallelism, resumed from it at another), on both state backends. The committed
// output must then hold every key's sequence exactly once, with the state the
// failure-free run has (soak_check.hpp).
//
// CI runs a bounded form. CLINK_SOAK_ITERATIONS=N runs N process runs (each killed or
// rescaled, then one to the end) over proportionally more rows, and prints the figures;
// CLINK_SOAK_SEED picks another schedule. A failing run prints every command it ran,
// so the schedule can be replayed.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "../support/clink_process.hpp"
#include "../support/kill_restart.hpp"
#include "../support/temp_dir.hpp"
#include "soak_check.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::int64_t env_int(const char* name, std::int64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoll(v) : fallback;
}

struct SoakPlan {
  int runs;            // process runs that are killed or rescaled (then one more to the end)
  std::int64_t rows;   // the sequence 0..rows-1
  int rate;            // rows per second, all subtasks together
  int min_failures;    // injected failures the test must see
  std::uint64_t seed;  // of the schedule and the injected failures
};

SoakPlan soak_plan() {
  SoakPlan p;
  p.runs = static_cast<int>(env_int("CLINK_SOAK_ITERATIONS", 9));
  p.rate = 20000;
  p.rows = static_cast<std::int64_t>(p.runs) * 12000 + 20000;
  p.min_failures = std::max(100, p.runs * 10);
  p.seed = static_cast<std::uint64_t>(env_int("CLINK_SOAK_SEED", 20261202));
  return p;
}

std::string soak_sql(const fs::path& out, const SoakPlan& p) {
  const std::string n = std::to_string(p.rows);
  return "CREATE TABLE src (seq BIGINT, ts AS TO_TIMESTAMP_LTZ(seq, 3), "
         "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen', "
         "'rows-per-second' = '" + std::to_string(p.rate) + "', 'number-of-rows' = '" + n + "', "
         "'fields.seq.kind' = 'sequence', 'fields.seq.start' = '0', 'fields.seq.end' = '" + std::to_string(p.rows - 1) +
         "');\n"
         "CREATE VIEW keyed AS SELECT MOD(seq, " + std::to_string(kSoakKeys) + ") AS k, seq, ts FROM src;\n"
         "CREATE TABLE running (k BIGINT, seq BIGINT, n BIGINT, total BIGINT) WITH ('connector' = 'filesystem', "
         "'path' = '" + (out / "running").string() + "', 'format' = 'csv');\n"
         "CREATE TABLE windows (k BIGINT, c BIGINT, lo BIGINT, hi BIGINT) WITH ('connector' = 'filesystem', "
         "'path' = '" + (out / "windows").string() + "', 'format' = 'csv');\n"
         "EXECUTE STATEMENT SET BEGIN\n"
         "INSERT INTO running SELECT k, seq, COUNT(*) OVER w, SUM(seq) OVER w FROM keyed "
         "WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW);\n"
         "INSERT INTO windows SELECT k, COUNT(*), MIN(seq), MAX(seq) FROM TABLE(TUMBLE(TABLE keyed, "
         "DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY k, window_start, window_end;\n"
         "END;\n";
}

// How many injected failures the runs' stderr reports as restart causes ("restart 3 in
// 0 ms after: ..." or "region 1 restarts in 0 ms after: ...").
int injected_failures(const fs::path& err) {
  int n = 0;
  std::ifstream in(err);
  for (std::string line; std::getline(in, line);)
    if (line.find(" after: ") != std::string::npos && line.find("injected failure [") != std::string::npos) ++n;
  return n;
}

class Soak : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<ClinkProcess> start(const std::vector<std::string>& args) {
    std::string line = "clink";
    for (const auto& a : args) line += " " + a;
    commands_ += line + "\n";
    return std::make_unique<ClinkProcess>(args, dir_.path);
  }
  TempDir dir_{"clink-soak"};
  std::string commands_;  // every run, for replaying a failing schedule
};
INSTANTIATE_TEST_SUITE_P(Backends, Soak, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

TEST_P(Soak, StatefulSqlJobSurvivesInjectedFailuresKillsAndRescalesWithoutLossOrRepeat) {
  const SoakPlan plan = soak_plan();
  const auto started = Clock::now();
  const fs::path sql = dir_.path / "soak.sql", out = dir_.path / "out";
  std::ofstream(sql) << soak_sql(out, plan);
  std::mt19937_64 rng(plan.seed);
  const int parallelism[] = {2, 1, 3, 2, 4};
  int p_index = 0, kills = 0, rescales = 0, failed_stops = 0, restores = 0;
  fs::path checkpoints = dir_.path / "chk-0";
  std::optional<fs::path> savepoint;
  // Failures at this mean gap (records into one operator subtask): a few per second
  // over the job's four or five operators at the plan's rate, checkpoints in between.
  const double probability = 1.0 / (plan.rate * 0.6);
  std::optional<int> code;
  for (int run = 0; run <= plan.runs && !code; ++run) {
    const int p = parallelism[p_index % 5];
    std::vector<std::string> args{"run", sql.string(), "-q", "-p", std::to_string(p), "--state-backend", GetParam(),
                                  "--checkpoint-dir", checkpoints.string(), "--checkpoint-interval", "100",
                                  "--restart-attempts", "1000000", "--restart-delay", "0"};
    const int restored_from = newest_checkpoint(checkpoints);
    if (restored_from >= 0) {
      args.insert(args.end(), {"--from-checkpoint", checkpoints.string()});
      ++restores;
    } else if (savepoint) {
      args.insert(args.end(), {"--from-savepoint", savepoint->string()});
      ++restores;
    }
    const std::uint64_t seed = rng() % 1000000;
    args.insert(args.end(), {"--inject-failure", "probability=" + std::to_string(probability) + ",seed=" +
                                                     std::to_string(seed)});
    // And one failure around a checkpoint this run takes: after it, or in its snapshot.
    const int at = std::max(restored_from, 0) + 2 + static_cast<int>(rng() % 4);
    args.insert(args.end(), {"--inject-failure", std::string(run % 2 ? "during" : "after") + "-checkpoint=" +
                                                     std::to_string(at)});
    const bool last = run == plan.runs, rescale = !last && run % 3 == 2;
    fs::path stop_savepoint = dir_.path / ("sp-" + std::to_string(run));
    if (rescale) args.insert(args.end(), {"--savepoint-on-stop", stop_savepoint.string()});
    auto proc = start(args);
    if (last) {
      code = proc->wait_for(600000);
      ASSERT_EQ(code, std::optional<int>(0)) << proc->err() << "\ncommands:\n" << commands_;
      break;
    }
    // Stopped once it completed a checkpoint of its own (so every run moves the job
    // on), and a random while later.
    for (int waited = 0; waited < 60000 && !code && newest_checkpoint(checkpoints) <= restored_from; waited += 5)
      code = proc->wait_for(5);
    if (!code) code = proc->wait_for(static_cast<int>(rng() % 600));
    if (code) {  // the job ended by itself: done
      ASSERT_EQ(code, std::optional<int>(0)) << proc->err() << "\ncommands:\n" << commands_;
      break;
    }
    if (!rescale) {
      proc->kill(SIGKILL);
      ++kills;
      continue;
    }
    proc->kill(SIGTERM);
    code = proc->wait_for(120000);
    ASSERT_TRUE(code.has_value()) << "a stop with savepoint hung\ncommands:\n" << commands_;
    if (*code == 0 && fs::exists(stop_savepoint / "_metadata")) {
      savepoint = stop_savepoint;
      checkpoints = dir_.path / ("chk-" + std::to_string(run + 1));
      ++p_index;
      ++rescales;
      code.reset();
    } else if (*code != 0) {
      // An injected failure during the savepoint fails it (as in Flink): the process
      // exits, and the next run restores the newest checkpoint, as after a kill.
      ++failed_stops;
      code.reset();
    }  // exit 0 without a savepoint: the job had ended
  }
  const int failures = injected_failures(dir_.path / "run.err");
  const auto running = committed_lines(out / "running"), windows = committed_lines(out / "windows");
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  std::printf("soak %s: %d injected failures, %d kills, %d rescales (%d stops failed), %d restores, %zu + %zu rows "
              "committed of %lld input rows, %.1f s\n",
              GetParam().c_str(), failures, kills, rescales, failed_stops, restores, running.size(), windows.size(),
              static_cast<long long>(plan.rows), seconds);
  for (const auto& problem : check_running(running, plan.rows)) ADD_FAILURE() << problem;
  for (const auto& problem : check_windows(windows, plan.rows)) ADD_FAILURE() << problem;
  EXPECT_EQ(static_cast<std::int64_t>(running.size()), plan.rows);
  EXPECT_GE(failures, plan.min_failures);
  EXPECT_GE(kills, plan.runs / 2);
  EXPECT_GE(rescales, plan.runs / 6);
  if (HasFailure()) std::printf("commands:\n%s", commands_.c_str());
}

}  // namespace
}  // namespace clink::test
