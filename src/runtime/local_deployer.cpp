#include "local_deployer.hpp"

#include "clink/core/error.hpp"

namespace clink::detail {

LocalDeployer::LocalDeployer(const JobGraph& graph, const ExecutionOptions& options, TaskEvents& events,
                             MetricRegistry& metrics)
    : graph_(graph), options_(options), events_(events), metrics_(metrics), layout_(TaskLayout::of(graph)) {
  groups_.resize(layout_.regions.size());
}

LocalDeployer::~LocalDeployer() {
  cancel();
  std::vector<std::unique_ptr<TaskGroup>> groups;
  {
    std::lock_guard lock(mu_);
    groups.swap(groups_);
  }
  groups.clear();  // joins their threads, whose exit takes mu_
}

std::unique_ptr<TaskGroup> LocalDeployer::make_group(std::size_t region, const AttemptStart& start) {
  TaskGroup::Wiring wiring;
  wiring.local_tasks = layout_.regions[region];
  // No edge leaves a pipelined region (that is what makes it one).
  wiring.remote_writer = [](std::size_t task, std::size_t) -> std::unique_ptr<ChannelWriter> {
    throw ClinkError("internal error: an edge to task " + std::to_string(task) + " crosses pipelined regions");
  };
  wiring.exited = [this](std::size_t) {
    std::lock_guard lock(mu_);
    if (--live_ == 0) cv_.notify_all();
  };
  return std::make_unique<TaskGroup>(graph_, options_, start, events_, metrics_, std::move(wiring));
}

void LocalDeployer::deploy(std::int64_t, const AttemptStart& start) {
  // Every group is built before any starts: a bad restore throws with nothing running.
  std::vector<std::unique_ptr<TaskGroup>> fresh;
  for (std::size_t r = 0; r < layout_.regions.size(); ++r) fresh.push_back(make_group(r, start));
  std::vector<std::unique_ptr<TaskGroup>> old;  // the previous attempt's: its tasks exited
  {
    std::lock_guard lock(mu_);
    old.swap(groups_);
    groups_ = std::move(fresh);
    live_ = layout_.tasks.size();
    awaiting_ = 0;
    attempt_cancelled_ = false;
    for (auto& g : groups_) g->start();
  }
}

void LocalDeployer::wait_exited() {
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return live_ == 0 && awaiting_ == 0; });
  }
  // Nothing replaces a group now: every task exited and no region waits for a restart
  // (a failover that waits for its region does not deploy it: the attempt is stopping).
  std::lock_guard join_lock(join_mu_);
  for (auto& g : groups_)
    if (g) g->join();
}

void LocalDeployer::cancel() {
  std::lock_guard lock(mu_);
  awaiting_ = 0;  // the whole attempt ends: no region is deployed again
  attempt_cancelled_ = true;
  for (auto& g : groups_)
    if (g) g->cancel();
  cv_.notify_all();
}

TaskGroup* LocalDeployer::group_of(std::size_t task) { return groups_.at(layout_.region_of.at(task)).get(); }

void LocalDeployer::trigger_checkpoint(std::size_t task, const CheckpointBarrier& barrier) {
  std::lock_guard lock(mu_);
  if (auto* g = group_of(task)) g->trigger_checkpoint(task, barrier);
}

void LocalDeployer::trigger_drained_checkpoint(std::size_t task, const CheckpointBarrier& barrier) {
  std::lock_guard lock(mu_);
  if (auto* g = group_of(task)) g->trigger_drained_checkpoint(task, barrier);
}

void LocalDeployer::notify_checkpoint_complete(std::size_t task, std::int64_t id) {
  std::lock_guard lock(mu_);
  if (auto* g = group_of(task)) g->notify_checkpoint_complete(task, id);
}

void LocalDeployer::resume_after_failed_stop(std::size_t task) {
  std::lock_guard lock(mu_);
  if (auto* g = group_of(task)) g->resume_after_failed_stop(task);
}

void LocalDeployer::cancel_tasks(const std::vector<std::size_t>& tasks) {
  std::lock_guard lock(mu_);
  if (!attempt_cancelled_) ++awaiting_;
  if (auto* g = group_of(tasks.front())) g->cancel();
}

void LocalDeployer::wait_tasks_exited(const std::vector<std::size_t>& tasks) {
  TaskGroup* g;
  {
    std::lock_guard lock(mu_);
    g = group_of(tasks.front());
  }
  // Only the supervisor replaces a region's group, and it is the caller.
  std::lock_guard join_lock(join_mu_);
  if (g) g->join();
}

void LocalDeployer::deploy_tasks(const std::vector<std::size_t>& tasks, const AttemptStart& start) {
  const std::size_t region = layout_.region_of.at(tasks.front());
  auto fresh = make_group(region, start);
  std::unique_ptr<TaskGroup> old;  // its tasks exited (wait_tasks_exited)
  std::lock_guard lock(mu_);
  old = std::move(groups_[region]);
  groups_[region] = std::move(fresh);
  live_ += layout_.regions[region].size();
  if (awaiting_ > 0) --awaiting_;
  groups_[region]->start();
}

}  // namespace clink::detail
