// clink coordinator: Flink's JobManager. Its ClusterRuntime takes workers' registrations
// on the control plane and runs each job's tasks on their slots; the Dispatcher and
// Flink's REST API take submissions. With high-availability.type: zookeeper several
// coordinators contend; only the leader serves, and a new leader resumes every job of
// the old one from its latest completed checkpoint (pointers and job records in
// ZooKeeper, written before any task commits).
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <future>
#include <mutex>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "clink/checkpoint/checkpoint_integrity.hpp"
#include "clink/cluster/config/cluster_config.hpp"
#include "clink/cluster/coordinator/cluster_runtime.hpp"
#include "clink/cluster/gateway/collect_sink.hpp"
#include "clink/cluster/gateway/sql_gateway.hpp"
#include "clink/cluster/ha/ha_config.hpp"
#include "clink/cluster/ha/ha_services.hpp"
#include "clink/cluster/rest/dispatcher.hpp"
#include "clink/core/log.hpp"
#include "clink/cluster/rest/prometheus.hpp"
#include "clink/cluster/rest/rest_server.hpp"
#include "clink/cluster/worker/worker.hpp"
#include "clink/core/error.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "commands.hpp"
#include "coordinator_sql.hpp"
#include "gateway_backend.hpp"

namespace clink::cli {
namespace {

// A port nobody listens on now (the ports a leader publishes must be known before it
// listens: its address goes into the election).
int free_port(const std::string& host) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = 0;
  a.sin_addr.s_addr = host == "0.0.0.0" ? INADDR_ANY : htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw ClinkError("coordinator: cannot find a free port");
  int port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

class WorkersInfo final : public cluster::ClusterInfo {
 public:
  explicit WorkersInfo(const cluster::ClusterRuntime& runtime) : runtime_(runtime) {}
  std::vector<cluster::TaskManagerInfo> task_managers() const override {
    std::vector<cluster::TaskManagerInfo> out;
    for (const auto& w : runtime_.workers()) {
      cluster::TaskManagerInfo tm;
      tm.id = w.id;
      tm.path = w.host + ":" + std::to_string(w.data_port);
      tm.data_port = w.data_port;
      tm.slots = w.slots;
      tm.free_slots = w.free_slots;
      tm.last_heartbeat_ms = w.last_heartbeat_ms;
      tm.cpu_cores = w.cpu_cores;
      tm.physical_memory = w.physical_memory;
      tm.free_memory = w.free_memory;
      out.push_back(tm);
    }
    return out;
  }
  std::vector<cluster::SubtaskLocation> subtask_locations(const std::string& job_id) const override {
    std::vector<cluster::SubtaskLocation> out;
    for (const auto& w : runtime_.subtask_workers(job_id)) out.push_back({w.id, w.host, w.data_port});
    return out;
  }

 private:
  const cluster::ClusterRuntime& runtime_;
};

}  // namespace

int run_coordinator(const CoordinatorOptions& opts) {
  // Signals are taken by sigtimedwait below: blocked before any thread starts, so every
  // thread inherits the mask and none is interrupted.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  auto wait_signal = [&](std::chrono::milliseconds timeout) {
    timespec ts{static_cast<time_t>(timeout.count() / 1000), static_cast<long>(timeout.count() % 1000) * 1'000'000};
    return sigtimedwait(&signals, nullptr, &ts) > 0;
  };
  try {
    // Flink's config.yaml; the flags override it.
    cluster::ClusterConfig config;
    if (!opts.config.empty()) config = cluster::ClusterConfig::load(opts.config);
    for (const auto& d : opts.dynamic) config.set_dynamic(d);
    if (!opts.rest_address.empty()) config.set("rest.bind-address", opts.rest_address);
    if (opts.rest_port >= 0) config.set("rest.bind-port", std::to_string(opts.rest_port));
    if (opts.rpc_port >= 0) config.set("jobmanager.rpc.port", std::to_string(opts.rpc_port));
    (void)cluster::execution_options(config);  // a bad job setting fails here, naming its key
    const std::string log_dir = !opts.log_dir.empty() ? opts.log_dir : config.get_string("env.log.dir", "");
    if (!log_dir.empty()) log::open_log_dir(log_dir, "coordinator");
    const bool ha_enabled = config.high_availability().enabled();
    auto ha = cluster::make_ha_services(cluster::HaConfig::from(config));

    cluster::RestServerOptions rest;
    rest.address = config.rest_bind_address();
    rest.port = config.rest_bind_port();
    cluster::ClusterRuntimeConfig rc;
    rc.rpc_host = config.rpc_bind_address();
    rc.rpc_port = config.rpc_port();
    rc.heartbeat_interval = config.heartbeat_interval();
    rc.heartbeat_timeout = config.heartbeat_timeout();
    rc.slot_request_timeout = config.get_duration("slot.request.timeout", std::chrono::minutes(5));
    if (ha_enabled) {  // published before listening: fixed ports
      if (rest.port == 0) rest.port = free_port(rest.address);
      if (rc.rpc_port == 0) rc.rpc_port = free_port(rc.rpc_host);
    }

    // Leadership first (at once without HA). A deposed leader stops serving (its jobs
    // are the new leader's now) and stands by to contend again, as Flink's JobManager;
    // the election contends again by itself after a revocation.
    std::mutex term_mu;
    std::int64_t granted_term = 0, revoked_term = 0;  // under term_mu
    cluster::CoordinatorAddress address{config.rpc_address() + ":" + std::to_string(rc.rpc_port),
                                        fmt::format("http://{}:{}", config.rest_address(), rest.port)};
    ha->leader_election().run(
        address.encode(),
        [&](const std::string&) {
          std::lock_guard lock(term_mu);
          ++granted_term;
          log::info("leadership granted ({})", address.rpc);
        },
        [&] {
          std::lock_guard lock(term_mu);
          revoked_term = granted_term;
          if (ha_enabled) log::warn("leadership revoked");
        });
    auto terms = [&] {
      std::lock_guard lock(term_mu);
      return std::pair{granted_term, revoked_term};
    };
    std::int64_t term = 0;  // the term this coordinator serves (or served last)
    int code = kExitOk;
    for (bool serve_again = true; serve_again;) {
      if (ha_enabled) std::printf("coordinator: waiting for leadership (rest %s)\n", address.rest.c_str());
      std::fflush(stdout);
      bool stop = false;
      for (;;) {
        auto [granted, revoked] = terms();
        if (granted > term && revoked < granted) {
          term = granted;
          break;
        }
        if (wait_signal(std::chrono::milliseconds(100))) {
          stop = true;
          break;
        }
      }
      if (stop) break;
      serve_again = false;

      cluster::ClusterRuntime runtime(rc);
      std::atomic<bool> suspending{false};
      cluster::DispatcherOptions dopts;
      cluster::HaServices* services = ha.get();
      // The leader records every completed checkpoint before its tasks commit.
      dopts.launcher = [&runtime, services, ha_enabled](const std::string& job_id, const JobGraph& graph,
                                                         ExecutionOptions o) {
        log::info("job '{}' submitted", graph.name);  // in the job's context: its log file starts here
        if (ha_enabled)
          o.on_checkpoint_completed = [services, job_id](std::int64_t id, const std::filesystem::path& dir) {
            services->checkpoints().add_completed(job_id, {id, dir.string()});
          };
        return runtime.launch(job_id, graph, std::move(o));
      };
      dopts.cluster = std::make_shared<WorkersInfo>(runtime);
      dopts.registry = &cluster::gateway::registry_with_collect_sink();  // the SQL gateway's SELECTs
      if (ha_enabled)
        dopts.on_submitted = [services](const cluster::DispatchedJob& job, const nlohmann::json& options) {
          if (options.contains(cluster::gateway::kCollectJobOption)) return;  // a SQL gateway SELECT: not resumed
          if (options.contains(kRefreshJobOption)) return;  // a refresh: the next leader's scheduler runs it again
          // A SQL job's statement and plan go along, so that a new leader's REST and web UI
          // still show them.
          nlohmann::json record{{"spec", nlohmann::json::parse(job.spec)}, {"options", options}};
          if (!job.sql.empty()) record["sql"] = job.sql;
          if (!job.plan.empty()) record["plan"] = job.plan;
          services->job_graphs().put(job.id, record.dump());
        };
      dopts.on_ended = [services, &suspending, ha_enabled](const cluster::DispatchedJob& job) {
        {
          log::ScopedContext in_job({job.id});
          const JobStatus status = job.status();  // a stop with savepoint: FINISHED, as Flink's
          if (status == JobStatus::kFailed) log::error("job {}: {}", job_status_name(status), job.handle.error());
          else log::info("job {}", job_status_name(status));
        }
        if (!ha_enabled || suspending.load()) return;  // stopped with this coordinator: the next leader resumes it
        services->job_graphs().remove(job.id);
        services->checkpoints().remove_job(job.id);
      };
      if (auto dir = config.savepoint_dir()) dopts.default_savepoint_dir = dir->string();
      dopts.configuration = config.entries();
      dopts.configuration["rest.address"] = rest.address;
      dopts.configuration["jobmanager.rpc.address"] = config.rpc_address();
      dopts.configuration["jobmanager.rpc.port"] = std::to_string(runtime.rpc_port());
      cluster::Dispatcher dispatcher(std::move(dopts));
      CoordinatorSql sql(dispatcher, ha->catalog());
      rest.run_sql = [&sql](const std::string& script, const nlohmann::json& options) { return sql.run(script, options); };
      // Flink's PrometheusReporter (metrics.reporter.prom.port): GET /metrics on its own
      // port. Bound before the REST server starts, so a port in use fails with nothing to stop.
      std::unique_ptr<cluster::PrometheusServer> prometheus;
      if (auto prom = cluster::prometheus_options(config.entries())) {
        prometheus = std::make_unique<cluster::PrometheusServer>(dispatcher, *prom);
        prometheus->start();
      }
      cluster::RestServer server(dispatcher, rest);
      server.start();
      dispatcher.set_configuration("rest.port", std::to_string(server.port()));

      // Flink's SQL Gateway REST endpoint (docs/sql-gateway.md), when a port is given.
      std::string collect_url;  // where workers post a SELECT's rows: this gateway, as they reach it
      std::unique_ptr<cluster::gateway::SqlGateway> gateway;  // after what its sessions use
      if (opts.sql_gateway_port >= 0) config.set("sql-gateway.endpoint.rest.port", std::to_string(opts.sql_gateway_port));
      if (auto port = config.get("sql-gateway.endpoint.rest.port")) {
        cluster::gateway::SqlGatewayOptions go;
        go.address = config.get_string("sql-gateway.endpoint.rest.address", rest.address);
        go.port = static_cast<int>(config.get_int("sql-gateway.endpoint.rest.port", 8083));
        go.session_idle_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
            config.get_duration("sql-gateway.session.idle-timeout", std::chrono::minutes(10)));
        gateway = std::make_unique<cluster::gateway::SqlGateway>(
            [&sql, &gateway, &collect_url](const std::map<std::string, std::string>& props) {
              return make_gateway_session(sql, *gateway, collect_url, props);
            },
            go);
        gateway->start();
        collect_url = fmt::format("http://{}:{}", go.address == "0.0.0.0" ? config.rest_address() : go.address, gateway->port());
        dispatcher.set_configuration("sql-gateway.endpoint.rest.port", std::to_string(gateway->port()));
      }

      // A worker inside this process (a one-command cluster, Flink's local mode).
      std::unique_ptr<cluster::Worker> local_worker;
      if (opts.local_slots > 0) {
        cluster::WorkerConfig wc;
        std::string rpc = "127.0.0.1:" + std::to_string(runtime.rpc_port());
        wc.coordinator = [rpc] { return rpc; };
        wc.slots = opts.local_slots;
        wc.worker_id = "local";
        local_worker = std::make_unique<cluster::Worker>(wc, cluster::gateway::registry_with_collect_sink());
        // Ready when it says so: its slots are registered before the REST address is printed.
        for (int i = 0; i < 1000 && runtime.workers().empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }

      // A new leader resumes its predecessor's jobs from their latest checkpoints.
      for (const auto& job_id : ha->job_graphs().job_ids()) {
        try {
          auto record = nlohmann::json::parse(ha->job_graphs().get(job_id).value_or("{}"));
          nlohmann::json options = record.value("options", nlohmann::json::object());
          if (auto latest = ha->checkpoints().latest(job_id)) {
            // A corrupt or incomplete latest checkpoint gives way to the newest intact
            // older one beside it (with retained checkpoints, Flink's num-retained).
            std::vector<std::string> passed_over;
            auto intact = intact_checkpoint_or_older(latest->external_path, &passed_over);
            for (const auto& why : passed_over) log::warn("{}; passed over", why);
            options["execution.state-recovery.path"] = intact ? intact->string() : latest->external_path;
            options["execution.state-recovery.claim-mode"] = "CLAIM";  // the job's own: subsumed as it goes on
          }
          auto submit = cluster::parse_submit_options(options, dispatcher.configuration());
          submit.raw = record.value("options", nlohmann::json::object());
          dispatcher.submit(record.at("spec"), submit, job_id,
                            cluster::JobTexts{"", record.value("sql", ""), record.value("plan", "")});
          log::ScopedContext in_job({job_id});
          log::info("recovered the job{}", options.contains("execution.state-recovery.path")
                                               ? " from " + options["execution.state-recovery.path"].get<std::string>()
                                               : std::string());
        } catch (const std::exception& e) {
          log::ScopedContext in_job({job_id});
          log::error("cannot recover the job: {}", e.what());
        }
      }

      // FULL materialized tables are refreshed on their freshness while this one leads.
      sql.start_refreshing();

      // `clink cluster start`: worker processes of this binary, stopped with the coordinator.
      std::vector<pid_t> children;
      const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
      for (int i = 0; i < opts.workers; ++i) {
        std::vector<std::string> args{self, "worker", "--coordinator",
                                      fmt::format("{}:{}", config.rest_address(), server.port()), "--slots",
                                      std::to_string(opts.worker_slots)};
        if (!opts.config.empty()) args.insert(args.end(), {"--config", opts.config});
        if (!opts.log_dir.empty()) args.insert(args.end(), {"--log-dir", opts.log_dir});
        std::string level = log::level_name(log::level());  // the workers log as this coordinator does
        std::transform(level.begin(), level.end(), level.begin(), [](unsigned char c) { return std::tolower(c); });
        args.insert(args.end(), {"--log-level", level});
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        pid_t pid = 0;
        sigset_t none;
        sigemptyset(&none);
        posix_spawnattr_t attr;
        posix_spawnattr_init(&attr);
        posix_spawnattr_setsigmask(&attr, &none);  // the workers take their own signals
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
        if (posix_spawn(&pid, self.c_str(), nullptr, &attr, argv.data(), environ) == 0) children.push_back(pid);
        posix_spawnattr_destroy(&attr);
      }

      std::printf("rest: http://%s:%d\n", rest.address.c_str(), server.port());
      std::printf("rpc: %s:%d\n", rc.rpc_host.c_str(), runtime.rpc_port());
      if (prometheus) std::printf("prometheus: http://%s:%d/metrics\n", prometheus->host().c_str(), prometheus->port());
      if (gateway) std::printf("sql-gateway: http://%s:%d\n", config.get_string("sql-gateway.endpoint.rest.address", rest.address).c_str(), gateway->port());
      std::fflush(stdout);
      for (;;) {
        if (wait_signal(std::chrono::milliseconds(100))) {
          log::info("coordinator stopping{}", ha_enabled ? " (its jobs resume on the next leader)" : ", cancelling the jobs");
          break;
        }
        if (terms().second >= term) {
          log::warn("coordinator: leadership lost, stopping its jobs and standing by");
          serve_again = true;
          break;
        }
      }
      suspending.store(ha_enabled);
      sql.stop_refreshing();  // a refresh in progress ends when shutdown() cancels its job
      for (pid_t pid : children) ::kill(pid, SIGTERM);
      for (pid_t pid : children) ::waitpid(pid, nullptr, 0);
      gateway.reset();  // its sessions' SELECT jobs end first
      local_worker.reset();
      if (prometheus) prometheus->stop();
      server.stop();
      dispatcher.shutdown();
    }
    ha->leader_election().stop();
    return code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitError;
  }
}

void add_coordinator_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<CoordinatorOptions>();
  auto* cmd = app.add_subcommand("coordinator", "Run a coordinator (Flink's JobManager): workers register with it, "
                                                "jobs are submitted over Flink's REST API");
  cmd->add_option("--config", opts->config, "Flink's config.yaml (rest.port, jobmanager.rpc.port, high-availability.*, ...)");
  cmd->add_option("--rest-port", opts->rest_port, "REST port (default 8081; 0: any free port)")->check(CLI::Range(0, 65535));
  cmd->add_option("--rest-address", opts->rest_address, "Address the REST API listens on (default 127.0.0.1)");
  cmd->add_option("--rpc-port", opts->rpc_port, "Control-plane port workers connect to (default 6123; 0: any free port)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("-D,--set", opts->dynamic,
                  "KEY=VALUE: a Flink configuration key over --config (repeatable), e.g. -D metrics.reporter.prom.port=9249");
  cmd->add_option("--local-slots", opts->local_slots, "Also run a worker with this many slots inside the coordinator")
      ->default_val(0);
  cmd->add_option("--sql-gateway-port", opts->sql_gateway_port,
                  "Serve Flink's SQL Gateway REST API on this port (sql-gateway.endpoint.rest.port; 0: any free port)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--log-dir", opts->log_dir,
                  "Write the process log (coordinator.log) and a log per job (<job id>.log) here (default env.log.dir)");
  cmd->callback([opts, &exit_code] { exit_code = run_coordinator(*opts); });

  auto copts = std::make_shared<CoordinatorOptions>();
  auto* cluster = app.add_subcommand("cluster", "A standalone cluster on this machine");
  cluster->require_subcommand(1);
  auto* start = cluster->add_subcommand("start", "Run a coordinator and worker processes until SIGINT/SIGTERM");
  start->add_option("--workers", copts->workers, "Worker processes")->default_val(2)->check(CLI::Range(1, 256));
  start->add_option("--slots", copts->worker_slots, "Slots of each worker")->default_val(2)->check(CLI::Range(1, 1024));
  start->add_option("--config", copts->config, "Flink's config.yaml, for the coordinator and the workers");
  start->add_option("--log-dir", copts->log_dir, "Log directory of the coordinator and the workers (default env.log.dir)");
  start->add_option("-D,--set", copts->dynamic, "KEY=VALUE: a Flink configuration key of the coordinator (repeatable)");
  start->add_option("--rest-port", copts->rest_port, "REST port (default 8081; 0: any free port)")->check(CLI::Range(0, 65535));
  start->add_option("--rpc-port", copts->rpc_port, "Control-plane port (default 6123; 0: any free port)")->check(CLI::Range(0, 65535));
  start->callback([copts, &exit_code] { exit_code = run_coordinator(*copts); });
}

}  // namespace clink::cli
