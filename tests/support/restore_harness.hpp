#pragma once
// The restore harness of the durability tests: a job whose scripted source a
// SourceControl can hold (scripted_source.hpp) and whose failure an ArmedFailure injects
// runs failure-free; or is held after a step, stopped with a savepoint and resumed from
// it (also at another parallelism); or is held after a step until two more checkpoints
// completed, then fails once and restores from the latest checkpoint. The test compares
// what each run's exactly-once sink received with the failure-free run. Runs use the
// BackendTest's state backend, each in a fresh directory.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>

#include <gtest/gtest.h>

#include "checkpoint_support.hpp"
#include "clink/runtime/executor.hpp"
#include "scripted_source.hpp"

namespace clink::test {

// Passes records until armed, then fails the next one (`failures_left` times in all).
struct ArmedFailure {
  std::atomic<bool> armed{false};
  std::atomic<int> failures_left{1};
  void check() {
    if (armed.load() && failures_left.fetch_sub(1) > 0) throw std::runtime_error("injected failure");
  }
  // For a map: passes `v` on unless this is the failing record.
  template <class T>
  T pass(T v) {
    check();
    return v;
  }
};

// A job under test: a new graph per run (the same uids at any parallelism), the control
// of its scripted source and the failure it injects.
struct RestorableJob {
  std::function<JobGraph(int parallelism)> graph;
  std::shared_ptr<SourceControl> control;
  std::shared_ptr<ArmedFailure> failure;
};

class RestoreHarness : public BackendTest {
 protected:
  static constexpr std::size_t kNoPause = static_cast<std::size_t>(-1);

  void run_failure_free(const RestorableJob& job, int parallelism) const {
    TempDir dir;
    auto handle = execute_async(job.graph(parallelism), checkpointing(dir.path, 0));
    handle.wait_for(std::chrono::minutes(1));
    EXPECT_EQ(handle.status(), JobStatus::kFinished) << handle.error();
  }

  // Holds the source before step `at` (at parallelism p1), stops the job with a
  // savepoint there, and resumes it from the savepoint at p2 to the end.
  void run_with_savepoint(const RestorableJob& job, std::size_t at, int p1, int p2) const {
    TempDir dir;
    std::filesystem::path savepoint;
    {
      job.control->pause_at = at;
      auto handle = execute_async(job.graph(p1), checkpointing(dir.path, 0));
      while (job.control->emitted.load() < at && !handle.wait_for(std::chrono::milliseconds(1))) {
      }
      EXPECT_EQ(handle.status(), JobStatus::kRunning) << handle.error();
      savepoint = handle.stop_with_savepoint(dir.path / "sp");
    }
    job.control->pause_at = kNoPause;
    auto o = checkpointing(dir.path, 0);
    o.restore = RestoreSettings{savepoint};
    auto handle = execute_async(job.graph(p2), o);
    handle.wait_for(std::chrono::minutes(1));
    EXPECT_EQ(handle.status(), JobStatus::kFinished) << handle.error();
  }

  // Holds the source before step `at` until two more checkpoints completed, arms the
  // failure, and runs to the end: exactly one restart, from the latest checkpoint.
  void run_with_failure(const RestorableJob& job, std::size_t at, int parallelism) const {
    TempDir dir;
    job.control->pause_at = at;
    auto handle = execute_async(job.graph(parallelism), checkpointing(dir.path, 10));
    while (job.control->emitted.load() < at && !handle.wait_for(std::chrono::milliseconds(1))) {
    }
    const auto done = handle.checkpoint_counts().completed;
    while (handle.checkpoint_counts().completed < done + 2 && !handle.wait_for(std::chrono::milliseconds(1))) {
    }
    EXPECT_EQ(handle.status(), JobStatus::kRunning) << handle.error();
    job.failure->armed = true;
    job.control->pause_at = kNoPause;
    handle.wait_for(std::chrono::minutes(1));
    EXPECT_EQ(handle.status(), JobStatus::kFinished) << handle.error();
    EXPECT_EQ(handle.checkpoint_counts().restarts, 1);
  }
};

}  // namespace clink::test
