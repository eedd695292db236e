#include "clink/state/state_ttl.hpp"

namespace clink {

bool ttl_value_expired(std::string_view stored, std::int64_t ttl_ms, std::int64_t now) {
  if (stored.size() < kTtlTimestampBytes) return false;  // not ours to judge: keep it
  return ttl_expired(get_ttl_timestamp(stored), ttl_ms, now);
}

bool ttl_filter_list(std::string_view stored, std::int64_t ttl_ms, std::int64_t now, std::string& out) {
  // First pass: anything to drop at all? (The common case is no.)
  std::string_view in = stored;
  bool any = false;
  while (!in.empty()) {
    std::int64_t ts = get_ttl_timestamp(in);
    std::uint64_t n = get_varint(in);
    if (in.size() < n) throw ClinkError("state: truncated list element");
    in.remove_prefix(n);
    if (ttl_expired(ts, ttl_ms, now)) {
      any = true;
      break;
    }
  }
  if (!any) return false;
  in = stored;
  while (!in.empty()) {
    const char* start = in.data();
    std::int64_t ts = get_ttl_timestamp(in);
    std::uint64_t n = get_varint(in);
    in.remove_prefix(n);
    if (!ttl_expired(ts, ttl_ms, now)) out.append(start, static_cast<std::size_t>(in.data() - start));
  }
  return true;
}

}  // namespace clink
