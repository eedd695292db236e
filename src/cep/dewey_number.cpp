#include "clink/cep/dewey_number.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "clink/core/error.hpp"
#include "clink/state/state_codec.hpp"

namespace clink::cep {

void DeweyNumber::grow() {
  const std::uint32_t ncap = cap_ * 2;
  auto bigger = std::make_unique<std::int32_t[]>(ncap);
  std::memcpy(bigger.get(), data(), len_ * sizeof(std::int32_t));
  heap_ = std::move(bigger);
  cap_ = ncap;
}

void DeweyNumber::copy_from_long(const DeweyNumber& o) {
  heap_ = std::make_unique<std::int32_t[]>(o.cap_);
  cap_ = o.cap_;
  std::memcpy(heap_.get(), o.data(), o.len_ * sizeof(std::int32_t));
  len_ = o.len_;
}

std::string DeweyNumber::to_string() const {
  std::string s;
  for (std::uint32_t i = 0; i < len_; ++i) {
    if (i) s.push_back('.');
    s += std::to_string(data()[i]);
  }
  return s;
}

DeweyNumber DeweyNumber::parse(std::string_view s) {
  DeweyNumber d;
  while (!s.empty()) {
    auto dot = s.find('.');
    std::string_view part = s.substr(0, dot);
    std::int32_t v = 0;
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc() || p != part.data() + part.size())
      throw ClinkError("cep: bad Dewey number digit '" + std::string(part) + "'");
    d.push(v);
    if (dot == std::string_view::npos) break;
    s.remove_prefix(dot + 1);
  }
  return d;
}

void DeweyNumber::encode(std::string& out) const {
  put_varint(len_, out);
  for (std::uint32_t i = 0; i < len_; ++i) put_varint(zigzag(data()[i]), out);
}

DeweyNumber DeweyNumber::decode(std::string_view& in) {
  DeweyNumber d;
  const auto n = get_varint(in);
  for (std::uint64_t i = 0; i < n; ++i) d.push(static_cast<std::int32_t>(unzigzag(get_varint(in))));
  return d;
}

}  // namespace clink::cep
