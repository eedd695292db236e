#include "clink/runtime/executor.hpp"

#include "job_run.hpp"

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
      begin_attempt();
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
  directory_lock_.release();  // before waiters wake: a restore may follow at once
  done_ = true;
  cv_.notify_all();
}

void JobRun::begin_attempt() {
  std::lock_guard lock(mu_);
  running_ = tasks_.size();
  phases_.assign(tasks_.size(), Phase::kRunning);
  pending_.reset();
}

// The attempt's bookkeeping was set by begin_attempt() before it, so a checkpoint or
// savepoint triggered between the build and these threads finds every task (a savepoint
// asked for right after execute_async() returned once indexed an empty phases_).
void JobRun::run_attempt() {
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
        ctx.set_task_mailbox([t = task.get()](std::function<void()> action) { t->post(std::move(action)); });
        ctx.set_cancelled_check([this] { return cancelled(); });
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
        std::vector<std::unique_ptr<ChannelWriter>> writers;
        for (int d = 0; d < down; ++d)
          writers.push_back(make_local_channel_writer(*tasks_by_chain[to.chain][static_cast<std::size_t>(d)]->gate,
                                                      channel_of.at({&e, s})));
        auto* task = tasks_by_chain[from.chain][static_cast<std::size_t>(s)];
        target = std::make_unique<detail::NetworkTarget>(std::move(part), std::move(writers),
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
