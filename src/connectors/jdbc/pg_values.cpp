// Column cells <-> PostgreSQL text (include/clink/connectors/jdbc/pg_values.hpp).
// Scalars are written straight into the caller's buffer (no allocation per cell); nested
// values (arrays, composites, hstore) build their elements' text first, to quote them.
#include "clink/connectors/jdbc/pg_values.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>

#include <fmt/format.h>

#include "clink/sql/common/decimal.hpp"
#include "clink/sql/common/temporal.hpp"

namespace clink::sql {

namespace {

template <class T>
void append_int(T v, std::string& out) {
  char buf[48];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

template <class T>
void append_float(T v, std::string& out) {
  if (std::isnan(v)) out += "NaN";
  else if (std::isinf(v)) out += v > 0 ? "Infinity" : "-Infinity";
  else {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip digits
    out.append(buf, r.ptr);
  }
}

void append_padded(std::int64_t v, int width, std::string& out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  for (auto n = r.ptr - buf; n < width; ++n) out += '0';
  out.append(buf, r.ptr);
}

// yyyy-mm-dd; years before 1 as PostgreSQL's BC years (year 0 is 1 BC). Returns whether BC.
bool append_pg_date_part(std::int64_t days, std::string& out) {
  CivilDate d = civil_from_days(days);
  bool bc = d.year <= 0;
  append_padded(bc ? 1 - d.year : d.year, 4, out);
  out += '-';
  append_padded(d.month, 2, out);
  out += '-';
  append_padded(d.day, 2, out);
  return bc;
}

// hh:mm:ss[.ffffff] of `micros` into a day, trailing zero digits dropped.
void append_pg_time_of_day(std::int64_t micros, std::string& out) {
  std::int64_t secs = micros / kMicrosPerSecond;
  append_padded(secs / 3600, 2, out);
  out += ':';
  append_padded(secs / 60 % 60, 2, out);
  out += ':';
  append_padded(secs % 60, 2, out);
  std::int64_t frac = micros % kMicrosPerSecond;
  if (frac != 0) {
    int digits = 6;
    while (frac % 10 == 0) {
      frac /= 10;
      --digits;
    }
    out += '.';
    append_padded(frac, digits, out);
  }
}

void append_pg_timestamp(std::int64_t micros, bool with_zone, std::string& out) {
  std::int64_t days = floor_div(micros, kMicrosPerDay);
  bool bc = append_pg_date_part(days, out);
  out += ' ';
  append_pg_time_of_day(micros - days * kMicrosPerDay, out);
  if (with_zone) out += "+00";
  if (bc) out += " BC";
}

// ISO 8601 durations, each field signed as PostgreSQL writes them (P-1DT-2H).
void append_interval_day_time_iso(std::int64_t millis, std::string& out) {
  if (millis == 0) {
    out += "PT0S";
    return;
  }
  bool neg = millis < 0;
  std::uint64_t m = neg ? 0 - static_cast<std::uint64_t>(millis) : static_cast<std::uint64_t>(millis);
  std::uint64_t days = m / 86400000, rest = m % 86400000;
  std::uint64_t h = rest / 3600000, min = rest / 60000 % 60, s = rest / 1000 % 60, ms = rest % 1000;
  const char* sign = neg ? "-" : "";
  out += 'P';
  if (days) fmt::format_to(std::back_inserter(out), "{}{}D", sign, days);
  if (h || min || s || ms) out += 'T';
  if (h) fmt::format_to(std::back_inserter(out), "{}{}H", sign, h);
  if (min) fmt::format_to(std::back_inserter(out), "{}{}M", sign, min);
  if (ms) fmt::format_to(std::back_inserter(out), "{}{}.{:03}S", sign, s, ms);
  else if (s) fmt::format_to(std::back_inserter(out), "{}{}S", sign, s);
}

void append_interval_year_month_iso(std::int32_t months, std::string& out) {
  if (months == 0) {
    out += "P0M";
    return;
  }
  bool neg = months < 0;
  std::int64_t m = months < 0 ? -static_cast<std::int64_t>(months) : months;
  const char* sign = neg ? "-" : "";
  out += 'P';
  if (m / 12) fmt::format_to(std::back_inserter(out), "{}{}Y", sign, m / 12);
  if (m % 12) fmt::format_to(std::back_inserter(out), "{}{}M", sign, m % 12);
}

// "text" with backslash and double quote escaped: an element of an array, composite or hstore.
void append_quoted_element(std::string_view text, std::string& out) {
  out += '"';
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

void append_element(const Column& col, std::size_t row, std::string& out) {
  if (col.is_null(row)) {
    out += "NULL";
  } else if (col.type().is(TypeKind::kArray)) {
    append_pg_text(col, row, out);  // a sub-array: PostgreSQL's nested braces, unquoted
  } else {
    std::string text;
    append_pg_text(col, row, text);
    append_quoted_element(text, out);
  }
}

const char kHex[] = "0123456789abcdef";

}  // namespace

void append_pg_text(const Column& col, std::size_t row, std::string& out) {
  const LogicalType& t = col.type();
  switch (t.kind()) {
    case TypeKind::kNull: out += "NULL"; return;
    case TypeKind::kBoolean: out += col.values<std::uint8_t>()[row] ? "true" : "false"; return;
    case TypeKind::kTinyInt: append_int(static_cast<int>(col.values<std::int8_t>()[row]), out); return;
    case TypeKind::kSmallInt: append_int(col.values<std::int16_t>()[row], out); return;
    case TypeKind::kInt: append_int(col.values<std::int32_t>()[row], out); return;
    case TypeKind::kBigInt: append_int(col.values<std::int64_t>()[row], out); return;
    case TypeKind::kFloat: append_float(col.values<float>()[row], out); return;
    case TypeKind::kDouble: append_float(col.values<double>()[row], out); return;
    case TypeKind::kDecimal: Decimal128::append_string(col.values<Int128>()[row], t.scale(), out); return;
    case TypeKind::kChar:
    case TypeKind::kVarChar: out += col.string_at(row); return;
    case TypeKind::kBinary:
    case TypeKind::kVarBinary: {
      auto bytes = col.string_at(row);
      out += "\\x";
      for (unsigned char b : bytes) {
        out += kHex[b >> 4];
        out += kHex[b & 15];
      }
      return;
    }
    case TypeKind::kDate:
      if (append_pg_date_part(col.values<std::int32_t>()[row], out)) out += " BC";
      return;
    case TypeKind::kTime:
      append_pg_time_of_day(floor_mod(col.values<std::int32_t>()[row], kMillisPerDay) * kMicrosPerMilli, out);
      return;
    case TypeKind::kTimestamp: append_pg_timestamp(col.values<std::int64_t>()[row], false, out); return;
    case TypeKind::kTimestampLtz: append_pg_timestamp(col.values<std::int64_t>()[row], true, out); return;
    case TypeKind::kIntervalDayTime: append_interval_day_time_iso(col.values<std::int64_t>()[row], out); return;
    case TypeKind::kIntervalYearMonth: append_interval_year_month_iso(col.values<std::int32_t>()[row], out); return;
    case TypeKind::kArray: {
      auto [b, e] = col.list_range(row);
      out += '{';
      for (auto i = b; i < e; ++i) {
        if (i != b) out += ',';
        append_element(col.child(0), i, out);
      }
      out += '}';
      return;
    }
    case TypeKind::kMap: {  // hstore
      auto [b, e] = col.list_range(row);
      for (auto i = b; i < e; ++i) {
        if (i != b) out += ", ";
        if (col.child(0).is_null(i)) throw PgValueError("a MAP key is NULL: hstore keys cannot be NULL");
        append_element(col.child(0), i, out);
        out += "=>";
        append_element(col.child(1), i, out);
      }
      return;
    }
    case TypeKind::kRow: {  // a composite: (a,"b c",) with NULL as nothing
      out += '(';
      for (std::size_t f = 0; f < col.num_children(); ++f) {
        if (f) out += ',';
        if (!col.child(f).is_null(row)) {
          std::string text;
          append_pg_text(col.child(f), row, text);
          append_quoted_element(text, out);
        }
      }
      out += ')';
      return;
    }
  }
}

void append_pg_copy_field(const Column& col, std::size_t row, std::string& out) {
  if (col.is_null(row)) {
    out += "\\N";
    return;
  }
  switch (col.type().kind()) {
    case TypeKind::kChar:
    case TypeKind::kVarChar:
    case TypeKind::kArray:
    case TypeKind::kMap:
    case TypeKind::kRow:
      break;  // may hold the characters COPY escapes
    case TypeKind::kBinary:
    case TypeKind::kVarBinary: {
      auto bytes = col.string_at(row);
      out += "\\\\x";  // the text form's backslash, escaped
      for (unsigned char b : bytes) {
        out += kHex[b >> 4];
        out += kHex[b & 15];
      }
      return;
    }
    default: append_pg_text(col, row, out); return;  // digits, signs, dates: nothing to escape
  }
  std::string_view text;
  std::string nested;
  if (col.type().is_character_string()) {
    text = col.string_at(row);
  } else {
    append_pg_text(col, row, nested);
    text = nested;
  }
  for (char c : text) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
}

void append_pg_literal(const Column& col, std::size_t row, std::string& out) {
  if (col.is_null(row)) {
    out += "NULL";
    return;
  }
  if (col.type().is_character_string()) {
    out += '\'';
    for (char c : col.string_at(row)) {
      if (c == '\'') out += '\'';
      out += c;
    }
    out += '\'';
    return;
  }
  auto k = col.type().kind();
  bool plain_number = col.type().is_integer() || k == TypeKind::kDecimal;
  if (plain_number) {
    // Unquoted numbers are typed integer/numeric and assigned to the column; a negative
    // one in parentheses would be needed nowhere: VALUES (-1) is fine.
    append_pg_text(col, row, out);
    return;
  }
  std::size_t start = out.size();
  out += '\'';
  append_pg_text(col, row, out);
  // Only nested values, dates (never) and strings can hold a quote: double it.
  if (col.type().is_nested()) {
    std::string body = out.substr(start + 1);
    out.resize(start + 1);
    for (char c : body) {
      if (c == '\'') out += '\'';
      out += c;
    }
  }
  out += '\'';
}

}  // namespace clink::sql
