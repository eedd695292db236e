// append_json_string against a byte-at-a-time reference: every escape at every position
// of strings around the 8-byte stride, and UTF-8 and high bytes passed through.
#include "clink/formats/json_escape.hpp"

#include <gtest/gtest.h>

#include <string>

namespace clink::test {
namespace {

std::string reference(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 0xf];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

TEST(JsonEscape, EveryEscapeAtEveryPosition) {
  const std::string specials = std::string("\"\\\n\r\t\b\f\x01\x1f", 9) + std::string(1, '\0');
  for (std::size_t len = 0; len <= 24; ++len) {
    for (std::size_t pos = 0; pos < len; ++pos) {
      for (char special : specials) {
        std::string s(len, 'a');
        for (std::size_t i = 0; i < len; ++i) s[i] = static_cast<char>('a' + i % 26);
        s[pos] = special;
        std::string got;
        append_json_string(s, got);
        ASSERT_EQ(got, reference(s)) << "len " << len << " pos " << pos << " char " << int(special);
      }
    }
  }
}

TEST(JsonEscape, Utf8AndHighBytesPassThrough) {
  const std::string s = "caf\xc3\xa9 \xe2\x82\xac \xff\xfe\x80 ok, long enough to take the 8-byte path";
  std::string got;
  append_json_string(s, got);
  EXPECT_EQ(got, "\"" + s + "\"");
  EXPECT_EQ(got, reference(s));
}

}  // namespace
}  // namespace clink::test
