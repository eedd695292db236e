// clink version, and the subcommands that arrive with later issues.
#include <cstdio>

#include "commands.hpp"

namespace clink::cli {

void add_version_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("version", "Print clink's version");
  cmd->callback([&exit_code] {
    std::printf("clink %s\n", CLINK_VERSION);
    exit_code = kExitOk;
  });
}

void add_later_commands(CLI::App& app, int& exit_code) {
  struct Later {
    const char* name;
    const char* help;
    const char* message;
  };
  static const Later kLater[] = {
      {"sql", "Run or explain a Flink SQL script (arrives with the SQL issue)",
       "clink sql: the SQL frontend arrives with the SQL issue; use `clink run job.json` for now\n"},
      {"bench", "Run the built-in benchmarks (arrives with the benchmark issue)",
       "clink bench: benchmarks arrive with the benchmark issue\n"},
  };
  for (const Later& l : kLater) {
    auto* cmd = app.add_subcommand(l.name, l.help);
    cmd->allow_extras();
    const char* message = l.message;
    cmd->callback([message, &exit_code] {
      std::fputs(message, stderr);
      exit_code = kExitUnsupported;
    });
  }
}

}  // namespace clink::cli
