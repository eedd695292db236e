#include "lookup_worker.hpp"

#include <fmt/format.h>

namespace clink::sql {

LookupWorker::LookupWorker(std::unique_ptr<LookupSource> source, SchemaPtr row_schema, int max_retries,
                           std::string what, std::function<void()> notify)
    : source_(std::move(source)),
      row_schema_(std::move(row_schema)),
      max_retries_(max_retries),
      what_(std::move(what)),
      notify_(std::move(notify)),
      thread_([this] { run(); }) {}

LookupWorker::~LookupWorker() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  source_->cancel();  // a lookup under way (a blocked query) returns
  if (thread_.joinable()) thread_.join();
  try {
    if (opened_) source_->close();
  } catch (const std::exception&) {
    // closing a broken connection: nothing left to do
  }
}

void LookupWorker::submit(LookupRequest request) {
  {
    std::lock_guard lock(mu_);
    requests_.push_back(std::move(request));
  }
  work_cv_.notify_one();
}

bool LookupWorker::take(std::vector<LookupResponse>& out) {
  std::lock_guard lock(mu_);
  if (responses_.empty()) return false;
  for (auto& r : responses_) out.push_back(std::move(r));
  responses_.clear();
  return true;
}

void LookupWorker::wait(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mu_);
  done_cv_.wait_until(lock, deadline, [&] { return !responses_.empty(); });
}

bool LookupWorker::pause(std::int64_t ms) {
  std::unique_lock lock(mu_);
  return !work_cv_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return stop_; });
}

LookupResponse LookupWorker::answer(LookupRequest& request) {
  LookupResponse r;
  r.id = request.id;
  std::string last;
  for (int attempt = 0; attempt <= max_retries_; ++attempt) {
    try {
      if (!opened_) {
        source_->open();
        opened_ = true;
      }
      auto rows = std::make_unique<ColumnBatch>(row_schema_, request.keys->size());
      source_->lookup(*request.keys, *rows);
      r.rows = std::move(rows);
      return r;
    } catch (const std::exception& e) {
      last = e.what();
    }
    if (attempt == max_retries_) break;
    {
      std::lock_guard lock(mu_);
      if (stop_) break;  // cancelled on purpose: no retry
    }
    ++retries_;
    try {
      if (opened_) source_->reset();
    } catch (const std::exception& e) {
      last = e.what();
    }
    if (!pause(1000LL * attempt)) break;  // stopping: the job is going away
  }
  r.error = fmt::format("{}: the lookup failed after {} attempt(s) ('lookup.max-retries' = {}): {}", what_,
                        max_retries_ + 1, max_retries_, last);
  return r;
}

void LookupWorker::run() {
  for (;;) {
    LookupRequest request;
    {
      std::unique_lock lock(mu_);
      work_cv_.wait(lock, [&] { return stop_ || !requests_.empty(); });
      if (stop_) return;
      request = std::move(requests_.front());
      requests_.pop_front();
    }
    LookupResponse response = answer(request);
    ++lookups_;
    {
      std::lock_guard lock(mu_);
      if (stop_) return;
      responses_.push_back(std::move(response));
    }
    done_cv_.notify_all();
    notify_();
  }
}

}  // namespace clink::sql
