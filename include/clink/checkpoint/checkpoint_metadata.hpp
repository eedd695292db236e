#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "clink/core/error.hpp"
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

// A checkpoint that cannot be restored as written (incomplete, or a file fails its
// checksum): the message names the checkpoint directory and the file.
class CorruptCheckpointError : public ClinkError {
 public:
  using ClinkError::ClinkError;
};

// The size and xxh64 of one file of a checkpoint (checkpoint_integrity.hpp).
struct FileDigest {
  std::uint64_t size = 0;
  std::uint64_t xxh64 = 0;
  bool operator==(const FileDigest&) const = default;
};

// The _metadata file: written last and atomically, so a checkpoint directory with
// metadata is complete.
struct CheckpointMetadata {
  std::int64_t checkpoint_id = 0;
  std::int64_t timestamp_ms = 0;
  bool is_savepoint = false;
  std::string job_name;
  std::map<std::string, OperatorCheckpointState> operators;  // by operator uid
  // Every file of the checkpoint: names relative to its directory, or absolute for
  // shared files of incremental checkpoints. Empty in checkpoints of older versions
  // (nothing to verify).
  std::map<std::string, FileDigest> files;

  nlohmann::json to_json() const;
  static CheckpointMetadata from_json(const nlohmann::json& j);
  // Tmp file + rename; the JSON carries an xxh64 of itself ("checksum").
  void write(const std::filesystem::path& checkpoint_dir) const;
  // Throws CorruptCheckpointError when `_metadata` is missing, empty, unparsable or
  // fails its checksum. (Does not verify the other files: read_verified_checkpoint.)
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
