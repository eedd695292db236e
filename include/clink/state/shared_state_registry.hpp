#pragma once
// Files shared between checkpoints (the SST files of incremental RocksDB checkpoints,
// under <checkpoint root>/shared/), reference-counted over the checkpoints that use
// them, as Flink's SharedStateRegistry. The checkpoint coordinator registers each
// completed checkpoint's keyed handles and releases a checkpoint when it discards it
// (subsumed beyond the retained count); a file is deleted when no registered
// checkpoint references it any more. After a restart, register the retained
// checkpoints again before releasing any.
//
// A checkpoint that never completed: discard_unregistered() deletes the shared files of
// its handles that no registered checkpoint references (a backend only reuses files of
// completed checkpoints, so nothing else can refer to them).
#include <cstdint>
#include <filesystem>
#include <map>
#include <vector>

#include "clink/state/keyed_state_backend.hpp"

namespace clink {

// The shared files a handle references (empty for self-contained handles).
std::vector<std::filesystem::path> shared_state_files(const KeyedStateHandle& handle);

class SharedStateRegistry {
 public:
  void register_checkpoint(std::int64_t checkpoint_id, const std::vector<KeyedStateHandle>& handles);
  // Drops the checkpoint's references; deletes and returns the files nobody references now.
  std::vector<std::filesystem::path> release_checkpoint(std::int64_t checkpoint_id);
  std::vector<std::filesystem::path> discard_unregistered(const std::vector<KeyedStateHandle>& handles);

  std::size_t reference_count(const std::filesystem::path& file) const;
  std::size_t file_count() const { return refs_.size(); }

 private:
  std::map<std::int64_t, std::vector<std::filesystem::path>> by_checkpoint_;
  std::map<std::filesystem::path, std::size_t> refs_;
};

}  // namespace clink
