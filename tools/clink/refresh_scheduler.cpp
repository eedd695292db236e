#include "refresh_scheduler.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

#include "clink/core/log.hpp"
#include "commands.hpp"

namespace clink::cli {

std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t refresh_due_tables(SqlSession& session, std::int64_t now_ms) {
  auto& runner = session.runner();
  return runner.materialized().refresh_due(now_ms, runner.materialized_jobs().run,
                                           [](const std::string& name, const std::exception* failure) {
                                             if (failure)
                                               log::warn("refresh of materialized table {} failed: {}; it runs again "
                                                         "at its next scheduled time", name, failure->what());
                                             else
                                               log::info("refreshed materialized table {}", name);
                                           });
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

RefreshScheduler::RefreshScheduler(std::function<std::int64_t(std::int64_t)> refresh_due)
    : refresh_due_(std::move(refresh_due)), thread_([this] { loop(); }) {}

RefreshScheduler::~RefreshScheduler() { stop(); }

void RefreshScheduler::request_stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
}

void RefreshScheduler::stop() {
  request_stop();
  if (thread_.joinable()) thread_.join();
}

void RefreshScheduler::loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    std::int64_t next = std::numeric_limits<std::int64_t>::max();
    try {
      next = refresh_due_(wall_ms());
    } catch (const std::exception& e) {  // e.g. no longer the leader: looked at again in a second
      log::warn("refresh scheduler: {}", e.what());
    }
    lock.lock();
    const std::int64_t wait = std::clamp<std::int64_t>(std::min(next, wall_ms() + 1000) - wall_ms(), 0, 1000);
    wake_.wait_for(lock, std::chrono::milliseconds(wait), [this] { return stopping_; });
  }
}

}  // namespace clink::cli
