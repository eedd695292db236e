#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "clink/sql/common/column.hpp"

namespace clink::sql {

// UTF-8 helpers for string kernels (Flink counts characters, not bytes).
inline std::size_t utf8_char_len(unsigned char lead) { return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4; }
// Code points in s (continuation bytes are not counted).
inline std::size_t utf8_length(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}
// Byte offset of the n-th code point (s.size() when n is past the end).
inline std::size_t utf8_offset(std::string_view s, std::size_t n) {
  std::size_t i = 0;
  while (n > 0 && i < s.size()) {
    i += utf8_char_len(static_cast<unsigned char>(s[i]));
    --n;
  }
  return i < s.size() ? i : s.size();
}

// Upper- or lower-cases ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic letters;
// other code points are copied unchanged.
void append_case_mapped(std::string_view s, bool upper, Buffer& out);
// INITCAP: the first letter of each word upper-cased, the others lower-cased; a word
// starts after any character that is not a letter or digit.
void append_initcap(std::string_view s, Buffer& out);

}  // namespace clink::sql
