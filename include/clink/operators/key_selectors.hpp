#pragma once
// Key selectors of the built-in spec record types. Registered by name (for hash edges
// in a JobGraphSpec) and used by the DataStream helpers, so a spec and a C++ job route
// the same key to the same subtask.
#include <string>

#include "clink/api/spec_types.hpp"

namespace clink {

// "string.self": the string is its own key.
struct StringSelfKey {
  static constexpr const char* kName = "string.self";
  const std::string& operator()(const std::string& s) const { return s; }
};
// "event.key": Event::key.
struct EventKey {
  static constexpr const char* kName = "event.key";
  const std::string& operator()(const Event& e) const { return e.key; }
};
// "word_count.word": the word of a (word, count) pair.
struct WordCountWord {
  static constexpr const char* kName = "word_count.word";
  const std::string& operator()(const WordCount& wc) const { return wc.first; }
};

}  // namespace clink
