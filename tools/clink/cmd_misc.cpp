// clink version.
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

}  // namespace clink::cli
