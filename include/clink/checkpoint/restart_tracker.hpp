#pragma once
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>

#include "clink/checkpoint/checkpoint_config.hpp"

namespace clink {

// Decides, failure by failure, whether a job restarts and after how long: Flink's
// RestartBackoffTimeStrategy implementations (fixed-delay, exponential-delay,
// failure-rate, none) as one small state machine. Pure logic: the caller passes the
// time, sleeps and restarts; no threads, no clock of its own.
//
//   RestartTracker tracker(options.restart);
//   if (auto delay = tracker.on_failure(steady_clock::now())) wait(*delay), restart();
//   else fail the job with tracker.suppressed_message().
class RestartTracker {
 public:
  using Clock = std::chrono::steady_clock;
  // Draws the exponential-delay jitter: a uniform integer in [lo, hi]. Tests pass a
  // fixed one; the default is a random engine seeded once per tracker.
  using Uniform = std::function<std::int64_t(std::int64_t lo, std::int64_t hi)>;

  explicit RestartTracker(RestartStrategy strategy, Uniform uniform = {});

  // Reports one failure at `now`. Returns the delay before the restart, or nullopt when
  // the strategy gives up (the job fails). Exponential-delay merges a failure that comes
  // while a restart is still pending into that restart (Flink: one lost worker fails
  // many tasks, which is one restart, not many): its delay is what is left of the
  // pending one, and new_attempt() is false.
  std::optional<std::chrono::milliseconds> on_failure(Clock::time_point now);

  // Whether the last on_failure started a new restart attempt (false: merged).
  bool new_attempt() const { return new_attempt_; }
  // Restart attempts granted so far (merged failures not counted): Flink's numRestarts.
  std::int64_t restarts() const { return restarts_; }
  const RestartStrategy& strategy() const { return strategy_; }
  // Flink's wording for a job the strategy stops: "Recovery is suppressed by
  // FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=3, backoffTimeMS=1000)".
  std::string suppressed_message() const;
  // The strategy as Flink's toString() names it (for logs and the REST API).
  std::string describe() const;

 private:
  std::optional<std::chrono::milliseconds> on_exponential(std::int64_t now_ms);
  std::optional<std::chrono::milliseconds> on_failure_rate(std::int64_t now_ms);
  std::int64_t jitter(std::int64_t backoff_ms);

  RestartStrategy strategy_;
  Uniform uniform_;
  bool new_attempt_ = false;
  std::int64_t restarts_ = 0;
  std::int64_t attempt_ = 0;  // fixed-delay: failures; exponential: attempts since the last reset
  std::optional<std::int64_t> next_restart_ms_;  // exponential: when the pending restart happens
  std::deque<std::int64_t> failures_ms_;        // failure-rate: the last max+1 failure times
};

// Checks a strategy's settings as Flink does (attempts >= 0, initial <= max backoff,
// multiplier > 1, jitter in [0, 1], ...); throws ClinkError naming the setting.
void validate(const RestartStrategy& strategy);

}  // namespace clink
