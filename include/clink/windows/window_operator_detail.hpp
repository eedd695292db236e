#pragma once
// Helpers of the window engine (window_operator.hpp): key ordering, StateCodec
// detection, (key, namespace) slots, pane numbering and the per-window timer cache.
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
