#pragma once
// Keyed state, addressed by (state, key group, key bytes, namespace), stored as bytes.
// The typed states of keyed_state.hpp (ValueState, ListState, MapState, ReducingState,
// AggregatingState, TTL) are written once over this interface; backends (memory,
// RocksDB) only store bytes, iterate key groups and snapshot.
//
// Byte layout the backends rely on (part of the checkpoint format):
// - list state: the concatenation of its elements (append == concatenation);
// - states registered with a TTL (ttl_ms > 0) carry the last-access time as 8 bytes
//   little-endian in front of every value, map value and list element; list elements
//   of a TTL state are `ts(8) varint(len) bytes` so a backend can drop expired elements
//   without knowing the element type (see state_ttl.hpp). Backends drop expired
//   entries on full snapshots and (RocksDB) in compaction.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <absl/functional/function_ref.h>

#include "clink/core/json_value.hpp"
#include "clink/runtime/key_group.hpp"
#include "clink/runtime/timer_service.hpp"

namespace clink {

enum class StateKind { kValue, kList, kMap, kReducing, kAggregating };

struct StateId {
  int index = -1;
  bool valid() const { return index >= 0; }
};

// One completed snapshot of one backend instance: where its files are and which key
// groups they cover. Stored in the checkpoint metadata, handed back on restore.
struct KeyedStateHandle {
  JsonValue description;  // backend-specific: files, offsets per key group, shared SSTs
  KeyGroupRange key_groups;
};

class KeyedStateBackend {
 public:
  virtual ~KeyedStateBackend() = default;

  // ---- key context: set once per record (or timer) by the keyed operator ----
  void set_current_key(std::string_view key_bytes) {
    if (key_bytes == current_key_ && key_version_ != 0) return;
    current_key_.assign(key_bytes);
    current_key_group_ = key_group_for_hash(key_hash(key_bytes), max_parallelism_);
    ++key_version_;
  }
  // When the caller already knows the key group (hash partitioner computed it).
  void set_current_key(std::string_view key_bytes, int key_group) {
    if (key_bytes == current_key_ && key_group == current_key_group_ && key_version_ != 0) return;
    current_key_.assign(key_bytes);
    current_key_group_ = key_group;
    ++key_version_;
  }
  void set_current_namespace(std::string_view ns) {
    if (ns == current_ns_) return;
    current_ns_.assign(ns);
    ++key_version_;
  }
  const std::string& current_key() const { return current_key_; }
  int current_key_group() const { return current_key_group_; }
  const std::string& current_namespace() const { return current_ns_; }
  // Changes whenever the current (key, namespace) does: backends cache per-key lookups.
  std::uint64_t key_version() const { return key_version_; }
  KeyGroupRange key_groups() const { return key_groups_; }
  int max_parallelism() const { return max_parallelism_; }
  // Processing time for TTL.
  const ProcessingTimeClock& clock() const { return *clock_; }

  // Registers (or finds, by name) a state; the same name with another kind is an error,
  // so is a TTL state under the name of a restored state without TTL, or vice versa.
  // ttl_ms > 0: values carry timestamps (see above) and expire ttl_ms after them.
  virtual StateId register_state(const std::string& name, StateKind kind, std::int64_t ttl_ms = 0) = 0;

  // ---- the entry of the current (key, namespace) ----
  virtual bool get(StateId, std::string& out) = 0;  // false: absent
  virtual void put(StateId, std::string_view value) = 0;
  virtual void append(StateId, std::string_view bytes) = 0;  // concatenates (list state)
  virtual void remove(StateId) = 0;
  // A hint that the state of `key_bytes` (under the current namespace) is read or written
  // soon: a backend may start loading it (the memory backend prefetches its hash slot,
  // whose cache miss was most of a large join's insert). Results do not depend on it.
  virtual void prefetch(StateId, std::string_view /*key_bytes*/) {}

  // ---- map entries under the current (key, namespace) ----
  virtual bool map_get(StateId, std::string_view user_key, std::string& out) = 0;
  virtual void map_put(StateId, std::string_view user_key, std::string_view value) = 0;
  virtual void map_remove(StateId, std::string_view user_key) = 0;
  // Read-modify-write of one entry, with one lookup where the backend can: fn gets
  // whether the entry is present and its value, writes the new value to `next` (empty
  // on entry) and returns true to store it, false to remove the entry (or leave it
  // absent). fn must not use the backend.
  using MapUpdateFn = absl::FunctionRef<bool(bool present, std::string_view current, std::string& next)>;
  virtual void map_update(StateId id, std::string_view user_key, MapUpdateFn fn) {
    const bool present = map_get(id, user_key, update_current_);
    update_next_.clear();
    if (fn(present, present ? std::string_view(update_current_) : std::string_view(), update_next_))
      map_put(id, user_key, update_next_);
    else if (present)
      map_remove(id, user_key);
  }
  // In user-key byte order; return false from fn to stop. fn must not change this map
  // state (collect the changes and apply them after the scan).
  virtual void map_for_each(StateId, const std::function<bool(std::string_view, std::string_view)>& fn) = 0;
  virtual void map_clear(StateId) = 0;

  // ---- iteration (restore, rescale, cleanup, "all keys of a namespace") ----
  // Every entry of a state in one key group: (key, namespace, value). Map states pass
  // each user key's entry with value = user key + value encoded as two length-prefixed
  // strings.
  virtual void for_each_entry(StateId, int key_group,
                              const std::function<void(std::string_view key, std::string_view ns,
                                                       std::string_view value)>& fn) = 0;

  // ---- snapshots ----
  // Writes everything to files under `dir` (a directory of this checkpoint); returns
  // the handle to keep in the checkpoint metadata. Called on the task thread at the
  // barrier; must not be affected by later writes.
  virtual KeyedStateHandle snapshot(std::int64_t checkpoint_id, const std::filesystem::path& dir) = 0;
  // A self-contained snapshot (no files shared with other checkpoints) in the canonical
  // format that every backend restores: what savepoints use.
  virtual KeyedStateHandle savepoint(std::int64_t checkpoint_id, const std::filesystem::path& dir) {
    return snapshot(checkpoint_id, dir);
  }
  // A snapshot in two parts, as Flink's: this call (on the task thread, at the barrier)
  // takes what the snapshot needs and returns the rest, which writes the files and
  // returns the handle. The task runs that part on another thread while it goes on
  // processing; the state it writes is the state at this call, whatever the task
  // changes meanwhile. It must run (or be dropped) before the next begin_snapshot, and
  // throws TaskCancelled once `cancelled` returns true. A checkpoint (savepoint false)
  // is snapshot(), a savepoint savepoint(); by default both run here, synchronously.
  using SnapshotWriter = std::function<KeyedStateHandle(const std::function<bool()>& cancelled)>;
  virtual SnapshotWriter begin_snapshot(std::int64_t checkpoint_id, const std::filesystem::path& dir,
                                        bool savepoint) {
    KeyedStateHandle h = savepoint ? this->savepoint(checkpoint_id, dir) : snapshot(checkpoint_id, dir);
    return [h = std::move(h)](const std::function<bool()>&) { return h; };
  }
  // Loads the entries of this backend's key groups from handles of a previous run at
  // any parallelism (each handle may cover other key groups too: filter).
  virtual void restore(const std::vector<KeyedStateHandle>& handles) = 0;
  // The checkpoint is complete everywhere: shared files of older ones may be released.
  virtual void notify_checkpoint_complete(std::int64_t /*checkpoint_id*/) {}

  // The typed state objects of keyed_state.hpp made over this backend, cached by name so
  // that they live as long as the backend (KeyedStateStore is a stateless facade).
  class TypedState {
   public:
    virtual ~TypedState() = default;
  };
  TypedState* find_typed_state(const std::string& name) {
    for (auto& [n, s] : typed_states_)
      if (n == name) return s.get();
    return nullptr;
  }
  TypedState& add_typed_state(const std::string& name, std::unique_ptr<TypedState> state) {
    typed_states_.emplace_back(name, std::move(state));
    return *typed_states_.back().second;
  }

 protected:
  KeyedStateBackend(KeyGroupRange key_groups, int max_parallelism, const ProcessingTimeClock& clock)
      : key_groups_(key_groups), max_parallelism_(max_parallelism), clock_(&clock) {}

 private:
  KeyGroupRange key_groups_;
  int max_parallelism_;
  const ProcessingTimeClock* clock_;
  std::string current_key_;
  int current_key_group_ = 0;
  std::string current_ns_;
  std::uint64_t key_version_ = 0;
  std::string update_current_, update_next_;  // map_update's default implementation
  std::vector<std::pair<std::string, std::unique_ptr<TypedState>>> typed_states_;
};

struct StateBackendConfig {
  std::string kind = "memory";  // memory | rocksdb
  std::filesystem::path working_dir;  // rocksdb: where the live database lives
  bool incremental = true;            // rocksdb: share unchanged SST files between checkpoints
};

// Builds the backend for one operator subtask.
std::unique_ptr<KeyedStateBackend> make_keyed_state_backend(const StateBackendConfig& config,
                                                            const std::string& operator_uid, int subtask,
                                                            KeyGroupRange key_groups, int max_parallelism,
                                                            const ProcessingTimeClock& clock);

}  // namespace clink
