#include "clink/cluster/coordinator/cluster_runtime.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "cluster_deployer.hpp"
#include "cluster_runtime_impl.hpp"
#include "clink/core/error.hpp"
#include "clink/core/log.hpp"

namespace clink::cluster {

namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

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
