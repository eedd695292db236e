#include "clink/sql/function/string_util.hpp"

namespace clink::sql {

namespace {

std::uint32_t decode(std::string_view s, std::size_t& i) {
  auto c = static_cast<unsigned char>(s[i]);
  std::size_t len = utf8_char_len(c);
  if (i + len > s.size()) {
    ++i;
    return c;
  }
  std::uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
  for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += len;
  return cp;
}

void encode(std::uint32_t cp, Buffer& out) {
  char b[4];
  std::size_t n;
  if (cp < 0x80) {
    b[0] = static_cast<char>(cp);
    n = 1;
  } else if (cp < 0x800) {
    b[0] = static_cast<char>(0xC0 | (cp >> 6));
    b[1] = static_cast<char>(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    b[0] = static_cast<char>(0xE0 | (cp >> 12));
    b[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    b[2] = static_cast<char>(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    b[0] = static_cast<char>(0xF0 | (cp >> 18));
    b[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    b[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    b[3] = static_cast<char>(0x80 | (cp & 0x3F));
    n = 4;
  }
  out.append(b, n);
}

bool pair_block_upper_even(std::uint32_t cp) {
  return (cp >= 0x100 && cp <= 0x12F) || (cp >= 0x132 && cp <= 0x137) || (cp >= 0x14A && cp <= 0x177);
}
bool pair_block_upper_odd(std::uint32_t cp) { return (cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E); }

std::uint32_t to_upper(std::uint32_t cp) {
  if (cp >= 'a' && cp <= 'z') return cp - 32;
  if (cp < 0x80) return cp;
  if (cp >= 0xE0 && cp <= 0xFE && cp != 0xF7) return cp - 32;
  if (cp == 0xFF) return 0x178;
  if (pair_block_upper_even(cp)) return cp & ~1u;
  if (pair_block_upper_odd(cp)) return (cp % 2 == 0) ? cp - 1 : cp;
  if (cp == 0x3C2) return 0x3A3;
  if (cp >= 0x3B1 && cp <= 0x3C9) return cp - 32;
  if (cp >= 0x430 && cp <= 0x44F) return cp - 32;
  if (cp >= 0x450 && cp <= 0x45F) return cp - 80;
  return cp;
}

std::uint32_t to_lower(std::uint32_t cp) {
  if (cp >= 'A' && cp <= 'Z') return cp + 32;
  if (cp < 0x80) return cp;
  if (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) return cp + 32;
  if (cp == 0x178) return 0xFF;
  if (pair_block_upper_even(cp)) return cp | 1u;
  if (pair_block_upper_odd(cp)) return (cp % 2 == 1) ? cp + 1 : cp;
  if (cp >= 0x391 && cp <= 0x3A9 && cp != 0x3A2) return cp + 32;
  if (cp >= 0x410 && cp <= 0x42F) return cp + 32;
  if (cp >= 0x400 && cp <= 0x40F) return cp + 80;
  return cp;
}

bool is_alnum(std::uint32_t cp) {
  if (cp < 0x80) return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z');
  return to_upper(cp) != cp || to_lower(cp) != cp || cp == 0xDF;
}

}  // namespace

void append_case_mapped(std::string_view s, bool upper, Buffer& out) {
  // ASCII runs are mapped in place in one pass; the first non-ASCII byte switches to
  // code-point decoding (a mapped letter may change its encoded length).
  std::size_t base = out.size();
  out.resize(base + s.size());
  auto* d = reinterpret_cast<char*>(out.data() + base);
  const char lo = upper ? 'a' : 'A';
  std::size_t i = 0;
  for (; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) break;
    d[i] = static_cast<char>(static_cast<unsigned>(c - lo) < 26u ? c ^ 0x20 : c);
  }
  if (i == s.size()) return;
  out.resize(base + i);
  while (i < s.size()) {
    std::uint32_t cp = decode(s, i);
    encode(upper ? to_upper(cp) : to_lower(cp), out);
  }
}

void append_initcap(std::string_view s, Buffer& out) {
  std::size_t i = 0;
  bool start = true;
  while (i < s.size()) {
    std::uint32_t cp = decode(s, i);
    encode(start ? to_upper(cp) : to_lower(cp), out);
    start = !is_alnum(cp);
  }
}

}  // namespace clink::sql
