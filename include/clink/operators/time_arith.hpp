#pragma once
// Event-time arithmetic of the built-in spec operators: saturating at the int64 limits
// (SEMANTICS.md) and flooring for negative timestamps. The window engine will own the
// general window arithmetic; this is the small part the minimal operators need.
#include <cstdint>
#include <limits>

namespace clink {

inline std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
  return r;
}
inline std::int64_t saturating_sub(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return b > 0 ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max();
  return r;
}
// Mathematical modulo (Java's Math.floorMod): the result has the sign of `size` (> 0).
inline std::int64_t floor_mod(std::int64_t ts, std::int64_t size) {
  std::int64_t m = ts % size;
  return m < 0 ? m + size : m;
}
// Start of the epoch-aligned bucket of `size` ms holding `ts`: -15000 in 10 s -> -20000.
inline std::int64_t bucket_start(std::int64_t ts, std::int64_t size) { return ts - floor_mod(ts, size); }
// Last timestamp of the bucket starting at `start` (end - 1), saturating.
inline std::int64_t bucket_max_timestamp(std::int64_t start, std::int64_t size) {
  return saturating_add(start, size - 1);
}

}  // namespace clink
