#pragma once
// A cluster inside the test process: the coordinator's ClusterRuntime (control plane,
// slots) and workers, each with its own gRPC stream and TCP data port, so a job runs
// through deploys, the network shuffle and remote checkpoint acknowledgements exactly
// as across machines.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "clink/cluster/coordinator/cluster_runtime.hpp"
#include "clink/cluster/worker/worker.hpp"
#include "clink/registry/builtin_registry.hpp"

namespace clink::test {

class LocalCluster {
 public:
  explicit LocalCluster(int workers, int slots = 2) : runtime_(config()) {
    for (int i = 0; i < workers; ++i) add_worker(slots, "w" + std::to_string(i));
    wait_for_workers(static_cast<std::size_t>(workers));
  }

  // One shared by a test binary (3 workers of 2 slots: parallelism up to 6).
  static LocalCluster& shared() {
    static LocalCluster cluster(3);
    return cluster;
  }

  cluster::ClusterRuntime& runtime() { return runtime_; }
  std::vector<std::unique_ptr<cluster::Worker>>& workers() { return workers_; }

  void add_worker(int slots, const std::string& id) {
    cluster::WorkerConfig c;
    const std::string address = "127.0.0.1:" + std::to_string(runtime_.rpc_port());
    c.coordinator = [address] { return address; };
    c.slots = slots;
    c.worker_id = id;
    workers_.push_back(std::make_unique<cluster::Worker>(c, builtin_registry()));
  }
  // Waits until `n` workers are registered; false after 5 s.
  bool wait_for_workers(std::size_t n) {
    for (int i = 0; i < 500 && runtime_.workers().size() != n; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return runtime_.workers().size() == n;
  }

  // A fresh 32-hex job id.
  static std::string next_job_id() {
    static std::atomic<unsigned long long> n{0};
    char id[33];
    std::snprintf(id, sizeof id, "%016llx%016llx", 0xc1ull, ++n);
    return id;
  }

 private:
  static cluster::ClusterRuntimeConfig config() {
    cluster::ClusterRuntimeConfig c;
    c.heartbeat_interval = std::chrono::milliseconds(200);
    c.heartbeat_timeout = std::chrono::milliseconds(2000);
    c.slot_request_timeout = std::chrono::seconds(20);
    return c;
  }

  cluster::ClusterRuntime runtime_;
  std::vector<std::unique_ptr<cluster::Worker>> workers_;
};

}  // namespace clink::test
