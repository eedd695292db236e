#pragma once
// The embedded deployment (private to the runtime): every task of an attempt on threads
// of this process, one TaskGroup per pipelined region, so that a region can be
// cancelled and deployed again while the others run (region failover).
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "clink/runtime/task_group.hpp"

namespace clink::detail {

class LocalDeployer final : public TaskDeployer {
 public:
  LocalDeployer(const JobGraph& graph, const ExecutionOptions& options, TaskEvents& events, MetricRegistry& metrics);
  ~LocalDeployer() override;

  void deploy(std::int64_t attempt, const AttemptStart& start) override;
  void wait_exited() override;
  void cancel() override;
  void checkpoint_started(const CheckpointBarrier&, const std::filesystem::path&) override {}
  void trigger_checkpoint(std::size_t task, const CheckpointBarrier& barrier) override;
  void trigger_drained_checkpoint(std::size_t task, const CheckpointBarrier& barrier) override;
  void notify_checkpoint_complete(std::size_t task, std::int64_t id) override;
  void resume_after_failed_stop(std::size_t task) override;

  bool deploys_regions() const override { return true; }
  void cancel_tasks(const std::vector<std::size_t>& tasks) override;
  void wait_tasks_exited(const std::vector<std::size_t>& tasks) override;
  void deploy_tasks(const std::vector<std::size_t>& tasks, const AttemptStart& start) override;

 private:
  std::unique_ptr<TaskGroup> make_group(std::size_t region, const AttemptStart& start);
  TaskGroup* group_of(std::size_t task);  // under mu_

  const JobGraph& graph_;
  const ExecutionOptions& options_;
  TaskEvents& events_;
  MetricRegistry& metrics_;
  TaskLayout layout_;
  std::mutex mu_;
  std::condition_variable cv_;
  // One join of a group at a time: the end of the attempt (after a cancel) may join
  // the group of a region whose failover is waiting for it too.
  std::mutex join_mu_;
  std::vector<std::unique_ptr<TaskGroup>> groups_;  // by region
  std::size_t live_ = 0;      // tasks started and not exited
  std::size_t awaiting_ = 0;  // regions cancelled to be deployed again
  // The whole attempt was cancelled: a region failure reported after that waits for no
  // redeploy (its restart returns early), so it must not count as awaiting one.
  bool attempt_cancelled_ = false;
};

}  // namespace clink::detail
