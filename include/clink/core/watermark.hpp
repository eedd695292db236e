#pragma once
#include <compare>
#include <ostream>

#include "clink/core/event_time.hpp"

namespace clink {

// An assertion that no further record with event time <= timestamp will arrive.
// An idle watermark says the stream produces nothing for now; its timestamp is
// informational and alignment excludes the stream from the minimum.
struct Watermark {
  EventTime timestamp = kMinEventTime;
  bool idle = false;

  static constexpr Watermark min() { return {kMinEventTime, false}; }
  static constexpr Watermark max() { return {kMaxEventTime, false}; }
  static constexpr Watermark idle_marker(EventTime ts = kMinEventTime) { return {ts, true}; }
  static constexpr Watermark at(EventTime ts) { return {ts, false}; }

  constexpr bool is_idle() const { return idle; }
  constexpr bool is_max() const { return !idle && timestamp == kMaxEventTime; }
  friend constexpr bool operator==(const Watermark&, const Watermark&) = default;
  friend std::ostream& operator<<(std::ostream& os, const Watermark& wm) {
    return os << "Watermark(" << wm.timestamp << (wm.idle ? ", idle)" : ")");
  }
};

}  // namespace clink
