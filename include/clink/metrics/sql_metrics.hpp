#pragma once
// The SQL pipeline's process-wide counters (clink::metrics::sql): how many statements
// were parsed, bound, optimised and physically planned, how many of those failed, and the
// time each stage took. Relaxed atomics, bumped once per statement; the Prometheus
// endpoint exposes them as clink_sql_<stage>s_total, clink_sql_<stage>_errors_total and
// clink_sql_<stage>_duration_ns (docs/metrics.md).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>

namespace clink::metrics::sql {

struct Stage {
  std::atomic<std::int64_t> total{0};
  std::atomic<std::int64_t> errors{0};
  std::atomic<std::int64_t> duration_ns{0};  // summed over all runs of the stage
};

struct Counters {
  Stage parse, bind, optimize, physical_plan;
};

// This process's counters.
Counters& counters();

// Times one run of a stage (a scope): counts it, adds its duration, and counts an error
// when the scope is left by an exception.
class StageTimer {
 public:
  explicit StageTimer(Stage& stage)
      : stage_(stage), start_(std::chrono::steady_clock::now()), exceptions_(std::uncaught_exceptions()) {}
  ~StageTimer() {
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count();
    stage_.total.fetch_add(1, std::memory_order_relaxed);
    stage_.duration_ns.fetch_add(ns, std::memory_order_relaxed);
    if (std::uncaught_exceptions() > exceptions_) stage_.errors.fetch_add(1, std::memory_order_relaxed);
  }
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;

 private:
  Stage& stage_;
  std::chrono::steady_clock::time_point start_;
  int exceptions_;
};

}  // namespace clink::metrics::sql
