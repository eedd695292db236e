#include "refresh_scheduler.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>

#include <fmt/format.h>

#include "clink/core/log.hpp"
#include "clink/sql/parser/parser.hpp"
#include "commands.hpp"

namespace clink::cli {

namespace {
std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}
}  // namespace

std::int64_t refresh_due_tables(SqlSession& session, std::int64_t now_ms) {
  std::int64_t next = std::numeric_limits<std::int64_t>::max();
  for (const auto& def : session.runner().materialized().all()) {
    if (!def.full() || def.status != "ACTIVATED") continue;
    std::int64_t due = def.last_refresh_ms + def.freshness_ms;
    if (due <= now_ms) {
      // The statement a user would type, so the refresh is the one ALTER ... REFRESH runs.
      auto script = sql::parse(fmt::format("ALTER MATERIALIZED TABLE {} REFRESH", sql::ast::quote_identifier(def.name)));
      try {
        session.execute(script.statements.at(0));
        log::info("refreshed materialized table {}", def.name);
      } catch (const std::exception& e) {
        log::warn("refresh of materialized table {} failed: {}; retried in {} ms", def.name, e.what(), def.freshness_ms);
      }
      due = wall_ms() + def.freshness_ms;  // re-armed after the refresh completed (or failed)
      if (auto after = session.runner().materialized().find(def.name)) due = std::max(due, after->last_refresh_ms + def.freshness_ms);
    }
    next = std::min(next, due);
  }
  return next;
}

int keep_refreshing(SqlSession& session) {
  log::info("refreshing the materialized tables in FULL mode as they fall due (stop with Ctrl-C)");
  while (!stop_requested().load()) {
    const std::int64_t next = refresh_due_tables(session, wall_ms());
    // Sleep in short steps: a stop request, and tables created by another process over the
    // same catalog directory, are noticed within a second.
    const std::int64_t until = std::min(next, wall_ms() + 1000);
    while (!stop_requested().load() && wall_ms() < until) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return kExitOk;
}

}  // namespace clink::cli
