#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

#include "clink/state/keyed_state_backend.hpp"

namespace clink {

enum class CheckpointingMode { kExactlyOnce, kAtLeastOnce };

struct CheckpointConfig {
  std::int64_t interval_ms = 0;  // 0: no periodic checkpoints
  std::int64_t timeout_ms = 60'000;
  std::int64_t min_pause_ms = 0;  // between the end of one checkpoint and the next trigger
  int retained = 1;               // completed checkpoints kept on disk
  std::filesystem::path directory;  // checkpoints: <directory>/chk-<id>/, shared files in <directory>/shared/
  // Exactly-once aligns barriers (blocks inputs that delivered one); at-least-once
  // does not block, so a restore may replay some records twice.
  CheckpointingMode mode = CheckpointingMode::kExactlyOnce;
  StateBackendConfig state_backend;
  bool enabled() const { return interval_ms > 0 && !directory.empty(); }
};

// Flink's restart strategies (restart-strategy.type). The decisions over a failure
// timeline (how long to wait, when to give up) are RestartTracker's
// (clink/checkpoint/restart_tracker.hpp); this is the configuration.
struct RestartStrategy {
  enum class Kind {
    kNone,
    kFixedDelay,          // max_attempts restarts, delay_ms apart
    kExponentialBackoff,  // Flink's exponential-delay
    kFailureRate,         // fail when more than max_failures_per_interval in failure_rate_interval_ms
  };
  Kind kind = Kind::kNone;
  // fixed-delay: attempts; exponential-delay: attempts-before-reset-backoff (a backoff
  // reset starts the count again). Restarts, not counting the first run.
  int max_attempts = 3;
  std::int64_t delay_ms = 1000;        // fixed-delay / failure-rate delay; exponential initial-backoff
  std::int64_t max_delay_ms = 60'000;  // exponential max-backoff
  double multiplier = 2.0;             // exponential backoff-multiplier
  // exponential-delay: a job that ran this long past its last scheduled restart starts
  // again at the initial backoff (Flink's reset-backoff-threshold).
  std::int64_t reset_backoff_threshold_ms = 3'600'000;
  // exponential-delay: each delay moves by a uniform random amount in +-jitter * backoff
  // (Flink's jitter-factor, default 0.1 there; 0 here unless configured, so a
  // programmatic strategy stays deterministic).
  double jitter_factor = 0.0;
  int max_failures_per_interval = 1;             // failure-rate
  std::int64_t failure_rate_interval_ms = 60'000;  // failure-rate

  static RestartStrategy none() { return {}; }
  static RestartStrategy fixed_delay(int attempts, std::int64_t delay_ms) {
    RestartStrategy s;
    s.kind = Kind::kFixedDelay;
    s.max_attempts = attempts;
    s.delay_ms = s.max_delay_ms = delay_ms;
    s.multiplier = 1.0;
    return s;
  }
  static RestartStrategy exponential_backoff(int attempts, std::int64_t initial_ms, std::int64_t max_ms,
                                             double multiplier = 2.0) {
    RestartStrategy s;
    s.kind = Kind::kExponentialBackoff;
    s.max_attempts = attempts;
    s.delay_ms = initial_ms;
    s.max_delay_ms = max_ms;
    s.multiplier = multiplier;
    return s;
  }
  // Flink's exponential-delay with all its options; attempts default: unlimited.
  static RestartStrategy exponential_delay(std::int64_t initial_ms, std::int64_t max_ms, double multiplier,
                                           std::int64_t reset_threshold_ms, double jitter,
                                           int attempts = kUnlimitedAttempts) {
    RestartStrategy s = exponential_backoff(attempts, initial_ms, max_ms, multiplier);
    s.reset_backoff_threshold_ms = reset_threshold_ms;
    s.jitter_factor = jitter;
    return s;
  }
  static RestartStrategy failure_rate(int max_failures_per_interval, std::int64_t interval_ms,
                                      std::int64_t delay_ms) {
    RestartStrategy s;
    s.kind = Kind::kFailureRate;
    s.max_failures_per_interval = max_failures_per_interval;
    s.failure_rate_interval_ms = interval_ms;
    s.delay_ms = s.max_delay_ms = delay_ms;
    s.multiplier = 1.0;
    return s;
  }
  // Flink's Integer.MAX_VALUE ("infinite") for attempts-before-reset-backoff.
  static constexpr int kUnlimitedAttempts = 2'147'483'647;

  // Delay before restart number `attempt` (1-based) of back-to-back failures, without
  // jitter or resets (RestartTracker applies those).
  std::int64_t delay_for(int attempt) const;
};

// A checkpoint storage location: a directory path or a file:// URI. Other schemes
// are an error naming the location.
std::filesystem::path storage_path(const std::string& location);

struct RestoreSettings {
  std::filesystem::path path;  // a chk-<n> or savepoint directory (with _metadata)
  bool allow_non_restored_state = false;  // skip state whose operator uid is gone
  // Flink's claim mode (execution.state-recovery.claim-mode: CLAIM): the job takes the
  // checkpoint over as its own, retained and later subsumed (deleted) like the ones it
  // takes; a leader resuming its predecessor's jobs claims their checkpoints. Otherwise
  // (NO_CLAIM) the checkpoint stays the user's and is never deleted.
  bool claim = false;
};

}  // namespace clink
