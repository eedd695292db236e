#pragma once
// The state each operator subtask holds in a completed checkpoint, in bytes, from the
// checkpoint's `_metadata` (which records every file's size): Flink's per-task
// `state_size` (every file its state references) and `checkpointed_size` (what this
// checkpoint wrote for it: all but the shared files of an incremental RocksDB snapshot
// that an earlier checkpoint uploaded). Read when asked, never on the hot path; cached
// by checkpoint directory, since a retained checkpoint is removed later.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace clink::cluster {

struct SubtaskStateSize {
  std::int64_t state_size = 0;
  std::int64_t checkpointed_size = 0;
};

// By (operator uid, subtask index).
using StateSizes = std::map<std::pair<std::string, int>, SubtaskStateSize>;

// The sizes of the checkpoint (or savepoint) in `checkpoint_dir`; empty when its
// metadata cannot be read (removed before it was first asked for, or never written).
std::shared_ptr<const StateSizes> checkpoint_state_sizes(const std::string& checkpoint_dir);

}  // namespace clink::cluster
