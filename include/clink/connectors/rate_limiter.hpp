#pragma once
#include <chrono>
#include <cstdint>

namespace clink {

// A token bucket that lets a source emit at most `rows_per_second` on average without
// ever sleeping: the source asks how many rows it may emit now, and when the answer is
// none it returns kNothingAvailable with wait_ms() as its wait hint. Time is passed in
// so tests can drive it; sources pass steady_clock::now().
class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  // The bucket starts empty, so a source never bursts above its rate at start-up.
  RateLimiter(double rows_per_second, Clock::time_point now);

  // Takes and returns how many of `wanted` rows may be emitted now: 0 while fewer than
  // a minimum batch (about 10 ms worth of rows, at most `wanted`) are available, so
  // that a fast rate still produces reasonably sized batches.
  std::int64_t acquire(std::int64_t wanted, Clock::time_point now);

  // Milliseconds until the last refused acquire would succeed; between 1 and 100 so
  // that a throttled source still reacts promptly to cancellation.
  std::int64_t wait_ms() const { return wait_ms_; }

  double rows_per_second() const { return rate_; }

 private:
  void refill(Clock::time_point now);
  double rate_;
  double burst_;  // bucket capacity: at most 100 ms worth of rows
  double min_batch_;
  double tokens_ = 0;
  Clock::time_point last_;
  std::int64_t wait_ms_ = 1;
};

}  // namespace clink
