#include "clink/sql/ops/row_key.hpp"

#include <bit>
#include <cstring>

#include "clink/core/error.hpp"

namespace clink::sql {

namespace {

template <class T>
T take_int(std::string_view& in) {
  if (in.size() < sizeof(T)) throw ClinkError("row key: truncated value");
  return KeyCodec<T>::decode(in);
}

template <class F, class U>
F take_float(std::string_view& in) {
  U bits = take_int<U>(in);
  constexpr U kSign = U(1) << (sizeof(U) * 8 - 1);
  bits = (bits & kSign) ? (bits & ~kSign) : ~bits;
  return std::bit_cast<F>(bits);
}

}  // namespace

bool int64_key_type(const LogicalType& type) {
  switch (type.kind()) {
    case TypeKind::kBigInt:
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampLtz:
    case TypeKind::kIntervalDayTime: return true;
    default: return false;
  }
}

bool key_type_decodable(const LogicalType& type) { return !type.is_nested(); }

void decode_key_value(std::string_view& in, Column& out) {
  if (in.empty()) throw ClinkError("row key: truncated key");
  const bool present = in[0] != '\0';
  in.remove_prefix(1);
  if (!present) {
    out.append_null();
    return;
  }
  switch (out.type().kind()) {
    case TypeKind::kNull: out.append_null(); return;
    case TypeKind::kBoolean: {
      if (in.empty()) throw ClinkError("row key: truncated BOOLEAN");
      std::uint8_t b = in[0] != '\0';
      in.remove_prefix(1);
      out.append<std::uint8_t>(b);
      return;
    }
    case TypeKind::kTinyInt: out.append<std::int8_t>(take_int<std::int8_t>(in)); return;
    case TypeKind::kSmallInt: out.append<std::int16_t>(take_int<std::int16_t>(in)); return;
    case TypeKind::kInt:
    case TypeKind::kDate:
    case TypeKind::kTime:
    case TypeKind::kIntervalYearMonth: out.append<std::int32_t>(take_int<std::int32_t>(in)); return;
    case TypeKind::kBigInt:
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampLtz:
    case TypeKind::kIntervalDayTime: out.append<std::int64_t>(take_int<std::int64_t>(in)); return;
    case TypeKind::kFloat: out.append<float>(take_float<float, std::uint32_t>(in)); return;
    case TypeKind::kDouble: out.append<double>(take_float<double, std::uint64_t>(in)); return;
    case TypeKind::kDecimal: {
      auto hi = static_cast<UInt128>(take_int<std::uint64_t>(in));
      auto lo = static_cast<UInt128>(take_int<std::uint64_t>(in));
      UInt128 u = ((hi << 64) | lo) ^ (static_cast<UInt128>(1) << 127);
      out.append<Int128>(static_cast<Int128>(u));
      return;
    }
    case TypeKind::kChar:
    case TypeKind::kVarChar:
    case TypeKind::kBinary:
    case TypeKind::kVarBinary: {
      auto n = take_int<std::uint32_t>(in);
      if (in.size() < n) throw ClinkError("row key: truncated string");
      out.append_string(in.substr(0, n));
      in.remove_prefix(n);
      return;
    }
    case TypeKind::kArray:
    case TypeKind::kMap:
    case TypeKind::kRow: break;
  }
  throw ClinkError("row key: cannot decode a key of type " + out.type().to_string());
}

}  // namespace clink::sql
