#pragma once
// What the checkpoint and restore tests share: a scratch directory, checkpointed
// execution options per state backend, and running a job until it has checkpointed.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "clink/api/data_stream.hpp"
#include "clink/runtime/executor.hpp"

namespace clink::testsupport {

// A fresh directory under the system temp directory, removed with the object.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& prefix = "clink-test") {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

template <class T>
std::vector<T> sorted(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Parameterised over the state backend ("memory", "rocksdb"); instantiate with
// INSTANTIATE_TEST_SUITE_P(Backends, Suite, ::testing::Values("memory", "rocksdb"), ...).
class BackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  // Checkpoints every `interval_ms` into `dir` on this test's backend; up to 5 restarts.
  ExecutionOptions checkpointing(const std::filesystem::path& dir, std::int64_t interval_ms = 50) const {
    ExecutionOptions o;
    o.checkpoints.interval_ms = interval_ms;
    o.checkpoints.directory = dir;
    o.checkpoints.state_backend.kind = GetParam();
    o.checkpoints.state_backend.working_dir = dir / "working";
    o.restart = RestartStrategy::fixed_delay(5, 10);
    return o;
  }
};

// Runs the job until `checkpoints` more checkpoints completed (or it ended), then cancels.
inline void run_until_checkpoints(StreamExecutionEnvironment& env, ExecutionOptions options, int checkpoints = 2) {
  auto handle = execute_async(env.graph(), std::move(options));
  auto start = handle.checkpoint_counts().completed;
  while (handle.checkpoint_counts().completed < start + checkpoints && !handle.wait_for(std::chrono::milliseconds(5))) {
  }
  handle.cancel();
  handle.wait();
}

}  // namespace clink::testsupport
