#pragma once
// java.util.Random, bit for bit: Nexmark seeds one with each event's id and draws the
// event's fields from it, so the same LCG and the same derivations (nextInt(bound)
// with its rejection loop, nextLong, nextDouble) give the same events as Nexmark's
// Java generator; SQL's RAND(seed) / RAND_INTEGER(seed, n) give Flink's sequences.
// Signed arithmetic follows Java's wrap-around (done in uint64/uint32).
#include <cstdint>

namespace clink {

__extension__ typedef unsigned __int128 u128;  // __extension__: -Wpedantic accepts it

// A nextInt bound fixed for a generator's lifetime (a hot ratio, the steady-state id
// ranges), with its remainder precomputed as a multiply: Random.nextInt(bound) takes a
// remainder per call, and a hardware division would dominate the generator's cost.
class JavaIntBound {
 public:
  explicit JavaIntBound(std::int32_t bound = 1)
      : bound_(bound), magic_(~std::uint64_t{0} / static_cast<std::uint64_t>(bound) + 1) {}
  std::int32_t bound() const { return bound_; }
  // u % bound for 0 <= u < 2^31: floor(u * ceil(2^64 / bound) / 2^64) is exact there.
  std::int32_t remainder(std::int32_t u) const {
    auto q = static_cast<std::uint64_t>((static_cast<u128>(static_cast<std::uint64_t>(u)) * magic_) >> 64);
    return u - static_cast<std::int32_t>(q) * bound_;
  }

 private:
  std::int32_t bound_;
  std::uint64_t magic_;
};

class JavaRandom {
 public:
  static constexpr std::uint64_t kMultiplier = 0x5DEECE66DULL;
  static constexpr std::uint64_t kAddend = 0xBULL;
  static constexpr std::uint64_t kMask = (1ULL << 48) - 1;

  JavaRandom() = default;
  explicit JavaRandom(std::int64_t seed) { set_seed(seed); }

  // new Random(seed) / setSeed(seed): the scrambled 48-bit state.
  void set_seed(std::int64_t seed) { state_ = (static_cast<std::uint64_t>(seed) ^ kMultiplier) & kMask; }
  // The raw 48-bit state, to resume a sequence later (see NexmarkExtra).
  std::uint64_t state() const { return state_; }
  static JavaRandom from_state(std::uint64_t state) {
    JavaRandom r;
    r.state_ = state & kMask;
    return r;
  }

  // Random.next(bits): the top `bits` of the advanced state, as a (signed) int.
  std::int32_t next(int bits) {
    state_ = (state_ * kMultiplier + kAddend) & kMask;
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(state_ >> (48 - bits)));
  }
  std::int32_t next_int() { return next(32); }
  // Random.nextInt(bound), bound > 0 (callers guarantee it).
  std::int32_t next_int(std::int32_t bound) {
    std::int32_t r = next(31);
    std::int32_t m = bound - 1;
    if ((bound & m) == 0) return static_cast<std::int32_t>((static_cast<std::int64_t>(bound) * r) >> 31);
    // for (int u = r; u - (r = u % bound) + m < 0; u = next(31)); with int overflow
    for (std::int32_t u = r;; u = next(31)) {
      r = u % bound;
      auto sum = static_cast<std::int32_t>(static_cast<std::uint32_t>(u) - static_cast<std::uint32_t>(r) +
                                           static_cast<std::uint32_t>(m));
      if (sum >= 0) return r;
    }
  }
  // nextInt(bound.bound()), the same draws without a division.
  std::int32_t next_int(const JavaIntBound& b) {
    std::int32_t bound = b.bound();
    std::int32_t r = next(31);
    std::int32_t m = bound - 1;
    if ((bound & m) == 0) return static_cast<std::int32_t>((static_cast<std::int64_t>(bound) * r) >> 31);
    for (std::int32_t u = r;; u = next(31)) {
      r = b.remainder(u);
      auto sum = static_cast<std::int32_t>(static_cast<std::uint32_t>(u) - static_cast<std::uint32_t>(r) +
                                           static_cast<std::uint32_t>(m));
      if (sum >= 0) return r;
    }
  }
  std::int64_t next_long() {
    auto hi = static_cast<std::uint64_t>(static_cast<std::int64_t>(next(32))) << 32;
    auto lo = static_cast<std::uint64_t>(static_cast<std::int64_t>(next(32)));
    return static_cast<std::int64_t>(hi + lo);
  }
  double next_double() {
    auto hi = static_cast<std::int64_t>(next(26)) << 27;
    return static_cast<double>(hi + next(27)) * 0x1.0p-53;
  }

 private:
  std::uint64_t state_ = 0;
};

}  // namespace clink
