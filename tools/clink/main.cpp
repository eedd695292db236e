// clink: run, explain and benchmark stream processing jobs; the interactive SQL shell.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "clink/core/log.hpp"
#include "commands.hpp"

namespace {

// --log-level on every command (set while parsing, before the command runs).
void add_log_level_option(CLI::App& cmd) {
  cmd.add_option_function<std::string>(
         "--log-level", [](const std::string& v) { clink::log::set_level(clink::log::parse_level(v)); },
         "Log level: trace, debug, info (default), warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  for (CLI::App* sub : cmd.get_subcommands({})) add_log_level_option(*sub);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"clink: a native stream processor with Apache Flink's semantics"};
  app.name("clink");
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show the help of every subcommand");
  int exit_code = clink::cli::kExitOk;
  clink::cli::add_run_command(app, exit_code);
  clink::cli::add_explain_command(app, exit_code);
  clink::cli::add_sql_command(app, exit_code);
  clink::cli::add_bench_command(app, exit_code);
  clink::cli::add_version_command(app, exit_code);
  clink::cli::add_worker_command(app, exit_code);
  clink::cli::add_coordinator_command(app, exit_code);
  clink::cli::add_cluster_commands(app, exit_code);
  for (CLI::App* cmd : app.get_subcommands({})) add_log_level_option(*cmd);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? clink::cli::kExitOk : clink::cli::kExitUnsupported;
  }
  std::fflush(stdout);
  return exit_code;
}
