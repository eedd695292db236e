#pragma once
// Internal to src/state: the pieces both backends share.
//
// Composite key of one entry: varint(len key) key varint(len ns) ns. (RocksDB rows put
// the key group in front, two bytes big-endian, and map rows the user key behind.)
//
// The canonical ("full") snapshot format, written by the memory backend's checkpoints
// and by every backend's savepoints, read by every backend:
//
//   file   := "CLINKKS1" section(first) ... section(last)
//   section(kg) := { varint state_index, varint count, entry × count }*   (states present)
//   entry  := varint(len key) key varint(len ns) ns varint(len value) value
//             (a map state has one entry per user key, value = varint(len uk) uk
//              varint(len uv) uv, the form of KeyedStateBackend::for_each_entry)
//
// and its handle description:
//   {"format": "clink-keyed-full-v1", "backend": "memory", "checkpoint_id": 7,
//    "dir": "/abs/chk-7", "file": "keyed-<uid>-<subtask>.bin",
//    "states": [{"name": "count", "kind": "value", "ttl_ms": 0}, ...],
//    "offsets": [o(first), ..., o(last), end_of_file], "entries": 1000000, "size": 14000000}
// Offsets make a restore at another parallelism read only its key groups' byte range.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "clink/state/keyed_state_backend.hpp"
#include "clink/state/state_codec.hpp"

namespace clink::state_internal {

inline constexpr const char* kFullFormat = "clink-keyed-full-v1";
inline constexpr const char* kRocksDbFormat = "clink-rocksdb-v1";

struct StateMeta {
  std::string name;
  StateKind kind = StateKind::kValue;
  std::int64_t ttl_ms = 0;
};

const char* kind_name(StateKind kind);
StateKind kind_from_name(const std::string& name);
nlohmann::json states_to_json(const std::vector<StateMeta>& states);
std::vector<StateMeta> states_from_json(const nlohmann::json& j);

// A state registered again (or restored): same kind, same TTL-ness; adopts the new TTL.
void check_compatible(StateMeta& existing, StateKind kind, std::int64_t ttl_ms);

inline void append_composite_key(std::string_view key, std::string_view ns, std::string& out) {
  put_varint(key.size(), out);
  out.append(key);
  put_varint(ns.size(), out);
  out.append(ns);
}
// Splits a composite key (consuming it from `in`); throws on malformed input.
void parse_composite_key(std::string_view& in, std::string_view& key, std::string_view& ns);
// Reads a varint-length-prefixed string from the front of `in`.
std::string_view get_length_prefixed(std::string_view& in);
inline void put_length_prefixed(std::string_view s, std::string& out) {
  put_varint(s.size(), out);
  out.append(s);
}

// TTL cleanup for full snapshots: the bytes to write for a stored value (or map value),
// or false when the entry is expired entirely. `scratch` holds a filtered list.
bool snapshot_value(StateKind kind, std::int64_t ttl_ms, std::int64_t now, std::string_view value,
                    std::string& scratch, std::string_view& out);

// File names inside checkpoint directories: the operator uid made file-name safe.
std::string file_stem(const std::string& operator_uid, int subtask);
std::string random_hex(int bytes);
// Moves a file, copying when a rename is impossible (another file system).
void move_file(const std::filesystem::path& from, const std::filesystem::path& to);
// Hard-links a file, copying when a link is impossible.
void link_or_copy(const std::filesystem::path& from, const std::filesystem::path& to);

class FullSnapshotWriter {
 public:
  FullSnapshotWriter(std::filesystem::path dir, std::string file_name, KeyGroupRange range,
                     std::vector<StateMeta> states);
  ~FullSnapshotWriter();
  // Key groups in ascending order; every group of the range gets a section (possibly empty).
  void begin_key_group(int kg);
  // Entries of one state within a key group must be contiguous.
  void add(int state_index, std::string_view key, std::string_view ns, std::string_view value);
  KeyedStateHandle finish(std::int64_t checkpoint_id, const char* backend);

 private:
  void flush_state();
  void write(std::string_view bytes);
  std::filesystem::path dir_;
  std::string file_name_;
  KeyGroupRange range_;
  std::vector<StateMeta> states_;
  std::FILE* file_ = nullptr;
  std::uint64_t pos_ = 0;
  std::vector<std::uint64_t> offsets_;
  int current_kg_ = -1;
  int current_state_ = -1;
  std::uint64_t count_ = 0;
  std::uint64_t entries_ = 0;
  std::string section_;
};

// Calls on_states once (the handle's states, index = state_index of entries) and then
// on_entry for every entry whose key group lies in `range`.
using OnStates = std::function<void(const std::vector<StateMeta>&)>;
using OnEntry = std::function<void(int state_index, int kg, std::string_view key, std::string_view ns,
                                   std::string_view value)>;
void read_full_snapshot(const KeyedStateHandle& handle, KeyGroupRange range, const OnStates& on_states,
                        const OnEntry& on_entry);
// The same for a RocksDB checkpoint handle (opens a temporary copy of the database).
void read_rocksdb_snapshot(const KeyedStateHandle& handle, KeyGroupRange range, const OnStates& on_states,
                           const OnEntry& on_entry);
// Dispatches on the handle's format.
void read_snapshot(const KeyedStateHandle& handle, KeyGroupRange range, const OnStates& on_states,
                   const OnEntry& on_entry);

inline bool overlaps(KeyGroupRange a, KeyGroupRange b) { return a.first <= b.last && b.first <= a.last; }

std::unique_ptr<KeyedStateBackend> make_memory_backend(const std::string& operator_uid, int subtask,
                                                       KeyGroupRange key_groups, int max_parallelism,
                                                       const ProcessingTimeClock& clock);
std::unique_ptr<KeyedStateBackend> make_rocksdb_backend(const StateBackendConfig& config,
                                                        const std::string& operator_uid, int subtask,
                                                        KeyGroupRange key_groups, int max_parallelism,
                                                        const ProcessingTimeClock& clock);

}  // namespace clink::state_internal
