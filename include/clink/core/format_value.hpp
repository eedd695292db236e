#pragma once
#include <concepts>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include <fmt/format.h>

namespace clink {

// Text form of a value, as Flink's print() shows it: tuples as (a,1).
template <class T>
void format_value(const T& v, std::string& out);

namespace detail {
template <class Tuple, std::size_t... I>
void format_tuple(const Tuple& t, std::string& out, std::index_sequence<I...>) {
  out.push_back('(');
  ((out.append(I == 0 ? "" : ","), format_value(std::get<I>(t), out)), ...);
  out.push_back(')');
}
template <class T>
struct is_tuple_like : std::false_type {};
template <class A, class B>
struct is_tuple_like<std::pair<A, B>> : std::true_type {};
template <class... A>
struct is_tuple_like<std::tuple<A...>> : std::true_type {};
}  // namespace detail

template <class T>
void format_value(const T& v, std::string& out) {
  if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    out.append(std::string_view(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    out.append(v ? "true" : "false");
  } else if constexpr (detail::is_tuple_like<T>::value) {
    detail::format_tuple(v, out, std::make_index_sequence<std::tuple_size_v<T>>{});
  } else if constexpr (requires(std::string& o) { to_string_into(v, o); }) {
    to_string_into(v, out);  // user types: an ADL to_string_into(const T&, std::string&)
  } else {
    fmt::format_to(std::back_inserter(out), "{}", v);
  }
}

template <class T>
std::string format_value(const T& v) {
  std::string s;
  format_value(v, s);
  return s;
}

}  // namespace clink
