#pragma once
#include <cstdint>
#include <string>
#include <type_traits>
#include <typeinfo>

namespace clink {

std::string demangle(const char* mangled);

// Readable name of a record type, for explain and spec validation. Specialise
// TypeName<T> next to a type to give it a short name.
template <class T>
struct TypeName {
  static std::string get() { return demangle(typeid(T).name()); }
};
template <>
struct TypeName<std::string> {
  static std::string get() { return "string"; }
};
template <>
struct TypeName<std::int64_t> {
  static std::string get() { return "int64"; }
};
template <>
struct TypeName<std::int32_t> {
  static std::string get() { return "int32"; }
};
template <>
struct TypeName<double> {
  static std::string get() { return "double"; }
};
template <>
struct TypeName<bool> {
  static std::string get() { return "bool"; }
};

template <class T>
std::string type_name() {
  return TypeName<T>::get();
}

}  // namespace clink
