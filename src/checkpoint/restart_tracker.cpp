#include "clink/checkpoint/restart_tracker.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <sstream>

#include "clink/core/error.hpp"

namespace clink {

namespace {

using std::chrono::milliseconds;

RestartTracker::Uniform random_uniform() {
  auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
  return [engine](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(*engine);
  };
}

std::int64_t to_ms(RestartTracker::Clock::time_point t) {
  return std::chrono::duration_cast<milliseconds>(t.time_since_epoch()).count();
}

// Java's Double.toString for the values a multiplier or jitter takes ("2.0", "1.5", "0.1").
std::string java_double(double v) {
  std::ostringstream out;
  out << v;
  std::string s = out.str();
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

void require(bool ok, const std::string& setting, const std::string& rule, const std::string& value) {
  if (!ok) throw ClinkError("restart strategy: " + setting + " " + rule + ", got " + value);
}

}  // namespace

std::int64_t RestartStrategy::delay_for(int attempt) const {
  if (kind != Kind::kExponentialBackoff) return delay_ms;
  // Flink: (long) (initial * multiplier^k), clamped to [initial, max]. Saturate before
  // the cast: a double beyond int64 is undefined behaviour in C++ (Java saturates).
  double d = static_cast<double>(delay_ms) * std::pow(multiplier, std::max(0, attempt - 1));
  if (!(d < static_cast<double>(max_delay_ms))) return max_delay_ms;
  return std::max(delay_ms, static_cast<std::int64_t>(d));
}

void validate(const RestartStrategy& s) {
  using Kind = RestartStrategy::Kind;
  const std::string fixed = "restart-strategy.fixed-delay.", expo = "restart-strategy.exponential-delay.",
                    rate = "restart-strategy.failure-rate.";
  switch (s.kind) {
    case Kind::kNone:
      return;
    case Kind::kFixedDelay:
      require(s.max_attempts >= 0, fixed + "attempts", "must be at least 0", std::to_string(s.max_attempts));
      require(s.delay_ms >= 0, fixed + "delay", "must be at least 0 ms", std::to_string(s.delay_ms) + " ms");
      return;
    case Kind::kExponentialBackoff:
      require(s.delay_ms >= 1, expo + "initial-backoff", "must be at least 1 ms", std::to_string(s.delay_ms) + " ms");
      require(s.max_delay_ms >= 1, expo + "max-backoff", "must be at least 1 ms",
              std::to_string(s.max_delay_ms) + " ms");
      require(s.delay_ms <= s.max_delay_ms, expo + "initial-backoff", "cannot be higher than max-backoff",
              std::to_string(s.delay_ms) + " ms > " + std::to_string(s.max_delay_ms) + " ms");
      require(s.multiplier > 1, expo + "backoff-multiplier", "must be greater than 1", java_double(s.multiplier));
      require(s.reset_backoff_threshold_ms >= 1, expo + "reset-backoff-threshold", "must be at least 1 ms",
              std::to_string(s.reset_backoff_threshold_ms) + " ms");
      require(s.jitter_factor >= 0 && s.jitter_factor <= 1, expo + "jitter-factor", "must be >= 0 and <= 1",
              java_double(s.jitter_factor));
      require(s.max_attempts >= 1, expo + "attempts-before-reset-backoff", "must be at least 1",
              std::to_string(s.max_attempts));
      return;
    case Kind::kFailureRate:
      require(s.max_failures_per_interval > 0, rate + "max-failures-per-interval", "must be greater than 0",
              std::to_string(s.max_failures_per_interval));
      require(s.failure_rate_interval_ms > 0, rate + "failure-rate-interval", "must be greater than 0 ms",
              std::to_string(s.failure_rate_interval_ms) + " ms");
      require(s.delay_ms >= 0, rate + "delay", "must be at least 0 ms", std::to_string(s.delay_ms) + " ms");
      return;
  }
}

RestartTracker::RestartTracker(RestartStrategy strategy, Uniform uniform)
    : strategy_(std::move(strategy)), uniform_(uniform ? std::move(uniform) : random_uniform()) {
  validate(strategy_);
}

std::optional<milliseconds> RestartTracker::on_failure(Clock::time_point now) {
  const std::int64_t now_ms = to_ms(now);
  new_attempt_ = true;
  std::optional<milliseconds> delay;
  switch (strategy_.kind) {
    case RestartStrategy::Kind::kNone:
      return std::nullopt;
    case RestartStrategy::Kind::kFixedDelay:
      // Flink counts every failure; the job fails on failure number attempts + 1.
      ++attempt_;
      if (attempt_ <= strategy_.max_attempts) delay = milliseconds(strategy_.delay_ms);
      break;
    case RestartStrategy::Kind::kExponentialBackoff:
      delay = on_exponential(now_ms);
      break;
    case RestartStrategy::Kind::kFailureRate:
      delay = on_failure_rate(now_ms);
      break;
  }
  if (delay && new_attempt_) ++restarts_;
  return delay;
}

std::optional<milliseconds> RestartTracker::on_exponential(std::int64_t now_ms) {
  if (next_restart_ms_ && now_ms <= *next_restart_ms_) {
    new_attempt_ = false;  // a restart is pending: this failure joins it
  } else {
    // Running reset-backoff-threshold past the last restart resets the backoff (and the
    // attempt count) to the start.
    if (!next_restart_ms_ || now_ms - *next_restart_ms_ >= strategy_.reset_backoff_threshold_ms) attempt_ = 0;
    double backoff = static_cast<double>(strategy_.delay_ms) * std::pow(strategy_.multiplier, attempt_);
    // Saturate far above any max-backoff so that adding the jitter cannot overflow.
    const auto current = static_cast<std::int64_t>(std::min(backoff, 4e18));
    const std::int64_t with_jitter = std::min(current + jitter(current), strategy_.max_delay_ms);
    next_restart_ms_ = now_ms + std::max(strategy_.delay_ms, with_jitter);
    ++attempt_;
  }
  if (attempt_ > strategy_.max_attempts) return std::nullopt;
  return milliseconds(std::max<std::int64_t>(0, *next_restart_ms_ - now_ms));
}

std::optional<milliseconds> RestartTracker::on_failure_rate(std::int64_t now_ms) {
  // Flink keeps the last max+1 failure times; the job fails when all of them fall within
  // one interval (the newest at most failure-rate-interval after the oldest).
  const auto full = [&] { return failures_ms_.size() > static_cast<std::size_t>(strategy_.max_failures_per_interval); };
  if (full()) failures_ms_.pop_front();
  failures_ms_.push_back(now_ms);
  if (full() && now_ms - failures_ms_.front() <= strategy_.failure_rate_interval_ms) return std::nullopt;
  return milliseconds(strategy_.delay_ms);
}

std::int64_t RestartTracker::jitter(std::int64_t backoff_ms) {
  if (strategy_.jitter_factor == 0) return 0;
  const auto offset = static_cast<std::int64_t>(static_cast<double>(backoff_ms) * strategy_.jitter_factor);
  return uniform_(-offset, offset);
}

std::string RestartTracker::describe() const {
  const RestartStrategy& s = strategy_;
  std::ostringstream out;
  switch (s.kind) {
    case RestartStrategy::Kind::kNone:
      out << "NoRestartBackoffTimeStrategy";
      break;
    case RestartStrategy::Kind::kFixedDelay:
      out << "FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=" << s.max_attempts
          << ", backoffTimeMS=" << s.delay_ms << ")";
      break;
    case RestartStrategy::Kind::kExponentialBackoff:
      out << "ExponentialDelayRestartBackoffTimeStrategy(initialBackoffMS=" << s.delay_ms
          << ", maxBackoffMS=" << s.max_delay_ms << ", backoffMultiplier=" << java_double(s.multiplier)
          << ", resetBackoffThresholdMS=" << s.reset_backoff_threshold_ms
          << ", jitterFactor=" << java_double(s.jitter_factor) << ", attemptsBeforeResetBackoff=" << s.max_attempts
          << ", currentRestartAttempt=" << attempt_
          << ", nextRestartTimestamp=" << next_restart_ms_.value_or(-2147483648LL) << ")";
      break;
    case RestartStrategy::Kind::kFailureRate:
      // Flink's toString, doubled prefix and all.
      out << "FailureRateRestartBackoffTimeStrategy(FailureRateRestartBackoffTimeStrategy(failuresIntervalMS="
          << s.failure_rate_interval_ms << ",backoffTimeMS=" << s.delay_ms
          << ",maxFailuresPerInterval=" << s.max_failures_per_interval << ")";
      break;
  }
  return out.str();
}

std::string RestartTracker::suppressed_message() const { return "Recovery is suppressed by " + describe(); }

}  // namespace clink
