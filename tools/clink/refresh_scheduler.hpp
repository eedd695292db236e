#pragma once
// The refresh scheduler of a long-running `clink` process (Flink runs it in the SQL
// Gateway's workflow scheduler): every ACTIVATED materialized table in FULL mode is
// refreshed when its freshness has passed since its last refresh, one refresh at a time,
// each re-armed after it completes (a slow refresh runs back to back, never overlapping).
// The schedule is the catalog's: `materialized/<name>.json` holds each table's freshness,
// status and last refresh, so a new process over the same --catalog-dir continues it.
#include <cstdint>
#include <vector>

#include "sql_session.hpp"

namespace clink::cli {

// Refreshes the tables due at `now_ms`; returns the epoch ms when the next one falls due
// (INT64_MAX: none). A refresh that fails is logged and retried at its next due time.
std::int64_t refresh_due_tables(SqlSession& session, std::int64_t now_ms);

// `clink run --keep-refreshing`: refreshes as tables fall due until a stop request
// (SIGINT / SIGTERM). Returns the exit code.
int keep_refreshing(SqlSession& session);

}  // namespace clink::cli
