// The supervisor of a job run: attempts, restarts of the whole job, and region
// failover (Flink's jobmanager.execution.failover-strategy: region) - a failed task's
// pipelined region restarts from the latest completed checkpoint while the other
// regions keep running.
#include "job_run.hpp"

namespace clink {

void JobRun::supervise() {
  log::ScopedContext in_job(log_context_);
  restarts_ = std::make_unique<RestartTracker>(options_.restart);
  for (;;) {
    run_attempt();
    std::unique_lock lock(mu_);
    if (user_cancelled_) {
      status_ = JobStatus::kCanceled;
      break;
    }
    if (!attempt_failed_) {
      status_ = JobStatus::kFinished;
      break;
    }
    // One failure per attempt: the first failing task stops the others.
    std::optional<std::chrono::milliseconds> delay;
    if (!restarts_exhausted_) delay = restarts_->on_failure(RestartTracker::Clock::now());
    if (!delay) {
      status_ = JobStatus::kFailed;
      error_ = attempt_error_;
      log::debug("job failed (no restart left): {}", attempt_error_);
      break;
    }
    ++counts_.restarts;
    restart_causes_.push_back(attempt_error_);
    log::warn("restart {} in {} ms after: {}", counts_.restarts, delay->count(), attempt_error_);
    if (cv_.wait_for(lock, *delay, [&] { return user_cancelled_; })) {
      status_ = JobStatus::kCanceled;
      break;
    }
    attempt_failed_ = false;
    lock.unlock();
    // Restart from the newest intact retained checkpoint, else from what the job started from.
    try {
      auto from = restart_point();
      if (from) build(from->first, std::move(from->second));
      else build(std::nullopt);
    } catch (const std::exception& e) {
      lock.lock();
      status_ = JobStatus::kFailed;
      error_ = std::string("restart failed: ") + e.what();
      log::error("{}", error_);
      break;
    }
  }
  // Under the mutex: a waiter between its predicate check and its sleep would otherwise
  // miss the notification and wait forever (seen as a rare hang of JobHandle::wait()).
  std::lock_guard lock(mu_);
  directory_lock_.release();  // before waiters wake: a restore may follow at once
  done_ = true;
  cv_.notify_all();
}

void JobRun::run_attempt() {
  std::thread coordinator;
  if (options_.checkpoints.enabled())
    coordinator = std::thread([this] {
      log::ScopedContext in_job(log_context_);
      coordinate();
    });
  // The attempt ends when all its tasks exited; meanwhile regions may fail and restart.
  std::thread waiter([this] {
    deployer_->wait_exited();
    std::lock_guard lock(mu_);
    attempt_exited_ = true;
    cv_.notify_all();
  });
  for (;;) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return attempt_exited_ || !region_failures_.empty(); });
    if (attempt_exited_) break;
    auto [region, cause] = std::move(region_failures_.front());
    region_failures_.pop_front();
    lock.unlock();
    restart_region(region, cause);
  }
  waiter.join();
  {
    std::lock_guard lock(mu_);
    attempt_exited_ = false;
    region_failures_.clear();
    failed_regions_.clear();
    restarting_regions_.clear();
    if (pending_) abort_pending(kAttemptEnded);
  }
  stopping_.store(true);  // stops the coordinator
  cv_.notify_all();
  if (coordinator.joinable()) coordinator.join();
  if (options_.checkpoints.enabled()) {
    std::lock_guard lock(mu_);
    sweep_checkpoint_dirs();
  }
}

// Flink's RestartPipelinedRegionFailoverStrategy for streaming jobs (all edges
// pipelined): the region is the failed task's connected component; it restarts from
// the latest completed checkpoint, as the whole job would. Its sources rewind to the
// checkpoint and its two-phase-commit sinks abort what they had not committed, exactly
// as on a full restart; no checkpoint starts until it runs again.
void JobRun::restart_region(std::size_t region, const std::string& cause) {
  const std::vector<std::size_t>& tasks = layout_.regions[region];
  deployer_->wait_tasks_exited(tasks);
  AttemptStart from;
  {
    std::unique_lock lock(mu_);
    if (user_cancelled_ || attempt_failed_) return;  // the whole attempt ends anyway
    auto delay = restarts_->on_failure(RestartTracker::Clock::now());  // each failover counts
    if (!delay) {
      restarts_exhausted_ = true;
      attempt_failed_ = true;
      attempt_error_ = cause;
      lock.unlock();
      stop_attempt();
      return;
    }
    if (restarts_->new_attempt()) ++counts_.restarts;  // merged failures are one restart
    restart_causes_.push_back(cause);
    log::warn("region {} restarts in {} ms after: {}", region, delay->count(), cause);
    if (cv_.wait_for(lock, *delay, [&] { return user_cancelled_ || attempt_failed_; })) return;
    from.restore = stop_savepoint_ ? stop_savepoint_ : last_completed_;
    if (!from.restore && options_.restore) from.restore = options_.restore->path;
    from.last_checkpoint_id = next_checkpoint_id_ - 1;
    for (std::size_t t : tasks) phases_[t] = Phase::kRunning;
    failed_regions_.erase(region);  // its old tasks are gone: a new failure is a new failover
  }
  std::string failure;
  {
    std::lock_guard lock(deploy_mu_);
    if (stopping_.load()) return;  // stop_attempt() cancelled the attempt meanwhile
    try {
      deployer_->deploy_tasks(tasks, from);
    } catch (const std::exception& e) {
      failure = std::string("restart of a failed region failed: ") + e.what();
    }
  }
  std::unique_lock lock(mu_);
  restarting_regions_.erase(region);
  cv_.notify_all();  // a savepoint may wait for it
  if (failure.empty() || user_cancelled_ || attempt_failed_) return;
  restarts_exhausted_ = true;
  attempt_failed_ = true;
  attempt_error_ = failure;
  lock.unlock();
  stop_attempt();
}

}  // namespace clink
