#include "clink/state/state_codec.hpp"

namespace clink {

void put_varint(std::uint64_t v, std::string& out) {
  char buf[10];
  std::size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  out.append(buf, n);
}

std::uint64_t get_varint(std::string_view& in) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < in.size() && i < 10; ++i) {
    auto b = static_cast<unsigned char>(in[i]);
    v |= static_cast<std::uint64_t>(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      in.remove_prefix(i + 1);
      return v;
    }
  }
  throw ClinkError(in.size() >= 10 ? "state: varint longer than 10 bytes" : "state: truncated varint");
}

}  // namespace clink
