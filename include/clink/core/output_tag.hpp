#pragma once
#include <string>
#include <utility>

namespace clink {

// Names a side output carrying values of type T (Flink's OutputTag<T>).
template <class T>
struct OutputTag {
  std::string name;
  explicit OutputTag(std::string n) : name(std::move(n)) {}
};

// The side output that carries records a source or operator could not process (bad
// input, late rows sent on purpose). The runtime never discards it, even when no edge
// reads it: a dead letter is never dropped silently.
inline constexpr const char* kDeadLetterTag = "dead-letter";

}  // namespace clink
