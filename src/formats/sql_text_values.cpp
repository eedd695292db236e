#include "clink/formats/sql_text_values.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include "clink/sql/common/decimal.hpp"
#include "clink/sql/common/temporal.hpp"
#include "clink/sql/common/value_format.hpp"

namespace clink::sql {

namespace {

// Java's String.trim: drops characters <= ' ' at both ends.
std::string_view java_trim(std::string_view s) {
  while (!s.empty() && static_cast<unsigned char>(s.front()) <= ' ') s.remove_prefix(1);
  while (!s.empty() && static_cast<unsigned char>(s.back()) <= ' ') s.remove_suffix(1);
  return s;
}

bool invalid(std::string_view text, const LogicalType& type, std::string& reason) {
  reason = "'";
  reason.append(text.substr(0, 64));
  if (text.size() > 64) reason += "...";
  reason += "' is not a valid " + type.to_string();
  return false;
}

// Integer.parseInt and friends: optional sign, decimal digits, within [lo, hi].
bool parse_java_integer(std::string_view s, std::int64_t lo, std::int64_t hi, std::int64_t& out) {
  s = java_trim(s);
  if (!s.empty() && s.front() == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s.front() == '-') return false;
  }
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && out >= lo && out <= hi;
}

// Double.parseDouble: decimal or scientific, NaN, [+-]Infinity, trailing d/D/f/F.
bool parse_java_double(std::string_view s, double& out) {
  s = java_trim(s);
  if (!s.empty() && (s.back() == 'd' || s.back() == 'D' || s.back() == 'f' || s.back() == 'F')) s.remove_suffix(1);
  bool neg = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    neg = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s == "NaN") {
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (s == "Infinity") {
    out = neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return true;
  }
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s.front())) || s.front() == '.')) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec == std::errc::result_out_of_range) {
    // from_chars reports underflow/overflow; Java rounds to 0 or Infinity.
    out = std::strtod(std::string(s).c_str(), nullptr);
  } else if (ec != std::errc() || p != s.data() + s.size()) {
    return false;
  }
  if (neg) out = -out;
  return true;
}

// The shape nearly every file has, "yyyy-MM-dd<sep>HH:mm:ss[.f{1,9}]", read by position
// (the general parser's cursor costs several times as much per field). Anything else,
// valid or not, is left to the general parser (nullopt), which then decides alone.
std::optional<std::int64_t> parse_fixed_timestamp(std::string_view s, char sep) {
  if (s.size() < 19 || s.size() == 20 || s.size() > 28) return std::nullopt;  // 1..9 fraction digits
  const char* c = s.data();
  auto digit = [c](int i) { return static_cast<unsigned>(c[i] - '0'); };
  auto two = [&](int i) { return digit(i) * 10 + digit(i + 1); };
  static constexpr int kDigits[] = {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18};
  for (int i : kDigits)
    if (digit(i) > 9) return std::nullopt;
  if (c[4] != '-' || c[7] != '-' || c[10] != sep || c[13] != ':' || c[16] != ':') return std::nullopt;
  std::int64_t frac = 0;
  if (s.size() > 19) {
    if (c[19] != '.') return std::nullopt;
    for (std::size_t i = 20; i < s.size(); ++i) {
      unsigned d = digit(static_cast<int>(i));
      if (d > 9) return std::nullopt;
      if (i < 26) frac = frac * 10 + d;
    }
    for (std::size_t i = std::min<std::size_t>(s.size(), 26); i < 26; ++i) frac *= 10;
  }
  const auto year = static_cast<std::int64_t>(two(0) * 100 + two(2));
  const int month = static_cast<int>(two(5)), day = static_cast<int>(two(8));
  const std::int64_t h = two(11), mi = two(14), sec = two(17);
  if (!is_valid_civil(year, month, day) || h > 23 || mi > 59 || sec > 59) return std::nullopt;
  return days_from_civil(year, month, day) * kMicrosPerDay + ((h * 60 + mi) * 60 + sec) * kMicrosPerSecond + frac;
}

// "date<sep>time" with a required separator; `zulu` requires (and strips) a final 'Z'.
std::optional<std::int64_t> parse_timestamp_text(std::string_view s, char sep, bool zulu) {
  s = java_trim(s);
  if (zulu) {
    if (s.empty() || s.back() != 'Z') return std::nullopt;
    s.remove_suffix(1);
  }
  if (auto fixed = parse_fixed_timestamp(s, sep)) return fixed;
  auto pos = s.find_first_of(" T");
  if (pos == std::string_view::npos || s[pos] != sep) return std::nullopt;
  return parse_timestamp(s);
}

void append_int(Column& col, std::int64_t v) {
  switch (col.type().kind()) {
    case TypeKind::kTinyInt: col.append<std::int8_t>(static_cast<std::int8_t>(v)); break;
    case TypeKind::kSmallInt: col.append<std::int16_t>(static_cast<std::int16_t>(v)); break;
    case TypeKind::kInt:
    case TypeKind::kIntervalYearMonth: col.append<std::int32_t>(static_cast<std::int32_t>(v)); break;
    default: col.append<std::int64_t>(v); break;
  }
}

// java.time's ISO_LOCAL_TIME fraction: '.' and the digits without trailing zeros.
void append_trimmed_fraction(std::int64_t micros_of_second, std::string& out) {
  if (micros_of_second == 0) return;
  char digits[6];
  for (int i = 5; i >= 0; --i) {
    digits[i] = static_cast<char>('0' + micros_of_second % 10);
    micros_of_second /= 10;
  }
  int n = 6;
  while (n > 0 && digits[n - 1] == '0') --n;
  out += '.';
  out.append(digits, static_cast<std::size_t>(n));
}

void append_two(std::int64_t v, std::string& out) {
  out += static_cast<char>('0' + v / 10);
  out += static_cast<char>('0' + v % 10);
}

void append_timestamp_text(std::int64_t micros, char sep, std::string& out) {
  std::int64_t days = floor_div(micros, kMicrosPerDay);
  std::int64_t of_day = micros - days * kMicrosPerDay;
  append_date(static_cast<std::int32_t>(days), out);
  out += sep;
  std::int64_t secs = of_day / kMicrosPerSecond;
  append_two(secs / 3600, out);
  out += ':';
  append_two(secs / 60 % 60, out);
  out += ':';
  append_two(secs % 60, out);
  append_trimmed_fraction(of_day % kMicrosPerSecond, out);
}

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;  // '-' and '_': the URL-safe alphabet, as Jackson
  if (c == '/' || c == '_') return 63;
  return -1;
}

}  // namespace

bool append_text_value(Column& col, std::string_view text, TimestampStandard standard, std::string& reason) {
  const LogicalType& t = col.type();
  switch (t.kind()) {
    case TypeKind::kNull: col.append_null(); return true;
    case TypeKind::kBoolean: {
      std::string_view s = java_trim(text);
      bool v = s.size() == 4 && (s[0] | 0x20) == 't' && (s[1] | 0x20) == 'r' && (s[2] | 0x20) == 'u' &&
               (s[3] | 0x20) == 'e';
      col.append<std::uint8_t>(v ? 1 : 0);
      return true;
    }
    case TypeKind::kTinyInt:
    case TypeKind::kSmallInt:
    case TypeKind::kInt:
    case TypeKind::kBigInt:
    case TypeKind::kIntervalYearMonth:
    case TypeKind::kIntervalDayTime: {
      std::int64_t lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
      if (t.kind() == TypeKind::kTinyInt) lo = -128, hi = 127;
      if (t.kind() == TypeKind::kSmallInt) lo = -32768, hi = 32767;
      if (t.kind() == TypeKind::kInt || t.kind() == TypeKind::kIntervalYearMonth) lo = INT32_MIN, hi = INT32_MAX;
      std::int64_t v = 0;
      if (!parse_java_integer(text, lo, hi, v)) return invalid(text, t, reason);
      append_int(col, v);
      return true;
    }
    case TypeKind::kFloat:
    case TypeKind::kDouble: {
      double v = 0;
      if (!parse_java_double(text, v)) return invalid(text, t, reason);
      if (t.kind() == TypeKind::kFloat) col.append<float>(static_cast<float>(v));
      else col.append<double>(v);
      return true;
    }
    case TypeKind::kDecimal: {
      Int128 v = 0;
      switch (Decimal128::parse(text, t.precision(), t.scale(), v)) {
        case Decimal128::ParseStatus::kOk: col.append<Int128>(v); return true;
        case Decimal128::ParseStatus::kOverflow: col.append_null(); return true;  // as DecimalData.fromBigDecimal
        case Decimal128::ParseStatus::kInvalid: return invalid(text, t, reason);
      }
      return invalid(text, t, reason);
    }
    case TypeKind::kChar:
    case TypeKind::kVarChar: col.append_string(text); return true;
    case TypeKind::kBinary:
    case TypeKind::kVarBinary: {
      thread_local std::string bytes;
      if (!base64_decode(text, bytes)) {
        reason = "'" + std::string(text.substr(0, 64)) + "' is not base64 for " + t.to_string();
        return false;
      }
      col.append_string(bytes);
      return true;
    }
    case TypeKind::kDate: {
      auto d = parse_date(java_trim(text));
      if (!d) return invalid(text, t, reason);
      col.append<std::int32_t>(*d);
      return true;
    }
    case TypeKind::kTime: {
      auto ms = parse_time(java_trim(text));
      if (!ms) return invalid(text, t, reason);
      std::int32_t unit = t.precision() >= 3 ? 1 : t.precision() == 2 ? 10 : t.precision() == 1 ? 100 : 1000;
      col.append<std::int32_t>(*ms / unit * unit);
      return true;
    }
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampLtz: {
      char sep = standard == TimestampStandard::kSql ? ' ' : 'T';
      auto micros = parse_timestamp_text(text, sep, t.kind() == TypeKind::kTimestampLtz);
      if (!micros) return invalid(text, t, reason);
      col.append<std::int64_t>(*micros);
      return true;
    }
    case TypeKind::kArray:
    case TypeKind::kMap:
    case TypeKind::kRow: reason = "a " + t.to_string() + " cannot be read from a text field"; return false;
  }
  return invalid(text, t, reason);
}

void append_text_of(const Column& col, std::size_t row, TimestampStandard standard, std::string& out) {
  const LogicalType& t = col.type();
  switch (t.kind()) {
    case TypeKind::kBoolean: out += col.values<std::uint8_t>()[row] ? "true" : "false"; return;
    case TypeKind::kTinyInt: out += std::to_string(col.values<std::int8_t>()[row]); return;
    case TypeKind::kSmallInt: out += std::to_string(col.values<std::int16_t>()[row]); return;
    case TypeKind::kInt:
    case TypeKind::kIntervalYearMonth: {
      char buf[16];
      auto r = std::to_chars(buf, buf + sizeof buf, col.values<std::int32_t>()[row]);
      out.append(buf, r.ptr);
      return;
    }
    case TypeKind::kBigInt:
    case TypeKind::kIntervalDayTime: {
      char buf[24];
      auto r = std::to_chars(buf, buf + sizeof buf, col.values<std::int64_t>()[row]);
      out.append(buf, r.ptr);
      return;
    }
    case TypeKind::kFloat: append_java_float(col.values<float>()[row], out); return;
    case TypeKind::kDouble: append_java_double(col.values<double>()[row], out); return;
    case TypeKind::kDecimal: append_java_big_decimal(col.values<Int128>()[row], t.scale(), out); return;
    case TypeKind::kChar:
    case TypeKind::kVarChar: out.append(col.string_at(row)); return;
    case TypeKind::kBinary:
    case TypeKind::kVarBinary: base64_encode(col.string_at(row), out); return;
    case TypeKind::kDate: append_date(col.values<std::int32_t>()[row], out); return;
    case TypeKind::kTime: {  // Flink's SQL_TIME_FORMAT: HH:mm:ss
      std::int64_t ms = floor_mod(col.values<std::int32_t>()[row], kMillisPerDay);
      append_two(ms / 3600000, out);
      out += ':';
      append_two(ms / 60000 % 60, out);
      out += ':';
      append_two(ms / 1000 % 60, out);
      return;
    }
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampLtz:
      append_timestamp_text(col.values<std::int64_t>()[row], standard == TimestampStandard::kSql ? ' ' : 'T', out);
      if (t.kind() == TypeKind::kTimestampLtz) out += 'Z';
      return;
    default: return;  // nested values are written by the formats themselves
  }
}

void append_java_big_decimal(Int128 unscaled, int scale, std::string& out) {
  std::string digits = Decimal128::to_string(unscaled < 0 ? -unscaled : unscaled, 0);
  auto adjusted = static_cast<std::int64_t>(digits.size()) - 1 - scale;
  if (scale >= 0 && adjusted >= -6) {
    Decimal128::append_string(unscaled, scale, out);
    return;
  }
  if (unscaled < 0) out += '-';
  out += digits[0];
  if (digits.size() > 1) {
    out += '.';
    out.append(digits, 1, std::string::npos);
  }
  out += 'E';
  if (adjusted >= 0) out += '+';
  out += std::to_string(adjusted);
}

bool base64_decode(std::string_view in, std::string& out) {
  out.clear();
  std::uint32_t acc = 0;
  int bits = 0;
  std::size_t pad = 0;
  for (char c : in) {
    if (c == '=') {
      ++pad;
      continue;
    }
    if (pad > 0) return false;  // data after padding
    int v = base64_value(c);
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return pad <= 2 && bits < 6;
}

void base64_encode(std::string_view in, std::string& out) {
  std::size_t i = 0;
  auto byte = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(in[k])); };
  for (; i + 3 <= in.size(); i += 3) {
    std::uint32_t v = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    out += kBase64[v >> 18];
    out += kBase64[(v >> 12) & 63];
    out += kBase64[(v >> 6) & 63];
    out += kBase64[v & 63];
  }
  if (in.size() - i == 1) {
    std::uint32_t v = byte(i) << 16;
    out += kBase64[v >> 18];
    out += kBase64[(v >> 12) & 63];
    out += "==";
  } else if (in.size() - i == 2) {
    std::uint32_t v = byte(i) << 16 | byte(i + 1) << 8;
    out += kBase64[v >> 18];
    out += kBase64[(v >> 12) & 63];
    out += kBase64[(v >> 6) & 63];
    out += '=';
  }
}

void truncate_column(Column& col, std::size_t rows) {
  if (rows >= col.size()) return;
  switch (col.layout()) {
    case PhysicalLayout::kFixed:
      col.values_buffer().resize(rows * static_cast<std::size_t>(fixed_width(col.type().kind())));
      break;
    case PhysicalLayout::kVarLen:
      col.arena().resize(col.offsets()[rows]);
      col.values_buffer().resize((rows + 1) * sizeof(std::uint32_t));
      break;
    case PhysicalLayout::kList:
    case PhysicalLayout::kMap: {
      std::uint32_t end = col.offsets()[rows];
      for (auto& child : col.children()) truncate_column(child, end);
      col.values_buffer().resize((rows + 1) * sizeof(std::uint32_t));
      break;
    }
    case PhysicalLayout::kStruct:
      for (auto& child : col.children()) truncate_column(child, rows);
      break;
    case PhysicalLayout::kNull: break;
  }
  col.set_size(rows);
}

void finish_nested_value(Column& col) {
  std::size_t row = col.size();
  col.grow_validity(row + 1);
  if (col.layout() == PhysicalLayout::kList || col.layout() == PhysicalLayout::kMap) {
    auto end = static_cast<std::uint32_t>(col.child(0).size());
    col.values_buffer().append(&end, sizeof end);
  }
  col.set_valid(row, true);
  col.set_size(row + 1);
}

}  // namespace clink::sql
