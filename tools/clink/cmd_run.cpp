// clink run <job>: runs a job to completion in this process.
#include <algorithm>
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "clink/core/error.hpp"
#include "clink/runtime/executor.hpp"
#include "commands.hpp"

namespace clink::cli {
namespace {

struct RunOptions {
  JobOptions job;
  bool metrics = false;
};

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

int run(const RunOptions& opts) {
  if (is_sql_file(opts.job.path)) {
    std::fprintf(stderr, "error: SQL jobs arrive with the SQL issue; run a JobGraphSpec (.json) for now\n");
    return kExitUnsupported;
  }
  try {
    JobGraph graph = load_job(opts.job);
    JobHandle handle = execute_async(graph);
    try {
      handle.wait();
    } catch (const ClinkError& e) {
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
  auto* cmd = app.add_subcommand("run", "Run a job to completion in this process");
  add_job_options(*cmd, opts->job);
  cmd->add_flag("--metrics", opts->metrics, "Print per-operator metrics (records in/out) to stderr at the end");
  cmd->callback([opts, &exit_code] { exit_code = run(*opts); });
}

}  // namespace clink::cli
