#include "clink/connectors/rate_limiter.hpp"

#include <algorithm>
#include <cmath>

namespace clink {

RateLimiter::RateLimiter(double rows_per_second, Clock::time_point now)
    : rate_(rows_per_second),
      burst_(std::max(1.0, rows_per_second / 10)),
      min_batch_(std::max(1.0, std::floor(rows_per_second / 100))),
      last_(now) {}

void RateLimiter::refill(Clock::time_point now) {
  if (now <= last_) return;
  double elapsed_s = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(burst_, tokens_ + elapsed_s * rate_);
  last_ = now;
}

std::int64_t RateLimiter::acquire(std::int64_t wanted, Clock::time_point now) {
  if (wanted <= 0) return 0;
  refill(now);
  // The epsilon absorbs floating-point error in the refill: 4 ms + 6 ms of tokens at
  // 1000 rows/s must make 10 rows, not 9.999.
  constexpr double kEpsilon = 1e-6;
  double need = std::min(min_batch_, static_cast<double>(wanted));
  if (tokens_ + kEpsilon < need) {
    double ms = std::ceil((need - tokens_) * 1000.0 / rate_ - kEpsilon);
    wait_ms_ = static_cast<std::int64_t>(std::clamp(ms, 1.0, 100.0));
    return 0;
  }
  auto granted = std::min(wanted, static_cast<std::int64_t>(std::floor(tokens_ + kEpsilon)));
  tokens_ = std::max(0.0, tokens_ - static_cast<double>(granted));
  return granted;
}

}  // namespace clink
