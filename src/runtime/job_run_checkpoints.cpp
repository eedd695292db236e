// The checkpoint coordinator of a job run: triggering checkpoints and savepoints,
// completing them (metadata, retention, commits), aborting them, and keeping the
// checkpoint directory to what the run owns.
#include "job_run.hpp"

#include "clink/checkpoint/checkpoint_integrity.hpp"
#include "clink/core/private_directory.hpp"

namespace clink {

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
    for (std::size_t t = 0; t < layout_.tasks.size(); ++t) {
      live |= phases_[t] == Phase::kRunning || phases_[t] == Phase::kEnded;
      sources_running |= layout_.tasks[t].source && phases_[t] == Phase::kRunning;
      awaiting_final |= phases_[t] == Phase::kEnded;
    }
    bool due = now - last_trigger >= std::chrono::milliseconds(cfg.interval_ms) || (awaiting_final && !sources_running);
    // A region restarting: its tasks could not snapshot (Flink fails such triggers).
    if (checkpoints_suspended_ || !live || !due || !deployer_->ready() || !restarting_regions_.empty() ||
        now - last_checkpoint_end_ < std::chrono::milliseconds(cfg.min_pause_ms))
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
  if (!p.savepoint_dir) {
    // A chk-<n> of this number left by an earlier run (one that was passed over as
    // incomplete or corrupt, after a fallback to an older checkpoint): its stale files
    // must not become part of this checkpoint.
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  p.created_dir = create_private_directories(dir);
  p.barrier = CheckpointBarrier{p.id, options_.clock->now_ms(), p.savepoint_dir.has_value(), p.stops_sources};
  pending_ = std::move(p);
  deployer_->checkpoint_started(pending_->barrier, dir);
  for (std::size_t t = 0; t < layout_.tasks.size(); ++t) {
    if (phases_[t] == Phase::kFinished) {
      pending_->acks[t] = finished_snapshot(t);
      pending_->task_stats[t] = {};
    }
    else if (pending_->drains && phases_[t] == Phase::kRunning && layout_.tasks[t].source)
      deployer_->trigger_drained_checkpoint(t, pending_->barrier);
    else if (phases_[t] != Phase::kRunning || layout_.tasks[t].source) deployer_->trigger_checkpoint(t, pending_->barrier);
  }
  if (pending_->acks.size() == layout_.tasks.size()) complete_pending();
}

void JobRun::suspend_checkpoints(bool suspended) {
  std::lock_guard lock(mu_);
  checkpoints_suspended_ = suspended;
}

void JobRun::resume_sources() {
  std::lock_guard lock(deploy_mu_);
  for (std::size_t t = 0; t < layout_.tasks.size(); ++t)
    if (layout_.tasks[t].source) deployer_->resume_after_failed_stop(t);
}

std::filesystem::path JobRun::savepoint(const std::filesystem::path& dir, std::chrono::milliseconds timeout,
                                        bool stops_sources, bool drains) {
  std::unique_lock lock(mu_);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  if (!cv_.wait_until(lock, deadline, [&] { return (!pending_ && restarting_regions_.empty()) || done_; }) || done_)
    throw ClinkError("savepoint: the job is not running");
  if (!deployer_->ready()) throw ClinkError("savepoint: the job's tasks are not running yet (waiting for slots)");
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
  p.drains = drains;
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
    meta.files = digest_checkpoint_files(dir, meta, shared_digests_);
    meta.write(dir);
    if (!p.savepoint_dir && options_.on_checkpoint_completed) options_.on_checkpoint_completed(p.id, dir);
  } catch (const std::exception& e) {
    if (!p.savepoint_dir) {  // not a checkpoint to restore from
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
    stats.status = CheckpointStats::Status::kFailed;
    stats.failure = e.what();
    log::warn("{} {} failed: {}", p.savepoint_dir ? "savepoint" : "checkpoint", p.id, stats.failure);
    history_.push_back(stats);
    ++counts_.failed;
    cv_.notify_all();
    return;
  }
  auto now = std::chrono::steady_clock::now();
  stats.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - p.started).count();
  stats.size_bytes = directory_size(dir);
  stats.alignment_ms = p.max_alignment_ns / 1'000'000;
  for (auto [t, ack] : p.task_stats) {
    ack.head = layout_.chains[layout_.tasks[t].chain].front();
    ack.subtask = layout_.tasks[t].subtask;
    stats.tasks.push_back(std::move(ack));
  }
  log::debug("{} {} completed in {} ms ({} bytes): {}", p.savepoint_dir ? "savepoint" : "checkpoint", p.id,
             stats.duration_ms, stats.size_bytes, stats.path);
  history_.push_back(stats);
  last_checkpoint_end_ = now;
  // Tasks that snapshotted after their end of input exit once they committed this.
  for (std::size_t t : p.after_end)
    if (phases_[t] == Phase::kEnded) phases_[t] = Phase::kCovered;
  auto& notified = commits_expected_[p.id];
  for (std::size_t t = 0; t < layout_.tasks.size(); ++t)
    if (phases_[t] != Phase::kFinished) {
      deployer_->notify_checkpoint_complete(t, p.id);
      notified.insert(t);
    }
  cv_.notify_all();
  if (p.savepoint_dir && p.stops_sources) stop_savepoint_ = dir;
  // Savepoints belong to the user: not retained, and used for failover only once a
  // stop's savepoint completed (see stop_savepoint_).
  if (p.savepoint_dir) return;
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
    // Deletes shared files nobody uses now.
    for (const auto& gone : shared_.release_checkpoint(retained_.front().first)) shared_digests_.erase(gone.string());
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
  for (const auto& [task, snapshot] : pending_->acks) discard_uploaded(snapshot);  // new shared files
  CheckpointStats stats;
  stats.id = pending_->id;
  stats.status = CheckpointStats::Status::kFailed;
  stats.failure = why;
  stats.path = checkpoint_dir(pending_->id).string();
  // An attempt ending (a bounded job finishing, a failure) takes its pending checkpoint along: no news.
  log::at(why == std::string_view(kAttemptEnded) ? log::Level::kDebug : log::Level::kWarn, "{} {} aborted: {}",
          pending_->savepoint_dir ? "savepoint" : "checkpoint", pending_->id, why);
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

}  // namespace clink
