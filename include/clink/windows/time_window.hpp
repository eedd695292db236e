#pragma once
// Windows, panes and window results: the vocabulary of the window engine.
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "clink/core/error.hpp"
#include "clink/core/event_time.hpp"
#include "clink/core/format_value.hpp"
#include "clink/runtime/key_group.hpp"

namespace clink {

// A half-open interval [start, end) of event (or processing) time. max_timestamp() is
// end - 1, except for a window ending at INT64_MAX (the topmost window, whose end
// saturated, and the global window), which is closed there.
struct TimeWindow {
  EventTime start = 0;
  EventTime end = 0;

  constexpr EventTime max_timestamp() const { return end == kMaxEventTime ? kMaxEventTime : end - 1; }
  // Flink's TimeWindow.intersects: overlapping or touching.
  constexpr bool intersects(const TimeWindow& o) const { return start <= o.end && end >= o.start; }
  constexpr TimeWindow cover(const TimeWindow& o) const {
    return {start < o.start ? start : o.start, end > o.end ? end : o.end};
  }
  // GlobalWindows' one window: all of time.
  static constexpr TimeWindow global() { return {kMinEventTime, kMaxEventTime}; }
  constexpr bool is_global() const { return start == kMinEventTime && end == kMaxEventTime; }

  friend constexpr auto operator<=>(const TimeWindow&, const TimeWindow&) = default;
  template <class H>
  friend H AbslHashValue(H h, const TimeWindow& w) {
    return H::combine(std::move(h), w.start, w.end);
  }
};

inline void to_string_into(const TimeWindow& w, std::string& out) {
  if (w.is_global()) {
    out += "GlobalWindow";
    return;
  }
  out += '[';
  out += std::to_string(w.start);
  out += ',';
  out += std::to_string(w.end);
  out += ')';
}

// The namespace of a window in timers and state: start and end, 8 bytes each,
// order-preserving (KeyCodec's encoding).
inline void encode_window(const TimeWindow& w, std::string& out) {
  KeyCodec<std::int64_t>::encode(w.start, out);
  KeyCodec<std::int64_t>::encode(w.end, out);
}
inline std::string encode_window(const TimeWindow& w) {
  std::string s;
  encode_window(w, s);
  return s;
}
inline TimeWindow decode_window(std::string_view in) {
  if (in.size() != 16) throw ClinkError("window namespace must be 16 bytes, got " + std::to_string(in.size()));
  TimeWindow w;
  w.start = KeyCodec<std::int64_t>::decode(in);
  w.end = KeyCodec<std::int64_t>::decode(in);
  return w;
}

// When an emission happened relative to its window (Beam's PaneInfo): EARLY before the
// window's time passed its end (count or continuous triggers), ON_TIME the first firing
// after, LATE every later one (allowed lateness re-firings).
enum class PaneTiming : std::uint8_t { kEarly, kOnTime, kLate };

inline const char* pane_timing_name(PaneTiming t) {
  switch (t) {
    case PaneTiming::kEarly: return "EARLY";
    case PaneTiming::kOnTime: return "ON_TIME";
    case PaneTiming::kLate: return "LATE";
  }
  return "?";
}

// Carried by every emission of a window: its timing, the index of the emission within
// the window (0, 1, ...), whether it is the first, and whether it is the last (the
// window's state is cleaned right after it, so it never emits again). The index first:
// 16 bytes, not 24 (a sliding window's output is mostly these).
struct PaneInfo {
  std::int64_t index = 0;
  PaneTiming timing = PaneTiming::kOnTime;
  bool is_first = true;
  bool is_last = false;
  friend constexpr bool operator==(const PaneInfo&, const PaneInfo&) = default;
};

// "ON_TIME#0 first last"
inline void to_string_into(const PaneInfo& p, std::string& out) {
  out += pane_timing_name(p.timing);
  out += '#';
  out += std::to_string(p.index);
  if (p.is_first) out += " first";
  if (p.is_last) out += " last";
}

// One emission of a window with its metadata: what the SQL window operators and
// WindowedStream::*_with_info produce.
template <class K, class V>
struct WindowResult {
  K key{};
  TimeWindow window;
  PaneInfo pane;
  V value{};
  friend bool operator==(const WindowResult&, const WindowResult&) = default;
};

// "(key,[start,end),value,ON_TIME#0 first last)"
template <class K, class V>
void to_string_into(const WindowResult<K, V>& r, std::string& out) {
  out += '(';
  format_value(r.key, out);
  out += ',';
  to_string_into(r.window, out);
  out += ',';
  format_value(r.value, out);
  out += ',';
  to_string_into(r.pane, out);
  out += ')';
}

}  // namespace clink
