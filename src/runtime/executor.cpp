#include "clink/runtime/executor.hpp"

#include "job_run.hpp"

#include <cstdio>

#include "clink/checkpoint/checkpoint_integrity.hpp"
#include "clink/checkpoint/restart_tracker.hpp"
#include "local_deployer.hpp"

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

std::vector<TaskPlan> plan_tasks(const JobGraph& graph) {
  std::vector<TaskPlan> plans;
  for (auto& chain : TaskLayout::of(graph).chains) {
    TaskPlan p;
    p.parallelism = graph.parallelism_of(graph.node(chain.front()));
    p.chain = std::move(chain);
    plans.push_back(std::move(p));
  }
  return plans;
}

JobRun::JobRun(const JobGraph& graph, ExecutionOptions options, const DeployerFactory& make_deployer)
    : graph_(graph), options_(std::move(options)), layout_(TaskLayout::of(graph_)) {
  log_context_.job = log::context().job.empty() ? graph_.name : log::context().job;
  log::ScopedContext in_job(log_context_);  // a local deployer's tasks inherit it
  deployer_ = make_deployer ? make_deployer(*this, metrics_)
                            : std::make_unique<detail::LocalDeployer>(graph_, options_, *this, metrics_);
}

std::optional<std::pair<std::filesystem::path, CheckpointMetadata>> JobRun::restart_point() {
  std::vector<std::pair<std::int64_t, std::filesystem::path>> retained;
  std::optional<std::filesystem::path> stop_savepoint;
  {
    std::lock_guard lock(mu_);
    retained = retained_;
    stop_savepoint = stop_savepoint_;
  }
  // Once a stop's savepoint completed, only it (see stop_savepoint_).
  if (stop_savepoint) return std::make_pair(*stop_savepoint, read_verified_checkpoint(*stop_savepoint));
  for (auto it = retained.rbegin(); it != retained.rend(); ++it) {
    try {
      return std::make_pair(it->second, read_verified_checkpoint(it->second));
    } catch (const CorruptCheckpointError& e) {
      log::warn("{}; restoring from an older checkpoint", e.what());
    }
  }
  // The job's own checkpoints are gone or damaged: what it started from (verified in build).
  if (options_.restore) return std::make_pair(options_.restore->path, read_verified_checkpoint(options_.restore->path));
  return std::nullopt;
}

void JobRun::build(const std::optional<std::filesystem::path>& restore_from,
                   std::optional<CheckpointMetadata> verified) {
  log::ScopedContext in_job(log_context_);  // the deployer's tasks inherit it
  std::optional<CheckpointMetadata> meta;
  std::filesystem::path restore_dir;
  if (restore_from) {
    restore_dir = *restore_from;
    meta = verified ? std::move(verified) : read_verified_checkpoint(restore_dir);
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
    const bool first = status_ == JobStatus::kCreated;
    if (first && options_.restore && options_.restore->claim) {
      // Claimed: one of the job's own retained checkpoints, subsumed by its next ones;
      // the older chk-<n> beside it (its predecessor's) are swept.
      shared_.register_checkpoint(meta->checkpoint_id, handles);
      retained_.emplace_back(meta->checkpoint_id, restore_dir);
      last_completed_ = restore_dir;
      first_own_checkpoint_id_ = 0;
    } else if (first) {
      shared_.register_checkpoint(-meta->checkpoint_id - 1, handles);
    }
    next_checkpoint_id_ = std::max(next_checkpoint_id_, meta->checkpoint_id + 1);
    counts_.last_restored_id = meta->checkpoint_id;
    if (first && !(options_.restore && options_.restore->claim)) first_own_checkpoint_id_ = next_checkpoint_id_;
  }

  AttemptStart start{restore_from, 0};
  {
    std::lock_guard lock(mu_);
    phases_.assign(layout_.tasks.size(), Phase::kRunning);
    pending_.reset();
    start.last_checkpoint_id = next_checkpoint_id_ - 1;
  }
  std::lock_guard lock(deploy_mu_);
  stopping_.store(false);
  deployer_->deploy(attempt_++, start);
  // A cancel or failure while the attempt was being deployed reached no task of it.
  std::lock_guard state_lock(mu_);
  if (user_cancelled_ || attempt_failed_) {
    stopping_.store(true);
    deployer_->cancel();
  }
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
std::filesystem::path JobHandle::stop_with_savepoint(const std::filesystem::path& dir, std::chrono::milliseconds timeout,
                                                     bool drain) {
  run_->suspend_checkpoints(true);
  std::filesystem::path path;
  try {
    path = run_->savepoint(dir, timeout, /*stops_sources=*/true, drain);
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

JobHandle execute_deployed(const JobGraph& graph, ExecutionOptions options, const DeployerFactory& make_deployer) {
  auto run = std::make_shared<JobRun>(graph, std::move(options), make_deployer);
  run->start();
  return JobHandle(std::move(run));
}

JobHandle execute_async(const JobGraph& graph, ExecutionOptions options) {
  auto run = std::make_shared<JobRun>(graph, std::move(options));
  run->start();
  return JobHandle(std::move(run));
}

void execute(const JobGraph& graph, ExecutionOptions options) { execute_async(graph, options).wait(); }

}  // namespace clink
