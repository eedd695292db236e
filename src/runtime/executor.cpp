#include "clink/runtime/executor.hpp"

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "clink/checkpoint/checkpoint_metadata.hpp"
#include "clink/checkpoint/operator_state.hpp"
#include "clink/checkpoint/timer_snapshot.hpp"
#include "clink/core/error.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "clink/state/shared_state_registry.hpp"
#include "finished_operators.hpp"
#include "task.hpp"

namespace clink {

const char* job_status_name(JobStatus s) {
  switch (s) {
    case JobStatus::kCreated: return "CREATED";
    case JobStatus::kRunning: return "RUNNING";
    case JobStatus::kFinished: return "FINISHED";
    case JobStatus::kFailed: return "FAILED";
    case JobStatus::kCanceled: return "CANCELED";
  }
  return "?";
}

namespace {

// Chains: each node joins its upstream's chain when their edge is chained.
std::vector<std::vector<std::string>> compute_chains(const JobGraph& g) {
  std::vector<std::vector<std::string>> chains;
  std::map<std::string, std::size_t> chain_of;
  for (const auto& id : g.topological_order()) {
    auto ins = g.inputs_of(id);
    if (ins.size() == 1 && g.is_chained(*ins[0])) {
      std::size_t c = chain_of.at(ins[0]->from);
      chains[c].push_back(id);
      chain_of[id] = c;
    } else {
      chain_of[id] = chains.size();
      chains.push_back({id});
    }
  }
  return chains;
}

}  // namespace

std::vector<TaskPlan> plan_tasks(const JobGraph& graph) {
  std::vector<TaskPlan> plans;
  for (auto& chain : compute_chains(graph)) {
    TaskPlan p;
    p.parallelism = graph.parallelism_of(graph.node(chain.front()));
    p.chain = std::move(chain);
    plans.push_back(std::move(p));
  }
  return plans;
}

class JobRun final : public detail::JobControl {
 public:
  JobRun(const JobGraph& graph, ExecutionOptions options) : graph_(graph), options_(std::move(options)) {}

  ~JobRun() override {
    cancel();
    if (supervisor_.joinable()) supervisor_.join();
    tasks_.clear();  // closes the backends before their working directory goes
    if (!own_working_dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(own_working_dir_, ec);
    }
  }

  // Builds the first attempt (so a bad graph or restore throws here), then runs.
  void start() {
    graph_.validate();
    std::optional<std::filesystem::path> restore;
    if (options_.restore) restore = options_.restore->path;
    build(restore);
    status_ = JobStatus::kRunning;
    supervisor_ = std::thread([this] { supervise(); });
  }

  bool cancelled() const override { return stopping_.load(std::memory_order_relaxed); }

  void fail(const std::string& message) override {
    {
      std::lock_guard lock(mu_);
      if (attempt_failed_ || user_cancelled_) return;
      attempt_failed_ = true;
      attempt_error_ = message;
    }
    stop_attempt();
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
    return counts_;
  }

  // ---- checkpoint coordination (called from task threads) ----
  void acknowledge_checkpoint(std::size_t task, std::int64_t id, detail::TaskSnapshot snapshot,
                              std::int64_t alignment_ns) override {
    std::lock_guard lock(mu_);
    if (!pending_ || pending_->id != id) {
      // Aborted meanwhile: delete what this late snapshot uploaded to shared/.
      std::vector<KeyedStateHandle> uploaded;
      for (const auto& [uid, st] : snapshot) uploaded.insert(uploaded.end(), st.keyed.begin(), st.keyed.end());
      shared_.discard_unregistered(uploaded);
      return;
    }
    if (phases_[task] == Phase::kEnded) pending_->after_end.insert(task);
    pending_->acks[task] = std::move(snapshot);
    pending_->max_alignment_ns = std::max(pending_->max_alignment_ns, alignment_ns);
    if (pending_->acks.size() == tasks_.size()) complete_pending();
  }
  void checkpoint_committed(std::size_t, std::int64_t id) override {
    std::lock_guard lock(mu_);
    ++commits_done_[id];
    cv_.notify_all();
  }
  // Waits until every task it notified ran notify_checkpoint_complete(id) (its sinks committed).
  bool wait_committed(std::int64_t id, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return commits_done_[id] >= commits_expected_[id] || done_; });
  }
  void task_ended(std::size_t task) override {
    std::lock_guard lock(mu_);
    phases_[task] = Phase::kEnded;
    // No barrier reaches it any more: a pending checkpoint it has not snapshotted for
    // takes its state after the end (consistent: its inputs all ended, all they sent is in).
    if (pending_ && !pending_->acks.count(task)) tasks_[task]->trigger_checkpoint(pending_->barrier);
    cv_.notify_all();  // the coordinator may owe it its final checkpoint now
  }
  void task_finished(std::size_t task) override {
    std::lock_guard lock(mu_);
    phases_[task] = Phase::kFinished;
    if (pending_ && !pending_->acks.count(task)) {
      pending_->acks[task] = finished_snapshot(task);
      if (pending_->acks.size() == tasks_.size()) complete_pending();
    }
    cv_.notify_all();
  }

 private:
  struct Pending {
    std::int64_t id = 0;
    std::chrono::steady_clock::time_point started;
    std::map<std::size_t, detail::TaskSnapshot> acks;  // finished tasks: finished_snapshot()
    std::set<std::size_t> after_end;                   // tasks that snapshotted after their end of input
    std::optional<std::filesystem::path> savepoint_dir;
    bool created_dir = false;  // trigger() made the directory (it did not exist)
    bool stops_sources = false;
    CheckpointBarrier barrier;
    std::int64_t max_alignment_ns = 0;
  };
  // Where each task of the attempt is (FLIP-147): running; ended (its end of input
  // done, waiting for a checkpoint taken after it); covered (such a checkpoint
  // completed: it exits once it committed); finished (exited).
  enum class Phase { kRunning, kEnded, kCovered, kFinished };
  detail::TaskSnapshot finished_snapshot(std::size_t task) const { return detail::finished_snapshot(*tasks_[task]); }

 public:
  std::filesystem::path checkpoint_directory(std::int64_t id) const override {
    std::lock_guard lock(mu_);
    if (pending_ && pending_->id == id && pending_->savepoint_dir) return *pending_->savepoint_dir;
    return checkpoint_dir(id);
  }
  std::filesystem::path savepoint(const std::filesystem::path& dir, std::chrono::milliseconds timeout,
                                  bool stops_sources = false);
  void suspend_checkpoints(bool suspended);
  void resume_sources();
  bool checkpoint_pending(std::int64_t id) const override {
    std::lock_guard lock(mu_);
    return pending_ && pending_->id == id;
  }

 private:
  void trigger(Pending p);  // under mu_

  void supervise();
  void run_attempt();
  void coordinate();
  void build(const std::optional<std::filesystem::path>& restore_from);
  void complete_pending();                      // under mu_
  void sweep_checkpoint_dirs();                 // under mu_
  void abort_pending(const std::string& why);  // under mu_
  std::filesystem::path checkpoint_dir(std::int64_t id) const {
    return options_.checkpoints.directory / ("chk-" + std::to_string(id));
  }

  // Live state of backends that were given no working directory: a private
  // temporary directory, removed with the job.
  std::filesystem::path default_working_dir() {
    if (own_working_dir_.empty()) {
      static std::atomic<int> counter{0};
      own_working_dir_ = std::filesystem::temp_directory_path() /
                         ("clink-state-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    }
    return own_working_dir_;
  }

  void stop_attempt() {
    stopping_.store(true);
    std::lock_guard lock(tasks_mu_);
    for (auto& t : tasks_)
      if (t->gate) t->gate->cancel();
    cv_.notify_all();
  }

  JobGraph graph_;
  ExecutionOptions options_;
  MetricRegistry metrics_;
  std::thread supervisor_;

  std::mutex tasks_mu_;  // guards tasks_ against stop_attempt() during a rebuild
  std::vector<std::unique_ptr<detail::Task>> tasks_;
  std::atomic<bool> stopping_{false};

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::size_t running_ = 0;
  bool done_ = false;
  bool user_cancelled_ = false;
  bool attempt_failed_ = false;
  std::string attempt_error_;
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
  std::filesystem::path own_working_dir_;
  std::map<std::int64_t, std::size_t> commits_done_;      // checkpoint id -> tasks that ran its commit
  std::map<std::int64_t, std::size_t> commits_expected_;  // checkpoint id -> tasks notified of it
  std::vector<CheckpointStats> history_;
  CheckpointCounts counts_;
  std::vector<std::string> restart_causes_;

 public:
  std::vector<std::string> restart_causes() const {
    std::lock_guard lock(mu_);
    return restart_causes_;
  }
};

void JobRun::supervise() {
  int restarts = 0;
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
    const RestartStrategy& rs = options_.restart;
    if (rs.kind == RestartStrategy::Kind::kNone || restarts >= rs.max_attempts) {
      status_ = JobStatus::kFailed;
      error_ = attempt_error_;
      break;
    }
    ++restarts;
    ++counts_.restarts;
    restart_causes_.push_back(attempt_error_);
    auto delay = std::chrono::milliseconds(rs.delay_for(restarts));
    if (cv_.wait_for(lock, delay, [&] { return user_cancelled_; })) {
      status_ = JobStatus::kCanceled;
      break;
    }
    attempt_failed_ = false;
    // Restart from the latest completed checkpoint, else from what the job started from.
    std::optional<std::filesystem::path> from = last_completed_;
    if (!from && options_.restore) from = options_.restore->path;
    lock.unlock();
    try {
      build(from);
    } catch (const std::exception& e) {
      lock.lock();
      status_ = JobStatus::kFailed;
      error_ = std::string("restart failed: ") + e.what();
      break;
    }
  }
  // Under the mutex: a waiter between its predicate check and its sleep would otherwise
  // miss the notification and wait forever (seen as a rare hang of JobHandle::wait()).
  std::lock_guard lock(mu_);
  done_ = true;
  cv_.notify_all();
}

void JobRun::run_attempt() {
  {
    std::lock_guard lock(mu_);
    running_ = tasks_.size();
    phases_.assign(tasks_.size(), Phase::kRunning);
    pending_.reset();
  }
  std::vector<std::thread> threads;
  for (auto& task : tasks_) {
    threads.emplace_back([this, t = task.get()] {
      t->run();
      std::lock_guard lock(mu_);
      if (--running_ == 0) cv_.notify_all();
    });
  }
  std::thread coordinator;
  if (options_.checkpoints.enabled()) coordinator = std::thread([this] { coordinate(); });
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return running_ == 0; });
    if (pending_) abort_pending("the job attempt ended");
  }
  stopping_.store(true);  // stops the coordinator
  cv_.notify_all();
  for (auto& th : threads) th.join();
  if (coordinator.joinable()) coordinator.join();
  if (options_.checkpoints.enabled()) {
    std::lock_guard lock(mu_);
    sweep_checkpoint_dirs();
  }
}

void JobRun::coordinate() {
  const CheckpointConfig& cfg = options_.checkpoints;
  auto last_trigger = std::chrono::steady_clock::now();
  std::unique_lock lock(mu_);
  while (!stopping_.load()) {
    cv_.wait_for(lock, std::chrono::milliseconds(std::min<std::int64_t>(cfg.interval_ms, 50)));
    if (stopping_.load()) break;
    auto now = std::chrono::steady_clock::now();
    if (pending_) {
      if (now - pending_->started > std::chrono::milliseconds(cfg.timeout_ms))
        abort_pending("checkpoint " + std::to_string(pending_->id) + " expired after " +
                      std::to_string(cfg.timeout_ms) + " ms");
      continue;
    }
    // Checkpoints go on while some tasks have finished (FLIP-147). Once every source
    // ended, a task waiting for its final checkpoint gets one at once, not an interval
    // later: a bounded job ends about one checkpoint after its input.
    bool live = false, sources_running = false, awaiting_final = false;
    for (std::size_t t = 0; t < tasks_.size(); ++t) {
      live |= phases_[t] == Phase::kRunning || phases_[t] == Phase::kEnded;
      sources_running |= !tasks_[t]->gate && phases_[t] == Phase::kRunning;
      awaiting_final |= phases_[t] == Phase::kEnded;
    }
    bool due = now - last_trigger >= std::chrono::milliseconds(cfg.interval_ms) || (awaiting_final && !sources_running);
    if (checkpoints_suspended_ || !live || !due || now - last_checkpoint_end_ < std::chrono::milliseconds(cfg.min_pause_ms))
      continue;
    last_trigger = now;
    Pending p;
    p.id = next_checkpoint_id_++;
    p.started = now;
    trigger(std::move(p));
  }
}

// Flink's checkpoint plan: running sources inject the barrier; tasks whose end of
// input passed snapshot through their mailbox (their inputs ended, so no barrier comes);
// finished tasks are recorded as finished. A running task whose inputs all ended gets
// no barrier either: it snapshots at its own end (task_ended).
void JobRun::trigger(Pending p) {
  auto dir = p.savepoint_dir ? *p.savepoint_dir : checkpoint_dir(p.id);
  p.created_dir = std::filesystem::create_directories(dir);
  p.barrier = CheckpointBarrier{p.id, options_.clock->now_ms(), p.savepoint_dir.has_value(), p.stops_sources};
  pending_ = std::move(p);
  for (std::size_t t = 0; t < tasks_.size(); ++t) {
    if (phases_[t] == Phase::kFinished) pending_->acks[t] = finished_snapshot(t);
    else if (phases_[t] != Phase::kRunning || !tasks_[t]->gate) tasks_[t]->trigger_checkpoint(pending_->barrier);
  }
  if (pending_->acks.size() == tasks_.size()) complete_pending();
}

void JobRun::suspend_checkpoints(bool suspended) {
  std::lock_guard lock(mu_);
  checkpoints_suspended_ = suspended;
}

void JobRun::resume_sources() {
  std::lock_guard lock(tasks_mu_);
  for (auto& t : tasks_)
    if (!t->gate) t->resume_after_failed_stop();
}

std::filesystem::path JobRun::savepoint(const std::filesystem::path& dir, std::chrono::milliseconds timeout,
                                        bool stops_sources) {
  std::unique_lock lock(mu_);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  if (!cv_.wait_until(lock, deadline, [&] { return !pending_ || done_; }) || done_)
    throw ClinkError("savepoint: the job is not running");
  if (std::filesystem::exists(dir / kMetadataFile)) throw ClinkError("savepoint: " + dir.string() + " already holds one");
  // Never into a directory that holds other files: a failed savepoint removes what it
  // wrote, and must not take the user's files with it.
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec) && !std::filesystem::is_empty(dir, ec))
    throw ClinkError("savepoint: " + dir.string() + " is not empty (choose a new or an empty directory)");
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
    throw ClinkError("savepoint: " + dir.string() + " exists and is not a directory");
  Pending p;
  p.id = next_checkpoint_id_++;
  p.started = std::chrono::steady_clock::now();
  p.savepoint_dir = dir;
  p.stops_sources = stops_sources;
  std::int64_t id = p.id;
  trigger(std::move(p));
  auto finished = [&] {
    return std::any_of(history_.begin(), history_.end(), [&](const CheckpointStats& s) { return s.id == id; });
  };
  if (!cv_.wait_until(lock, deadline, finished)) {
    if (pending_ && pending_->id == id) abort_pending("savepoint timed out");
    throw ClinkError("savepoint " + dir.string() + " timed out");
  }
  for (const auto& s : history_)
    if (s.id == id && s.status == CheckpointStats::Status::kFailed)
      throw ClinkError("savepoint " + dir.string() + " failed: " + s.failure);
  return dir;
}

static std::int64_t directory_size(const std::filesystem::path& dir) {
  std::int64_t total = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); it != std::filesystem::end(it); ++it)
    if (it->is_regular_file(ec)) total += static_cast<std::int64_t>(it->file_size(ec));
  return total;
}

void JobRun::complete_pending() {
  Pending p = std::move(*pending_);
  pending_.reset();
  CheckpointMetadata meta;
  meta.is_savepoint = p.savepoint_dir.has_value();
  meta.checkpoint_id = p.id;
  meta.timestamp_ms = options_.clock->now_ms();
  meta.job_name = graph_.name;
  for (const auto& n : graph_.nodes) {
    auto& op = meta.operators[n.uid];
    op.parallelism = graph_.parallelism_of(n);
    op.max_parallelism = graph_.max_parallelism_of(n);
  }
  for (auto& [task, snapshot] : p.acks)
    for (auto& [uid, state] : snapshot) meta.operators[uid].subtasks.push_back(std::move(state));
  for (auto& [uid, op] : meta.operators)
    std::sort(op.subtasks.begin(), op.subtasks.end(),
              [](const OperatorSubtaskState& a, const OperatorSubtaskState& b) { return a.subtask < b.subtask; });
  auto dir = p.savepoint_dir ? *p.savepoint_dir : checkpoint_dir(p.id);
  CheckpointStats stats;
  stats.id = p.id;
  stats.path = dir.string();
  try {
    meta.write(dir);
  } catch (const std::exception& e) {
    stats.status = CheckpointStats::Status::kFailed;
    stats.failure = e.what();
    history_.push_back(stats);
    ++counts_.failed;
    cv_.notify_all();
    return;
  }
  auto now = std::chrono::steady_clock::now();
  stats.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - p.started).count();
  stats.size_bytes = directory_size(dir);
  stats.alignment_ms = p.max_alignment_ns / 1'000'000;
  history_.push_back(stats);
  last_checkpoint_end_ = now;
  // Tasks that snapshotted after their end of input exit once they committed this.
  for (std::size_t t : p.after_end)
    if (phases_[t] == Phase::kEnded) phases_[t] = Phase::kCovered;
  std::size_t notified = 0;
  for (std::size_t t = 0; t < tasks_.size(); ++t)
    if (phases_[t] != Phase::kFinished) {
      tasks_[t]->notify_checkpoint_complete(p.id);
      ++notified;
    }
  commits_expected_[p.id] = notified;
  cv_.notify_all();
  if (p.savepoint_dir) return;  // savepoints belong to the user: not retained, not used for failover
  ++counts_.completed;
  counts_.last_completed_id = p.id;
  last_completed_ = dir;
  // Keep the newest `retained` checkpoints. (Shared files of incremental snapshots are
  // released by the backends when they learn of newer completed checkpoints.)
  std::vector<KeyedStateHandle> handles;
  for (const auto& [uid, op] : meta.operators)
    for (const auto& st : op.subtasks) handles.insert(handles.end(), st.keyed.begin(), st.keyed.end());
  shared_.register_checkpoint(p.id, handles);
  retained_.emplace_back(p.id, dir);
  while (static_cast<int>(retained_.size()) > std::max(1, options_.checkpoints.retained)) {
    shared_.release_checkpoint(retained_.front().first);  // deletes shared files nobody uses now
    retained_.erase(retained_.begin());
  }
  sweep_checkpoint_dirs();
}

// Removes every chk-<n> directory that is neither retained nor pending: older
// completed ones, and aborted ones a slow task may have written into after the abort.
void JobRun::sweep_checkpoint_dirs() {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(options_.checkpoints.directory, ec)) {
    auto name = entry.path().filename().string();
    auto parsed = checkpoint_id_of(name);  // only directories named as clink names them
    if (!parsed) continue;
    // Only this job's own checkpoints: a restored-from checkpoint stays the user's.
    const std::int64_t id = *parsed;
    if (id < first_own_checkpoint_id_) continue;
    if (pending_ && pending_->id == id) continue;
    if (std::any_of(retained_.begin(), retained_.end(), [&](const auto& r) { return r.second == entry.path(); }))
      continue;
    std::filesystem::remove_all(entry.path(), ec);
  }
}

void JobRun::abort_pending(const std::string& why) {
  std::vector<KeyedStateHandle> uploaded;  // new shared files of the aborted checkpoint
  for (const auto& [task, snapshot] : pending_->acks)
    for (const auto& [uid, st] : snapshot) uploaded.insert(uploaded.end(), st.keyed.begin(), st.keyed.end());
  shared_.discard_unregistered(uploaded);
  CheckpointStats stats;
  stats.id = pending_->id;
  stats.status = CheckpointStats::Status::kFailed;
  stats.failure = why;
  stats.path = checkpoint_dir(pending_->id).string();
  history_.push_back(stats);
  ++counts_.failed;
  // Failed checkpoints are cleaned up. A savepoint's directory was new or empty (see
  // savepoint()): only what was written into it goes, not a directory the user made.
  std::error_code ec;
  if (!pending_->savepoint_dir) {
    std::filesystem::remove_all(checkpoint_dir(pending_->id), ec);
  } else if (pending_->created_dir) {
    std::filesystem::remove_all(*pending_->savepoint_dir, ec);
  } else {
    for (const auto& entry : std::filesystem::directory_iterator(*pending_->savepoint_dir, ec))
      std::filesystem::remove_all(entry.path(), ec);
  }
  pending_.reset();
  cv_.notify_all();
  last_checkpoint_end_ = std::chrono::steady_clock::now();
}

void JobRun::build(const std::optional<std::filesystem::path>& restore_from) {
  std::vector<std::unique_ptr<detail::Task>> tasks;
  std::optional<CheckpointMetadata> meta;
  std::filesystem::path restore_dir;
  if (restore_from) {
    restore_dir = *restore_from;
    meta = CheckpointMetadata::read(restore_dir);
    for (const auto& [uid, op] : meta->operators) {
      const JobNode* owner = nullptr;
      for (const auto& n : graph_.nodes)
        if (n.uid == uid) owner = &n;
      bool has_state = std::any_of(op.subtasks.begin(), op.subtasks.end(), [](const OperatorSubtaskState& s) {
        return !s.keyed.empty() || !s.timers_file.empty() || !s.operator_state_file.empty();
      });
      if (!owner) {
        if (has_state && !(options_.restore && options_.restore->allow_non_restored_state))
          throw ClinkError("cannot restore " + restore_dir.string() + ": state of operator uid '" + uid +
                           "' has no owner in this job (allow non-restored state to skip it)");
        continue;
      }
      if (op.max_parallelism != graph_.max_parallelism_of(*owner))
        throw ClinkError("cannot restore operator '" + uid + "': max parallelism changed from " +
                         std::to_string(op.max_parallelism) + " to " +
                         std::to_string(graph_.max_parallelism_of(*owner)) +
                         " (it is fixed at the first run: key groups depend on it)");
    }
    std::lock_guard lock(mu_);
    // The restored checkpoint stays the user's: its shared files are never released.
    std::vector<KeyedStateHandle> handles;
    for (const auto& [uid, op] : meta->operators)
      for (const auto& st : op.subtasks) handles.insert(handles.end(), st.keyed.begin(), st.keyed.end());
    if (status_ == JobStatus::kCreated) shared_.register_checkpoint(-meta->checkpoint_id - 1, handles);
    next_checkpoint_id_ = std::max(next_checkpoint_id_, meta->checkpoint_id + 1);
    if (status_ == JobStatus::kCreated) first_own_checkpoint_id_ = next_checkpoint_id_;
  }

  struct Placement {
    std::size_t chain;
    std::size_t position;
  };
  auto chains = compute_chains(graph_);
  // Fully finished operators (every subtask finished) do not run again.
  const auto finished = detail::fully_finished_operators(graph_, chains, meta ? &*meta : nullptr, restore_dir);
  std::map<std::string, Placement> where;
  for (std::size_t c = 0; c < chains.size(); ++c)
    for (std::size_t i = 0; i < chains[c].size(); ++i) where[chains[c][i]] = {c, i};

  std::vector<std::vector<detail::Task*>> tasks_by_chain(chains.size());
  std::map<std::pair<const JobEdge*, int>, std::size_t> channel_of;

  for (std::size_t c = 0; c < chains.size(); ++c) {
    const JobNode& head = graph_.node(chains[c].front());
    int p = graph_.parallelism_of(head);
    std::vector<int> channel_inputs;
    for (const JobEdge* e : graph_.inputs_of(head.id)) {
      int up = graph_.parallelism_of(graph_.node(e->from));
      for (int u = 0; u < up; ++u) {
        channel_of[{e, u}] = channel_inputs.size();
        channel_inputs.push_back(e->to_input);
      }
    }
    for (int s = 0; s < p; ++s) {
      auto task = std::make_unique<detail::Task>(
          tasks.size(), head.name + " (" + std::to_string(s + 1) + "/" + std::to_string(p) + ")", *this,
          *options_.clock, options_.checkpoints);
      if (head.num_inputs > 0) task->gate = std::make_unique<InputGate>(channel_inputs, graph_.config.channel_capacity);
      task->finished_on_restore = finished.count(head.id) > 0;
      for (const auto& id : chains[c]) {
        const JobNode& n = graph_.node(id);
        auto host = std::make_unique<detail::OperatorHost>();
        host->node = &n;
        host->display_name = n.name + " (" + std::to_string(s + 1) + "/" + std::to_string(p) + ")";
        host->metrics = metrics_.operator_metrics(n.id, s, task->time_metrics());
        host->output.metrics = host->metrics.get();
        int max_par = graph_.max_parallelism_of(n);
        host->ctx = std::make_unique<RuntimeContext>(n.id, n.name, s, p, max_par, &host->output, host->metrics,
                                                     *options_.clock);
        RuntimeContext& ctx = *host->ctx;
        ctx.set_checkpointing_enabled(options_.checkpoints.enabled());
        // Operators whose every input is hash-partitioned are keyed: they get a backend.
        auto ins = graph_.inputs_of(n.id);
        bool keyed = !ins.empty() && std::all_of(ins.begin(), ins.end(), [](const JobEdge* e) {
          return e->partitioning == Partitioning::kHash;
        });
        if (keyed) {
          StateBackendConfig cfg = options_.checkpoints.state_backend;
          if (cfg.working_dir.empty()) cfg.working_dir = default_working_dir();
          ctx.set_keyed_state_backend(
              make_keyed_state_backend(cfg, n.uid, s, ctx.key_groups(), max_par, *options_.clock));
        }
        if (meta) {
          auto it = meta->operators.find(n.uid);
          if (it != meta->operators.end()) {
            const OperatorCheckpointState& old = it->second;
            std::vector<KeyedStateHandle> handles;
            std::vector<std::pair<std::filesystem::path, int>> timer_files;
            std::vector<OperatorStateStore> op_states;
            for (const auto& st : old.subtasks) {
              for (const auto& h : st.keyed)
                if (h.key_groups.first <= ctx.key_groups().last && h.key_groups.last >= ctx.key_groups().first)
                  handles.push_back(h);
              if (!st.timers_file.empty()) timer_files.emplace_back(restore_dir / st.timers_file, st.subtask);
              if (!st.operator_state_file.empty())
                op_states.push_back(OperatorStateStore::read(restore_dir / st.operator_state_file));
            }
            if (!handles.empty()) {
              if (!ctx.keyed_state_backend())
                throw ClinkError("cannot restore operator '" + n.uid + "': it has keyed state but is not keyed now");
              ctx.keyed_state_backend()->restore(handles);
            }
            restore_timers(ctx.timer_service(), timer_files, ctx.key_groups(), max_par, s);
            ctx.set_operator_state(OperatorStateStore::redistribute(op_states, s, p));
            ctx.set_restored(true);
          }
        }
        host->op = n.build();
        if (!host->op) throw ClinkError("operator '" + n.id + "': builder returned nothing");
        if (host->op->num_inputs() != n.num_inputs)
          throw ClinkError("operator '" + n.id + "' declares " + std::to_string(n.num_inputs) +
                           " inputs but its implementation has " + std::to_string(host->op->num_inputs()));
        task->chain.push_back(std::move(host));
      }
      tasks_by_chain[c].push_back(task.get());
      tasks.push_back(std::move(task));
    }
  }

  // Wire every edge: chained edges call the next operator, others go through channels.
  for (const JobEdge& e : graph_.edges) {
    Placement from = where.at(e.from);
    Placement to = where.at(e.to);
    int up = graph_.parallelism_of(graph_.node(e.from));
    int down = graph_.parallelism_of(graph_.node(e.to));
    int max_par = graph_.max_parallelism_of(graph_.node(e.to));
    for (int s = 0; s < up; ++s) {
      detail::OperatorHost& src = *tasks_by_chain[from.chain][static_cast<std::size_t>(s)]->chain[from.position];
      std::unique_ptr<detail::Target> target;
      if (from.chain == to.chain) {
        target = std::make_unique<detail::ChainedTarget>(
            tasks_by_chain[to.chain][static_cast<std::size_t>(s)]->chain[to.position].get());
      } else {
        std::unique_ptr<Partitioner> part;
        switch (e.partitioning) {
          case Partitioning::kForward:
            // Flink: forward needs equal parallelism; otherwise records are rebalanced.
            part = up == down ? make_forward_partitioner(s, down) : make_rebalance_partitioner(s, down);
            break;
          case Partitioning::kRebalance: part = make_rebalance_partitioner(s, down); break;
          case Partitioning::kBroadcast: part = make_broadcast_partitioner(down); break;
          case Partitioning::kHash: part = e.hash_partitioner(s, down, max_par); break;
        }
        std::vector<InputGate*> gates;
        std::vector<std::size_t> channels;
        for (int d = 0; d < down; ++d) {
          gates.push_back(tasks_by_chain[to.chain][static_cast<std::size_t>(d)]->gate.get());
          channels.push_back(channel_of.at({&e, s}));
        }
        auto* task = tasks_by_chain[from.chain][static_cast<std::size_t>(s)];
        target = std::make_unique<detail::NetworkTarget>(std::move(part), std::move(gates), std::move(channels),
                                                         task->time_metrics().get());
      }
      if (e.side_output.empty()) src.output.main.push_back(std::move(target));
      else src.output.sides[e.side_output].push_back(std::move(target));
    }
  }
  std::lock_guard lock(tasks_mu_);
  tasks_ = std::move(tasks);
  stopping_.store(false);
}

JobHandle::JobHandle(std::shared_ptr<JobRun> run) : run_(std::move(run)) {}

void JobHandle::wait() {
  run_->wait();
  if (run_->status() == JobStatus::kFailed) throw JobFailedError(run_->error());
}
bool JobHandle::wait_for(std::chrono::milliseconds timeout) { return run_->wait_for(timeout); }
void JobHandle::cancel() { run_->cancel(); }
JobStatus JobHandle::status() const { return run_->status(); }
std::string JobHandle::error() const { return run_->error(); }
const MetricRegistry& JobHandle::metrics() const { return run_->metrics(); }
std::vector<CheckpointStats> JobHandle::checkpoint_history() const { return run_->history(); }
CheckpointCounts JobHandle::checkpoint_counts() const { return run_->counts(); }
std::vector<std::string> JobHandle::restart_causes() const { return run_->restart_causes(); }
std::filesystem::path JobHandle::savepoint(const std::filesystem::path& dir, std::chrono::milliseconds timeout) {
  return run_->savepoint(dir, timeout);
}
std::filesystem::path JobHandle::stop_with_savepoint(const std::filesystem::path& dir, std::chrono::milliseconds timeout) {
  run_->suspend_checkpoints(true);
  std::filesystem::path path;
  try {
    path = run_->savepoint(dir, timeout, /*stops_sources=*/true);
  } catch (...) {
    run_->resume_sources();
    run_->suspend_checkpoints(false);  // the job goes on: so do its checkpoints
    throw;
  }
  // As Flink: stop only once the savepoint's transactions are committed everywhere,
  // so the output it covers is visible when this returns.
  run_->wait_committed(CheckpointMetadata::read(path).checkpoint_id, timeout);
  run_->cancel();
  run_->wait();
  return path;
}

JobHandle execute_async(const JobGraph& graph, ExecutionOptions options) {
  auto run = std::make_shared<JobRun>(graph, std::move(options));
  run->start();
  return JobHandle(std::move(run));
}

void execute(const JobGraph& graph, ExecutionOptions options) { execute_async(graph, options).wait(); }

}  // namespace clink
