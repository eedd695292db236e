#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "clink/state/keyed_state_backend.hpp"

namespace clink {

// What one operator subtask wrote at a checkpoint.
struct OperatorSubtaskState {
  int subtask = 0;
  std::vector<KeyedStateHandle> keyed;   // empty for non-keyed operators
  std::string timers_file;               // relative to the checkpoint directory; may be empty
  std::string operator_state_file;       // relative; may be empty
  // The subtask had finished (its task ended and exited after its final checkpoint,
  // FLIP-147's FinishedOperatorSubtaskState): it holds no state, and has nothing left to do.
  bool finished = false;
};

struct OperatorCheckpointState {
  int parallelism = 0;
  int max_parallelism = 0;
  std::vector<OperatorSubtaskState> subtasks;
  // Every subtask finished (Flink's fully finished operator): a restore does not run it
  // at all, at any parallelism, so a finished source reads nothing again.
  bool fully_finished() const;
};

// The _metadata file: written last and atomically, so a checkpoint directory with
// metadata is complete.
struct CheckpointMetadata {
  std::int64_t checkpoint_id = 0;
  std::int64_t timestamp_ms = 0;
  bool is_savepoint = false;
  std::string job_name;
  std::map<std::string, OperatorCheckpointState> operators;  // by operator uid

  nlohmann::json to_json() const;
  static CheckpointMetadata from_json(const nlohmann::json& j);
  void write(const std::filesystem::path& checkpoint_dir) const;  // tmp file + rename
  static CheckpointMetadata read(const std::filesystem::path& checkpoint_dir);
};

inline constexpr const char* kMetadataFile = "_metadata";

// The id of a checkpoint directory's name ("chk-42" -> 42); nullopt for any other name
// ("chk-abc", "chk-5x", "chk-"), which clink never made and so never reads or removes.
std::optional<std::int64_t> checkpoint_id_of(std::string_view directory_name);

// The newest completed checkpoint under a checkpoint directory, if any.
std::optional<std::filesystem::path> latest_checkpoint(const std::filesystem::path& directory);

nlohmann::json to_json(const OperatorSubtaskState& s);
OperatorSubtaskState subtask_state_from_json(const nlohmann::json& j);

}  // namespace clink
