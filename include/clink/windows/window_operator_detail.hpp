#pragma once
// Helpers of the window engine (window_operator.hpp): key ordering, StateCodec
// detection, (key, namespace) slots, pane numbering and the per-window timer cache.
#include <algorithm>
#include <array>
#include <bit>
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "clink/state/keyed_state_backend.hpp"
#include "clink/state/state_codec.hpp"
#include "clink/windows/key_radix.hpp"
#include "clink/windows/window_functions.hpp"

namespace clink {

namespace window_detail {
// Orders keys as the TimerService orders their encoded bytes.
template <class K>
struct KeyBytesLess {
  bool operator()(const K& a, const K& b) const {
    if constexpr (std::is_integral_v<K>) return a < b;
    else if constexpr (std::is_same_v<K, std::string>) return a.size() != b.size() ? a.size() < b.size() : a < b;
    else return encode_key(a) < encode_key(b);
  }
};

// Sorts (key, value) pairs by KeyBytesLess. Keys with an integer image (KeyRadix) and
// default-constructible values: an LSD radix sort over just the bits in which the keys
// differ, in digits of up to 11 bits (a hundred thousand keys below 2^17: two passes of
// 9 bits), instead of n log n comparisons; `scratch` keeps its capacity between calls.
template <class K, class V>
void sort_by_key_bytes(std::vector<std::pair<K, V>>& v, std::vector<std::pair<K, V>>& scratch) {
  if constexpr (KeyRadix<K>::value && std::is_default_constructible_v<V>) {
    const auto all_have_image = [&] {
      for (const auto& e : v)
        if (!KeyRadix<K>::has_image(e.first)) return false;
      return true;
    };
    if (v.size() >= 256 && all_have_image()) {
      using U = typename KeyRadix<K>::U;
      constexpr int kBits = 8 * static_cast<int>(sizeof(U));
      constexpr int kMaxDigit = 11, kMaxPasses = (kBits + kMaxDigit - 1) / kMaxDigit;
      const auto bits = [](const K& k) { return KeyRadix<K>::image(k); };
      U differ = 0;  // the bits in which some key differs from the first
      const U first = bits(v[0].first);
      for (const auto& e : v) differ |= bits(e.first) ^ first;
      if (differ == 0) return;
      const int lo = std::countr_zero(differ), width_all = kBits - std::countl_zero(differ) - lo;
      const int passes = (width_all + kMaxDigit - 1) / kMaxDigit, width = (width_all + passes - 1) / passes;
      const U mask = static_cast<U>((U(1) << width) - 1);
      std::array<std::array<std::uint32_t, 1 << kMaxDigit>, kMaxPasses> counts;
      for (int p = 0; p < passes; ++p) std::fill_n(counts[p].begin(), std::size_t{1} << width, 0u);
      for (const auto& e : v) {
        const U u = bits(e.first) >> lo;
        for (int p = 0; p < passes; ++p) ++counts[p][(u >> (p * width)) & mask];
      }
      scratch.resize(v.size());
      for (int p = 0; p < passes; ++p) {
        std::uint32_t sum = 0;
        for (std::size_t d = 0; d < (std::size_t{1} << width); ++d) sum += std::exchange(counts[p][d], sum);
        const int shift = lo + p * width;
        for (auto& e : v) scratch[counts[p][(bits(e.first) >> shift) & mask]++] = std::move(e);
        v.swap(scratch);
      }
      return;
    }
  }
  KeyBytesLess<K> less;
  std::sort(v.begin(), v.end(), [&](const auto& a, const auto& b) { return less(a.first, b.first); });
}

// Whether T has a StateCodec, looking through the containers whose StateCodec is
// generic (a vector of T has one only if T has).
template <class T>
struct has_codec : std::bool_constant<requires(const T& v, std::string& out, std::string_view& in) {
  StateCodec<T>::encode(v, out);
  StateCodec<T>::decode(in);
}> {};
template <class T>
struct has_codec<std::vector<T>> : has_codec<T> {};
template <class T>
struct has_codec<std::optional<T>> : has_codec<T> {};
template <class T>
struct has_codec<TimestampedValue<T>> : has_codec<T> {};
template <class A, class B>
struct has_codec<std::pair<A, B>> : std::bool_constant<has_codec<A>::value && has_codec<B>::value> {};
template <class... Ts>
struct has_codec<std::tuple<Ts...>> : std::bool_constant<(has_codec<Ts>::value && ...)> {};

// (key bytes, namespace) as one string: varint(key size) key namespace.
inline std::string state_slot(std::string_view key, std::string_view ns) {
  std::string s;
  put_varint(key.size(), s);
  s.append(key);
  s.append(ns);
  return s;
}
inline std::pair<std::string_view, std::string_view> split_slot(std::string_view slot) {
  const auto n = get_varint(slot);
  return {slot.substr(0, n), slot.substr(n)};
}

struct PaneStats {
  std::int64_t emissions = 0;
  bool on_time_done = false;
};

// The last two timers known to be registered for a window (skips re-registering the
// same timer for every element).
struct TimerCache {
  std::int64_t time[2] = {0, 0};
  std::uint8_t domain[2] = {0, 0};  // 0 empty, 1 event time, 2 processing time
  std::uint8_t next = 0;
  bool hit(std::uint8_t d, std::int64_t t) const {
    return (domain[0] == d && time[0] == t) || (domain[1] == d && time[1] == t);
  }
  void put(std::uint8_t d, std::int64_t t) {
    domain[next] = d;
    time[next] = t;
    next ^= 1;
  }
  void erase(std::uint8_t d, std::int64_t t) {
    for (int i = 0; i < 2; ++i)
      if (domain[i] == d && time[i] == t) domain[i] = 0;
  }
};
}  // namespace window_detail

}  // namespace clink
