#pragma once
// Binary encoding of state values (not keys: keys use KeyCodec). Compact by design:
// integers as zig-zag varints, strings length-prefixed. Part of the checkpoint format,
// so an encoding, once released, never changes.
#include <algorithm>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "clink/core/error.hpp"

namespace clink {

void put_varint(std::uint64_t v, std::string& out);
std::uint64_t get_varint(std::string_view& in);  // throws ClinkError on truncated input
inline std::uint64_t zigzag(std::int64_t v) { return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63); }
inline std::int64_t unzigzag(std::uint64_t v) { return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1); }

// encode appends to `out`; decode consumes from the front of `in`.
template <class T>
struct StateCodec;

template <std::integral T>
struct StateCodec<T> {
  static void encode(T v, std::string& out) {
    if constexpr (std::is_signed_v<T>) put_varint(zigzag(static_cast<std::int64_t>(v)), out);
    else put_varint(static_cast<std::uint64_t>(v), out);
  }
  static T decode(std::string_view& in) {
    if constexpr (std::is_signed_v<T>) return static_cast<T>(unzigzag(get_varint(in)));
    else return static_cast<T>(get_varint(in));
  }
};

template <>
struct StateCodec<double> {
  static void encode(double v, std::string& out) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }
  static double decode(std::string_view& in) {
    if (in.size() < sizeof(double)) throw ClinkError("state: truncated double");
    double v;
    std::memcpy(&v, in.data(), sizeof v);
    in.remove_prefix(sizeof v);
    return v;
  }
};

template <>
struct StateCodec<std::string> {
  static void encode(std::string_view v, std::string& out) {
    put_varint(v.size(), out);
    out.append(v);
  }
  static std::string decode(std::string_view& in) {
    auto n = get_varint(in);
    if (in.size() < n) throw ClinkError("state: truncated string");
    std::string s(in.substr(0, n));
    in.remove_prefix(n);
    return s;
  }
};

template <class A, class B>
struct StateCodec<std::pair<A, B>> {
  static void encode(const std::pair<A, B>& v, std::string& out) {
    StateCodec<A>::encode(v.first, out);
    StateCodec<B>::encode(v.second, out);
  }
  static std::pair<A, B> decode(std::string_view& in) {
    A a = StateCodec<A>::decode(in);
    B b = StateCodec<B>::decode(in);
    return {std::move(a), std::move(b)};
  }
};

template <class... Ts>
struct StateCodec<std::tuple<Ts...>> {
  static void encode(const std::tuple<Ts...>& v, std::string& out) {
    std::apply([&](const auto&... x) { (StateCodec<std::decay_t<decltype(x)>>::encode(x, out), ...); }, v);
  }
  static std::tuple<Ts...> decode(std::string_view& in) { return std::tuple<Ts...>{StateCodec<Ts>::decode(in)...}; }
};

template <class T>
struct StateCodec<std::vector<T>> {
  static void encode(const std::vector<T>& v, std::string& out) {
    put_varint(v.size(), out);
    for (const auto& x : v) StateCodec<T>::encode(x, out);
  }
  static std::vector<T> decode(std::string_view& in) {
    auto n = get_varint(in);
    std::vector<T> v;
    // A damaged count must not reserve without bound: each element takes a byte or more.
    v.reserve(std::min<std::uint64_t>(n, in.size()));
    for (std::uint64_t i = 0; i < n; ++i) v.push_back(StateCodec<T>::decode(in));
    return v;
  }
};

template <class T>
struct StateCodec<std::optional<T>> {
  static void encode(const std::optional<T>& v, std::string& out) {
    out.push_back(v ? 1 : 0);
    if (v) StateCodec<T>::encode(*v, out);
  }
  static std::optional<T> decode(std::string_view& in) {
    if (in.empty()) throw ClinkError("state: truncated optional");
    const bool has = in.front() != 0;
    in.remove_prefix(1);
    if (!has) return std::nullopt;
    return StateCodec<T>::decode(in);
  }
};

template <class T>
std::string encode_state(const T& v) {
  std::string s;
  StateCodec<T>::encode(v, s);
  return s;
}
template <class T>
T decode_state(std::string_view bytes) {
  return StateCodec<T>::decode(bytes);
}

}  // namespace clink
