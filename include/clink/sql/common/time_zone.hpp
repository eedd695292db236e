#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace clink::sql {

// A time zone for TIMESTAMP_LTZ and `table.local-time-zone`. gcc 12's libstdc++ has no
// std::chrono::tzdb, so IANA zones are read from the system database
// (/usr/share/zoneinfo, TZif v2+: 64-bit transitions plus the POSIX TZ footer rule for
// instants after the last transition). Fixed offsets ("+08:00", "GMT+8", "UTC-03:30")
// and "UTC"/"Z"/"GMT" need no file.
class TimeZone {
 public:
  // Looks a zone up (cached, thread-safe); throws ClinkError naming an unknown zone.
  static std::shared_ptr<const TimeZone> of(std::string_view id);
  static std::shared_ptr<const TimeZone> utc();
  // Reads a zone from TZif bytes (exposed for tests).
  static std::shared_ptr<const TimeZone> from_tzif(std::string id, std::string_view bytes);

  const std::string& id() const { return id_; }
  // Offset from UTC, in seconds, in effect at a UTC instant.
  std::int64_t offset_at_utc(std::int64_t utc_seconds) const;
  // Wall-clock seconds -> UTC seconds, as java.time's ZonedDateTime.ofLocal: in an
  // overlap the earlier offset (the earlier instant), in a gap the offset before the
  // gap (the wall time moves forward by the gap's length).
  std::int64_t local_to_utc(std::int64_t local_seconds) const;
  std::int64_t utc_to_local(std::int64_t utc_seconds) const { return utc_seconds + offset_at_utc(utc_seconds); }

  // The same for microsecond values (TIMESTAMP_LTZ <-> TIMESTAMP).
  std::int64_t utc_micros_to_local(std::int64_t micros) const;
  std::int64_t local_micros_to_utc(std::int64_t micros) const;

  // A POSIX TZ rule ("CET-1CEST,M3.5.0,M10.5.0/3"), as in a TZif footer.
  struct PosixRule {
    bool valid = false;
    std::int64_t std_offset = 0;  // seconds east of UTC
    std::int64_t dst_offset = 0;
    bool has_dst = false;
    struct Transition {
      char kind = 'M';  // 'M' month.week.day, 'J' Julian 1..365 without Feb 29, 'N' 0..365
      int month = 0, week = 0, weekday = 0, day = 0;
      std::int64_t time = 7200;  // seconds after local midnight
    } start, end;
  };

 private:
  TimeZone() = default;
  std::int64_t rule_offset_at_utc(std::int64_t utc_seconds) const;

  std::string id_;
  std::vector<std::int64_t> transitions_;  // UTC seconds, ascending
  std::vector<std::int32_t> offsets_;      // offset after transitions_[i]
  std::int32_t initial_offset_ = 0;        // before the first transition
  PosixRule rule_;
};
using TimeZonePtr = std::shared_ptr<const TimeZone>;

}  // namespace clink::sql
