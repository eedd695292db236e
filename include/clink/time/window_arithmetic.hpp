#pragma once
// The one place window boundaries are computed (every window kind, the DataStream
// window engine and the SQL window operators use it).
//
// Rules (SEMANTICS.md): windows are aligned to the Unix epoch plus an offset; starts
// floor, also before the epoch (a record at -15000 in a 10 s window is in
// [-20000, -10000)); every intermediate is computed in 128 bits and the result clamped
// once to the int64 range, so nothing overflows at INT64_MIN / INT64_MAX (which is what
// sentinel timestamps carry). A window whose end would pass INT64_MAX ends at INT64_MAX
// and is closed there (its max timestamp is INT64_MAX, not INT64_MAX - 1).
#include <cstdint>
#include <limits>
#include <vector>

namespace clink {

__extension__ typedef __int128 i128;  // __extension__: -Wpedantic accepts it

inline constexpr std::int64_t saturate(i128 v) {
  constexpr i128 lo = std::numeric_limits<std::int64_t>::min();
  constexpr i128 hi = std::numeric_limits<std::int64_t>::max();
  return static_cast<std::int64_t>(v < lo ? lo : v > hi ? hi : v);
}

inline constexpr std::int64_t sat_add(std::int64_t a, std::int64_t b) { return saturate(i128(a) + b); }
inline constexpr std::int64_t sat_sub(std::int64_t a, std::int64_t b) { return saturate(i128(a) - b); }

// Division rounding toward negative infinity (b != 0); saturates (INT64_MIN / -1).
inline constexpr std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  i128 q = i128(a) / b;
  if ((i128(a) % b != 0) && ((a < 0) != (b < 0))) --q;
  return saturate(q);
}

// Java's Math.floorMod: the result has the sign of b (in [0, b) for b > 0).
inline constexpr std::int64_t floor_mod(std::int64_t a, std::int64_t b) {
  i128 m = i128(a) % b;
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return static_cast<std::int64_t>(m);
}

namespace detail {
// Unclamped start of the window of `size` (> 0) aligned to `offset` holding ts.
inline constexpr i128 window_start_wide(std::int64_t ts, std::int64_t size, std::int64_t offset) {
  i128 m = (i128(ts) - offset) % size;
  if (m < 0) m += size;
  return i128(ts) - m;
}
}  // namespace detail

// Flink's TimeWindow.getWindowStartWithOffset: ts - floorMod(ts - offset, size).
inline constexpr std::int64_t window_start_for(std::int64_t ts, std::int64_t size, std::int64_t offset = 0) {
  return saturate(detail::window_start_wide(ts, size, offset));
}
// Exclusive end of the window starting at `start`.
inline constexpr std::int64_t window_end_for(std::int64_t start, std::int64_t size) { return sat_add(start, size); }
// Last timestamp inside [start, start + size): end - 1, or INT64_MAX for the topmost window.
inline constexpr std::int64_t window_max_timestamp_for(std::int64_t start, std::int64_t size) {
  i128 end = i128(start) + size;
  return end > std::numeric_limits<std::int64_t>::max() ? std::numeric_limits<std::int64_t>::max()
                                                          : static_cast<std::int64_t>(end - 1);
}

// Every start s of a sliding window [s, s + size) holding ts: s aligned to slide + offset
// and ts - size < s <= ts, latest first (Flink's SlidingEventTimeWindows order). Starts
// below INT64_MIN are not representable: the first is clamped there, the rest dropped.
template <class Fn>
inline constexpr void for_each_hop_window_start(std::int64_t ts, std::int64_t size, std::int64_t slide,
                                                std::int64_t offset, Fn&& fn) {
  constexpr i128 lo = std::numeric_limits<std::int64_t>::min();
  i128 s = detail::window_start_wide(ts, slide, offset);
  const i128 floor_excl = i128(ts) - size;
  if (s < lo) {
    fn(std::numeric_limits<std::int64_t>::min());
    return;
  }
  for (; s > floor_excl && s >= lo; s -= slide) fn(static_cast<std::int64_t>(s));
}

inline std::vector<std::int64_t> hop_window_starts_for(std::int64_t ts, std::int64_t size, std::int64_t slide,
                                                       std::int64_t offset = 0) {
  std::vector<std::int64_t> out;
  for_each_hop_window_start(ts, size, slide, offset, [&](std::int64_t s) { out.push_back(s); });
  return out;
}

inline constexpr std::int64_t gcd_i64(std::int64_t a, std::int64_t b) {
  while (b != 0) {
    std::int64_t t = a % b;
    a = b;
    b = t;
  }
  return a < 0 ? -a : a;
}

}  // namespace clink
