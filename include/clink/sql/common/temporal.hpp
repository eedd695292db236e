#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace clink::sql {

// Runtime representation of temporal values (see types.hpp):
//   DATE          int32 days since 1970-01-01 (proleptic Gregorian, no zone)
//   TIME(p)       int32 milliseconds of the day (Flink's runtime holds TIME as ms)
//   TIMESTAMP(p)  int64 microseconds since 1970-01-01 00:00:00 of the wall clock
//   TIMESTAMP_LTZ int64 microseconds since the epoch (an instant), shown in the session zone
// Microseconds keep TIMESTAMP(0..6) exact over +-292 thousand years; digits 7..9 of
// TIMESTAMP(7..9) are truncated when parsed (documented deviation from Flink's nanos).
inline constexpr std::int64_t kMicrosPerMilli = 1000;
inline constexpr std::int64_t kMicrosPerSecond = 1000000;
inline constexpr std::int64_t kMicrosPerDay = 86400LL * kMicrosPerSecond;
inline constexpr std::int64_t kMillisPerDay = 86400000;

struct CivilDate {
  std::int64_t year;
  int month;  // 1..12
  int day;    // 1..31
  friend bool operator==(const CivilDate&, const CivilDate&) = default;
};

// Howard Hinnant's civil calendar algorithms (exact for the whole int range).
std::int64_t days_from_civil(std::int64_t year, int month, int day);
CivilDate civil_from_days(std::int64_t days);
bool is_valid_civil(std::int64_t year, int month, int day);
int days_in_month(std::int64_t year, int month);
// 1 = Monday .. 7 = Sunday (ISO).
int iso_day_of_week(std::int64_t days);

// Floor division helpers: temporal values before 1970 are negative.
inline std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline std::int64_t floor_mod(std::int64_t a, std::int64_t b) { return a - floor_div(a, b) * b; }

// Flink's CAST(... AS STRING) forms.
void append_date(std::int32_t days, std::string& out);                       // 2020-04-15
void append_time(std::int32_t millis, int precision, std::string& out);     // 08:05:00[.fff]
void append_timestamp(std::int64_t micros, int precision, std::string& out);  // 2020-04-15 08:05:00[.fff]
std::string format_date(std::int32_t days);
std::string format_time(std::int32_t millis, int precision);
std::string format_timestamp(std::int64_t micros, int precision);

// Parsing (surrounding whitespace allowed; nullopt when the text is not a valid value):
//   DATE       yyyy-[M]M-[d]d
//   TIME       [H]H:[m]m[:[s]s[.f...]]
//   TIMESTAMP  date, or date then ' ' or 'T' then time (fraction up to 9 digits)
// parse_timestamp_with_offset also accepts a trailing 'Z' or +hh[:mm] / -hh[:mm] and
// returns the UTC instant and whether an offset was present.
std::optional<std::int32_t> parse_date(std::string_view text);
std::optional<std::int32_t> parse_time(std::string_view text);
std::optional<std::int64_t> parse_timestamp(std::string_view text);
struct ParsedInstant {
  std::int64_t micros;  // wall clock micros, already shifted to UTC when has_offset
  bool has_offset;
};
std::optional<ParsedInstant> parse_timestamp_with_offset(std::string_view text);

}  // namespace clink::sql
