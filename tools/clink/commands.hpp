#pragma once
// The `clink` subcommands. Each adds itself to the app; its callback stores the exit
// code in `exit_code`.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "clink/runtime/job_graph.hpp"

namespace clink::cli {

void add_run_command(CLI::App& app, int& exit_code);
void add_explain_command(CLI::App& app, int& exit_code);
void add_later_commands(CLI::App& app, int& exit_code);  // sql, bench
void add_version_command(CLI::App& app, int& exit_code);

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
// Whether `path` is a SQL script, which arrives with the SQL issue.
bool is_sql_file(const std::string& path);
// Reads the spec, applies -p and --set, builds the graph through the built-in
// registry. Throws ClinkError naming the file and the problem.
JobGraph load_job(const JobOptions& opts);
// Applies one `key=value`: a config key (parallelism, max_parallelism,
// channel_capacity, chaining), `name`, or `<op id>.<param>`.
void apply_override(nlohmann::json& spec, const std::string& assignment);

}  // namespace clink::cli
