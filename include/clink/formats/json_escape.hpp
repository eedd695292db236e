#pragma once
// JSON string escaping for encoders and for the one-line text form of records that
// carry arbitrary text (dead letters). Hand-written: it runs once per string field on
// the sink's hot path, where a general JSON library would build a DOM first.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace clink {

// Appends `s` as a quoted JSON string. UTF-8 passes through unchanged; quotes,
// backslashes and control characters are escaped.
// Whether any of 8 bytes may need escaping (< 0x20, '"' or '\\'); bytes >= 0x80 never
// do. A borrow can flag a clean byte after a flagged one: that only costs the byte loop.
inline bool json_escape_candidate(std::uint64_t w) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
  const std::uint64_t quote = w ^ (kOnes * '"'), slash = w ^ (kOnes * '\\');
  return (((w - kOnes * 0x20) | ((quote - kOnes) & ~quote) | ((slash - kOnes) & ~slash)) & ~w & kHigh) != 0;
}

inline void append_json_string(std::string_view s, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  std::size_t run = 0;  // start of the pending run of characters that need no escape
  for (std::size_t i = 0; i < s.size(); ++i) {
    // Eight clean bytes at a time (long text fields are mostly clean).
    while (i + 8 <= s.size()) {
      std::uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      if (json_escape_candidate(w)) break;
      i += 8;
    }
    if (i >= s.size()) break;
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      case '\b': out.append("\\b"); break;
      case '\f': out.append("\\f"); break;
      default:
        out.append("\\u00");
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xf]);
    }
  }
  out.append(s.data() + run, s.size() - run);
  out.push_back('"');
}

}  // namespace clink
