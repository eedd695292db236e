#include "cluster_deployer.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "clink/cluster/deploy_options.hpp"
#include "clink/core/log.hpp"
#include "clink/runtime/job_graph_spec.hpp"

namespace clink::cluster {

ClusterDeployer::ClusterDeployer(ClusterRuntime::Impl& cluster, std::string job_id, const JobGraph& graph,
                                 const ExecutionOptions& options, TaskEvents& events, MetricRegistry& metrics)
    : cluster_(cluster),
      job_id_(std::move(job_id)),
      spec_(to_spec(graph).dump()),
      layout_(TaskLayout::of(graph)),
      options_(options),
      by_region_(options.failover == FailoverStrategy::kRegion && layout_.regions.size() > 1),
      events_(events),
      metrics_(metrics) {
  next_attempt_ = cluster.attempt_base();
  for (std::size_t t = 0; t < layout_.tasks.size(); ++t) all_tasks_.push_back(t);
  attempt_of_.assign(layout_.tasks.size(), -1);
  worker_of_.assign(layout_.tasks.size(), "");
  exited_.assign(layout_.tasks.size(), true);
  cluster_.attach(job_id_, this);
}

ClusterDeployer::~ClusterDeployer() {
  cancel();
  if (placing_.joinable()) placing_.join();
  for (auto& p : placing_regions_) p.thread.join();
  cluster_.detach(job_id_);
  cluster_.release(job_id_);
}

void ClusterDeployer::deploy(std::int64_t, const AttemptStart& start) {
  // The previous attempt's placer: every task exited and cancel() woke it. (Its region
  // placers are not joined here: one may be reporting a failure, which takes the lock
  // the caller holds; they are reaped once done.)
  if (placing_.joinable()) placing_.join();
  {
    std::lock_guard lock(mu_);
    std::fill(exited_.begin(), exited_.end(), true);
    remaining_ = 0;
    awaiting_.clear();
    placing_whole_ = true;
    deployed_ = false;
    cancelled_ = false;
  }
  placing_ = std::thread([this, start] { place(start); });
}

bool ClusterDeployer::ready() const {
  std::lock_guard lock(mu_);
  return deployed_ && awaiting_.empty();
}

void ClusterDeployer::place(const AttemptStart& start) {
  log::ScopedContext in_job({job_id_});
  int slots_needed = 0;
  for (const auto& t : layout_.tasks) slots_needed = std::max(slots_needed, t.subtask + 1);
  std::vector<Slot> slots;
  std::string failure;
  try {
    slots = cluster_.allocate(job_id_, slots_needed, cancelled_);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  const std::string options_json = deploy_options_json(DeployOptions{options_.checkpoints, start});
  if (!slots.empty()) {  // (before mu_: the cluster's lock is never taken under a deployer's)
    std::vector<std::string> by_subtask;
    for (const auto& slot : slots) by_subtask.push_back(slot.worker_id);
    cluster_.placed(job_id_, std::move(by_subtask));
  }
  std::unique_lock lock(mu_);
  if (slots.empty() || cancelled_) {  // no tasks started: the attempt is over
    lock.unlock();
    // Reported before the attempt counts as exited: it ends failed, not finished.
    if (!failure.empty()) log::error("{}", failure);
    if (!failure.empty()) events_.fail(TaskEvents::kWholeJob, failure);
    lock.lock();
    placing_whole_ = false;
    cv_.notify_all();
    return;
  }
  slots_ = std::move(slots);
  std::vector<std::string> gone;
  if (!by_region_) {
    gone = deploy_on_slots(all_tasks_, options_json, false);
  } else {
    for (const auto& region : layout_.regions)
      for (auto& w : deploy_on_slots(region, options_json, true)) gone.push_back(std::move(w));
  }
  deployed_ = true;
  placing_whole_ = false;
  if (start.restore) log::info("restoring from {}", start.restore->string());
  lock.unlock();
  for (const auto& w : gone) worker_lost(w, "it left before its tasks were deployed");
}

std::vector<std::string> ClusterDeployer::deploy_on_slots(const std::vector<std::size_t>& tasks,
                                                          const std::string& options_json, bool beside_other_attempts) {
  const std::int64_t attempt = next_attempt_++;
  std::map<std::string, proto::CoordinatorMessage> deploys;  // by worker
  for (std::size_t t : tasks) {
    const Slot& slot = slots_[static_cast<std::size_t>(layout_.tasks[t].subtask)];
    worker_of_[t] = slot.worker_id;
    attempt_of_[t] = attempt;
    exited_[t] = false;
    ++remaining_;
    auto* d = deploys[slot.worker_id].mutable_deploy();
    if (d->job_id().empty()) {
      d->set_job_id(job_id_);
      d->set_attempt(attempt);
      d->set_spec_json(spec_);
      d->set_options_json(options_json);
      d->set_beside_other_attempts(beside_other_attempts);
    }
    d->add_local_tasks(static_cast<int>(t));
  }
  std::vector<std::string> gone;
  for (auto& [worker, m] : deploys) {
    // Where every task is: channels only join tasks of this deployment.
    for (const auto& task : layout_.tasks) {
      const Slot& slot = slots_[static_cast<std::size_t>(task.subtask)];
      auto* loc = m.mutable_deploy()->add_tasks();
      loc->set_worker_id(slot.worker_id);
      loc->set_host(slot.host);
      loc->set_data_port(slot.data_port);
    }
    log::info("attempt {}: task(s) {} deployed on worker {}", attempt, fmt::join(m.deploy().local_tasks(), " "),
              worker);
    // Queued under mu_ (send never blocks): a cancel's CancelAttempt, sent after it
    // took mu_, always follows the Deploy on a worker's stream.
    if (!cluster_.send(worker, m)) gone.push_back(worker);
  }
  return gone;
}

void ClusterDeployer::wait_exited() {
  {
    std::unique_lock lock(mu_);
    // Region placers too: none may deploy into the next attempt.
    cv_.wait(lock, [&] { return !placing_whole_ && remaining_ == 0 && awaiting_.empty() && placers_running_ == 0; });
  }
  cluster_.release(job_id_);  // a finished job holds no slots; a restart takes them again
}

std::set<std::pair<std::string, std::int64_t>> ClusterDeployer::hosts_of(const std::vector<std::size_t>& tasks) const {
  std::set<std::pair<std::string, std::int64_t>> hosts;
  for (std::size_t t : tasks)
    if (!exited_[t]) hosts.emplace(worker_of_[t], attempt_of_[t]);
  return hosts;
}

std::set<std::string> ClusterDeployer::send_cancels(const std::set<std::pair<std::string, std::int64_t>>& hosts) {
  std::set<std::string> gone;
  for (const auto& [worker, attempt] : hosts) {
    proto::CoordinatorMessage m;
    m.mutable_cancel_attempt()->set_job_id(job_id_);
    m.mutable_cancel_attempt()->set_attempt(attempt);
    if (!cluster_.send(worker, m)) gone.insert(worker);
  }
  return gone;
}

void ClusterDeployer::cancel() {
  std::set<std::pair<std::string, std::int64_t>> hosts;
  {
    std::lock_guard lock(mu_);
    cancelled_ = true;
    awaiting_.clear();  // the whole attempt ends: no region is deployed again
    hosts = hosts_of(all_tasks_);
    cv_.notify_all();
  }
  cluster_.wake();  // an attempt or a region waiting for slots gives up
  for (const auto& w : send_cancels(hosts)) worker_lost(w, "it is gone");
}

// ---- region failover ----

void ClusterDeployer::cancel_tasks(const std::vector<std::size_t>& tasks) {
  std::set<std::pair<std::string, std::int64_t>> hosts;
  {
    std::lock_guard lock(mu_);
    if (!cancelled_) awaiting_.insert(layout_.region_of.at(tasks.front()));
    hosts = hosts_of(tasks);  // with by_region_, each is exactly the region's tasks on a worker
  }
  // A worker gone is not reported from here (the caller holds the job's deploy lock, a
  // failover it would start takes): the cluster reports every lost worker itself.
  send_cancels(hosts);
}

void ClusterDeployer::wait_tasks_exited(const std::vector<std::size_t>& tasks) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return std::all_of(tasks.begin(), tasks.end(), [&](std::size_t t) { return exited_[t]; }); });
}

void ClusterDeployer::deploy_tasks(const std::vector<std::size_t>& tasks, const AttemptStart& start) {
  const std::size_t region = layout_.region_of.at(tasks.front());
  std::lock_guard lock(mu_);
  if (cancelled_) return;
  std::erase_if(placing_regions_, [](Placer& p) {
    if (!p.done->load()) return false;
    p.thread.join();
    return true;
  });
  auto done = std::make_shared<std::atomic<bool>>(false);
  ++placers_running_;
  placing_regions_.push_back({std::thread([this, region, start, done] {
                                place_region(region, start);
                                std::lock_guard lock(mu_);
                                --placers_running_;
                                cv_.notify_all();
                                done->store(true);
                              }),
                              done});
}

// The region's tasks keep their slots where the worker is still there; a lost worker's
// slots are replaced by free ones (a new worker's, or a survivor's spare).
void ClusterDeployer::place_region(std::size_t region, const AttemptStart& start) {
  log::ScopedContext in_job({job_id_});
  std::lock_guard placing(place_region_mu_);
  const std::vector<std::size_t>& tasks = layout_.regions[region];
  std::map<std::size_t, std::string> slot_workers;  // by subtask index
  {
    std::lock_guard lock(mu_);
    for (std::size_t t : tasks) {
      auto i = static_cast<std::size_t>(layout_.tasks[t].subtask);
      slot_workers[i] = slots_[i].worker_id;
    }
  }
  std::vector<std::size_t> lost;  // subtask indices whose slot is gone
  for (const auto& [i, worker] : slot_workers)  // not under mu_: the cluster calls us under its lock
    if (!cluster_.alive(worker)) lost.push_back(i);
  std::vector<Slot> fresh;
  std::string failure;
  if (!lost.empty()) {
    try {
      fresh = cluster_.allocate(job_id_, static_cast<int>(lost.size()), cancelled_);
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  const std::string options_json = deploy_options_json(DeployOptions{options_.checkpoints, start});
  std::unique_lock lock(mu_);
  if (cancelled_ || fresh.size() < lost.size()) {  // cancelled, or no slots: the whole job fails
    lock.unlock();
    // Reported while the region is awaited: the attempt ends failed, not finished.
    if (!failure.empty()) log::error("region {}: {}", region, failure);
    if (!failure.empty()) events_.fail(TaskEvents::kWholeJob, failure);
    lock.lock();
    awaiting_.erase(region);
    cv_.notify_all();
    return;
  }
  for (std::size_t k = 0; k < lost.size(); ++k) slots_[lost[k]] = fresh[k];
  log::info("region {} ({} task(s)) deployed again{}", region, tasks.size(),
            start.restore ? " from " + start.restore->string() : std::string());
  auto gone = deploy_on_slots(tasks, options_json, true);
  awaiting_.erase(region);
  cv_.notify_all();
  std::vector<std::string> by_subtask;
  for (const auto& slot : slots_) by_subtask.push_back(slot.worker_id);
  lock.unlock();
  if (!lost.empty()) cluster_.placed(job_id_, std::move(by_subtask));  // not under mu_, as in place()
  for (const auto& w : gone) worker_lost(w, "it left before its tasks were deployed");
}

// ---- checkpoints ----

void ClusterDeployer::checkpoint_started(const CheckpointBarrier& barrier, const std::filesystem::path& dir) {
  std::set<std::pair<std::string, std::int64_t>> hosts;
  {
    std::lock_guard lock(mu_);
    hosts = hosts_of(all_tasks_);
  }
  for (const auto& [worker, attempt] : hosts) {
    proto::CoordinatorMessage m;
    auto* t = m.mutable_trigger_checkpoint();
    t->set_job_id(job_id_);
    t->set_attempt(attempt);
    t->set_task(-1);  // no task: tells where the files go
    t->set_checkpoint_id(barrier.checkpoint_id);
    t->set_directory(dir.string());
    cluster_.send(worker, m);
  }
}

void ClusterDeployer::trigger(std::size_t task, const CheckpointBarrier& barrier, bool drains) {
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

void ClusterDeployer::notify_checkpoint_complete(std::size_t task, std::int64_t checkpoint_id) {
  proto::CoordinatorMessage m;
  auto* n = m.mutable_notify_complete();
  n->set_job_id(job_id_);
  n->set_task(static_cast<int>(task));
  n->set_checkpoint_id(checkpoint_id);
  send_to_task(task, m, [&](std::int64_t a) { n->set_attempt(a); });
}

void ClusterDeployer::resume_after_failed_stop(std::size_t task) {
  proto::CoordinatorMessage m;
  auto* r = m.mutable_resume_sources();
  r->set_job_id(job_id_);
  send_to_task(task, m, [&](std::int64_t a) { r->set_attempt(a); });
}

template <class SetAttempt>
void ClusterDeployer::send_to_task(std::size_t task, proto::CoordinatorMessage& m, SetAttempt set_attempt) {
  std::string worker;
  {
    std::lock_guard lock(mu_);
    if (task >= worker_of_.size() || exited_[task]) return;
    worker = worker_of_[task];
    set_attempt(attempt_of_[task]);
  }
  cluster_.send(worker, m);
}

// ---- from the workers ----

void ClusterDeployer::on_task_event(const proto::TaskEvent& e) {
  const bool whole_job = e.task() < 0;  // a failure of no one task (a deploy's)
  std::size_t task = whole_job ? TaskEvents::kWholeJob : static_cast<std::size_t>(e.task());
  {
    std::lock_guard lock(mu_);
    if (whole_job) {
      if (e.kind() != proto::TaskEvent::FAILED ||
          std::find(attempt_of_.begin(), attempt_of_.end(), e.attempt()) == attempt_of_.end())
        return;
    } else {
      if (task >= exited_.size() || e.attempt() != attempt_of_[task]) return;
      // A failure is the attempt's (it names its operator), whichever task reports it.
      if (exited_[task] && e.kind() != proto::TaskEvent::FAILED) return;
      if (e.kind() == proto::TaskEvent::EXITED) {
        exited_[task] = true;
        --remaining_;
        cv_.notify_all();
        return;
      }
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

void ClusterDeployer::on_checkpoint_ack(const proto::CheckpointAck& a) {
  {
    std::lock_guard lock(mu_);
    auto task = static_cast<std::size_t>(a.task());
    if (a.task() < 0 || task >= attempt_of_.size() || a.attempt() != attempt_of_[task]) return;
  }
  TaskSnapshot snapshot;
  for (const auto& entry : nlohmann::json::parse(a.snapshot_json()))
    snapshot.emplace_back(entry.at(0).get<std::string>(), subtask_state_from_json(entry.at(1)));
  events_.acknowledge_checkpoint(static_cast<std::size_t>(a.task()), a.checkpoint_id(), std::move(snapshot),
                                 CheckpointTaskTimes{a.alignment_ns(), a.sync_ms(), a.async_ms()});
}

void ClusterDeployer::on_metrics(const nlohmann::json& rows) {
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
    if (r.size() > 18) {
      m->pending_bytes.store(r.at(17).get<std::int64_t>());
      m->records_lag_max.store(r.at(18).get<std::int64_t>());
    }
  }
}

void ClusterDeployer::worker_lost(const std::string& worker_id, const std::string& reason) {
  std::map<std::size_t, std::size_t> hit;  // region -> a task of it that was on the worker
  bool by_region = false;
  {
    std::lock_guard lock(mu_);
    for (std::size_t t = 0; t < worker_of_.size(); ++t)
      if (worker_of_[t] == worker_id && !exited_[t]) {
        exited_[t] = true;
        --remaining_;
        hit.emplace(layout_.region_of[t], t);
      }
    // As Flink: every region with a task on the worker restarts; when that is all of
    // them, the job restarts whole (one failure, one restart).
    by_region = by_region_ && !cancelled_ && hit.size() < layout_.regions.size();
    // Awaited before the failure is reported: the job's tasks must not all count as
    // exited (ending the attempt) before the region's restart is under way.
    if (by_region)
      for (const auto& [region, task] : hit) awaiting_.insert(region);
    cv_.notify_all();
  }
  if (hit.empty()) return;
  log::ScopedContext in_job({job_id_});
  log::warn("tasks on worker {} lost: {}", worker_id, reason);
  const std::string message = "worker " + worker_id + " was lost: " + reason;
  if (!by_region) {
    events_.fail(TaskEvents::kWholeJob, message);
    return;
  }
  for (const auto& [region, task] : hit) events_.fail(task, message);
}

}  // namespace clink::cluster
