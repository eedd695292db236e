#pragma once
#include <chrono>
#include <compare>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "clink/core/event_time.hpp"

namespace clink {

// A timer for (time, key, namespace). The key is the encoded key bytes; the namespace
// lets windows scope timers per window. Equal timers are registered once.
struct Timer {
  std::int64_t time = 0;
  std::string key;
  std::string ns;
  friend auto operator<=>(const Timer&, const Timer&) = default;
};

// Wall clock for processing time, replaceable in tests.
class ProcessingTimeClock {
 public:
  virtual ~ProcessingTimeClock() = default;
  virtual std::int64_t now_ms() const = 0;
};
class SystemClock final : public ProcessingTimeClock {
 public:
  std::int64_t now_ms() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch()).count();
  }
  static const SystemClock& instance() {
    static SystemClock c;
    return c;
  }
};

// Per-operator timers. Event-time timers fire in time order once the watermark
// reaches them; processing-time timers once the clock does. Timers registered while
// firing are fired in the same pass if already due.
class TimerService {
 public:
  explicit TimerService(const ProcessingTimeClock& clock = SystemClock::instance()) : clock_(&clock) {}

  // The key that keyed functions register timers for; set by the operator per record.
  void set_current_key(std::string_view key) { current_key_.assign(key); }
  const std::string& current_key() const { return current_key_; }

  void register_event_time_timer(std::int64_t time) { register_event_time_timer(time, current_key_, {}); }
  void register_processing_time_timer(std::int64_t time) { register_processing_time_timer(time, current_key_, {}); }
  void delete_event_time_timer(std::int64_t time) { delete_event_time_timer(time, current_key_, {}); }
  void delete_processing_time_timer(std::int64_t time) { delete_processing_time_timer(time, current_key_, {}); }

  void register_event_time_timer(std::int64_t time, std::string_view key, std::string_view ns);
  void register_processing_time_timer(std::int64_t time, std::string_view key, std::string_view ns);
  void delete_event_time_timer(std::int64_t time, std::string_view key, std::string_view ns);
  void delete_processing_time_timer(std::int64_t time, std::string_view key, std::string_view ns);

  EventTime current_watermark() const { return watermark_; }
  std::int64_t current_processing_time() const { return clock_->now_ms(); }

  // Runtime side: advance and fire. Returns the number of timers fired.
  std::size_t advance_watermark(EventTime watermark, const std::function<void(const Timer&)>& on_timer);
  std::size_t advance_processing_time(std::int64_t now, const std::function<void(const Timer&)>& on_timer);
  std::optional<std::int64_t> next_processing_time() const;
  std::optional<std::int64_t> next_event_time() const;

  std::size_t event_time_timer_count() const { return event_timers_.size(); }
  std::size_t processing_time_timer_count() const { return processing_timers_.size(); }
  const std::set<Timer>& event_time_timers() const { return event_timers_; }
  const std::set<Timer>& processing_time_timers() const { return processing_timers_; }

 private:
  static std::size_t fire_until(std::set<Timer>& timers, std::int64_t time,
                                const std::function<void(const Timer&)>& on_timer);
  const ProcessingTimeClock* clock_;
  std::set<Timer> event_timers_;
  std::set<Timer> processing_timers_;
  std::string current_key_;
  EventTime watermark_ = kMinEventTime;
};

}  // namespace clink
