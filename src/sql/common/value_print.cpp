// The print form of a cell: what Flink's print connector (and collect()) shows, the
// toString of the value's Java conversion class (Row.toString for the row). Booleans are
// `true`, TIMESTAMP a LocalDateTime (`2024-01-01T10:00`), TIMESTAMP_LTZ an Instant in UTC
// (`2024-01-01T10:00:00Z`), TIME a LocalTime, DECIMAL BigDecimal.toString, BYTES a Java
// byte[] (`[1, -2]`), intervals Period / Duration, ARRAY `[..]`, ROW `+I[..]`, and MAP a
// java.util.HashMap `{k=v}` whose entries come in the HashMap's bucket order.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "clink/sql/common/decimal.hpp"
#include "clink/sql/common/temporal.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "clink/sql/common/value_format.hpp"
#include "utf8_decode.hpp"

namespace clink::sql {

namespace {

void append_2(int v, std::string& out) {
  out += static_cast<char>('0' + v / 10);
  out += static_cast<char>('0' + v % 10);
}

// LocalDate.toString: yyyy-MM-dd; years past 9999 get a '+', negative years 4+ digits.
void append_local_date(std::int64_t days, std::string& out) {
  CivilDate d = civil_from_days(days);
  char buf[32];
  if (d.year > 9999) std::snprintf(buf, sizeof buf, "+%lld", static_cast<long long>(d.year));
  else if (d.year < 0) std::snprintf(buf, sizeof buf, "-%04lld", static_cast<long long>(-d.year));
  else std::snprintf(buf, sizeof buf, "%04lld", static_cast<long long>(d.year));
  out += buf;
  out += '-';
  append_2(d.month, out);
  out += '-';
  append_2(d.day, out);
}

// The fraction of a second as LocalTime / Instant print it: nothing for 0, else 3, 6 or
// 9 digits, whichever first holds the value exactly.
void append_fraction(std::int64_t nanos, std::string& out) {
  if (nanos == 0) return;
  char buf[24];  // room for any int64 (gcc checks the format's full range at -O0)
  if (nanos % 1000000 == 0) std::snprintf(buf, sizeof buf, ".%03lld", static_cast<long long>(nanos / 1000000));
  else if (nanos % 1000 == 0) std::snprintf(buf, sizeof buf, ".%06lld", static_cast<long long>(nanos / 1000));
  else std::snprintf(buf, sizeof buf, ".%09lld", static_cast<long long>(nanos));
  out += buf;
}

// LocalTime.toString: HH:mm, then :ss when seconds or the fraction are non-zero.
void append_local_time(std::int64_t micros_of_day, std::string& out) {
  std::int64_t secs = micros_of_day / kMicrosPerSecond;
  std::int64_t nanos = (micros_of_day % kMicrosPerSecond) * 1000;
  append_2(static_cast<int>(secs / 3600), out);
  out += ':';
  append_2(static_cast<int>(secs / 60 % 60), out);
  if (secs % 60 != 0 || nanos != 0) {
    out += ':';
    append_2(static_cast<int>(secs % 60), out);
    append_fraction(nanos, out);
  }
}

// Instant.toString: the UTC date-time, always with seconds, then 'Z'.
void append_instant(std::int64_t micros, std::string& out) {
  std::int64_t days = floor_div(micros, kMicrosPerDay);
  std::int64_t in_day = floor_mod(micros, kMicrosPerDay);
  append_local_date(days, out);
  out += 'T';
  std::int64_t secs = in_day / kMicrosPerSecond;
  append_2(static_cast<int>(secs / 3600), out);
  out += ':';
  append_2(static_cast<int>(secs / 60 % 60), out);
  out += ':';
  append_2(static_cast<int>(secs % 60), out);
  append_fraction((in_day % kMicrosPerSecond) * 1000, out);
  out += 'Z';
}

// BigDecimal.toString: plain unless the adjusted exponent is below -6 (then d.dddE-n).
void append_big_decimal(Int128 unscaled, int scale, std::string& out) {
  std::string plain;
  Decimal128::append_string(unscaled, 0, plain);
  bool negative = !plain.empty() && plain[0] == '-';
  std::string digits = negative ? plain.substr(1) : plain;
  auto adjusted = static_cast<std::int64_t>(digits.size()) - 1 - scale;
  if (adjusted >= -6) {
    Decimal128::append_string(unscaled, scale, out);
    return;
  }
  if (negative) out += '-';
  out += digits[0];
  if (digits.size() > 1) {
    out += '.';
    out.append(digits, 1, std::string::npos);
  }
  out += 'E';
  out += std::to_string(adjusted);
}

// Period.toString of Period.ofMonths(months), Flink's YEAR TO MONTH conversion: the
// months are not split into years (P14M, not P1Y2M).
void append_period(std::int32_t months, std::string& out) {
  if (months == 0) {
    out += "P0D";
    return;
  }
  out += 'P';
  out += std::to_string(months);
  out += 'M';
}

// Duration.ofMillis(ms).toString: PT[nH][nM][s[.fff]S].
void append_duration(std::int64_t ms, std::string& out) {
  std::int64_t seconds = floor_div(ms, 1000);
  std::int64_t nanos = floor_mod(ms, 1000) * 1000000;
  if (seconds == 0 && nanos == 0) {
    out += "PT0S";
    return;
  }
  std::int64_t effective = seconds < 0 && nanos > 0 ? seconds + 1 : seconds;
  std::int64_t hours = effective / 3600;
  auto minutes = static_cast<int>((effective % 3600) / 60);
  auto secs = static_cast<int>(effective % 60);
  std::size_t start = out.size();
  out += "PT";
  if (hours != 0) out += std::to_string(hours) + "H";
  if (minutes != 0) out += std::to_string(minutes) + "M";
  if (secs == 0 && nanos == 0 && out.size() > start + 2) return;
  if (seconds < 0 && nanos > 0) out += secs == 0 ? "-0" : std::to_string(secs);
  else out += std::to_string(secs);
  if (nanos > 0) {
    std::string frac = std::to_string(seconds < 0 ? 2000000000 - nanos : nanos + 1000000000);
    while (frac.back() == '0') frac.pop_back();
    frac[0] = '.';
    out += frac;
  }
  out += 'S';
}

std::int32_t hash_long(std::int64_t v) {
  auto u = static_cast<std::uint64_t>(v);
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(u ^ (u >> 32)));
}

// The Java hashCode of a map key's external value; nullopt for types whose hash is not
// reproduced (nested values, byte[] identity hashes): such maps keep their entry order.
std::optional<std::int32_t> java_hash(const Column& c, std::size_t i) {
  if (c.is_null(i)) return 0;
  switch (c.type().kind()) {
    case TypeKind::kBoolean: return c.values<std::uint8_t>()[i] ? 1231 : 1237;
    case TypeKind::kTinyInt: return c.values<std::int8_t>()[i];
    case TypeKind::kSmallInt: return c.values<std::int16_t>()[i];
    case TypeKind::kInt: return c.values<std::int32_t>()[i];
    case TypeKind::kBigInt: return hash_long(c.values<std::int64_t>()[i]);
    case TypeKind::kFloat: {
      float f = c.values<float>()[i];
      std::uint32_t bits;
      if (f != f) bits = 0x7fc00000;
      else std::memcpy(&bits, &f, 4);
      return static_cast<std::int32_t>(bits);
    }
    case TypeKind::kDouble: {
      double d = c.values<double>()[i];
      std::int64_t bits;
      if (d != d) bits = 0x7ff8000000000000LL;
      else std::memcpy(&bits, &d, 8);
      return hash_long(bits);
    }
    case TypeKind::kChar:
    case TypeKind::kVarChar: {  // String.hashCode over UTF-16 units
      std::string_view s = c.string_at(i);
      std::uint32_t h = 0;
      for (std::size_t k = 0; k < s.size();) {
        std::uint32_t cp = utf8_decode(s, k);
        if (cp >= 0x10000) {
          h = 31 * h + (0xD800 + ((cp - 0x10000) >> 10));
          h = 31 * h + (0xDC00 + ((cp - 0x10000) & 0x3FF));
        } else {
          h = 31 * h + cp;
        }
      }
      return static_cast<std::int32_t>(h);
    }
    case TypeKind::kDecimal: {  // 31 * BigInteger.hashCode() + scale
      Int128 v = c.values<Int128>()[i];
      int signum = v < 0 ? -1 : (v > 0 ? 1 : 0);
      Int128 mag = v < 0 ? -v : v;  // |DECIMAL(38)| < 2^127: no overflow
      std::uint32_t words[4];
      int n = 0;
      for (int k = 3; k >= 0; --k) words[3 - k] = static_cast<std::uint32_t>((mag >> (32 * k)) & 0xFFFFFFFF);
      std::uint32_t h = 0;
      for (int k = 0; k < 4; ++k) {
        if (n == 0 && words[k] == 0) continue;
        ++n;
        h = 31 * h + words[k];
      }
      return static_cast<std::int32_t>(31 * static_cast<std::uint32_t>(static_cast<std::int32_t>(h) * signum) +
                                       static_cast<std::uint32_t>(c.type().scale()));
    }
    case TypeKind::kDate: {
      CivilDate d = civil_from_days(c.values<std::int32_t>()[i]);
      auto y = static_cast<std::int32_t>(d.year);
      return static_cast<std::int32_t>((static_cast<std::uint32_t>(y) & 0xFFFFF800u) ^
                                       ((static_cast<std::uint32_t>(y) << 11) + (static_cast<std::uint32_t>(d.month) << 6) +
                                        static_cast<std::uint32_t>(d.day)));
    }
    default: return std::nullopt;
  }
}

void append_java_value(const Column& col, std::size_t i, const TimeZone& zone, std::string& out);

void append_element(const Column& c, std::size_t k, const TimeZone& zone, std::string& out) {
  if (c.is_null(k)) out += "null";
  else append_java_value(c, k, zone, out);
}

// HashMap.toString after the print converter's `new HashMap<>()` + put of every entry:
// one entry per distinct key (first position, last value), ordered by bucket (hash ^
// hash >>> 16, masked by the table size the entry count grows it to), then by insertion.
void append_hash_map(const Column& col, std::size_t i, const TimeZone& zone, std::string& out) {
  const Column& keys = col.child(0);
  const Column& values = col.child(1);
  auto [b, e] = col.list_range(i);
  struct Entry {
    std::uint32_t bucket_hash, key, value;
  };
  std::vector<Entry> entries;
  bool hashable = true;
  for (auto k = b; k < e; ++k) {
    bool dup = false;
    for (auto& en : entries) {
      bool same = keys.is_null(en.key) || keys.is_null(k) ? keys.is_null(en.key) == keys.is_null(k)
                                                          : keys.value_at(en.key) == keys.value_at(k);
      if (same) {
        en.value = k;
        dup = true;
        break;
      }
    }
    if (dup) continue;
    auto h = java_hash(keys, k);
    hashable = hashable && h.has_value();
    auto u = static_cast<std::uint32_t>(h.value_or(0));
    entries.push_back({u ^ (u >> 16), k, k});
  }
  if (hashable) {
    std::uint32_t capacity = 16;
    while (entries.size() > capacity * 3 / 4) capacity *= 2;
    std::stable_sort(entries.begin(), entries.end(), [&](const Entry& x, const Entry& y) {
      return (x.bucket_hash & (capacity - 1)) < (y.bucket_hash & (capacity - 1));
    });
  }
  out += '{';
  for (std::size_t k = 0; k < entries.size(); ++k) {
    if (k != 0) out += ", ";
    append_element(keys, entries[k].key, zone, out);
    out += '=';
    append_element(values, entries[k].value, zone, out);
  }
  out += '}';
}

void append_java_value(const Column& col, std::size_t i, const TimeZone& zone, std::string& out) {
  const LogicalType& t = col.type();
  switch (t.kind()) {
    case TypeKind::kBoolean: out += col.values<std::uint8_t>()[i] ? "true" : "false"; return;
    case TypeKind::kDecimal: append_big_decimal(col.values<Int128>()[i], t.scale(), out); return;
    case TypeKind::kBinary:
    case TypeKind::kVarBinary: {
      out += '[';
      std::string_view s = col.string_at(i);
      for (std::size_t k = 0; k < s.size(); ++k) {
        if (k != 0) out += ", ";
        out += std::to_string(static_cast<int>(static_cast<signed char>(s[k])));
      }
      out += ']';
      return;
    }
    case TypeKind::kDate: append_local_date(col.values<std::int32_t>()[i], out); return;
    case TypeKind::kTime: append_local_time(std::int64_t{col.values<std::int32_t>()[i]} * kMicrosPerMilli, out); return;
    case TypeKind::kTimestamp: {
      std::int64_t micros = col.values<std::int64_t>()[i];
      append_local_date(floor_div(micros, kMicrosPerDay), out);
      out += 'T';
      append_local_time(floor_mod(micros, kMicrosPerDay), out);
      return;
    }
    case TypeKind::kTimestampLtz: append_instant(col.values<std::int64_t>()[i], out); return;
    case TypeKind::kIntervalYearMonth: append_period(col.values<std::int32_t>()[i], out); return;
    case TypeKind::kIntervalDayTime: append_duration(col.values<std::int64_t>()[i], out); return;
    case TypeKind::kArray: {
      out += '[';
      auto [b, e] = col.list_range(i);
      for (auto k = b; k < e; ++k) {
        if (k != b) out += ", ";
        append_element(col.child(0), k, zone, out);
      }
      out += ']';
      return;
    }
    case TypeKind::kMap: append_hash_map(col, i, zone, out); return;
    case TypeKind::kRow: {
      out += "+I[";  // a nested Row's kind is always INSERT
      for (std::size_t f = 0; f < col.num_children(); ++f) {
        if (f != 0) out += ", ";
        append_element(col.child(f), i, zone, out);
      }
      out += ']';
      return;
    }
    default: append_cell_string(col, i, zone, /*printing=*/true, out);
  }
}

}  // namespace

void append_print_cell(const Column& col, std::size_t i, const TimeZone& zone, std::string& out) {
  append_java_value(col, i, zone, out);
}

}  // namespace clink::sql
