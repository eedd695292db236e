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

}  // namespace clink
