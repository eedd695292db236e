#include "clink/runtime/key_group.hpp"

#include <xxhash.h>

namespace clink {

std::uint64_t key_hash(std::string_view key_bytes) {
  return XXH3_64bits(key_bytes.data(), key_bytes.size());
}

KeyGroupRange key_group_range_for_subtask(int max_parallelism, int parallelism, int subtask) {
  // The inverse of subtask_for_key_group (Flink's computeKeyGroupRangeForOperatorIndex).
  int first = static_cast<int>((static_cast<std::int64_t>(subtask) * max_parallelism + parallelism - 1) / parallelism);
  int last = static_cast<int>((static_cast<std::int64_t>(subtask + 1) * max_parallelism - 1) / parallelism);
  return {first, last};
}

}  // namespace clink
