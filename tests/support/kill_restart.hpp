#pragma once
// The kill-and-restart loop of the exactly-once tests: `clink run` SIGKILLed at random
// points, each new run restarted from the newest completed checkpoint (or from scratch
// before the first), then the last run left to finish.
//
// A kill at a random 10-150 ms can land before a run completed any checkpoint of its own
// (slow starts, RocksDB), so that every later run starts from the same old checkpoint
// or from scratch, and the test would pass without testing a restore. Every few kills
// (own_checkpoint_every) therefore wait until the run completed a checkpoint of its own,
// and the result counts the runs that restored one, for the test to assert on.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "clink_process.hpp"

namespace clink::test {

struct KillRestartResult {
  std::optional<int> exit_code;  // of the last run (nullopt: it never ended)
  std::string error;             // the stderr of a run that failed
  int kills = 0;
  int restored = 0;  // runs started from a checkpoint
};

// The number of the newest completed checkpoint (chk-<n> with _metadata) in `dir`; -1: none.
inline int newest_checkpoint(const std::filesystem::path& dir) {
  int newest = -1;
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return newest;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 4 && name.starts_with("chk-") &&
        std::all_of(name.begin() + 4, name.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
        std::filesystem::exists(e.path() / "_metadata", ec))
      newest = std::max(newest, std::stoi(name.substr(4)));
  }
  return newest;
}

struct KillRestartOptions {
  int kills = 20;  // runs killed
  int min_ms = 10, max_ms = 150;  // each after a random time in [min_ms, max_ms]
  int own_checkpoint_every = 3;   // kill n, n mod this = this - 1, first waits for its own checkpoint
};

// `start` runs `clink run` with the given arguments; `args` are the job's (with
// --checkpoint-dir `checkpoints`); the loop adds --from-checkpoint.
inline KillRestartResult run_killed_and_restarted(
    const std::function<std::unique_ptr<ClinkProcess>(std::vector<std::string>)>& start,
    const std::vector<std::string>& args, const std::filesystem::path& checkpoints, std::mt19937& rng,
    const KillRestartOptions& o = {}) {
  const int kills = o.kills, min_ms = o.min_ms, max_ms = o.max_ms;
  KillRestartResult r;
  for (int attempt = 0; attempt < 10 * kills + 20 && !r.exit_code; ++attempt) {
    std::vector<std::string> run_args = args;
    const int restored_from = newest_checkpoint(checkpoints);
    if (restored_from >= 0) {
      run_args.push_back("--from-checkpoint");
      run_args.push_back(checkpoints.string());
      ++r.restored;
    }
    auto run = start(run_args);
    if (r.kills < kills) {
      if (r.kills % o.own_checkpoint_every == o.own_checkpoint_every - 1) {
        // Killed as soon as it completed a checkpoint of its own: the next run restores
        // it, and the job moves on no more than it must (it has to last for every kill).
        for (int waited = 0; waited < 30000 && !r.exit_code && newest_checkpoint(checkpoints) <= restored_from;
             waited += 2)
          r.exit_code = run->wait_for(2);
      } else {
        r.exit_code = run->wait_for(std::uniform_int_distribution<int>(min_ms, max_ms)(rng));
      }
      if (!r.exit_code) {
        run->kill(SIGKILL);
        ++r.kills;
      }
    } else {
      r.exit_code = run->wait_for(120000);
    }
    if (r.exit_code && *r.exit_code != 0) r.error = run->err();
  }
  return r;
}

}  // namespace clink::test
