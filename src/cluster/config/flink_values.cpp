#include "clink/cluster/config/flink_values.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "clink/core/error.hpp"

namespace clink::cluster {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

[[noreturn]] void bad(std::string_view key, std::string_view text, std::string_view why) {
  throw ClinkError(std::string(key) + ": '" + std::string(text) + "' " + std::string(why));
}

// Splits "<digits><rest>" as Flink does: the number is the leading run of digits.
std::pair<std::string_view, std::string_view> number_and_unit(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && s[n] >= '0' && s[n] <= '9') ++n;
  return {s.substr(0, n), trim(s.substr(n))};
}

std::optional<std::int64_t> to_int64(std::string_view digits, int base = 10) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
  if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) return std::nullopt;
  return v;
}

constexpr std::int64_t kNanosPerMs = 1'000'000;

// Nanoseconds per unit label (Flink's TimeUtils.TimeUnit labels).
std::optional<std::int64_t> duration_unit_nanos(const std::string& unit) {
  struct Unit {
    const char* labels[5];
    std::int64_t nanos;
  };
  static const Unit kUnits[] = {
      {{"d", "day", "days"}, 86'400'000'000'000},
      {{"h", "hour", "hours"}, 3'600'000'000'000},
      {{"min", "m", "minute", "minutes"}, 60'000'000'000},
      {{"s", "sec", "secs", "second", "seconds"}, 1'000'000'000},
      {{"ms", "milli", "millis", "millisecond", "milliseconds"}, 1'000'000},
      {{"\xC2\xB5s", "micro", "micros", "microsecond", "microseconds"}, 1'000},
      {{"ns", "nano", "nanos", "nanosecond", "nanoseconds"}, 1},
  };
  for (const auto& u : kUnits)
    for (const char* label : u.labels)
      if (label != nullptr && unit == label) return u.nanos;
  return std::nullopt;
}

// ISO-8601 as java.time.Duration.parse reads it: P[nD][T[nH][nM][n[.f]S]], any case.
std::optional<std::int64_t> iso_duration_nanos(std::string_view text) {
  std::string s = lower(text);
  if (s.size() < 3 || s[0] != 'p') return std::nullopt;
  std::size_t i = 1;
  bool in_time = false, any = false;
  long double total = 0;
  while (i < s.size()) {
    if (s[i] == 't') {
      if (in_time) return std::nullopt;
      in_time = true;
      ++i;
      continue;
    }
    std::size_t start = i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == start || i == s.size()) return std::nullopt;
    long double value = std::stold(s.substr(start, i - start));
    char unit = s[i++];
    bool fraction = s.substr(start, i - start).find('.') != std::string::npos;
    if (!in_time && unit == 'd' && !fraction) total += value * 86'400e9L;
    else if (in_time && unit == 'h' && !fraction) total += value * 3'600e9L;
    else if (in_time && unit == 'm' && !fraction) total += value * 60e9L;
    else if (in_time && unit == 's') total += value * 1e9L;
    else return std::nullopt;
    any = true;
  }
  if (!any || total > static_cast<long double>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
  return static_cast<std::int64_t>(total);
}

}  // namespace

std::chrono::milliseconds parse_duration(std::string_view key, std::string_view text) {
  std::string_view s = trim(text);
  if (s.empty()) bad(key, text, "is not a duration: the value is empty");
  auto [digits, unit] = number_and_unit(s);
  if (digits.empty()) {
    if (auto nanos = iso_duration_nanos(s)) return std::chrono::milliseconds(*nanos / kNanosPerMs);
    bad(key, text, "is not a duration: it does not start with a number and is not ISO-8601 (like '10 s', '1 min', '500 ms')");
  }
  auto value = to_int64(digits);
  if (!value) bad(key, text, "is not a duration: the number does not fit in 64 bits");
  std::int64_t nanos_per_unit = 1'000'000;  // no unit: milliseconds
  if (!unit.empty()) {
    auto per = duration_unit_nanos(lower(unit));
    if (!per)
      bad(key, text,
          "is not a duration: unknown unit '" + std::string(unit) +
              "' (d, h, min|m, s, ms, µs, ns and their long names like 'seconds')");
    nanos_per_unit = *per;
  }
  // Milliseconds without overflowing nanoseconds: whole units first.
  if (nanos_per_unit >= kNanosPerMs) {
    const std::int64_t ms_per_unit = nanos_per_unit / kNanosPerMs;
    if (*value > std::numeric_limits<std::int64_t>::max() / ms_per_unit)
      bad(key, text, "is not a duration: it overflows 64 bits of milliseconds");
    return std::chrono::milliseconds(*value * ms_per_unit);
  }
  return std::chrono::milliseconds(*value / (kNanosPerMs / nanos_per_unit));
}

std::int64_t parse_memory_size(std::string_view key, std::string_view text) {
  std::string_view s = trim(text);
  auto [digits, unit] = number_and_unit(s);
  if (digits.empty()) bad(key, text, "is not a memory size: it does not start with a number (like '64 mb', '1g')");
  auto value = to_int64(digits);
  if (!value) bad(key, text, "is not a memory size: the number does not fit in 64 bits");
  std::int64_t multiplier = 1;
  const std::string u = lower(unit);
  if (u.empty() || u == "b" || u == "bytes") multiplier = 1;
  else if (u == "k" || u == "kb" || u == "kibibytes") multiplier = 1LL << 10;
  else if (u == "m" || u == "mb" || u == "mebibytes") multiplier = 1LL << 20;
  else if (u == "g" || u == "gb" || u == "gibibytes") multiplier = 1LL << 30;
  else if (u == "t" || u == "tb" || u == "tebibytes") multiplier = 1LL << 40;
  else bad(key, text, "is not a memory size: unknown unit '" + std::string(unit) + "' (b, k|kb, m|mb, g|gb, t|tb)");
  if (*value > std::numeric_limits<std::int64_t>::max() / multiplier)
    bad(key, text, "is not a memory size: it overflows 64 bits of bytes");
  return *value * multiplier;
}

bool parse_bool(std::string_view key, std::string_view text) {
  const std::string s = lower(trim(text));
  if (s == "true") return true;
  if (s == "false") return false;
  bad(key, text, "is not a boolean (true or false)");
}

std::int64_t parse_int(std::string_view key, std::string_view text) {
  std::string_view s = trim(text);
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) base = 8;
  if (base != 10) s.remove_prefix(2);
  auto v = to_int64(s, base);
  if (!v) bad(key, text, "is not an integer");
  return negative ? -*v : *v;
}

double parse_double(std::string_view key, std::string_view text) {
  std::string_view s = trim(text);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
    bad(key, text, "is not a number");
  return v;
}

}  // namespace clink::cluster
