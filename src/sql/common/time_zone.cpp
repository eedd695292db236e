#include "clink/sql/common/time_zone.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <fmt/format.h>

#include "clink/core/error.hpp"
#include "clink/sql/common/temporal.hpp"

namespace clink::sql {

namespace {

std::int64_t be(std::string_view b, std::size_t at, int width) {
  std::uint64_t v = 0;
  for (int i = 0; i < width; ++i) v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<std::size_t>(i)]);
  if (width == 4) return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
  return static_cast<std::int64_t>(v);
}

// Parses "[+-]hh[:mm[:ss]]"; returns seconds.
bool parse_hms(std::string_view s, std::size_t& i, std::int64_t& out) {
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  std::int64_t parts[3] = {0, 0, 0};
  for (int k = 0; k < 3; ++k) {
    if (k > 0) {
      if (i >= s.size() || s[i] != ':') break;
      ++i;
    }
    std::size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) parts[k] = parts[k] * 10 + (s[i++] - '0');
    if (i == start) return false;
  }
  out = parts[0] * 3600 + parts[1] * 60 + parts[2];
  if (neg) out = -out;
  return true;
}

bool parse_rule_name(std::string_view s, std::size_t& i) {
  if (i < s.size() && s[i] == '<') {
    while (i < s.size() && s[i] != '>') ++i;
    if (i >= s.size()) return false;
    ++i;
    return true;
  }
  std::size_t start = i;
  while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
  return i - start >= 3;
}

bool parse_transition(std::string_view s, std::size_t& i, TimeZone::PosixRule::Transition& t) {
  if (i < s.size() && s[i] == 'M') {
    ++i;
    int* fields[3] = {&t.month, &t.week, &t.weekday};
    for (int k = 0; k < 3; ++k) {
      if (k > 0) {
        if (i >= s.size() || s[i] != '.') return false;
        ++i;
      }
      std::size_t start = i;
      *fields[k] = 0;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) *fields[k] = *fields[k] * 10 + (s[i++] - '0');
      if (start == i) return false;
    }
    t.kind = 'M';
  } else {
    t.kind = 'N';
    if (i < s.size() && s[i] == 'J') {
      t.kind = 'J';
      ++i;
    }
    std::size_t start = i;
    t.day = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) t.day = t.day * 10 + (s[i++] - '0');
    if (start == i) return false;
  }
  t.time = 7200;
  if (i < s.size() && s[i] == '/') {
    ++i;
    if (!parse_hms(s, i, t.time)) return false;
  }
  return true;
}

TimeZone::PosixRule parse_posix_rule(std::string_view s) {
  TimeZone::PosixRule r;
  std::size_t i = 0;
  std::int64_t off = 0;
  if (!parse_rule_name(s, i) || !parse_hms(s, i, off)) return r;
  r.std_offset = -off;  // POSIX offsets count west of Greenwich
  r.valid = true;
  if (i >= s.size()) return r;
  if (!parse_rule_name(s, i)) return TimeZone::PosixRule{};
  r.has_dst = true;
  r.dst_offset = r.std_offset + 3600;
  if (i < s.size() && s[i] != ',') {
    if (!parse_hms(s, i, off)) return TimeZone::PosixRule{};
    r.dst_offset = -off;
  }
  if (i >= s.size() || s[i] != ',') return TimeZone::PosixRule{};
  ++i;
  if (!parse_transition(s, i, r.start) || i >= s.size() || s[i] != ',') return TimeZone::PosixRule{};
  ++i;
  if (!parse_transition(s, i, r.end)) return TimeZone::PosixRule{};
  return r;
}

// Local-midnight day number of a rule transition in `year`.
std::int64_t transition_day(const TimeZone::PosixRule::Transition& t, std::int64_t year) {
  if (t.kind == 'M') {
    std::int64_t first = days_from_civil(year, t.month, 1);
    int first_dow = iso_day_of_week(first) % 7;  // 0 = Sunday, as POSIX
    std::int64_t day = first + ((t.weekday - first_dow + 7) % 7) + 7 * (t.week - 1);
    std::int64_t month_end = first + days_in_month(year, t.month) - 1;
    while (day > month_end) day -= 7;  // week 5 means "last"
    return day;
  }
  std::int64_t jan1 = days_from_civil(year, 1, 1);
  if (t.kind == 'J') {
    bool leap = days_in_month(year, 2) == 29;
    return jan1 + t.day - 1 + (leap && t.day >= 60 ? 1 : 0);
  }
  return jan1 + t.day;
}

}  // namespace

std::shared_ptr<const TimeZone> TimeZone::from_tzif(std::string id, std::string_view b) {
  auto fail = [&](const char* why) -> std::shared_ptr<const TimeZone> {
    throw ClinkError(fmt::format("time zone '{}': invalid TZif data ({})", id, why));
  };
  if (b.size() < 44 || b.substr(0, 4) != "TZif") return fail("no TZif header");
  auto counts = [&](std::size_t at, std::int64_t c[6]) {
    for (int k = 0; k < 6; ++k) c[k] = be(b, at + 20 + 4 * static_cast<std::size_t>(k), 4);
  };
  std::int64_t c[6];  // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
  counts(0, c);
  std::size_t at = 44;
  int time_width = 4;
  if (b[4] >= '2') {
    std::size_t v1 = static_cast<std::size_t>(c[3] * 4 + c[3] + c[4] * 6 + c[5] + c[2] * 8 + c[1] + c[0]);
    at += v1;
    if (b.size() < at + 44 || b.substr(at, 4) != "TZif") return fail("no second header");
    counts(at, c);
    at += 44;
    time_width = 8;
  }
  auto timecnt = static_cast<std::size_t>(c[3]), typecnt = static_cast<std::size_t>(c[4]);
  std::size_t need = timecnt * static_cast<std::size_t>(time_width) + timecnt + typecnt * 6;
  if (b.size() < at + need || typecnt == 0) return fail("truncated");
  auto z = std::shared_ptr<TimeZone>(new TimeZone());
  z->id_ = std::move(id);
  std::vector<std::int32_t> type_offsets(typecnt);
  std::vector<bool> type_dst(typecnt);
  std::size_t types_at = at + timecnt * static_cast<std::size_t>(time_width) + timecnt;
  for (std::size_t k = 0; k < typecnt; ++k) {
    type_offsets[k] = static_cast<std::int32_t>(be(b, types_at + 6 * k, 4));
    type_dst[k] = b[types_at + 6 * k + 4] != 0;
  }
  for (std::size_t k = 0; k < timecnt; ++k) {
    z->transitions_.push_back(be(b, at + k * static_cast<std::size_t>(time_width), time_width));
    auto idx = static_cast<unsigned char>(b[at + timecnt * static_cast<std::size_t>(time_width) + k]);
    if (idx >= typecnt) return fail("bad type index");
    z->offsets_.push_back(type_offsets[idx]);
  }
  // RFC 8536: before the first transition, the first non-DST type (else type 0).
  z->initial_offset_ = type_offsets[0];
  for (std::size_t k = 0; k < typecnt; ++k)
    if (!type_dst[k]) {
      z->initial_offset_ = type_offsets[k];
      break;
    }
  if (time_width == 8) {
    std::size_t footer = static_cast<std::size_t>(
        at + need + static_cast<std::size_t>(c[5]) + static_cast<std::size_t>(c[2]) * 12 + static_cast<std::size_t>(c[1] + c[0]));
    if (footer < b.size() && b[footer] == '\n') {
      auto end = b.find('\n', footer + 1);
      if (end != std::string_view::npos) z->rule_ = parse_posix_rule(b.substr(footer + 1, end - footer - 1));
    }
  }
  return z;
}

std::int64_t TimeZone::rule_offset_at_utc(std::int64_t t) const {
  if (!rule_.has_dst) return rule_.std_offset;
  std::int64_t year = civil_from_days(floor_div(t + rule_.std_offset, 86400)).year;
  // DST starts at start.time local standard time, ends at end.time local daylight time.
  std::int64_t start = transition_day(rule_.start, year) * 86400 + rule_.start.time - rule_.std_offset;
  std::int64_t end = transition_day(rule_.end, year) * 86400 + rule_.end.time - rule_.dst_offset;
  bool dst = start < end ? (t >= start && t < end) : !(t >= end && t < start);  // southern hemisphere wraps
  return dst ? rule_.dst_offset : rule_.std_offset;
}

std::int64_t TimeZone::offset_at_utc(std::int64_t t) const {
  if (transitions_.empty() || t < transitions_.front()) {
    if (transitions_.empty() && rule_.valid) return rule_offset_at_utc(t);
    return initial_offset_;
  }
  if (t >= transitions_.back() && rule_.valid) {
    return rule_offset_at_utc(t);
  }
  auto it = std::upper_bound(transitions_.begin(), transitions_.end(), t);
  return offsets_[static_cast<std::size_t>(it - transitions_.begin()) - 1];
}

std::int64_t TimeZone::local_to_utc(std::int64_t local) const {
  std::int64_t before = local - offset_at_utc(local - 86400);
  std::int64_t after = local - offset_at_utc(local + 86400);
  bool before_ok = before + offset_at_utc(before) == local;
  bool after_ok = after + offset_at_utc(after) == local;
  if (before_ok && after_ok) return std::min(before, after);
  if (before_ok) return before;
  if (after_ok) return after;
  return before;  // a gap: read with the offset before it (shifted forward)
}

std::int64_t TimeZone::utc_micros_to_local(std::int64_t micros) const {
  return micros + offset_at_utc(floor_div(micros, kMicrosPerSecond)) * kMicrosPerSecond;
}
std::int64_t TimeZone::local_micros_to_utc(std::int64_t micros) const {
  std::int64_t secs = floor_div(micros, kMicrosPerSecond);
  return local_to_utc(secs) * kMicrosPerSecond + (micros - secs * kMicrosPerSecond);
}

std::shared_ptr<const TimeZone> TimeZone::utc() {
  static const auto kUtc = TimeZone::of("UTC");
  return kUtc;
}

std::shared_ptr<const TimeZone> TimeZone::of(std::string_view id_view) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const TimeZone>, std::less<>> cache;
  std::lock_guard lock(mu);
  if (auto it = cache.find(id_view); it != cache.end()) return it->second;
  std::string id(id_view);
  std::shared_ptr<const TimeZone> zone;
  std::string upper = id;
  for (auto& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  std::string_view rest;
  if (upper == "UTC" || upper == "Z" || upper == "GMT" || upper == "UT") {
    rest = "";
  } else if (upper.starts_with("UTC") || upper.starts_with("GMT")) {
    rest = std::string_view(id).substr(3);
  } else if (upper.starts_with("UT")) {
    rest = std::string_view(id).substr(2);
  } else if (!id.empty() && (id[0] == '+' || id[0] == '-')) {
    rest = id;
  } else {
    rest = "<zoneinfo>";
  }
  if (rest != "<zoneinfo>") {
    std::int64_t secs = 0;
    std::size_t i = 0;
    if (!rest.empty() && (!parse_hms(rest, i, secs) || i != rest.size() || std::abs(secs) > 18 * 3600 ||
                          (rest[0] != '+' && rest[0] != '-')))
      throw ClinkError(fmt::format("unknown time zone '{}': expected an IANA name (e.g. 'Europe/Berlin'), "
                                   "'UTC' or an offset like '+08:00'",
                                   id));
    auto z = std::shared_ptr<TimeZone>(new TimeZone());
    z->id_ = id;
    z->rule_.valid = true;
    z->rule_.std_offset = secs;
    z->initial_offset_ = static_cast<std::int32_t>(secs);
    zone = z;
  } else {
    bool safe = !id.empty() && id.find("..") == std::string::npos && id[0] != '/';
    std::ifstream in(safe ? "/usr/share/zoneinfo/" + id : std::string(), std::ios::binary);
    if (!safe || !in)
      throw ClinkError(fmt::format("unknown time zone '{}': not in the system time zone database "
                                   "(/usr/share/zoneinfo); use an IANA name such as 'Asia/Shanghai' or an offset "
                                   "such as '+08:00'",
                                   id));
    std::stringstream buf;
    buf << in.rdbuf();
    zone = from_tzif(id, buf.str());
  }
  cache.emplace(id, zone);
  return zone;
}

}  // namespace clink::sql
