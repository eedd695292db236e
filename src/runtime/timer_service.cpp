#include "clink/runtime/timer_service.hpp"

#include <algorithm>

namespace clink {

void TimerService::register_event_time_timer(std::int64_t time, std::string_view key, std::string_view ns) {
  event_timers_.insert(Timer{time, std::string(key), std::string(ns)});
}
void TimerService::register_processing_time_timer(std::int64_t time, std::string_view key, std::string_view ns) {
  processing_timers_.insert(Timer{time, std::string(key), std::string(ns)});
}
void TimerService::delete_event_time_timer(std::int64_t time, std::string_view key, std::string_view ns) {
  event_timers_.erase(Timer{time, std::string(key), std::string(ns)});
}
void TimerService::delete_processing_time_timer(std::int64_t time, std::string_view key, std::string_view ns) {
  processing_timers_.erase(Timer{time, std::string(key), std::string(ns)});
}

std::size_t TimerService::fire_until(std::set<Timer>& timers, std::int64_t time,
                                     const std::function<void(const Timer&)>& on_timer) {
  std::size_t fired = 0;
  // Re-read begin() each time: a callback may register (or delete) timers.
  while (!timers.empty() && timers.begin()->time <= time) {
    Timer t = std::move(timers.extract(timers.begin()).value());
    on_timer(t);
    ++fired;
  }
  return fired;
}

std::size_t TimerService::advance_watermark(EventTime watermark, const std::function<void(const Timer&)>& on_timer) {
  watermark_ = std::max(watermark_, watermark);
  return fire_until(event_timers_, watermark_, on_timer);
}

std::size_t TimerService::advance_processing_time(std::int64_t now, const std::function<void(const Timer&)>& on_timer) {
  return fire_until(processing_timers_, now, on_timer);
}

std::optional<std::int64_t> TimerService::next_processing_time() const {
  if (processing_timers_.empty()) return std::nullopt;
  return processing_timers_.begin()->time;
}
std::optional<std::int64_t> TimerService::next_event_time() const {
  if (event_timers_.empty()) return std::nullopt;
  return event_timers_.begin()->time;
}

}  // namespace clink
