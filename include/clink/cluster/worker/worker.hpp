#pragma once
// `clink worker`: Flink's TaskManager. Registers its slots with the coordinator over
// the control plane, runs the tasks the coordinator deploys to it (a TaskGroup per job
// attempt), exchanges batches with other workers over its data port, and reports its
// tasks' events and checkpoint acknowledgements back.
#include <functional>
#include <memory>
#include <string>

#include "clink/runtime/operator_registry.hpp"

namespace clink::cluster {

struct WorkerConfig {
  // The coordinator's control-plane address (host:port); asked again before each
  // reconnection, so a new leader is found after a failover.
  std::function<std::string()> coordinator;
  std::string host = "127.0.0.1";  // where this worker's data plane listens
  int data_port = 0;               // 0: any free port
  int slots = 1;
  std::string worker_id;  // empty: host:pid
};

class Worker {
 public:
  Worker(WorkerConfig config, const OperatorRegistry& registry);
  ~Worker();  // cancels every task and disconnects
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  int data_port() const;
  const std::string& id() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace clink::cluster
