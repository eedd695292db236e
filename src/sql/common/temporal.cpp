#include "clink/sql/common/temporal.hpp"

#include <cctype>

namespace clink::sql {

std::int64_t days_from_civil(std::int64_t y, int m, int d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

CivilDate civil_from_days(std::int64_t z) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const std::int64_t doe = z - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t y = yoe + era * 400;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return {y + (m <= 2), m, d};
}

int days_in_month(std::int64_t y, int m) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

bool is_valid_civil(std::int64_t y, int m, int d) { return m >= 1 && m <= 12 && d >= 1 && d <= days_in_month(y, m); }

int iso_day_of_week(std::int64_t days) {
  // 1970-01-01 was a Thursday (4).
  return static_cast<int>(floor_mod(days + 3, 7)) + 1;
}

namespace {

void append_padded(std::int64_t v, int width, std::string& out) {
  if (v < 0) {
    out += '-';
    v = -v;
  }
  char buf[24];
  int n = 0;
  do {
    buf[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  for (int i = n; i < width; ++i) out += '0';
  while (n > 0) out += buf[--n];
}

void append_fraction(std::int64_t micros_of_second, int precision, std::string& out) {
  if (precision <= 0) return;
  out += '.';
  char digits[9];
  std::int64_t v = micros_of_second;
  for (int i = 5; i >= 0; --i) {
    digits[i] = static_cast<char>('0' + v % 10);
    v /= 10;
  }
  for (int i = 6; i < 9; ++i) digits[i] = '0';
  out.append(digits, static_cast<std::size_t>(precision));
}

// A cursor over the text with small helpers for fixed-form parsing.
struct Cursor {
  std::string_view s;
  std::size_t i = 0;
  bool at_end() const { return i >= s.size(); }
  bool eat(char c) {
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  // 1..max_digits digits.
  std::optional<std::int64_t> number(int max_digits) {
    std::int64_t v = 0;
    int n = 0;
    while (i < s.size() && n < max_digits && s[i] >= '0' && s[i] <= '9') {
      v = v * 10 + (s[i++] - '0');
      ++n;
    }
    if (n == 0) return std::nullopt;
    return v;
  }
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<std::int64_t> parse_date_part(Cursor& c) {
  bool neg = c.eat('-');
  auto y = c.number(9);
  if (!y || !c.eat('-')) return std::nullopt;
  auto m = c.number(2);
  if (!m || !c.eat('-')) return std::nullopt;
  auto d = c.number(2);
  if (!d) return std::nullopt;
  std::int64_t year = neg ? -*y : *y;
  if (!is_valid_civil(year, static_cast<int>(*m), static_cast<int>(*d))) return std::nullopt;
  return days_from_civil(year, static_cast<int>(*m), static_cast<int>(*d));
}

// Micros of the day.
std::optional<std::int64_t> parse_time_part(Cursor& c) {
  auto h = c.number(2);
  if (!h || !c.eat(':')) return std::nullopt;
  auto mi = c.number(2);
  if (!mi) return std::nullopt;
  std::int64_t sec = 0, frac = 0;
  if (c.eat(':')) {
    auto s = c.number(2);
    if (!s) return std::nullopt;
    sec = *s;
    if (c.eat('.')) {
      int n = 0;
      while (!c.at_end() && c.s[c.i] >= '0' && c.s[c.i] <= '9') {
        if (n < 6) frac = frac * 10 + (c.s[c.i] - '0');
        ++n;
        ++c.i;
      }
      if (n == 0 || n > 9) return std::nullopt;
      for (int k = std::min(n, 6); k < 6; ++k) frac *= 10;
    }
  }
  if (*h > 23 || *mi > 59 || sec > 59) return std::nullopt;
  return ((*h * 60 + *mi) * 60 + sec) * kMicrosPerSecond + frac;
}

}  // namespace

void append_date(std::int32_t days, std::string& out) {
  CivilDate c = civil_from_days(days);
  append_padded(c.year, 4, out);
  out += '-';
  append_padded(c.month, 2, out);
  out += '-';
  append_padded(c.day, 2, out);
}

void append_time(std::int32_t millis, int precision, std::string& out) {
  std::int64_t ms = floor_mod(millis, kMillisPerDay);
  append_padded(ms / 3600000, 2, out);
  out += ':';
  append_padded(ms / 60000 % 60, 2, out);
  out += ':';
  append_padded(ms / 1000 % 60, 2, out);
  append_fraction(ms % 1000 * 1000, precision, out);
}

void append_timestamp(std::int64_t micros, int precision, std::string& out) {
  std::int64_t days = floor_div(micros, kMicrosPerDay);
  std::int64_t of_day = micros - days * kMicrosPerDay;
  append_date(static_cast<std::int32_t>(days), out);
  out += ' ';
  std::int64_t secs = of_day / kMicrosPerSecond;
  append_padded(secs / 3600, 2, out);
  out += ':';
  append_padded(secs / 60 % 60, 2, out);
  out += ':';
  append_padded(secs % 60, 2, out);
  append_fraction(of_day % kMicrosPerSecond, precision, out);
}

std::string format_date(std::int32_t days) {
  std::string s;
  append_date(days, s);
  return s;
}
std::string format_time(std::int32_t millis, int precision) {
  std::string s;
  append_time(millis, precision, s);
  return s;
}
std::string format_timestamp(std::int64_t micros, int precision) {
  std::string s;
  append_timestamp(micros, precision, s);
  return s;
}

std::optional<std::int32_t> parse_date(std::string_view text) {
  Cursor c{trim(text)};
  auto d = parse_date_part(c);
  if (!d || !c.at_end()) return std::nullopt;
  return static_cast<std::int32_t>(*d);
}

std::optional<std::int32_t> parse_time(std::string_view text) {
  Cursor c{trim(text)};
  auto t = parse_time_part(c);
  if (!t || !c.at_end()) return std::nullopt;
  return static_cast<std::int32_t>(*t / kMicrosPerMilli);
}

std::optional<ParsedInstant> parse_timestamp_with_offset(std::string_view text) {
  Cursor c{trim(text)};
  auto d = parse_date_part(c);
  if (!d) return std::nullopt;
  std::int64_t micros = *d * kMicrosPerDay;
  if (c.at_end()) return ParsedInstant{micros, false};
  if (!c.eat(' ') && !c.eat('T')) return std::nullopt;
  auto t = parse_time_part(c);
  if (!t) return std::nullopt;
  micros += *t;
  if (c.at_end()) return ParsedInstant{micros, false};
  if (c.eat('Z')) return c.at_end() ? std::optional<ParsedInstant>(ParsedInstant{micros, true}) : std::nullopt;
  bool neg = c.s[c.i] == '-';
  if (!c.eat('+') && !c.eat('-')) return std::nullopt;
  auto oh = c.number(2);
  if (!oh) return std::nullopt;
  std::int64_t om = 0;
  if (c.eat(':') || (!c.at_end())) {
    auto m = c.number(2);
    if (!m) return std::nullopt;
    om = *m;
  }
  if (!c.at_end() || *oh > 18 || om > 59) return std::nullopt;
  std::int64_t offset = (*oh * 60 + om) * 60 * kMicrosPerSecond;
  return ParsedInstant{neg ? micros + offset : micros - offset, true};
}

std::optional<std::int64_t> parse_timestamp(std::string_view text) {
  auto p = parse_timestamp_with_offset(text);
  if (!p || p->has_offset) return std::nullopt;
  return p->micros;
}

}  // namespace clink::sql
