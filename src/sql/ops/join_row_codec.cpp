#include "join_row_codec.hpp"

#include <bit>
#include <cstdint>
#include <cstring>

#include "clink/core/error.hpp"
#include "clink/sql/common/column_key.hpp"
#include "clink/sql/ops/row_key.hpp"

namespace clink::sql {
namespace {

constexpr unsigned char kNull = 0x00;
constexpr unsigned char kPresent = 0x01;
constexpr unsigned char kNegativeBase = 0x18;  // 0x10..0x18: v < 0
constexpr unsigned char kPositiveBase = 0x20;  // 0x20..0x28: v >= 0
constexpr unsigned char kLongLength = 0xF0;

[[noreturn]] void truncated() { throw ClinkError("join state: truncated or malformed row bytes"); }

// Bytes needed for u (0 for 0).
inline int byte_length(std::uint64_t u) { return u == 0 ? 0 : (64 - std::countl_zero(u) + 7) / 8; }

inline void put_low_bytes(std::uint64_t u, int n, std::string& out) {
  for (int i = n - 1; i >= 0; --i) out.push_back(static_cast<char>(u >> (8 * i)));
}
inline std::uint64_t take_bytes(std::string_view& in, int n) {
  if (in.size() < static_cast<std::size_t>(n)) truncated();
  std::uint64_t u = 0;
  for (int i = 0; i < n; ++i) u = (u << 8) | static_cast<unsigned char>(in[static_cast<std::size_t>(i)]);
  in.remove_prefix(static_cast<std::size_t>(n));
  return u;
}

// The header byte and the value's significant bytes, big-endian, written in place after
// one resize (a push_back per byte was a tenth of a join's time; bytes stored into a stack
// buffer and then copied with wider loads stalled on store forwarding: another tenth of q7).
template <class T>
void encode_int(const Column& c, std::size_t row, std::string& out) {
  if (c.is_null(row)) {
    out.push_back(static_cast<char>(kNull));
    return;
  }
  const auto v = static_cast<std::int64_t>(c.values<T>()[row]);
  const auto u = static_cast<std::uint64_t>(v);
  const int n = v >= 0 ? byte_length(u) : byte_length(~u);
  const std::size_t at = out.size();
  out.resize(at + 9);  // room for one 8-byte store, trimmed to the n bytes below
  char* p = out.data() + at;
  p[0] = static_cast<char>(v >= 0 ? kPositiveBase + n : kNegativeBase - n);
  if (n > 0) {
    static_assert(std::endian::native == std::endian::little);
    const std::uint64_t big_endian = __builtin_bswap64(u << (8 * (8 - n)));  // the n low bytes first
    std::memcpy(p + 1, &big_endian, 8);
  }
  out.resize(at + 1 + static_cast<std::size_t>(n));
}

template <class T>
void decode_int(std::string_view& in, Column& out) {
  if (in.empty()) truncated();
  const auto h = static_cast<unsigned char>(in[0]);
  in.remove_prefix(1);
  if (h == kNull) return out.append_null();
  std::uint64_t u = 0;
  if (h >= kPositiveBase && h <= kPositiveBase + 8) {
    u = take_bytes(in, h - kPositiveBase);
  } else if (h >= kNegativeBase - 8 && h <= kNegativeBase) {
    const int n = kNegativeBase - h;
    u = take_bytes(in, n);
    if (n < 8) u |= ~std::uint64_t(0) << (8 * n);  // the high bytes of a negative value
  } else {
    truncated();
  }
  out.append<T>(static_cast<T>(static_cast<std::int64_t>(u)));
}

void encode_string(const Column& c, std::size_t row, std::string& out) {
  if (c.is_null(row)) {
    out.push_back(static_cast<char>(kNull));
    return;
  }
  const std::string_view s = c.string_at(row);
  out.push_back(static_cast<char>(kPresent));
  if (s.size() < kLongLength) {
    out.push_back(static_cast<char>(s.size()));
  } else {
    const int n = byte_length(s.size());
    out.push_back(static_cast<char>(kLongLength + n - 1));
    put_low_bytes(s.size(), n, out);
  }
  out.append(s);
}

void decode_string(std::string_view& in, Column& out) {
  if (in.empty()) truncated();
  const auto h = static_cast<unsigned char>(in[0]);
  in.remove_prefix(1);
  if (h == kNull) return out.append_null();
  if (h != kPresent || in.empty()) truncated();
  std::size_t len = static_cast<unsigned char>(in[0]);
  in.remove_prefix(1);
  if (len >= kLongLength) {
    if (len > kLongLength + 7) truncated();
    len = take_bytes(in, static_cast<int>(len - kLongLength + 1));
  }
  if (in.size() < len) truncated();
  out.append_string(in.substr(0, len));
  in.remove_prefix(len);
}

void encode_key(const Column& c, std::size_t row, std::string& out) { append_key_value(c, row, out); }
void decode_key(std::string_view& in, Column& out) { decode_key_value(in, out); }

}  // namespace

SideRowCodec::SideRowCodec(const Schema& schema) {
  for (std::size_t i = 0; i < schema.size(); ++i) {
    EncodeFn e = encode_key;
    DecodeFn d = decode_key;
    switch (schema.type(i).kind()) {
      case TypeKind::kTinyInt: e = encode_int<std::int8_t>, d = decode_int<std::int8_t>; break;
      case TypeKind::kSmallInt: e = encode_int<std::int16_t>, d = decode_int<std::int16_t>; break;
      case TypeKind::kInt:
      case TypeKind::kDate:
      case TypeKind::kTime:
      case TypeKind::kIntervalYearMonth: e = encode_int<std::int32_t>, d = decode_int<std::int32_t>; break;
      case TypeKind::kBigInt:
      case TypeKind::kTimestamp:
      case TypeKind::kTimestampLtz:
      case TypeKind::kIntervalDayTime: e = encode_int<std::int64_t>, d = decode_int<std::int64_t>; break;
      case TypeKind::kChar:
      case TypeKind::kVarChar:
      case TypeKind::kBinary:
      case TypeKind::kVarBinary: e = encode_string, d = decode_string; break;
      default: break;
    }
    encoders_.push_back(e);
    decoders_.push_back(d);
  }
}

void SideRowCodec::encode(const ColumnBatch& batch, std::size_t row, std::string& out) const {
  for (std::size_t c = 0; c < encoders_.size(); ++c) encoders_[c](batch.column(c), row, out);
}

void SideRowCodec::decode(std::string_view bytes, ColumnBatch& out) const {
  for (std::size_t c = 0; c < decoders_.size(); ++c) decoders_[c](bytes, out.column(c));
  if (!bytes.empty()) truncated();
  out.row_kinds().push_back(RowKind::kInsert);
  out.event_times().push_back(kNoEventTime);
}

}  // namespace clink::sql
