// clink worker --coordinator HOST:PORT: Flink's TaskManager. Finds the coordinator's
// control-plane address through its REST API (/jobmanager/config, as Flink publishes
// jobmanager.rpc.address / jobmanager.rpc.port), registers its slots and runs the
// tasks deployed to it until SIGINT/SIGTERM.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>

#include <unistd.h>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "clink/cluster/config/cluster_config.hpp"
#include "clink/cluster/ha/ha_config.hpp"
#include "clink/cluster/ha/ha_services.hpp"
#include "clink/cluster/worker/worker.hpp"
#include "clink/core/error.hpp"
#include "clink/cluster/gateway/collect_sink.hpp"
#include "clink/core/log.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "commands.hpp"
#include "sql_session.hpp"

namespace clink::cli {
namespace {

extern "C" void request_worker_stop(int) { stop_requested().store(true); }

struct WorkerOptions {
  std::string coordinator;  // REST host:port
  std::string config;       // Flink's config.yaml
  int slots = -1;           // -1: taskmanager.numberOfTaskSlots
  std::string host;         // empty: taskmanager.host
  int data_port = -1;       // -1: taskmanager.data.port
  std::string log_dir;      // empty: env.log.dir
};

// host:port of the coordinator's control plane, from its REST API.
std::string rpc_address(const std::string& rest) {
  auto colon = rest.rfind(':');
  if (colon == std::string::npos) throw ClinkError("--coordinator " + rest + ": expected HOST:PORT");
  std::string host = rest.substr(0, colon);
  httplib::Client client(host, std::stoi(rest.substr(colon + 1)));
  client.set_connection_timeout(std::chrono::seconds(5));
  auto res = client.Get("/jobmanager/config");
  if (!res || res->status != 200)
    throw ClinkError("coordinator " + rest + ": GET /jobmanager/config failed" +
                     (res ? " with HTTP " + std::to_string(res->status) : std::string(" (no answer)")));
  std::string rpc_host = host, rpc_port;
  for (const auto& entry : nlohmann::json::parse(res->body)) {
    if (entry.at("key") == "jobmanager.rpc.port") rpc_port = entry.at("value").get<std::string>();
    if (entry.at("key") == "jobmanager.rpc.address") rpc_host = entry.at("value").get<std::string>();
  }
  if (rpc_port.empty()) throw ClinkError("coordinator " + rest + " does not publish jobmanager.rpc.port");
  return rpc_host + ":" + rpc_port;
}

int run_worker(const WorkerOptions& opts) {
  std::signal(SIGINT, request_worker_stop);
  std::signal(SIGTERM, request_worker_stop);
  try {
    cluster::ClusterConfig file;
    if (!opts.config.empty()) file = cluster::ClusterConfig::load(opts.config);
    const std::string log_dir = !opts.log_dir.empty() ? opts.log_dir : file.get_string("env.log.dir", "");
    if (!log_dir.empty()) log::open_log_dir(log_dir, "worker-" + std::to_string(::getpid()));
    cluster::WorkerConfig config;
    // Under ZooKeeper HA the leader's control-plane address comes from ZooKeeper (and a
    // new leader's after a failover); otherwise from the coordinator's REST API.
    std::unique_ptr<cluster::HaServices> ha;
    if (file.high_availability().enabled()) {
      ha = cluster::make_ha_services(cluster::HaConfig::from(file));
      cluster::LeaderRetriever* leader = &ha->leader_retriever();
      config.coordinator = [leader] {
        auto l = leader->current();
        auto a = l ? cluster::CoordinatorAddress::decode(l->address) : std::nullopt;
        return a ? a->rpc : std::string();
      };
    } else {
      if (opts.coordinator.empty()) throw ClinkError("--coordinator HOST:PORT is needed (or a --config with high-availability)");
      std::string rest = opts.coordinator;
      config.coordinator = [rest] { return rpc_address(rest); };
    }
    config.host = opts.host.empty() ? file.taskmanager_host() : opts.host;
    config.data_port = opts.data_port >= 0 ? opts.data_port : file.data_port();
    config.slots = opts.slots > 0 ? opts.slots : file.task_slots();
    cluster::Worker worker(config, cluster::gateway::registry_with_collect_sink());  // a gateway SELECT's sink may run here
    std::printf("worker %s: %d slots, data port %d\n", worker.id().c_str(), config.slots, worker.data_port());
    std::fflush(stdout);
    while (!stop_requested().load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitError;
  }
  return kExitOk;
}

}  // namespace

void add_worker_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<WorkerOptions>();
  auto* cmd = app.add_subcommand("worker", "Run a worker (Flink's TaskManager) of a clink cluster");
  cmd->add_option("--coordinator", opts->coordinator, "The coordinator's REST address, HOST:PORT");
  cmd->add_option("--config", opts->config, "Flink's config.yaml (taskmanager.*, high-availability.*: the leader from ZooKeeper)");
  cmd->add_option("--log-dir", opts->log_dir,
                  "Write the process log (worker-<pid>.log) and the lines of each job (<job id>.log) here "
                  "(default env.log.dir)");
  cmd->add_option("--slots", opts->slots, "Task slots (default taskmanager.numberOfTaskSlots, 1)");
  cmd->add_option("--host", opts->host, "Where this worker's data plane listens (default taskmanager.host, 127.0.0.1)");
  cmd->add_option("--data-port", opts->data_port, "The data plane's port (default taskmanager.data.port; 0: any free port)");
  cmd->callback([opts, &exit_code] { exit_code = run_worker(*opts); });
}

}  // namespace clink::cli
