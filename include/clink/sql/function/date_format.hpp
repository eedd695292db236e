#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace clink::sql {

// A DATE_FORMAT pattern compiled once: Flink formats through java.time's
// DateTimeFormatter, so these are its letters (on a wall-clock timestamp):
//   G era (AD/BC)   y, u year (yy: two digits)   M, L month (M, MM, MMM = Jan, MMMM = January)
//   d day of month  D day of year   Q, q quarter   E day name (E..EEE = Mon, EEEE = Monday)
//   a AM/PM  H 0-23  k 1-24  K 0-11  h 1-12  m minute  s second
//   S fraction of second (count = digits, truncated)  n nano of second
//   'text' literal, '' a quote; other non-letters are literal.
// Zone and week-based letters (z Z X x O V w W Y e c) are rejected: a wall-clock
// timestamp has no zone, as in Flink where they fail at runtime.
class DateFormatter {
 public:
  // Throws SqlTypeError naming the offending letter and its position.
  explicit DateFormatter(std::string_view pattern);

  // Appends the formatted wall-clock time (microseconds since 1970-01-01 00:00:00).
  void format(std::int64_t local_micros, std::string& out) const;
  std::string format(std::int64_t local_micros) const {
    std::string s;
    format(local_micros, s);
    return s;
  }

 private:
  struct Token {
    char letter;  // 0 for literal text
    int count;
    std::string text;
  };
  std::vector<Token> tokens_;
};

}  // namespace clink::sql
