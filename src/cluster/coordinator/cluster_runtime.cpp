#include "clink/cluster/coordinator/cluster_runtime.hpp"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "../control/control_server.hpp"
#include "clink/cluster/deploy_options.hpp"
#include "clink/core/error.hpp"
#include "clink/core/log.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "clink/runtime/task_group.hpp"

namespace clink::cluster {

namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

class ClusterDeployer;

// Workers, their slots, and the deployers of running jobs (to route workers' events).
class ClusterRuntime::Impl {
 public:
  explicit Impl(ClusterRuntimeConfig config);
  ~Impl() { server_.reset(); }

  struct Slot {
    std::string worker_id;
    std::string host;
    int data_port = 0;
    int index = 0;  // the worker's slot number
  };
  // Takes `n` free slots for `job_id`, spread over the workers; waits for workers to
  // register up to the slot request timeout.
  // Empty when `cancelled` was set meanwhile (wake() makes it look).
  std::vector<Slot> allocate(const std::string& job_id, int n, const std::atomic<bool>& cancelled);
  void wake() {
    std::lock_guard lock(mu_);
    slots_cv_.notify_all();
  }
  void release(const std::string& job_id);
  bool send(const std::string& worker_id, const proto::CoordinatorMessage& m) { return server_->send(worker_id, m); }
  void attach(const std::string& job_id, ClusterDeployer* deployer);
  void detach(const std::string& job_id);

  int rpc_port() const { return server_->port(); }
  std::vector<WorkerInfo> workers() const;
  std::vector<WorkerInfo> subtask_workers(const std::string& job_id) const;
  // Records where the job's current attempt runs: worker ids by subtask index. Kept after
  // the job ended, as Flink's REST still shows where an ended job's subtasks ran.
  void placed(const std::string& job_id, std::vector<std::string> workers) {
    std::lock_guard lock(mu_);
    placements_[job_id] = std::move(workers);
  }

 private:
  void on_registered(const proto::Register& r);
  void on_message(const std::string& worker_id, const proto::WorkerMessage& m);
  void on_lost(const std::string& worker_id, const std::string& reason);

  struct Worker {
    WorkerInfo info;
    std::vector<std::string> slot_owner;  // job id per slot ("" when free)
  };
  ClusterRuntimeConfig config_;
  mutable std::mutex mu_;
  std::condition_variable slots_cv_;
  std::map<std::string, Worker> workers_;
  std::map<std::string, ClusterDeployer*> deployers_;
  std::map<std::string, std::vector<std::string>> placements_;  // by job: worker id by subtask
  std::unique_ptr<ControlServer> server_;
};

// Runs each attempt of one job on slots of the cluster's workers.
class ClusterDeployer final : public TaskDeployer {
 public:
  ClusterDeployer(ClusterRuntime::Impl& cluster, std::string job_id, const JobGraph& graph,
                  const ExecutionOptions& options, TaskEvents& events, MetricRegistry& metrics)
      : cluster_(cluster),
        job_id_(std::move(job_id)),
        spec_(to_spec(graph).dump()),
        layout_(TaskLayout::of(graph)),
        options_(options),
        events_(events),
        metrics_(metrics) {
    cluster_.attach(job_id_, this);
  }
  ~ClusterDeployer() override {
    cancel();
    if (placing_.joinable()) placing_.join();
    cluster_.detach(job_id_);
    cluster_.release(job_id_);
  }

  // Returns at once: the attempt waits for free slots (up to slot.request.timeout) on a
  // thread of its own, so a submission or a restart does not block on the cluster's
  // resources; checkpoints start once the tasks are deployed.
  void deploy(std::int64_t attempt, const std::optional<std::filesystem::path>& restore) override {
    if (placing_.joinable()) placing_.join();
    {
      std::lock_guard lock(mu_);
      attempt_ = attempt;
      worker_of_.assign(layout_.tasks.size(), "");
      exited_.assign(layout_.tasks.size(), false);
      remaining_ = layout_.tasks.size();
      deployed_ = false;
      cancelled_ = false;
    }
    placing_ = std::thread([this, attempt, restore] { place(attempt, restore); });
  }

  bool ready() const override {
    std::lock_guard lock(mu_);
    return deployed_;
  }

  void place(std::int64_t attempt, const std::optional<std::filesystem::path>& restore) {
    log::ScopedContext in_job({job_id_});
    int slots_needed = 0;
    for (const auto& t : layout_.tasks) slots_needed = std::max(slots_needed, t.subtask + 1);
    std::vector<ClusterRuntime::Impl::Slot> slots;
    std::string failure;
    try {
      slots = cluster_.allocate(job_id_, slots_needed, cancelled_);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    const std::string options_json = deploy_options_json(DeployOptions{options_.checkpoints, restore});
    if (!slots.empty()) {  // (before mu_: the cluster's lock is never taken under a deployer's)
      std::vector<std::string> by_subtask;
      for (const auto& slot : slots) by_subtask.push_back(slot.worker_id);
      cluster_.placed(job_id_, std::move(by_subtask));
    }
    std::unique_lock lock(mu_);
    if (slots.empty() || cancelled_) {  // no tasks started: the attempt is over
      std::fill(exited_.begin(), exited_.end(), true);
      remaining_ = 0;
      cv_.notify_all();
      lock.unlock();
      if (!failure.empty()) log::error("attempt {}: {}", attempt, failure);
      if (!failure.empty()) events_.fail(TaskEvents::kWholeJob, failure);
      return;
    }
    std::map<std::string, proto::CoordinatorMessage> deploys;  // by worker
    for (std::size_t t = 0; t < layout_.tasks.size(); ++t) {
      const auto& slot = slots[static_cast<std::size_t>(layout_.tasks[t].subtask)];
      worker_of_[t] = slot.worker_id;
      auto* d = deploys[slot.worker_id].mutable_deploy();
      if (d->job_id().empty()) {
        d->set_job_id(job_id_);
        d->set_attempt(attempt);
        d->set_spec_json(spec_);
        d->set_options_json(options_json);
      }
      d->add_local_tasks(static_cast<int>(t));
    }
    for (auto& [worker, m] : deploys)
      for (std::size_t t = 0; t < layout_.tasks.size(); ++t) {
        const auto& slot = slots[static_cast<std::size_t>(layout_.tasks[t].subtask)];
        auto* loc = m.mutable_deploy()->add_tasks();
        loc->set_worker_id(slot.worker_id);
        loc->set_host(slot.host);
        loc->set_data_port(slot.data_port);
      }
    deployed_ = true;
    log::info("attempt {}: {} tasks deployed on {} worker(s){}", attempt, layout_.tasks.size(), deploys.size(),
              restore ? " from " + restore->string() : std::string());
    // Queued under mu_ (send never blocks): a cancel's CancelAttempt, sent after it took
    // mu_, always follows the Deploy on a worker's stream.
    std::vector<std::string> gone;
    for (auto& [worker, m] : deploys)
      if (!cluster_.send(worker, m)) gone.push_back(worker);
    lock.unlock();
    for (const auto& w : gone) worker_lost(w, "it left before its tasks were deployed");
  }

  void wait_exited() override {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return remaining_ == 0; });
    }
    cluster_.release(job_id_);  // a finished job holds no slots; a restart takes them again
  }

  void cancel() override {
    std::set<std::string> workers;
    proto::CoordinatorMessage m;
    {
      std::lock_guard lock(mu_);
      cancelled_ = true;
      for (std::size_t t = 0; t < worker_of_.size(); ++t)
        if (!exited_[t]) workers.insert(worker_of_[t]);
      m.mutable_cancel_attempt()->set_job_id(job_id_);
      m.mutable_cancel_attempt()->set_attempt(attempt_);
    }
    cluster_.wake();  // an attempt waiting for slots gives up
    for (const auto& w : workers)
      if (!cluster_.send(w, m)) worker_lost(w, "it is gone");
  }

  void checkpoint_started(const CheckpointBarrier& barrier, const std::filesystem::path& dir) override {
    std::set<std::string> workers;
    proto::CoordinatorMessage m;
    {
      std::lock_guard lock(mu_);
      workers.insert(worker_of_.begin(), worker_of_.end());
      auto* t = m.mutable_trigger_checkpoint();
      t->set_job_id(job_id_);
      t->set_attempt(attempt_);
      t->set_task(-1);  // no task: tells where the files go
      t->set_checkpoint_id(barrier.checkpoint_id);
      t->set_directory(dir.string());
    }
    for (const auto& w : workers) cluster_.send(w, m);
  }

  void trigger_checkpoint(std::size_t task, const CheckpointBarrier& barrier) override {
    trigger(task, barrier, false);
  }
  void trigger_drained_checkpoint(std::size_t task, const CheckpointBarrier& barrier) override {
    trigger(task, barrier, true);
  }
  void trigger(std::size_t task, const CheckpointBarrier& barrier, bool drains) {
    proto::CoordinatorMessage m;
    auto* t = m.mutable_trigger_checkpoint();
    t->set_job_id(job_id_);
    t->set_task(static_cast<int>(task));
    t->set_checkpoint_id(barrier.checkpoint_id);
    t->set_timestamp_ms(barrier.timestamp_ms);
    t->set_is_savepoint(barrier.is_savepoint);
    t->set_stops_sources(barrier.stops_sources);
    t->set_drains(drains);
    send_to_task(task, m, [&](std::int64_t a) { t->set_attempt(a); });
  }

  void notify_checkpoint_complete(std::size_t task, std::int64_t checkpoint_id) override {
    proto::CoordinatorMessage m;
    auto* n = m.mutable_notify_complete();
    n->set_job_id(job_id_);
    n->set_task(static_cast<int>(task));
    n->set_checkpoint_id(checkpoint_id);
    send_to_task(task, m, [&](std::int64_t a) { n->set_attempt(a); });
  }

  void resume_after_failed_stop(std::size_t task) override {
    proto::CoordinatorMessage m;
    auto* r = m.mutable_resume_sources();
    r->set_job_id(job_id_);
    send_to_task(task, m, [&](std::int64_t a) { r->set_attempt(a); });
  }

  // ---- from the workers ----
  void on_task_event(const proto::TaskEvent& e) {
    const bool whole_job = e.task() < 0;  // a failure of no one task (a deploy's)
    std::size_t task = whole_job ? TaskEvents::kWholeJob : static_cast<std::size_t>(e.task());
    {
      std::lock_guard lock(mu_);
      if (e.attempt() != attempt_ || (!whole_job && task >= exited_.size())) return;
      if (whole_job && e.kind() != proto::TaskEvent::FAILED) return;
      // A failure is the attempt's (it names its operator), whichever task reports it.
      if (!whole_job && exited_[task] && e.kind() != proto::TaskEvent::FAILED) return;
      if (!whole_job && e.kind() == proto::TaskEvent::EXITED) {
        exited_[task] = true;
        if (--remaining_ == 0) cv_.notify_all();
        return;
      }
    }
    switch (e.kind()) {
      case proto::TaskEvent::ENDED: events_.task_ended(task); break;
      case proto::TaskEvent::FINISHED: events_.task_finished(task); break;
      case proto::TaskEvent::COMMITTED: events_.checkpoint_committed(task, e.checkpoint_id()); break;
      case proto::TaskEvent::FAILED: events_.fail(task, e.message()); break;
      default: break;
    }
  }

  void on_checkpoint_ack(const proto::CheckpointAck& a) {
    {
      std::lock_guard lock(mu_);
      if (a.attempt() != attempt_) return;
    }
    TaskSnapshot snapshot;
    for (const auto& entry : nlohmann::json::parse(a.snapshot_json()))
      snapshot.emplace_back(entry.at(0).get<std::string>(), subtask_state_from_json(entry.at(1)));
    events_.acknowledge_checkpoint(static_cast<std::size_t>(a.task()), a.checkpoint_id(), std::move(snapshot),
                                   a.alignment_ns());
  }

  // A worker's latest counters of this job's operator subtasks (rows as
  // AttemptHost::metrics() writes them), into the job's registry.
  void on_metrics(const nlohmann::json& rows) {
    std::lock_guard lock(mu_);
    for (const auto& r : rows) {
      auto key = std::make_pair(r.at(0).get<std::string>(), r.at(1).get<int>());
      auto& m = remote_metrics_[key];
      if (!m) m = metrics_.operator_metrics(key.first, key.second, std::make_shared<TaskTimeMetrics>());
      m->records_in.store(r.at(2).get<std::int64_t>());
      m->records_out.store(r.at(3).get<std::int64_t>());
      m->batches_in.store(r.at(4).get<std::int64_t>());
      m->batches_out.store(r.at(5).get<std::int64_t>());
      m->late_records_dropped.store(r.at(6).get<std::int64_t>());
      m->dead_letters.store(r.at(7).get<std::int64_t>());
      m->task_time->busy_ns.store(r.at(8).get<std::int64_t>());
      m->task_time->backpressured_ns.store(r.at(9).get<std::int64_t>());
      m->task_time->idle_ns.store(r.at(10).get<std::int64_t>());
      m->input_watermark.store(r.at(11).get<std::int64_t>());
      m->output_watermark.store(r.at(12).get<std::int64_t>());
      if (r.size() > 15) {  // a worker of an older version sends no more
        m->bytes_in.store(r.at(13).get<std::int64_t>());
        m->bytes_out.store(r.at(14).get<std::int64_t>());
        m->pending_records.store(r.at(15).get<std::int64_t>());
      }
      if (r.size() > 16 && r.at(16).is_object()) {
        // Dead letters by reason: the copy is brought to the worker's counts (a reason
        // the worker no longer has, after a restart, goes back to 0).
        std::map<std::string, std::int64_t> want;
        for (const auto& [reason, n] : r.at(16).items()) want[reason] = n.get<std::int64_t>();
        auto have = m->dead_letters_by_reason();
        for (const auto& [reason, n] : have) want.emplace(reason, 0);
        for (const auto& [reason, n] : want)
          if (n != have[reason]) m->count_dead_letters(reason, n - have[reason], false);
      }
    }
  }

  // The worker's tasks of this attempt are gone: the attempt fails (and restarts per
  // the restart strategy, from the latest checkpoint).
  void worker_lost(const std::string& worker_id, const std::string& reason) {
    bool hit = false;
    {
      std::lock_guard lock(mu_);
      for (std::size_t t = 0; t < worker_of_.size(); ++t)
        if (worker_of_[t] == worker_id && !exited_[t]) {
          exited_[t] = true;
          --remaining_;
          hit = true;
        }
      if (remaining_ == 0) cv_.notify_all();
    }
    if (!hit) return;
    log::ScopedContext in_job({job_id_});
    log::warn("tasks on worker {} lost: {}", worker_id, reason);
    events_.fail(TaskEvents::kWholeJob, "worker " + worker_id + " was lost: " + reason);
  }

 private:
  template <class SetAttempt>
  void send_to_task(std::size_t task, proto::CoordinatorMessage& m, SetAttempt set_attempt) {
    std::string worker;
    {
      std::lock_guard lock(mu_);
      if (task >= worker_of_.size() || exited_[task]) return;
      worker = worker_of_[task];
      set_attempt(attempt_);
    }
    cluster_.send(worker, m);
  }

  ClusterRuntime::Impl& cluster_;
  std::string job_id_;
  std::string spec_;
  TaskLayout layout_;
  ExecutionOptions options_;
  TaskEvents& events_;
  MetricRegistry& metrics_;
  std::map<std::pair<std::string, int>, std::shared_ptr<OperatorMetrics>> remote_metrics_;  // under mu_
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::thread placing_;  // the attempt waiting for slots and deploying
  std::atomic<bool> cancelled_{false};  // the attempt is being cancelled (set under mu_)
  bool deployed_ = false;  // its Deploy messages went out
  std::int64_t attempt_ = -1;
  std::vector<std::string> worker_of_;  // by task
  std::vector<bool> exited_;            // by task
  std::size_t remaining_ = 0;           // tasks of the attempt that have not exited
};

ClusterRuntime::Impl::Impl(ClusterRuntimeConfig config) : config_(std::move(config)) {
  ControlServerOptions o;
  o.host = config_.rpc_host;
  o.port = config_.rpc_port;
  o.heartbeat_interval = config_.heartbeat_interval;
  o.heartbeat_timeout = config_.heartbeat_timeout;
  ControlServerCallbacks c;
  c.on_registered = [this](const proto::Register& r) { on_registered(r); };
  c.on_message = [this](const std::string& w, const proto::WorkerMessage& m) { on_message(w, m); };
  c.on_lost = [this](const std::string& w, const std::string& reason) { on_lost(w, reason); };
  server_ = std::make_unique<ControlServer>(std::move(o), std::move(c));
}

void ClusterRuntime::Impl::on_registered(const proto::Register& r) {
  std::lock_guard lock(mu_);
  Worker& w = workers_[r.worker_id()];
  w.info = WorkerInfo{r.worker_id(), r.host(), r.data_port(), r.slots(), r.slots(), now_ms(), now_ms()};
  w.info.cpu_cores = r.cpu_cores();
  w.info.physical_memory = r.physical_memory();
  w.slot_owner.assign(static_cast<std::size_t>(std::max(0, r.slots())), "");
  slots_cv_.notify_all();
  log::info("worker {} registered ({}:{}, {} slots)", r.worker_id(), r.host(), r.data_port(), r.slots());
}

void ClusterRuntime::Impl::on_message(const std::string& worker_id, const proto::WorkerMessage& m) {
  ClusterDeployer* d = nullptr;
  std::unique_lock lock(mu_);
  auto w = workers_.find(worker_id);
  if (w != workers_.end()) w->second.info.last_heartbeat_ms = now_ms();
  if (m.has_heartbeat()) {
    if (w != workers_.end() && m.heartbeat().free_memory() > 0) w->second.info.free_memory = m.heartbeat().free_memory();
    if (m.heartbeat().metrics_json().empty()) return;
    // Delivered under mu_: deployers detach under it, and storing counters is quick.
    nlohmann::json jobs = nlohmann::json::parse(m.heartbeat().metrics_json(), nullptr, false);
    if (!jobs.is_object()) return;
    for (const auto& [job, rows] : jobs.items()) {
      auto it = deployers_.find(job);
      if (it != deployers_.end()) it->second->on_metrics(rows);
    }
    return;
  }
  const std::string* job = m.has_task_event() ? &m.task_event().job_id()
                           : m.has_checkpoint_ack() ? &m.checkpoint_ack().job_id()
                                                    : nullptr;
  if (!job) return;
  auto it = deployers_.find(*job);
  if (it == deployers_.end()) return;
  d = it->second;
  // Deployers detach under mu_ before they go; events are delivered outside it (they
  // call into the job's checkpoint coordinator, which sends messages of its own).
  lock.unlock();
  if (m.has_task_event()) d->on_task_event(m.task_event());
  else d->on_checkpoint_ack(m.checkpoint_ack());
}

void ClusterRuntime::Impl::on_lost(const std::string& worker_id, const std::string& reason) {
  std::vector<ClusterDeployer*> deployers;
  {
    std::lock_guard lock(mu_);
    workers_.erase(worker_id);
    for (auto& [job, d] : deployers_) deployers.push_back(d);
  }
  log::warn("worker {} lost: {}", worker_id, reason);
  for (auto* d : deployers) d->worker_lost(worker_id, reason);
}

std::vector<ClusterRuntime::Impl::Slot> ClusterRuntime::Impl::allocate(const std::string& job_id, int n,
                                                                       const std::atomic<bool>& cancelled) {
  std::unique_lock lock(mu_);
  auto free_slots = [&] {
    int f = 0;
    for (const auto& [id, w] : workers_) f += static_cast<int>(std::count(w.slot_owner.begin(), w.slot_owner.end(), ""));
    return f;
  };
  if (!slots_cv_.wait_for(lock, config_.slot_request_timeout, [&] { return cancelled.load() || free_slots() >= n; }))
    throw ClinkError("job " + job_id + " needs " + std::to_string(n) + " slots, the cluster has " +
                     std::to_string(free_slots()) + " free after " +
                     std::to_string(config_.slot_request_timeout.count()) + " ms (start more workers or lower the parallelism)");
  if (cancelled.load()) return {};
  std::vector<Slot> slots;
  // Spread over the workers: each slot from the worker with the most free slots.
  for (int i = 0; i < n; ++i) {
    Worker* best = nullptr;
    long best_free = 0;
    for (auto& [id, w] : workers_) {
      long f = std::count(w.slot_owner.begin(), w.slot_owner.end(), "");
      if (f > best_free) best = &w, best_free = f;
    }
    auto free = std::find(best->slot_owner.begin(), best->slot_owner.end(), "");
    *free = job_id;
    slots.push_back({best->info.id, best->info.host, best->info.data_port,
                     static_cast<int>(free - best->slot_owner.begin())});
  }
  return slots;
}

void ClusterRuntime::Impl::release(const std::string& job_id) {
  std::lock_guard lock(mu_);
  for (auto& [id, w] : workers_)
    for (auto& owner : w.slot_owner)
      if (owner == job_id) owner.clear();
  slots_cv_.notify_all();
}

void ClusterRuntime::Impl::attach(const std::string& job_id, ClusterDeployer* d) {
  std::lock_guard lock(mu_);
  deployers_[job_id] = d;
}

void ClusterRuntime::Impl::detach(const std::string& job_id) {
  std::lock_guard lock(mu_);
  deployers_.erase(job_id);
}

std::vector<WorkerInfo> ClusterRuntime::Impl::workers() const {
  std::lock_guard lock(mu_);
  std::vector<WorkerInfo> out;
  for (const auto& [id, w] : workers_) {
    WorkerInfo info = w.info;
    info.free_slots = static_cast<int>(std::count(w.slot_owner.begin(), w.slot_owner.end(), ""));
    out.push_back(info);
  }
  return out;
}

std::vector<WorkerInfo> ClusterRuntime::Impl::subtask_workers(const std::string& job_id) const {
  std::lock_guard lock(mu_);
  auto p = placements_.find(job_id);
  if (p == placements_.end()) return {};
  std::vector<WorkerInfo> out;
  for (const auto& id : p->second) {
    WorkerInfo info;
    info.id = id;
    if (auto w = workers_.find(id); w != workers_.end()) info = w->second.info;
    out.push_back(std::move(info));
  }
  return out;
}

ClusterRuntime::ClusterRuntime(ClusterRuntimeConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}
ClusterRuntime::~ClusterRuntime() = default;
int ClusterRuntime::rpc_port() const { return impl_->rpc_port(); }
std::vector<WorkerInfo> ClusterRuntime::workers() const { return impl_->workers(); }
std::vector<WorkerInfo> ClusterRuntime::subtask_workers(const std::string& job_id) const {
  return impl_->subtask_workers(job_id);
}

JobHandle ClusterRuntime::launch(const std::string& job_id, const JobGraph& graph, ExecutionOptions options) {
  Impl* impl = impl_.get();
  return execute_deployed(graph, options, [&, impl](TaskEvents& events, MetricRegistry& metrics) {
    return std::make_unique<ClusterDeployer>(*impl, job_id, graph, options, events, metrics);
  });
}

}  // namespace clink::cluster
