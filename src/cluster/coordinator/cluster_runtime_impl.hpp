#pragma once
// The coordinator's cluster (private to src/cluster/coordinator): the workers, their
// slots, and the deployers of running jobs, to which it routes the workers' events.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../control/control_server.hpp"
#include "clink/cluster/coordinator/cluster_runtime.hpp"

namespace clink::cluster {

class ClusterDeployer;

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
  // Whether the worker is registered (its slots still exist).
  bool alive(const std::string& worker_id) const {
    std::lock_guard lock(mu_);
    return workers_.count(worker_id) > 0;
  }
  bool send(const std::string& worker_id, const proto::CoordinatorMessage& m) { return server_->send(worker_id, m); }
  void attach(const std::string& job_id, ClusterDeployer* deployer);
  void detach(const std::string& job_id);

  int rpc_port() const { return server_->port(); }
  // Where this coordinator's attempt numbers start: its start time in ms x 1000. A
  // worker remembers the attempts it cancelled (a late channel of one must never join
  // another), so a new leader's numbers must not meet those of the leaders before it.
  std::int64_t attempt_base() const { return attempt_base_; }
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
  const std::int64_t attempt_base_ =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count() *
      1000;
};

}  // namespace clink::cluster
