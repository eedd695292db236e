#pragma once
// The record types that operators built from a JobGraphSpec (by name, through the
// OperatorRegistry) can exchange. Generic connectors (print, file, collect,
// blackhole) are instantiated for each of them through dispatch_spec_type. SQL adds
// its columnar batch type here later.
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include "clink/connectors/dead_letter.hpp"
#include "clink/core/error.hpp"
#include "clink/core/event_time.hpp"
#include "clink/core/format_value.hpp"
#include "clink/core/type_name.hpp"

namespace clink {

// A keyed measurement: what datagen's "event" kind and JSON-lines "event" decode make.
struct Event {
  std::string key;
  std::int64_t value = 0;
  friend bool operator==(const Event&, const Event&) = default;
};
inline void to_string_into(const Event& e, std::string& out) {
  out += '(';
  out += e.key;
  out += ',';
  format_value(e.value, out);
  out += ')';
}

using WordCount = std::pair<std::string, std::int64_t>;                  // "word_count"
using WindowCount = std::tuple<std::string, std::int64_t, std::int64_t>;  // "window_count": key, window start, count

template <>
struct TypeName<Event> {
  static std::string get() { return "event"; }
};
template <>
struct TypeName<WordCount> {
  static std::string get() { return "word_count"; }
};
template <>
struct TypeName<WindowCount> {
  static std::string get() { return "window_count"; }
};

// Calls f.template operator()<T>() for the type named `name`; throws ClinkError for
// an unknown name.
template <class F>
decltype(auto) dispatch_spec_type(const std::string& name, F&& f) {
  if (name == "string") return f.template operator()<std::string>();
  if (name == "int64") return f.template operator()<std::int64_t>();
  if (name == "event") return f.template operator()<Event>();
  if (name == "word_count") return f.template operator()<WordCount>();
  if (name == "window_count") return f.template operator()<WindowCount>();
  if (name == "dead_letter") return f.template operator()<DeadLetter>();
  throw ClinkError("unknown record type '" + name +
                   "' (known: string, int64, event, word_count, window_count, dead_letter)");
}

}  // namespace clink
