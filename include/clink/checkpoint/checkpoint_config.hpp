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

struct RestartStrategy {
  enum class Kind { kNone, kFixedDelay, kExponentialBackoff };
  Kind kind = Kind::kNone;
  int max_attempts = 3;  // restarts, not counting the first run
  std::int64_t delay_ms = 1000;
  std::int64_t max_delay_ms = 60'000;  // exponential backoff cap
  double multiplier = 2.0;

  static RestartStrategy none() { return {}; }
  static RestartStrategy fixed_delay(int attempts, std::int64_t delay_ms) {
    return {Kind::kFixedDelay, attempts, delay_ms, delay_ms, 1.0};
  }
  static RestartStrategy exponential_backoff(int attempts, std::int64_t initial_ms, std::int64_t max_ms,
                                             double multiplier = 2.0) {
    return {Kind::kExponentialBackoff, attempts, initial_ms, max_ms, multiplier};
  }
  // Delay before restart number `attempt` (1-based).
  std::int64_t delay_for(int attempt) const;
};

// A checkpoint storage location: a directory path or a file:// URI. Other schemes
// are an error naming the location.
std::filesystem::path storage_path(const std::string& location);

struct RestoreSettings {
  std::filesystem::path path;  // a chk-<n> or savepoint directory (with _metadata)
  bool allow_non_restored_state = false;  // skip state whose operator uid is gone
};

}  // namespace clink
