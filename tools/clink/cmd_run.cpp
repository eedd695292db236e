// clink run <job>: runs a job to completion in this process.
#include <algorithm>
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>

#include "clink/checkpoint/checkpoint_integrity.hpp"
#include "clink/checkpoint/checkpoint_metadata.hpp"
#include "clink/core/error.hpp"
#include "clink/core/log.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/runtime/failure_injector.hpp"
#include "commands.hpp"
#include "run_services.hpp"
#include "sql_session.hpp"

namespace clink::cli {
namespace {

extern "C" void request_stop(int) { stop_requested().store(true); }

}  // namespace

ExecutionOptions execution_options(const RunOptions& opts) {
  ExecutionOptions o;
  o.checkpoints.directory = opts.checkpoint_dir.empty() ? std::filesystem::path() : storage_path(opts.checkpoint_dir);
  o.checkpoints.interval_ms = opts.checkpoint_interval_ms;
  o.checkpoints.retained = opts.retained;
  o.checkpoints.state_backend.kind = opts.state_backend;
  if (!opts.checkpoint_dir.empty())
    o.checkpoints.state_backend.working_dir = o.checkpoints.directory / "working";
  o.checkpoints.mode = opts.at_least_once ? CheckpointingMode::kAtLeastOnce : CheckpointingMode::kExactlyOnce;
  if (opts.checkpoint_interval_ms > 0 && opts.checkpoint_dir.empty())
    throw ClinkError("--checkpoint-interval needs --checkpoint-dir");
  std::string from = !opts.from_checkpoint.empty() ? opts.from_checkpoint : opts.from_savepoint;
  if (!opts.from_checkpoint.empty() && !opts.from_savepoint.empty())
    throw ClinkError("give --from-checkpoint or --from-savepoint, not both");
  if (!from.empty()) {
    std::filesystem::path p = storage_path(from);
    // A checkpoint directory (with chk-<n> inside) restores from its newest intact
    // checkpoint; a corrupt or incomplete newer one is passed over, and said so.
    if (!std::filesystem::exists(p / kMetadataFile)) {
      std::vector<std::string> passed_over;
      auto latest = latest_intact_checkpoint(p, &passed_over);
      for (const auto& why : passed_over) log::warn("{}; passed over", why);
      if (!latest) throw ClinkError("no intact completed checkpoint or savepoint in " + from);
      p = *latest;
    }
    o.restore = RestoreSettings{p, opts.allow_non_restored};
  }
  if (opts.restart_attempts > 0)
    o.restart = opts.restart_backoff
                    ? RestartStrategy::exponential_backoff(opts.restart_attempts, opts.restart_delay_ms, 60'000)
                    : RestartStrategy::fixed_delay(opts.restart_attempts, opts.restart_delay_ms);
  o.failover = opts.failover_strategy == "full" ? FailoverStrategy::kFull : FailoverStrategy::kRegion;
  try {
    o.failures = FailureInjector::parse(opts.inject_failures);
  } catch (const ClinkError& e) {
    throw ClinkError(std::string("--inject-failure: ") + e.what());
  }
  return o;
}

void print_metrics(const JobGraph& graph, const MetricRegistry& metrics) {
  std::size_t width = 8;
  for (const auto& id : graph.topological_order()) width = std::max(width, id.size());
  std::string out = fmt::format("metrics (summed over subtasks):\n  {:<{}}  {:>12}  {:>12}\n", "operator", width,
                                "records_in", "records_out");
  for (const auto& id : graph.topological_order()) {
    auto t = metrics.total(id);
    out += fmt::format("  {:<{}}  {:>12}  {:>12}", id, width, t.records_in, t.records_out);
    if (t.late_records_dropped > 0) out += fmt::format("  late_records_dropped={}", t.late_records_dropped);
    out += '\n';
  }
  std::fputs(out.c_str(), stderr);
}

namespace {

int run(const RunOptions& opts) {
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  if (!opts.coordinator.empty() && opts.web_ui) {
    std::fprintf(stderr, "error: --web-ui serves a job run here; a coordinator serves its web UI at its REST address (%s)\n",
                 opts.coordinator.c_str());
    return kExitUnsupported;
  }
  if (!opts.coordinator.empty() && !opts.inject_failures.empty()) {
    // A cluster's workers rebuild each attempt's tasks from the deployed spec and
    // options: the injector's counts would not carry over attempts there.
    std::fprintf(stderr, "error: --inject-failure applies to jobs run in this process, not to --coordinator\n");
    return kExitUnsupported;
  }
  if (!opts.coordinator.empty()) return submit_to_coordinator(opts);
  if (is_sql_file(opts.job.path)) return run_sql_script(opts);
  if (!opts.catalog_dir.empty()) {
    std::fprintf(stderr, "error: --catalog-dir applies to SQL scripts only\n");
    return kExitUnsupported;
  }
  try {
    JobGraph graph = load_job(opts.job);
    RunServices services(opts);
    JobHandle handle = services.launch(graph, execution_options(opts));
    try {
      // SIGINT/SIGTERM stop the job: with --savepoint-on-stop, after a savepoint.
      while (!handle.wait_for(std::chrono::milliseconds(50))) {
        if (!stop_requested().load()) continue;
        services.progress_done();
        if (opts.savepoint_on_stop.empty()) {
          handle.cancel();
          handle.wait_for(std::chrono::seconds(30));
          std::fprintf(stderr, "job cancelled\n");
          return kExitError;
        }
        auto path = handle.stop_with_savepoint(storage_path(opts.savepoint_on_stop));
        std::fflush(stdout);
        std::fprintf(stderr, "savepoint written to %s\n", path.c_str());
        return kExitOk;
      }
      services.progress_done();
      handle.wait();
    } catch (const ClinkError& e) {
      services.progress_done();
      std::fflush(stdout);
      if (opts.metrics) print_metrics(graph, handle.metrics());
      std::fprintf(stderr, "error: %s\n", e.what());
      return kExitError;
    }
    std::fflush(stdout);
    if (opts.metrics) print_metrics(graph, handle.metrics());
    return kExitOk;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitError;
  }
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Run a job to completion in this process, or submit it to a coordinator (--coordinator)");
  add_job_options(*cmd, opts->job);
  cmd->add_option("--catalog-dir", opts->catalog_dir,
                  "SQL: keep the catalog (tables, views, functions) in this directory across runs");
  cmd->add_flag("--metrics", opts->metrics, "Print per-operator metrics (records in/out) to stderr at the end");
  cmd->add_option("--checkpoint-dir", opts->checkpoint_dir, "Where checkpoints go (chk-<n>/ and shared/)");
  cmd->add_option("--checkpoint-interval", opts->checkpoint_interval_ms, "Milliseconds between checkpoints (0: off)");
  cmd->add_option("--checkpoints-retained", opts->retained, "Completed checkpoints to keep")->default_val(1);
  cmd->add_option("--state-backend", opts->state_backend, "Keyed state backend: memory or rocksdb")
      ->check(CLI::IsMember({"memory", "rocksdb"}))
      ->default_val("memory");
  cmd->add_flag("--at-least-once", opts->at_least_once, "Do not align barriers (replays may duplicate records)");
  cmd->add_option("--from-checkpoint", opts->from_checkpoint,
                  "Restore from a checkpoint (chk-<n>) or the latest one in a checkpoint directory");
  cmd->add_option("--from-savepoint", opts->from_savepoint, "Restore from a savepoint directory");
  cmd->add_flag("--allow-non-restored-state", opts->allow_non_restored,
                "Skip restored state whose operator uid is not in the job");
  cmd->add_option("--savepoint-on-stop", opts->savepoint_on_stop,
                  "On SIGINT/SIGTERM take a savepoint into this directory, then stop");
  cmd->add_option("--restart-attempts", opts->restart_attempts,
                  "Restarts after a failure, from the latest checkpoint (0: fail at once)");
  cmd->add_option("--restart-delay", opts->restart_delay_ms, "Milliseconds before a restart")->default_val(1000);
  cmd->add_flag("--restart-backoff", opts->restart_backoff, "Double the restart delay after each restart");
  cmd->add_flag("--web-ui", opts->web_ui,
                "Serve the web UI and Flink's REST API for the job(s) while they run (prints the address on stderr)");
  cmd->add_option("--rest-port", opts->rest_port, "The web UI's and REST API's port on 127.0.0.1 (0: any free port)")
      ->default_val(8081)
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--failover-strategy", opts->failover_strategy,
                  "Which tasks a failure restarts (Flink's jobmanager.execution.failover-strategy): region "
                  "(the failed task's pipelined region) or full (every task)")
      ->check(CLI::IsMember({"region", "full"}))
      ->default_val("region");
  cmd->add_option("--coordinator", opts->coordinator,
                  "HOST:PORT of a coordinator's REST API: submit the job(s) there, print each job id and exit");
  cmd->add_flag("--keep-refreshing", opts->keep_refreshing,
                "SQL: after the script, keep refreshing its catalog's FULL-mode materialized tables on their "
                "freshness until stopped (SIGINT/SIGTERM), as Flink's SQL Gateway scheduler does");
  cmd->add_option("--inject-failure", opts->inject_failures,
                  "Testing: make chosen tasks fail, as ordinary task failures (repeatable). SPEC is key=value,... "
                  "with one trigger: after-records=K (on the batch bringing an operator subtask's records to K), "
                  "after-checkpoint=N / during-checkpoint=N (once / while a checkpoint numbered N or later "
                  "completes / is snapshotted), probability=P (each record fails with P; per=batch: each batch; "
                  "seed=S); selected by operator=GLOB (uid or name, * ?) and subtask=I (0-based); times=N "
                  "failures in all (default 1, probability: unlimited). E.g. "
                  "operator=Window*,subtask=1,after-records=5000 or probability=0.0001,seed=7. "
                  "See docs/fault-injection.md")
      ->type_name("SPEC")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_flag("--quiet,-q", opts->quiet, "No progress line on a terminal and no info logs (warnings and errors only)");
  cmd->callback([opts, &exit_code] {
    if (opts->quiet && log::level() < log::Level::kWarn) log::set_level(log::Level::kWarn);
    exit_code = run(*opts);
  });
}

}  // namespace clink::cli
