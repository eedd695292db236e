#include "clink/core/error.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "clink/state/unordered_map_state.hpp"
#include "snapshot_format.hpp"

namespace clink {

std::unique_ptr<KeyedStateBackend> make_keyed_state_backend(const StateBackendConfig& config,
                                                            const std::string& operator_uid, int subtask,
                                                            KeyGroupRange key_groups, int max_parallelism,
                                                            const ProcessingTimeClock& clock) {
  if (max_parallelism <= 0 || max_parallelism > 32768)
    throw ClinkError("keyed state: max parallelism must be in [1, 32768], got " + std::to_string(max_parallelism));
  if (key_groups.first < 0 || key_groups.last >= max_parallelism)
    throw ClinkError("keyed state: key groups [" + std::to_string(key_groups.first) + ", " +
                     std::to_string(key_groups.last) + "] outside max parallelism " + std::to_string(max_parallelism));
  if (config.kind == "memory" || config.kind.empty())
    return state_internal::make_memory_backend(operator_uid, subtask, key_groups, max_parallelism, clock);
  if (config.kind == "rocksdb")
    return state_internal::make_rocksdb_backend(config, operator_uid, subtask, key_groups, max_parallelism, clock);
  throw ClinkError("unknown state backend '" + config.kind + "' (expected memory or rocksdb)");
}

StateId register_unordered_map_state(KeyedStateBackend& backend, const std::string& name, std::int64_t ttl_ms) {
  if (auto* unordered = dynamic_cast<UnorderedMapStates*>(&backend))
    return unordered->register_unordered_map_state(name, ttl_ms);
  return backend.register_state(name, StateKind::kMap, ttl_ms);
}

}  // namespace clink
