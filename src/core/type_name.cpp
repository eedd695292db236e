#include "clink/core/type_name.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace clink {

std::string demangle(const char* mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> res(abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  return status == 0 && res ? std::string(res.get()) : std::string(mangled);
}

}  // namespace clink
