#pragma once
// Runs one job's tasks on slots of the cluster's workers (private to
// src/cluster/coordinator). Each task runs in an attempt: a number that names its
// deployment on the workers and on the data plane (channels connect within an attempt).
// A whole-job deploy gives every task one attempt; with region failover (Flink's
// jobmanager.execution.failover-strategy: region) each pipelined region gets an attempt
// of its own, so that a failed region is cancelled and redeployed (on new slots for
// those of a lost worker) while the others run on.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cluster_runtime_impl.hpp"
#include "clink/runtime/task_group.hpp"

namespace clink::cluster {

class ClusterDeployer final : public TaskDeployer {
 public:
  ClusterDeployer(ClusterRuntime::Impl& cluster, std::string job_id, const JobGraph& graph,
                  const ExecutionOptions& options, TaskEvents& events, MetricRegistry& metrics);
  ~ClusterDeployer() override;

  // Returns at once: the attempt waits for free slots (up to slot.request.timeout) on a
  // thread of its own, so a submission or a restart does not block on the cluster's
  // resources; checkpoints start once the tasks are deployed.
  void deploy(std::int64_t attempt, const AttemptStart& start) override;
  bool ready() const override;
  void wait_exited() override;
  void cancel() override;
  void checkpoint_started(const CheckpointBarrier& barrier, const std::filesystem::path& dir) override;
  void trigger_checkpoint(std::size_t task, const CheckpointBarrier& barrier) override { trigger(task, barrier, false); }
  void trigger_drained_checkpoint(std::size_t task, const CheckpointBarrier& barrier) override {
    trigger(task, barrier, true);
  }
  void notify_checkpoint_complete(std::size_t task, std::int64_t checkpoint_id) override;
  void resume_after_failed_stop(std::size_t task) override;

  // Region failover.
  bool deploys_regions() const override { return by_region_; }
  void cancel_tasks(const std::vector<std::size_t>& tasks) override;
  void wait_tasks_exited(const std::vector<std::size_t>& tasks) override;
  // Returns at once, as deploy(): the region waits for slots on a thread of its own.
  void deploy_tasks(const std::vector<std::size_t>& tasks, const AttemptStart& start) override;

  // ---- from the workers ----
  void on_task_event(const proto::TaskEvent& e);
  void on_checkpoint_ack(const proto::CheckpointAck& a);
  // A worker's latest counters of this job's operator subtasks (rows as
  // AttemptHost::metrics() writes them), into the job's registry.
  void on_metrics(const nlohmann::json& rows);
  // The worker's tasks are gone: with region failover the regions that had tasks on it
  // fail (unless that is every region: the job restarts whole), else the job does.
  void worker_lost(const std::string& worker_id, const std::string& reason);

 private:
  using Slot = ClusterRuntime::Impl::Slot;
  void place(const AttemptStart& start);
  void place_region(std::size_t region, const AttemptStart& start);
  // Deploys `tasks` on slots_ as a new attempt (per region when by_region_), sending the
  // Deploy messages; returns the workers that are gone. Under mu_.
  std::vector<std::string> deploy_on_slots(const std::vector<std::size_t>& tasks, const std::string& options_json,
                                           bool beside_other_attempts);
  // The (worker, attempt) of every live task among `tasks`. Under mu_.
  std::set<std::pair<std::string, std::int64_t>> hosts_of(const std::vector<std::size_t>& tasks) const;
  // CancelAttempt to each; returns the workers that are gone.
  std::set<std::string> send_cancels(const std::set<std::pair<std::string, std::int64_t>>& hosts);
  void trigger(std::size_t task, const CheckpointBarrier& barrier, bool drains);
  template <class SetAttempt>
  void send_to_task(std::size_t task, proto::CoordinatorMessage& m, SetAttempt set_attempt);

  ClusterRuntime::Impl& cluster_;
  std::string job_id_;
  std::string spec_;
  TaskLayout layout_;
  std::vector<std::size_t> all_tasks_;
  ExecutionOptions options_;
  bool by_region_;  // region failover with more than one region
  TaskEvents& events_;
  MetricRegistry& metrics_;
  std::map<std::pair<std::string, int>, std::shared_ptr<OperatorMetrics>> remote_metrics_;  // under mu_
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::thread placing_;                 // the whole-job deploy waiting for slots
  struct Placer {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<Placer> placing_regions_;  // regions waiting for slots (under mu_)
  int placers_running_ = 0;              // of placing_regions_ (under mu_)
  std::mutex place_region_mu_;          // one region takes slots at a time
  std::atomic<bool> cancelled_{false};  // the attempt is being cancelled (set under mu_)
  bool placing_whole_ = false;          // deploy() waits for slots
  bool deployed_ = false;               // its Deploy messages went out
  std::int64_t next_attempt_ = 0;       // from the cluster's attempt_base(): never reused on a worker
  std::vector<Slot> slots_;             // by subtask index (slot sharing, as Flink's)
  std::vector<std::int64_t> attempt_of_;  // by task
  std::vector<std::string> worker_of_;    // by task
  std::vector<bool> exited_;              // by task
  std::size_t remaining_ = 0;             // tasks deployed that have not exited
  // Regions cancelled (or lost) and not deployed again yet: the job's tasks have not all
  // exited while one waits.
  std::set<std::size_t> awaiting_;
};

}  // namespace clink::cluster
