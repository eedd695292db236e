#include "clink/cep/dewey_number.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "clink/core/error.hpp"
#include "clink/state/state_codec.hpp"

namespace clink::cep {

void DeweyNumber::push(std::int32_t v) {
  if (len_ == cap_) {
    const std::uint32_t ncap = cap_ * 2;
    auto bigger = std::make_unique<std::int32_t[]>(ncap);
    std::memcpy(bigger.get(), data(), len_ * sizeof(std::int32_t));
    heap_ = std::move(bigger);
    cap_ = ncap;
  }
  mutable_data()[len_++] = v;
}

void DeweyNumber::copy_from(const DeweyNumber& o) {
  if (o.len_ > cap_) {
    heap_ = std::make_unique<std::int32_t[]>(o.cap_);
    cap_ = o.cap_;
  }
  std::memcpy(mutable_data(), o.data(), o.len_ * sizeof(std::int32_t));
  len_ = o.len_;
}

bool DeweyNumber::is_compatible_with(const DeweyNumber& other) const {
  const std::int32_t* a = data();
  const std::int32_t* b = other.data();
  if (len_ > other.len_) return std::equal(b, b + other.len_, a);
  if (len_ == other.len_ && len_ > 0) {
    const std::uint32_t last = len_ - 1;
    return std::equal(b, b + last, a) && a[last] >= b[last];
  }
  return false;
}

bool operator==(const DeweyNumber& a, const DeweyNumber& b) {
  return a.len_ == b.len_ && std::equal(a.data(), a.data() + a.len_, b.data());
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
