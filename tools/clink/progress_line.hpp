#pragma once
// The status line `clink run` keeps on a terminal's stderr while its jobs run: what the
// job's metrics say (records read, bytes of the input files read of their total with an
// ETA, the watermark, checkpoints) and the time since the job started. Rendering is a
// pure function of a sample, so tests pin the exact text; ProgressLine (progress_line.cpp)
// samples a running job a few times a second and redraws the line in place.
#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

#include "clink/metrics/metric_registry.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/runtime/job_graph.hpp"

namespace clink::cli {

struct ProgressSample {
  std::int64_t records_read = 0;  // emitted by the job's sources (numRecordsOut of source operators)
  // Of the file sources (those that tell their pendingBytes): numBytesIn, and numBytesIn +
  // pendingBytes; -1: unknown (no such source).
  std::int64_t bytes_read = -1;
  std::int64_t bytes_total = -1;
  // The job's event-time progress: the least watermark its non-source operators received.
  std::int64_t watermark = std::numeric_limits<std::int64_t>::min();
  std::int64_t checkpoints = 0;  // completed
  std::int64_t failed_checkpoints = 0;
  std::int64_t restarts = 0;
  std::chrono::milliseconds elapsed{0};
};

// e.g. "records 1,234,567 (123,456/s) | files 12.0 MiB of 48.0 MiB 25% ETA 0:30 |
// watermark 2026-12-02 03:15:07.123 | checkpoints 3 | 0:10", cut to `width` columns.
std::string render_progress(const ProgressSample& sample, std::size_t width = 200);

// A sample of a running job from its metrics and checkpoint counts.
ProgressSample sample_progress(const JobGraph& graph, const MetricRegistry& metrics, const CheckpointCounts& counts,
                               std::chrono::milliseconds elapsed);

}  // namespace clink::cli

#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>

namespace clink::cluster {
class DispatchedJob;
}

namespace clink::cli {

// Redraws render_progress() of the job being watched on `out` (a terminal) every 250 ms:
// "\r", the line, "\x1b[K" (clear to the end); cleared when the job ends or the next
// job is watched, and when this goes.
class ProgressLine {
 public:
  explicit ProgressLine(std::FILE* out);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  void watch(std::shared_ptr<const cluster::DispatchedJob> job);

 private:
  void run();
  void clear();  // under mu_

  std::FILE* out_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool shown_ = false;
  std::shared_ptr<const cluster::DispatchedJob> job_;
  std::chrono::steady_clock::time_point started_;
  std::thread thread_;
};

}  // namespace clink::cli
