#pragma once
// The `clink` subcommands. Each adds itself to the app; its callback stores the exit
// code in `exit_code`.
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json_fwd.hpp>

#include "clink/metrics/metric_registry.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/runtime/job_graph.hpp"

namespace clink::cli {

void add_run_command(CLI::App& app, int& exit_code);
void add_explain_command(CLI::App& app, int& exit_code);
void add_sql_command(CLI::App& app, int& exit_code);
void add_bench_command(CLI::App& app, int& exit_code);
void add_bench_kafka_command(CLI::App& bench, int& exit_code);  // a subcommand of `bench`
void add_bench_jdbc_command(CLI::App& bench, int& exit_code);   // a subcommand of `bench`
void add_bench_json_command(CLI::App& bench, int& exit_code);   // a subcommand of `bench`
void add_version_command(CLI::App& app, int& exit_code);
void add_worker_command(CLI::App& app, int& exit_code);
// The cluster: the client commands list, cancel, stop, savepoint.
void add_cluster_commands(CLI::App& app, int& exit_code);
// `clink coordinator` (cmd_coordinator.cpp).
struct CoordinatorOptions {
  std::string config;
  int rest_port = -1;  // -1: from the config, else 8081
  std::string rest_address;
  int rpc_port = -1;  // -1: from the config, else 6123
  int local_slots = 0;
  int workers = 0;       // `clink cluster start`: worker processes started with it
  int worker_slots = 1;  // slots of each
  int sql_gateway_port = -1;  // -1: sql-gateway.endpoint.rest.port from the config, else no gateway
  std::string log_dir;   // --log-dir (else env.log.dir): the process log and a file per job
  std::vector<std::string> dynamic;  // -D key=value: Flink's dynamic properties, over the config file
};
int run_coordinator(const CoordinatorOptions& opts);
void add_coordinator_command(CLI::App& app, int& exit_code);

// Exit codes.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;        // the job failed or the spec is bad
inline constexpr int kExitUnsupported = 2;  // usage errors and features of later issues

// How a job file is loaded: the spec plus command-line overrides.
struct JobOptions {
  std::string path;
  int parallelism = 0;            // -p: the job's default parallelism (0: the spec's)
  std::vector<std::string> sets;  // --set key=value
};
void add_job_options(CLI::App& cmd, JobOptions& opts);
// The text `clink explain` prints for a graph.
std::string explain(const JobGraph& graph);
// Whether `path` is a SQL script: a .sql file, or a file whose first word (after
// comments) is a SQL statement keyword rather than a JSON object.
bool is_sql_file(const std::string& path);
// The whole file; throws ClinkError naming it when it cannot be read.
std::string read_file(const std::string& path);

// `clink run` flags (checkpoints, restore, restarts, savepoint on stop).
struct RunOptions {
  JobOptions job;
  bool metrics = false;
  std::string catalog_dir;
  std::string checkpoint_dir;
  std::int64_t checkpoint_interval_ms = 0;
  int retained = 1;
  std::string state_backend = "memory";
  bool at_least_once = false;
  std::string from_checkpoint;
  std::string from_savepoint;
  bool allow_non_restored = false;
  std::string savepoint_on_stop;
  int restart_attempts = 0;
  std::int64_t restart_delay_ms = 1000;
  bool restart_backoff = false;
  std::string failover_strategy = "region";  // Flink's jobmanager.execution.failover-strategy
  std::string coordinator;  // HOST:PORT: submit to this coordinator (detached) instead of running here
  bool web_ui = false;      // serve the REST API and the web UI for the jobs it runs (docs/web-ui.md)
  int rest_port = 8081;     // where (on 127.0.0.1); 0: any free port
  bool quiet = false;       // --quiet: no progress line, no info logs
  bool keep_refreshing = false;  // after the script: refresh FULL materialized tables until stopped
  std::vector<std::string> inject_failures;  // --inject-failure specs (docs/fault-injection.md)
};
ExecutionOptions execution_options(const RunOptions& opts);
void print_metrics(const JobGraph& graph, const MetricRegistry& metrics);
// `clink run script.sql`: every statement in order; exit code.
int run_sql_script(const RunOptions& opts);
// `clink run FILE --coordinator HOST:PORT`: plans here, submits each job to the
// coordinator and prints its id; exit code.
int submit_to_coordinator(const RunOptions& opts);
// `clink explain script.sql [--spec]`.
int explain_sql_script(const JobOptions& opts, const std::string& catalog_dir, bool with_spec);
// Reads the spec, applies -p and --set, builds the graph through the built-in
// registry. Throws ClinkError naming the file and the problem.
JobGraph load_job(const JobOptions& opts);
// Applies one `key=value`: a config key (parallelism, max_parallelism,
// channel_capacity, chaining), `name`, or `<op id>.<param>`.
void apply_override(nlohmann::json& spec, const std::string& assignment);
// Whether a --set key is a Flink configuration key of the process rather than of the
// job's spec (metrics.reporter.*: the Prometheus endpoint); apply_override skips those.
bool is_process_config_key(const std::string& key);
// The --set assignments with such keys, as key -> value.
std::map<std::string, std::string> process_config(const std::vector<std::string>& sets);

}  // namespace clink::cli
