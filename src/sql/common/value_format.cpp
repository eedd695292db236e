#include "clink/sql/common/value_format.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "clink/sql/common/decimal.hpp"
#include "clink/sql/common/temporal.hpp"
#include "clink/sql/common/time_zone.hpp"

namespace clink::sql {

namespace {

// Shortest digits and decimal exponent from to_chars' scientific form "d.ddde[+-]xx".
template <class F>
void append_java_floating(F v, std::string& out) {
  if (std::isnan(v)) {
    out += "NaN";
    return;
  }
  if (std::isinf(v)) {
    out += v < 0 ? "-Infinity" : "Infinity";
    return;
  }
  if (v == 0) {
    out += std::signbit(v) ? "-0.0" : "0.0";
    return;
  }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view s(buf, static_cast<std::size_t>(r.ptr - buf));
  bool neg = s[0] == '-';
  if (neg) s.remove_prefix(1);
  auto e_pos = s.find('e');
  std::string digits;
  for (char c : s.substr(0, e_pos))
    if (c != '.') digits += c;
  int exp = std::atoi(std::string(s.substr(e_pos + 1)).c_str());
  if (neg) out += '-';
  double mag = std::fabs(static_cast<double>(v));
  if (mag >= 1e-3 && mag < 1e7) {
    if (exp >= 0) {
      std::size_t int_len = static_cast<std::size_t>(exp) + 1;
      if (digits.size() <= int_len) {
        out += digits;
        out.append(int_len - digits.size(), '0');
        out += ".0";
      } else {
        out.append(digits, 0, int_len);
        out += '.';
        out.append(digits, int_len, std::string::npos);
      }
    } else {
      out += "0.";
      out.append(static_cast<std::size_t>(-exp - 1), '0');
      out += digits;
    }
    return;
  }
  out += digits[0];
  out += '.';
  if (digits.size() > 1) out.append(digits, 1, std::string::npos);
  else out += '0';
  out += 'E';
  out += std::to_string(exp);
}

const char kHex[] = "0123456789abcdef";

void append_nested_element(const Column& c, std::size_t i, const TimeZone& zone, bool printing, std::string& out) {
  if (c.is_null(i)) out += "NULL";
  else append_cell_string(c, i, zone, printing, out);
}

}  // namespace

void append_java_double(double v, std::string& out) { append_java_floating(v, out); }
void append_java_float(float v, std::string& out) { append_java_floating(v, out); }

void append_interval_day_time(std::int64_t ms, std::string& out) {
  out += ms < 0 ? '-' : '+';
  std::uint64_t m = ms < 0 ? static_cast<std::uint64_t>(-(ms + 1)) + 1 : static_cast<std::uint64_t>(ms);
  std::uint64_t days = m / 86400000, rest = m % 86400000;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%llu %02llu:%02llu:%02llu.%03llu", static_cast<unsigned long long>(days),
                static_cast<unsigned long long>(rest / 3600000), static_cast<unsigned long long>(rest / 60000 % 60),
                static_cast<unsigned long long>(rest / 1000 % 60), static_cast<unsigned long long>(rest % 1000));
  out += buf;
}

void append_interval_year_month(std::int32_t months, std::string& out) {
  out += months < 0 ? '-' : '+';
  std::int64_t m = std::llabs(static_cast<long long>(months));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld-%02lld", static_cast<long long>(m / 12), static_cast<long long>(m % 12));
  out += buf;
}

void append_cell_string(const Column& col, std::size_t i, const TimeZone& zone, bool printing, std::string& out) {
  const LogicalType& t = col.type();
  switch (t.kind()) {
    case TypeKind::kNull: out += "NULL"; return;
    case TypeKind::kBoolean: out += col.values<std::uint8_t>()[i] ? "TRUE" : "FALSE"; return;
    case TypeKind::kTinyInt: out += std::to_string(col.values<std::int8_t>()[i]); return;
    case TypeKind::kSmallInt: out += std::to_string(col.values<std::int16_t>()[i]); return;
    case TypeKind::kInt: out += std::to_string(col.values<std::int32_t>()[i]); return;
    case TypeKind::kBigInt: out += std::to_string(col.values<std::int64_t>()[i]); return;
    case TypeKind::kFloat: append_java_float(col.values<float>()[i], out); return;
    case TypeKind::kDouble: append_java_double(col.values<double>()[i], out); return;
    case TypeKind::kDecimal: Decimal128::append_string(col.values<Int128>()[i], t.scale(), out); return;
    case TypeKind::kChar:
    case TypeKind::kVarChar: out += col.string_at(i); return;
    case TypeKind::kBinary:
    case TypeKind::kVarBinary: {
      auto s = col.string_at(i);
      if (!printing) {
        out += s;
        return;
      }
      out += "x'";
      for (unsigned char c : s) {
        out += kHex[c >> 4];
        out += kHex[c & 15];
      }
      out += '\'';
      return;
    }
    case TypeKind::kDate: append_date(col.values<std::int32_t>()[i], out); return;
    case TypeKind::kTime: append_time(col.values<std::int32_t>()[i], std::min(t.precision(), 3), out); return;
    case TypeKind::kTimestamp: append_timestamp(col.values<std::int64_t>()[i], t.precision(), out); return;
    case TypeKind::kTimestampLtz:
      append_timestamp(zone.utc_micros_to_local(col.values<std::int64_t>()[i]), t.precision(), out);
      return;
    case TypeKind::kIntervalDayTime: append_interval_day_time(col.values<std::int64_t>()[i], out); return;
    case TypeKind::kIntervalYearMonth: append_interval_year_month(col.values<std::int32_t>()[i], out); return;
    case TypeKind::kArray: {
      out += '[';
      auto [b, e] = col.list_range(i);
      for (auto k = b; k < e; ++k) {
        if (k != b) out += ", ";
        append_nested_element(col.child(0), k, zone, printing, out);
      }
      out += ']';
      return;
    }
    case TypeKind::kMap: {
      out += '{';
      auto [b, e] = col.list_range(i);
      for (auto k = b; k < e; ++k) {
        if (k != b) out += ", ";
        append_nested_element(col.child(0), k, zone, printing, out);
        out += '=';
        append_nested_element(col.child(1), k, zone, printing, out);
      }
      out += '}';
      return;
    }
    case TypeKind::kRow: {
      out += '(';
      for (std::size_t f = 0; f < col.num_children(); ++f) {
        if (f != 0) out += ", ";
        append_nested_element(col.child(f), i, zone, printing, out);
      }
      out += ')';
      return;
    }
  }
}

}  // namespace clink::sql
