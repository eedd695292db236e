#pragma once
// What a worker needs of a job's execution options to run its tasks: the checkpoint
// configuration (where snapshots go, the state backend, the mode) and where the attempt
// starts (the restore point, the last checkpoint id). Travels as JSON in the Deploy message (once per attempt, not a hot path).
#include <filesystem>
#include <optional>
#include <string>

#include "clink/runtime/executor.hpp"
#include "clink/runtime/task_group.hpp"

namespace clink::cluster {

struct DeployOptions {
  CheckpointConfig checkpoints;
  AttemptStart start;
};

std::string deploy_options_json(const DeployOptions& options);
// Throws ClinkError naming the field on malformed input.
DeployOptions parse_deploy_options(const std::string& json);

}  // namespace clink::cluster
