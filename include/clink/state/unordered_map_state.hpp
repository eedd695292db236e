#pragma once
// Unordered map state: a map state that is only point-read, written and cleared, never
// iterated in user-key order (COUNT(DISTINCT)'s values). A backend may keep it hashed,
// at a cost per access that does not grow with the map (the memory backend: a hash set
// per (key, namespace) instead of a B-tree, whose lookups miss the cache once per
// level). map_for_each and for_each_entry then visit its entries in no particular order.
// Snapshots are the same as an ordered map state's (each key's entries in user-key
// order), so either flavour restores the other; the last registration of a name decides
// its flavour. Apart from keyed_state_backend.hpp, which ~240 files include.
#include <cstdint>
#include <string>

#include "clink/state/keyed_state_backend.hpp"

namespace clink {

// Registers (or finds, by name) map state `name` as unordered where the backend has that
// flavour, else as an ordered map state (RocksDB, wrappers of a backend).
StateId register_unordered_map_state(KeyedStateBackend& backend, const std::string& name, std::int64_t ttl_ms = 0);

// What a backend with an unordered flavour implements besides KeyedStateBackend.
class UnorderedMapStates {
 public:
  virtual StateId register_unordered_map_state(const std::string& name, std::int64_t ttl_ms) = 0;

 protected:
  ~UnorderedMapStates() = default;
};

}  // namespace clink
