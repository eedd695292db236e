#pragma once
// State time-to-live, as Flink's StateTtlConfig: a value expires `ttl_ms` of processing
// time (the backend's clock) after its last write (or last read or write). Expired
// values are invisible (unless configured otherwise), removed when read, dropped from
// full snapshots and, in RocksDB, by compaction.
//
// Byte format of a TTL state (see keyed_state_backend.hpp): every value and map value
// is `ts(8, little-endian) payload`; every list element is `ts(8) varint(len) payload`.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "clink/state/state_codec.hpp"

namespace clink {

enum class TtlUpdateType {
  kOnCreateAndWrite,  // the timestamp is refreshed by writes
  kOnReadAndWrite,    // ... and by reads
};
enum class TtlStateVisibility {
  kNeverReturnExpired,
  kReturnExpiredIfNotCleanedUp,  // an expired value still stored is returned (once: reading cleans it up)
};

struct StateTtlConfig {
  std::int64_t ttl_ms = 0;  // 0: no TTL
  TtlUpdateType update_type = TtlUpdateType::kOnCreateAndWrite;
  TtlStateVisibility visibility = TtlStateVisibility::kNeverReturnExpired;
  bool enabled() const { return ttl_ms > 0; }
};

inline constexpr std::size_t kTtlTimestampBytes = 8;

// Flink's TtlUtils.isExpired: expired once last_access + ttl <= now (saturating).
inline bool ttl_expired(std::int64_t last_access, std::int64_t ttl_ms, std::int64_t now) {
  std::int64_t expires;
  if (__builtin_add_overflow(last_access, ttl_ms, &expires)) return false;
  return expires <= now;
}

inline void put_ttl_timestamp(std::int64_t ts, std::string& out) {
  char buf[kTtlTimestampBytes];
  auto u = static_cast<std::uint64_t>(ts);
  for (std::size_t i = 0; i < kTtlTimestampBytes; ++i) buf[i] = static_cast<char>(u >> (8 * i));
  out.append(buf, kTtlTimestampBytes);
}
// Reads the timestamp at the front of `in` (consuming it); throws on truncated input.
inline std::int64_t get_ttl_timestamp(std::string_view& in) {
  if (in.size() < kTtlTimestampBytes) throw ClinkError("state: truncated TTL timestamp");
  std::uint64_t u = 0;
  for (std::size_t i = 0; i < kTtlTimestampBytes; ++i)
    u |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  in.remove_prefix(kTtlTimestampBytes);
  return static_cast<std::int64_t>(u);
}
// Overwrites the timestamp at the front of a stored value.
inline void set_ttl_timestamp(std::string& value, std::int64_t ts) {
  auto u = static_cast<std::uint64_t>(ts);
  for (std::size_t i = 0; i < kTtlTimestampBytes && i < value.size(); ++i) value[i] = static_cast<char>(u >> (8 * i));
}

// Byte-level cleanup shared by the backends (full snapshots, RocksDB compaction).
// A value or map value whose timestamp is expired.
bool ttl_value_expired(std::string_view stored, std::int64_t ttl_ms, std::int64_t now);
// The unexpired elements of a TTL list, appended to `out`; false when none are expired
// (then `out` is left untouched and the list is kept as it is).
bool ttl_filter_list(std::string_view stored, std::int64_t ttl_ms, std::int64_t now, std::string& out);

}  // namespace clink
