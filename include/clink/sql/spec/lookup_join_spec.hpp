#pragma once
// The contract of the processing-time lookup join (`FROM o JOIN dim FOR SYSTEM_TIME AS OF
// o.proc_time AS d ON o.k = d.id`, Flink's LookupJoin) between the planner, which emits the
// `sql_lookup_join` op, and the op, which fetches the dimension rows through the lookup
// table's LookupSource (connectors/sql/lookup_source.hpp).
//
// Params of `sql_lookup_join` (besides `schema`, `input_schemas`, `session`):
//   join_type   "inner" / "left"
//   table       the dimension table's name (messages)
//   lookup      the LookupSource factory (the connector row's lookup_factory)
//   options     the table's WITH options (the source's and the lookup.* ones below)
//   dim_schema  the table's physical schema
//   dim_columns the physical columns fetched (indices into dim_schema, increasing); the
//               output is the input row followed by these columns
//   keys        [{"column": i (into dim_columns), "value": expr over the input row}]: the
//               lookup keys, each typed as its column (a column reference or a literal)
//   pre_filter  LEFT only: expr over the input row; a row failing it is not looked up
//               and is emitted padded (Flink's pre-filter), or null
//   dim_filter  expr over the fetched row (dim_columns) applied to looked-up rows before
//               the join (Flink's calc on the temporal table, `where=[...]`), or null
//   condition   expr over the output row, every other conjunct, or null
//   async       {"capacity", "output_mode": "ORDERED" / "ALLOW_UNORDERED", "timeout_ms"}
#include <cstdint>
#include <optional>
#include <string>

#include "clink/sql/common/session_config.hpp"
#include "clink/sql/spec/connector_table.hpp"

namespace clink::sql {

inline constexpr const char* kSqlLookupJoin = "sql_lookup_join";

// Flink's ExecutionConfigOptions for asynchronous lookups (the session's SET keys).
inline constexpr const char* kAsyncLookupBufferCapacity = "table.exec.async-lookup.buffer-capacity";
inline constexpr const char* kAsyncLookupTimeout = "table.exec.async-lookup.timeout";
inline constexpr const char* kAsyncLookupOutputMode = "table.exec.async-lookup.output-mode";

struct AsyncLookupOptions {
  std::int64_t capacity = 100;         // rows in flight (Flink's default)
  bool ordered = true;                 // ORDERED (default) or ALLOW_UNORDERED
  std::int64_t timeout_ms = 180'000;   // 3 min
  // The session set one of the keys: EXPLAIN shows them (Flink shows async=[...] only for
  // an asynchronous lookup; its jdbc lookups are synchronous, clink's always asynchronous).
  bool configured = false;
  // Flink's EXPLAIN text: "ORDERED, 180000ms, 100".
  std::string describe() const;
};
// From the session's settings (absent keys: Flink's defaults); throws ClinkError naming
// the key and the value.
AsyncLookupOptions async_lookup_options(const SessionConfig& session);

// Flink's lookup options of a lookup table (LookupOptions, and the JDBC connector's older
// 'lookup.cache.max-rows' / 'lookup.cache.ttl' / 'lookup.cache.caching-missing-key').
struct LookupOptions {
  bool partial_cache = false;                          // 'lookup.cache' = PARTIAL (default NONE)
  std::optional<std::int64_t> max_rows;                // lookup.partial-cache.max-rows (keys cached)
  std::optional<std::int64_t> expire_after_write_ms;   // lookup.partial-cache.expire-after-write
  std::optional<std::int64_t> expire_after_access_ms;  // lookup.partial-cache.expire-after-access
  bool cache_missing_key = true;                       // lookup.partial-cache.cache-missing-key
  int max_retries = 3;                                 // lookup.max-retries
};
// Throws ClinkError naming the option and its value (and Flink's message for a partial
// cache without eviction).
LookupOptions parse_lookup_options(const ConnectorOptions& options);
// Whether `key` is one of the options above (the op reads them; the source ignores them).
bool is_lookup_option(const std::string& key);

}  // namespace clink::sql
