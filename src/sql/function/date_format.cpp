#include "clink/sql/function/date_format.hpp"

#include <fmt/format.h>

#include "clink/sql/common/temporal.hpp"
#include "clink/sql/common/types.hpp"

namespace clink::sql {

namespace {

const char* const kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                               "July",    "August",   "September", "October", "November", "December"};
const char* const kDays[] = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};

void pad(std::int64_t v, int width, std::string& out) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  if (v < 0) out += '-';
  for (int i = static_cast<int>(digits.size()); i < width; ++i) out += '0';
  out += digits;
}

bool supported_letter(char c) {
  switch (c) {
    case 'G': case 'y': case 'u': case 'M': case 'L': case 'd': case 'D': case 'Q': case 'q': case 'E':
    case 'a': case 'H': case 'k': case 'K': case 'h': case 'm': case 's': case 'S': case 'n':
      return true;
    default:
      return false;
  }
}

}  // namespace

DateFormatter::DateFormatter(std::string_view p) {
  std::size_t i = 0;
  while (i < p.size()) {
    char c = p[i];
    if (c == '\'') {
      std::string lit;
      ++i;
      if (i < p.size() && p[i] == '\'') {  // '' is a quote
        tokens_.push_back({0, 0, "'"});
        ++i;
        continue;
      }
      for (;;) {
        if (i >= p.size())
          throw SqlTypeError(fmt::format("date format '{}': unterminated quote", p));
        if (p[i] == '\'') {
          if (i + 1 < p.size() && p[i + 1] == '\'') {
            lit += '\'';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        lit += p[i++];
      }
      tokens_.push_back({0, 0, std::move(lit)});
      continue;
    }
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      if (!supported_letter(c))
        throw SqlTypeError(fmt::format("date format '{}': pattern letter '{}' at position {} is not supported", p, c, i + 1));
      std::size_t start = i;
      while (i < p.size() && p[i] == c) ++i;
      tokens_.push_back({c, static_cast<int>(i - start), {}});
      continue;
    }
    if (c == '[' || c == ']' || c == '{' || c == '}' || c == '#')
      throw SqlTypeError(fmt::format("date format '{}': reserved character '{}' at position {}", p, c, i + 1));
    tokens_.push_back({0, 0, std::string(1, c)});
    ++i;
  }
}

void DateFormatter::format(std::int64_t micros, std::string& out) const {
  std::int64_t days = floor_div(micros, kMicrosPerDay);
  std::int64_t of_day = micros - days * kMicrosPerDay;
  CivilDate c = civil_from_days(days);
  std::int64_t secs = of_day / kMicrosPerSecond;
  std::int64_t frac_micros = of_day % kMicrosPerSecond;
  int hour = static_cast<int>(secs / 3600);
  for (const auto& t : tokens_) {
    int n = t.count;
    switch (t.letter) {
      case 0: out += t.text; break;
      case 'G': out += c.year > 0 ? "AD" : "BC"; break;
      case 'y':
      case 'u': {
        std::int64_t y = t.letter == 'y' && c.year <= 0 ? 1 - c.year : c.year;
        if (n == 2) pad(floor_mod(y, 100), 2, out);
        else pad(y, n, out);
        break;
      }
      case 'M':
      case 'L':
        if (n >= 4) out += kMonths[c.month - 1];
        else if (n == 3) out.append(kMonths[c.month - 1], 3);
        else pad(c.month, n, out);
        break;
      case 'd': pad(c.day, n, out); break;
      case 'D': pad(days - days_from_civil(c.year, 1, 1) + 1, n, out); break;
      case 'Q':
      case 'q': {
        int q = (c.month - 1) / 3 + 1;
        if (n >= 4) out += fmt::format("{} quarter", q == 1 ? "1st" : q == 2 ? "2nd" : q == 3 ? "3rd" : "4th");
        else if (n == 3) out += fmt::format("Q{}", q);
        else pad(q, n, out);
        break;
      }
      case 'E': {
        const char* name = kDays[iso_day_of_week(days) - 1];
        if (n >= 4) out += name;
        else out.append(name, 3);
        break;
      }
      case 'a': out += hour < 12 ? "AM" : "PM"; break;
      case 'H': pad(hour, n, out); break;
      case 'k': pad(hour == 0 ? 24 : hour, n, out); break;
      case 'K': pad(hour % 12, n, out); break;
      case 'h': pad(hour % 12 == 0 ? 12 : hour % 12, n, out); break;
      case 'm': pad(secs / 60 % 60, n, out); break;
      case 's': pad(secs % 60, n, out); break;
      case 'S': {
        // Fraction of the second, truncated to n digits (nanosecond resolution).
        std::string digits = fmt::format("{:06}000", frac_micros);
        if (n <= 9) out.append(digits, 0, static_cast<std::size_t>(n));
        else {
          out += digits;
          out.append(static_cast<std::size_t>(n - 9), '0');
        }
        break;
      }
      case 'n': pad(frac_micros * 1000, n, out); break;
      default: break;
    }
  }
}

}  // namespace clink::sql
