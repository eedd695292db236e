#pragma once
// The coordinator's side of the cluster runtime: the control-plane server workers
// register with, their slots (Flink's ResourceManager), and the launcher that runs a
// job's tasks on those slots. A job launched here is an ordinary JobHandle: its
// checkpoints, savepoints and restarts are the embedded runtime's, its tasks run on
// the workers.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "clink/runtime/executor.hpp"

namespace clink::cluster {

struct ClusterRuntimeConfig {
  std::string rpc_host = "127.0.0.1";
  int rpc_port = 0;  // 0: any free port
  std::chrono::milliseconds heartbeat_interval{10'000};
  std::chrono::milliseconds heartbeat_timeout{50'000};
  // How long a deploy waits for enough free slots (Flink's slot.request.timeout).
  std::chrono::milliseconds slot_request_timeout{300'000};
};

struct WorkerInfo {
  std::string id;
  std::string host;
  int data_port = 0;
  int slots = 0;
  int free_slots = 0;
  std::int64_t registered_ms = 0;
  std::int64_t last_heartbeat_ms = 0;
  int cpu_cores = 0;               // its machine's, as it registered
  std::int64_t physical_memory = 0;
  std::int64_t free_memory = 0;    // as its last heartbeat said
};

class ClusterRuntime {
 public:
  explicit ClusterRuntime(ClusterRuntimeConfig config);
  ~ClusterRuntime();
  ClusterRuntime(const ClusterRuntime&) = delete;
  ClusterRuntime& operator=(const ClusterRuntime&) = delete;

  int rpc_port() const;
  std::vector<WorkerInfo> workers() const;
  // The worker running each subtask index of the job's latest attempt (every vertex's
  // subtask i shares slot i), by subtask index: its id, and its host and data port while
  // it is registered. Kept after the job ended; empty before its first placement.
  std::vector<WorkerInfo> subtask_workers(const std::string& job_id) const;
  // Runs the job's tasks on the workers' slots (one slot per subtask index, every
  // chain's subtask i in slot i, as Flink's slot sharing). `job_id` names it on the
  // control plane.
  JobHandle launch(const std::string& job_id, const JobGraph& graph, ExecutionOptions options);

  class Impl;  // src/cluster/coordinator: also what each job's deployer talks to

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace clink::cluster
