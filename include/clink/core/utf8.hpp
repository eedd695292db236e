#pragma once
// UTF-8 well-formedness, for text from outside (SQL scripts, CSV records).
#include <cstddef>
#include <string_view>

namespace clink {

// The offset of the first byte that does not begin or continue a well-formed UTF-8
// sequence (overlong forms, surrogates and code points beyond U+10FFFF are malformed);
// s.size() when all of `s` is well-formed.
std::size_t first_invalid_utf8(std::string_view s);

}  // namespace clink
