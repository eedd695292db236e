#pragma once
// The refresh scheduler (Flink runs it in the SQL Gateway's workflow scheduler): every
// ACTIVATED materialized table in FULL mode is refreshed at each multiple of its
// freshness, one refresh at a time (a slow refresh runs back to back, never overlapping;
// sql::MaterializedTables::refresh_due). The schedule is the catalog's: each table's
// definition keeps its freshness, status and last schedule time, so a new process over
// the same catalog (the --catalog-dir, a coordinator's HA store) continues it.
//   - `clink run --keep-refreshing`: the loop runs on the main thread after the script.
//   - a coordinator: a RefreshScheduler thread over its catalog (coordinator_sql.hpp).
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "sql_session.hpp"

namespace clink::cli {

// Refreshes the session's tables due at `now_ms`; returns the epoch ms when the next one
// falls due (INT64_MAX: none). A refresh that fails is logged and runs again at the next
// boundary.
std::int64_t refresh_due_tables(SqlSession& session, std::int64_t now_ms);

// `clink run --keep-refreshing`: refreshes as tables fall due until a stop request
// (SIGINT / SIGTERM). Returns the exit code.
int keep_refreshing(SqlSession& session);

// A thread that calls `refresh_due(now)` (which runs what is due and returns when the next
// refresh falls due) whenever that time comes, and at least every second (tables created
// meanwhile are seen), until stopped.
class RefreshScheduler {
 public:
  explicit RefreshScheduler(std::function<std::int64_t(std::int64_t now_ms)> refresh_due);
  ~RefreshScheduler();  // stop()
  RefreshScheduler(const RefreshScheduler&) = delete;
  RefreshScheduler& operator=(const RefreshScheduler&) = delete;
  // No refresh starts after it (one in progress goes on: cancelling its job ends it).
  void request_stop();
  // request_stop(), then waits for a refresh in progress to end.
  void stop();

 private:
  void loop();

  std::function<std::int64_t(std::int64_t)> refresh_due_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

std::int64_t wall_ms();

}  // namespace clink::cli
