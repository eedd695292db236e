#pragma once
// One run of a job (private to the runtime): the attempts and restarts (executor.cpp),
// and the checkpoint coordinator - triggering, completing, aborting, savepoints and the
// checkpoint directory (job_run_checkpoints.cpp). Its tasks run wherever its
// TaskDeployer puts them: a TaskGroup in this process, or the workers of a cluster.
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>


#include <algorithm>
#include <filesystem>

#include "clink/checkpoint/checkpoint_metadata.hpp"
#include "clink/checkpoint/operator_state.hpp"
#include "clink/checkpoint/restart_tracker.hpp"
#include "clink/checkpoint/timer_snapshot.hpp"
#include "clink/core/error.hpp"
#include "clink/core/log.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "clink/state/shared_state_registry.hpp"
#include "directory_lock.hpp"
#include "finished_operators.hpp"
#include "clink/runtime/task_group.hpp"

namespace clink {

// Why a checkpoint pending when its attempt ended was aborted.
inline constexpr const char* kAttemptEnded = "the job attempt ended";

class JobRun final : public TaskEvents {
 public:
  // Without a deployer factory, the tasks run in this process.
  JobRun(const JobGraph& graph, ExecutionOptions options, const DeployerFactory& make_deployer = {});

  ~JobRun() override {
    cancel();
    if (supervisor_.joinable()) supervisor_.join();
    deployer_.reset();  // ends the tasks before this run goes
  }

  // Builds the first attempt (so a bad graph or restore throws here), then runs.
  void start() {
    graph_.validate();
    std::optional<std::filesystem::path> restore;
    if (options_.restore) restore = options_.restore->path;
    if (!options_.checkpoints.directory.empty())
      directory_lock_ = detail::DirectoryLock(options_.checkpoints.directory, "checkpoint directory");
    build(restore);
    status_ = JobStatus::kRunning;
    supervisor_ = std::thread([this] { supervise(); });
  }

  // A task failed. With region failover (and a deployer that can) only its pipelined
  // region stops here; the supervisor restarts it (restart_region). Otherwise, or for
  // a failure of no one task, the whole attempt stops and restarts.
  void fail(std::size_t task, const std::string& message) override {
    std::size_t region = 0;
    {
      std::lock_guard lock(mu_);
      if (attempt_failed_ || user_cancelled_) return;
      if (!fails_region_only(task)) {
        attempt_failed_ = true;
        attempt_error_ = message;
      } else {
        region = layout_.region_of[task];
        if (!failed_regions_.insert(region).second) return;  // its restart is under way
        restarting_regions_.insert(region);
        region_failures_.emplace_back(region, message);
        // Its snapshots for the pending checkpoint are from tasks that are going: a
        // checkpoint never mixes acks from before and after a region's restart.
        if (pending_) abort_pending("task " + std::to_string(task) + " failed, its region restarts: " + message);
        cv_.notify_all();
      }
    }
    if (!fails_region_only(task)) {
      stop_attempt();
      return;
    }
    std::lock_guard lock(deploy_mu_);
    deployer_->cancel_tasks(layout_.regions[region]);
  }

  void cancel() {
    {
      std::lock_guard lock(mu_);
      if (done_) return;
      user_cancelled_ = true;
    }
    stop_attempt();
    cv_.notify_all();
  }

  bool wait_for(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return done_; });
  }
  void wait() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return done_; });
  }

  JobStatus status() const {
    std::lock_guard lock(mu_);
    return status_;
  }
  std::string error() const {
    std::lock_guard lock(mu_);
    return error_;
  }
  const MetricRegistry& metrics() const { return metrics_; }
  std::vector<CheckpointStats> history() const {
    std::lock_guard lock(mu_);
    return history_;
  }
  CheckpointCounts counts() const {
    std::lock_guard lock(mu_);
    CheckpointCounts c = counts_;
    c.in_progress = pending_ ? 1 : 0;
    return c;
  }

  // ---- checkpoint coordination (called from task threads) ----
  void acknowledge_checkpoint(std::size_t task, std::int64_t id, TaskSnapshot snapshot,
                              const CheckpointTaskTimes& times) override {
    std::lock_guard lock(mu_);
    if (!pending_ || pending_->id != id) {  // aborted meanwhile
      discard_uploaded(snapshot);
      return;
    }
    if (phases_[task] == Phase::kEnded) pending_->after_end.insert(task);
    pending_->acks[task] = std::move(snapshot);
    pending_->max_alignment_ns = std::max(pending_->max_alignment_ns, times.alignment_ns);
    pending_->task_stats[task] = {{}, 0, ms_since(pending_->started), times.alignment_ns, times.sync_ms, times.async_ms};
    if (pending_->acks.size() == layout_.tasks.size()) complete_pending();
  }
  void discard_snapshot(std::int64_t, TaskSnapshot partial) override {
    std::lock_guard lock(mu_);
    discard_uploaded(partial);
  }
  // Deletes what a snapshot that no checkpoint will reference uploaded to shared/. Under mu_.
  void discard_uploaded(const TaskSnapshot& snapshot) {
    std::vector<KeyedStateHandle> uploaded;
    for (const auto& [uid, st] : snapshot) uploaded.insert(uploaded.end(), st.keyed.begin(), st.keyed.end());
    shared_.discard_unregistered(uploaded);
  }
  void checkpoint_committed(std::size_t task, std::int64_t id) override {
    std::lock_guard lock(mu_);
    commits_done_[id].insert(task);
    cv_.notify_all();
  }
  // Waits until every task it notified committed checkpoint `id`: ran its
  // notify_checkpoint_complete, or restored from it after a failure (a restore commits
  // what the checkpoint pre-committed).
  bool wait_committed(std::int64_t id, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] {
      const auto& done = commits_done_[id];
      const auto& expected = commits_expected_[id];
      return std::includes(done.begin(), done.end(), expected.begin(), expected.end()) || done_;
    });
  }
  void task_ended(std::size_t task) override {
    std::lock_guard lock(mu_);
    phases_[task] = Phase::kEnded;
    // No barrier reaches it any more: a pending checkpoint it has not snapshotted for
    // takes its state after the end (consistent: its inputs all ended, all they sent is in).
    if (pending_ && !pending_->acks.count(task)) deployer_->trigger_checkpoint(task, pending_->barrier);
    cv_.notify_all();  // the coordinator may owe it its final checkpoint now
  }
  void task_finished(std::size_t task) override {
    std::lock_guard lock(mu_);
    phases_[task] = Phase::kFinished;
    if (pending_ && !pending_->acks.count(task)) {
      pending_->acks[task] = finished_snapshot(task);
      pending_->task_stats[task] = {{}, 0, ms_since(pending_->started)};
      if (pending_->acks.size() == layout_.tasks.size()) complete_pending();
    }
    cv_.notify_all();
  }

 private:
  struct Pending {
    std::int64_t id = 0;
    std::chrono::steady_clock::time_point started;
    std::map<std::size_t, TaskSnapshot> acks;  // finished tasks: finished_snapshot()
    std::set<std::size_t> after_end;                   // tasks that snapshotted after their end of input
    std::optional<std::filesystem::path> savepoint_dir;
    bool created_dir = false;  // trigger() made the directory (it did not exist)
    bool stops_sources = false;
    bool drains = false;  // sources emit MAX_WATERMARK first (stop --drain)
    CheckpointBarrier barrier;
    std::int64_t max_alignment_ns = 0;
    // By task: when its acknowledgement came (ms after `started`; a task finished before
    // the trigger: 0) and its times (head and subtask filled in on completion).
    std::map<std::size_t, CheckpointTaskStats> task_stats;
  };
  static std::int64_t ms_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t).count();
  }
  // Where each task of the attempt is (FLIP-147): running; ended (its end of input
  // done, waiting for a checkpoint taken after it); covered (such a checkpoint
  // completed: it exits once it committed); finished (exited).
  enum class Phase { kRunning, kEnded, kCovered, kFinished };
  TaskSnapshot finished_snapshot(std::size_t task) const { return detail::finished_snapshot(graph_, layout_, task); }

 public:
  std::filesystem::path checkpoint_directory(std::int64_t id) const override {
    std::lock_guard lock(mu_);
    if (pending_ && pending_->id == id && pending_->savepoint_dir) return *pending_->savepoint_dir;
    return checkpoint_dir(id);
  }
  std::filesystem::path savepoint(const std::filesystem::path& dir, std::chrono::milliseconds timeout,
                                  bool stops_sources = false, bool drains = false);
  void suspend_checkpoints(bool suspended);
  void resume_sources();
  bool checkpoint_pending(std::int64_t id) const override {
    std::lock_guard lock(mu_);
    return pending_ && pending_->id == id;
  }

 private:
  void trigger(Pending p);  // under mu_

  bool fails_region_only(std::size_t task) const {
    return options_.failover == FailoverStrategy::kRegion && task < layout_.tasks.size() &&
           layout_.regions.size() > 1 && deployer_->deploys_regions();
  }
  void supervise();
  void run_attempt();
  void restart_region(std::size_t region, const std::string& cause);
  void coordinate();
  // `verified`: the metadata of restore_from, already read and verified (else read here).
  void build(const std::optional<std::filesystem::path>& restore_from,
             std::optional<CheckpointMetadata> verified = std::nullopt);
  // Where a restart restores from: a stop's completed savepoint; else the newest
  // retained checkpoint that is intact (a corrupt one is passed over, with a line on
  // stderr); else what the job started from.
  std::optional<std::pair<std::filesystem::path, CheckpointMetadata>> restart_point();
  void complete_pending();                      // under mu_
  void sweep_checkpoint_dirs();                 // under mu_
  void abort_pending(const std::string& why);  // under mu_
  std::filesystem::path checkpoint_dir(std::int64_t id) const {
    return options_.checkpoints.directory / ("chk-" + std::to_string(id));
  }

  void stop_attempt() {
    stopping_.store(true);
    std::lock_guard lock(deploy_mu_);
    if (deployer_) deployer_->cancel();
    cv_.notify_all();
  }

  JobGraph graph_;
  ExecutionOptions options_;
  // The job's log context: the starting thread's (a coordinator's: the job id), else the
  // job's name; its own threads and its tasks log in it.
  log::Context log_context_;
  MetricRegistry metrics_;
  std::thread supervisor_;

  TaskLayout layout_;
  std::mutex deploy_mu_;  // a deploy and stop_attempt() one at a time
  std::unique_ptr<TaskDeployer> deployer_;
  std::int64_t attempt_ = 0;
  std::unique_ptr<RestartTracker> restarts_;  // the supervisor's
  std::atomic<bool> stopping_{false};  // the attempt is being stopped (ends the coordinator loop)

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  bool user_cancelled_ = false;
  bool attempt_failed_ = false;
  bool restarts_exhausted_ = false;  // a region's failure was the last one the strategy allowed
  std::string attempt_error_;
  bool attempt_exited_ = false;  // every task of the attempt exited (none is being redeployed)
  // Region failover: failures waiting for the supervisor; regions whose failure is being
  // handled (until their old tasks exited); regions not running again yet (no
  // checkpoint starts meanwhile).
  std::deque<std::pair<std::size_t, std::string>> region_failures_;
  std::set<std::size_t> failed_regions_;
  std::set<std::size_t> restarting_regions_;
  JobStatus status_ = JobStatus::kCreated;
  std::string error_;

  std::int64_t next_checkpoint_id_ = 1;
  std::int64_t first_own_checkpoint_id_ = 1;
  std::optional<Pending> pending_;
  std::vector<Phase> phases_;  // by task, this attempt
  // Set by stop-with-savepoint: a periodic checkpoint completing between the savepoint
  // and the stop would commit output past the savepoint, which a job resumed from the
  // savepoint then writes again (duplicates). Flink's stop-with-savepoint is the last
  // checkpoint of a job for the same reason.
  bool checkpoints_suspended_ = false;
  std::chrono::steady_clock::time_point last_checkpoint_end_{};
  std::optional<std::filesystem::path> last_completed_;
  std::vector<std::pair<std::int64_t, std::filesystem::path>> retained_;
  SharedStateRegistry shared_;
  std::map<std::string, FileDigest> shared_digests_;  // of shared files, taken once (immutable)
  detail::DirectoryLock directory_lock_;  // the checkpoint directory's, until the job ends
  std::map<std::int64_t, std::set<std::size_t>> commits_done_;      // checkpoint id -> tasks that committed it
  std::map<std::int64_t, std::set<std::size_t>> commits_expected_;  // checkpoint id -> tasks notified of it
  // The savepoint of a stop-with-savepoint, once complete. Its commits are under way
  // (some tasks may have made its output visible already), so a failure before the job
  // stopped restores from it, never from an older checkpoint: that would write the
  // committed output again, and its sinks would delete the savepoint's pre-committed
  // files as leftovers of a failed attempt (a resume from it then fails for ever).
  std::optional<std::filesystem::path> stop_savepoint_;
  std::vector<CheckpointStats> history_;
  CheckpointCounts counts_;
  std::vector<std::string> restart_causes_;

 public:
  std::vector<std::string> restart_causes() const {
    std::lock_guard lock(mu_);
    return restart_causes_;
  }
};

}  // namespace clink
