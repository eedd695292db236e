// Flink's async-lookup settings and lookup options, read for the planner and the
// `sql_lookup_join` op alike (lookup_join_spec.hpp).
#include "clink/sql/spec/lookup_join_spec.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "clink/core/duration.hpp"
#include "clink/core/error.hpp"

namespace clink::sql {

namespace {

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

std::int64_t positive_integer(const std::string& key, const std::string& v, std::int64_t min) {
  std::size_t used = 0;
  long long n = 0;
  try {
    n = std::stoll(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || v.empty() || n < min)
    throw ClinkError(fmt::format("option '{}' must be an integer >= {}, got '{}'", key, min, v));
  return n;
}

std::int64_t duration(const std::string& key, const std::string& v) {
  auto ms = parse_duration_ms(v);
  if (!ms || *ms < 0) throw ClinkError(fmt::format("option '{}' is not a duration: '{}'", key, v));
  return *ms;
}

bool boolean(const std::string& key, const std::string& v) {
  std::string u = upper(v);
  if (u == "TRUE") return true;
  if (u == "FALSE") return false;
  throw ClinkError(fmt::format("option '{}' must be true or false, got '{}'", key, v));
}

}  // namespace

std::string AsyncLookupOptions::describe() const {
  return fmt::format("{}, {}ms, {}", ordered ? "ORDERED" : "ALLOW_UNORDERED", timeout_ms, capacity);
}

AsyncLookupOptions async_lookup_options(const SessionConfig& session) {
  AsyncLookupOptions o;
  for (const char* key : {kAsyncLookupBufferCapacity, kAsyncLookupTimeout, kAsyncLookupOutputMode})
    o.configured = o.configured || session.count(key) > 0;
  if (auto it = session.find(kAsyncLookupBufferCapacity); it != session.end())
    o.capacity = positive_integer(kAsyncLookupBufferCapacity, it->second, 1);
  if (auto it = session.find(kAsyncLookupTimeout); it != session.end()) {
    o.timeout_ms = duration(kAsyncLookupTimeout, it->second);
    if (o.timeout_ms <= 0) throw ClinkError(fmt::format("option '{}' must be positive, got '{}'", kAsyncLookupTimeout, it->second));
  }
  if (auto it = session.find(kAsyncLookupOutputMode); it != session.end()) {
    std::string m = upper(it->second);
    if (m != "ORDERED" && m != "ALLOW_UNORDERED")
      throw ClinkError(fmt::format("option '{}' must be ORDERED or ALLOW_UNORDERED, got '{}'", kAsyncLookupOutputMode,
                                   it->second));
    o.ordered = m == "ORDERED";
  }
  return o;
}

bool is_lookup_option(const std::string& key) {
  return key == "lookup.cache" || key.rfind("lookup.partial-cache.", 0) == 0 || key == "lookup.max-retries" ||
         key == "lookup.cache.max-rows" || key == "lookup.cache.ttl" || key == "lookup.cache.caching-missing-key";
}

LookupOptions parse_lookup_options(const ConnectorOptions& options) {
  LookupOptions o;
  bool legacy_rows = false, legacy_ttl = false;
  std::int64_t legacy_max_rows = -1, legacy_ttl_ms = 0;
  bool legacy_missing = true;
  for (const auto& [key, v] : options) {
    if (key == "lookup.cache") {
      std::string m = upper(v);
      if (m == "FULL")
        throw ClinkError("option 'lookup.cache' = 'FULL' is not supported (NONE or PARTIAL)");
      if (m != "NONE" && m != "PARTIAL")
        throw ClinkError(fmt::format("option 'lookup.cache' must be NONE or PARTIAL, got '{}'", v));
      o.partial_cache = m == "PARTIAL";
    } else if (key == "lookup.partial-cache.max-rows") {
      o.max_rows = positive_integer(key, v, 1);
    } else if (key == "lookup.partial-cache.expire-after-write") {
      o.expire_after_write_ms = duration(key, v);
    } else if (key == "lookup.partial-cache.expire-after-access") {
      o.expire_after_access_ms = duration(key, v);
    } else if (key == "lookup.partial-cache.cache-missing-key") {
      o.cache_missing_key = boolean(key, v);
    } else if (key == "lookup.max-retries") {
      o.max_retries = static_cast<int>(positive_integer(key, v, 0));
    } else if (key == "lookup.cache.max-rows") {
      legacy_max_rows = positive_integer(key, v, -1);
      legacy_rows = true;
    } else if (key == "lookup.cache.ttl") {
      legacy_ttl_ms = duration(key, v);
      legacy_ttl = true;
    } else if (key == "lookup.cache.caching-missing-key") {
      legacy_missing = boolean(key, v);
    } else if (key.rfind("lookup.partial-cache.", 0) == 0) {
      throw ClinkError(fmt::format("unknown option '{}' (lookup.partial-cache.max-rows, expire-after-write, "
                                   "expire-after-access, cache-missing-key)",
                                   key));
    }
  }
  if (o.partial_cache) {
    // Flink's DefaultLookupCache.fromConfig: a partial cache must be able to evict.
    if (!o.max_rows && !o.expire_after_write_ms && !o.expire_after_access_ms)
      throw ClinkError(
          "Missing 'lookup.partial-cache.expire-after-access', 'lookup.partial-cache.expire-after-write' or "
          "'lookup.partial-cache.max-rows' in the configuration. The cache will not have evictions under this "
          "configuration and could lead to potential memory issues as the cache size may grow indefinitely.");
  } else if (legacy_rows && legacy_ttl && legacy_max_rows > 0 && legacy_ttl_ms > 0) {
    // The JDBC connector's older options (JdbcDynamicTableFactory): both set and positive.
    o.partial_cache = true;
    o.max_rows = legacy_max_rows;
    o.expire_after_write_ms = legacy_ttl_ms;
    o.cache_missing_key = legacy_missing;
  }
  return o;
}

}  // namespace clink::sql
