// The memory backend: one hash map per (state, key group) from composite key (key,
// namespace) to value; map states keep their entries in a CompactMapStore per (state, key
// group) (compact_map_store.hpp: arena blobs ordered by user key per composite key).
// Snapshots are full snapshots in the canonical format (snapshot_format.hpp), taken
// asynchronously with copy-on-write per (state, key group), as Flink's heap backend
// copies on write per state-map entry: begin_snapshot only shares every (state, key
// group) map with the snapshot and bumps the backend's epoch (O(states x key groups),
// not O(keys)); the writer then writes the key groups in order on another thread. A
// write of the task to a key group the writer has not finished yet first copies that
// group's map (once per snapshot), so the snapshot keeps the state of its barrier; a
// group the writer has finished is written in place. Key groups are small (a 3 M-key
// state at max parallelism 128 has ~23 k keys per group), so a copy costs about a
// millisecond, and groups the writer reached before the task touched them cost nothing.
#include <algorithm>
#include <atomic>
#include <climits>
#include <memory>
#include <string>
#include <utility>

#include <absl/container/flat_hash_map.h>

#include "clink/core/error.hpp"
#include "compact_map_store.hpp"
#include "snapshot_format.hpp"

namespace clink::state_internal {
namespace {

class MemoryKeyedStateBackend final : public KeyedStateBackend {
 public:
  MemoryKeyedStateBackend(const std::string& operator_uid, int subtask, KeyGroupRange key_groups,
                          int max_parallelism, const ProcessingTimeClock& clock)
      : KeyedStateBackend(key_groups, max_parallelism, clock), stem_(file_stem(operator_uid, subtask)) {}
  StateId register_state(const std::string& name, StateKind kind, std::int64_t ttl_ms) override {
    int i = find(name);
    if (i >= 0) {
      check_compatible(tables_[static_cast<std::size_t>(i)]->meta, kind, ttl_ms);
      return StateId{i};
    }
    return StateId{add_table({name, kind, ttl_ms})};
  }

  bool get(StateId id, std::string& out) override {
    const ValueMap& m = values(id);
    auto it = m.find(composite());
    if (it == m.end()) return false;
    out.assign(it->second);
    return true;
  }
  void put(StateId id, std::string_view value) override {
    ValueMap& m = values_for_write(id);
    auto it = m.find(composite());
    if (it != m.end()) {
      it->second.assign(value);
    } else {
      m.emplace(ck_, value);
      added(id);
    }
  }
  void append(StateId id, std::string_view bytes) override {
    ValueMap& m = values_for_write(id);
    auto it = m.find(composite());
    if (it != m.end()) {
      it->second.append(bytes);
    } else {
      m.emplace(ck_, bytes);
      added(id);
    }
  }
  void remove(StateId id) override { values_for_write(id).erase(composite()); }

  bool map_get(StateId id, std::string_view user_key, std::string& out) override {
    auto [store, entries] = current_entries(id);
    if (!entries) return false;
    const char* blob = store->get(*entries, user_key);
    if (!blob) return false;
    out.assign(CompactMapStore::value(blob));
    return true;
  }
  void map_put(StateId id, std::string_view user_key, std::string_view value) override {
    check_not_iterating(id);
    prepare_map_write(id);
    auto [store, entries] = current_entries_for_write(id);
    store->put(*entries, user_key, value);
  }
  void map_update(StateId id, std::string_view user_key, MapUpdateFn fn) override {
    check_not_iterating(id);
    prepare_map_write(id);
    auto [store, entries] = current_entries(id);
    CompactMapStore::Position at;
    if (entries) at = store->locate(*entries, user_key);
    next_.clear();
    const bool keep = fn(at.blob != nullptr, at.blob ? CompactMapStore::value(at.blob) : std::string_view(), next_);
    if (!keep) {
      if (at.blob) store->remove(composite(), *entries, at);
    } else if (at.blob) {
      store->replace(*entries, at, next_);
    } else if (entries) {
      store->insert(*entries, at, user_key, next_);
    } else {
      auto [s, created] = current_entries_for_write(id);
      s->insert(*created, {}, user_key, next_);
    }
  }
  void map_remove(StateId id, std::string_view user_key) override {
    check_not_iterating(id);
    prepare_map_write(id);
    auto [store, entries] = current_entries(id);
    if (!entries) return;
    CompactMapStore::Position at = store->locate(*entries, user_key);
    if (at.blob) store->remove(composite(), *entries, at);
  }
  void map_for_each(StateId id, const std::function<bool(std::string_view, std::string_view)>& fn) override {
    auto [store, entries] = current_entries(id);
    if (!entries) return;
    Table& t = table(id);
    ++t.iterating;
    struct Done {
      Table& t;
      ~Done() { --t.iterating; }
    } done{t};
    entries->for_each(
        [&](const char* blob) { return fn(CompactMapStore::user_key(blob), CompactMapStore::value(blob)); });
  }
  void map_clear(StateId id) override {
    check_not_iterating(id);
    prepare_map_write(id);
    auto [store, entries] = current_entries(id);
    if (entries) store->erase(composite());
  }

  void for_each_entry(StateId id, int key_group,
                      const std::function<void(std::string_view, std::string_view, std::string_view)>& fn) override {
    if (!key_groups().contains(key_group)) return;
    auto& t = table(id);
    auto kg = static_cast<std::size_t>(key_group - key_groups().first);
    std::string_view key, ns;
    if (t.meta.kind == StateKind::kMap) {
      std::string v;
      t.maps[kg]->for_each([&](std::string_view ck, const CompactMapStore::Entries& entries) {
        std::string_view in(ck);
        parse_composite_key(in, key, ns);
        entries.for_each([&](const char* blob) {
          v.clear();
          put_length_prefixed(CompactMapStore::user_key(blob), v);
          put_length_prefixed(CompactMapStore::value(blob), v);
          fn(key, ns, v);
          return true;
        });
      });
    } else {
      for (const auto& [ck, value] : *t.values[kg]) {
        std::string_view in(ck);
        parse_composite_key(in, key, ns);
        fn(key, ns, value);
      }
    }
  }

  KeyedStateHandle snapshot(std::int64_t checkpoint_id, const std::filesystem::path& dir) override {
    return begin_snapshot(checkpoint_id, dir, false)([] { return false; });
  }
  // Checkpoints and savepoints are the same full snapshot.
  SnapshotWriter begin_snapshot(std::int64_t checkpoint_id, const std::filesystem::path& dir, bool) override {
    if (running_ && running_->next_kg.load(std::memory_order_acquire) != kWritten)
      throw ClinkError("keyed state: a snapshot began while the previous one was still being written");
    auto v = std::make_shared<Version>();
    v->checkpoint_id = checkpoint_id;
    v->dir = dir;
    v->file_name = "keyed-" + stem_ + ".bin";
    v->key_groups = key_groups();
    v->now = clock().now_ms();
    v->progress = std::make_shared<Progress>();
    v->progress->next_kg.store(key_groups().first, std::memory_order_relaxed);
    for (const auto& t : tables_) v->tables.push_back({t->meta, t->values, t->maps});
    running_ = v->progress;
    ++epoch_;
    return [v](const std::function<bool()>& cancelled) { return v->write(cancelled); };
  }

  void restore(const std::vector<KeyedStateHandle>& handles) override {
    std::vector<int> index;  // handle state index -> table
    std::string ck;
    for (const auto& h : handles) {
      if (!overlaps(h.key_groups, key_groups())) continue;
      read_snapshot(
          h, key_groups(),
          [&](const std::vector<StateMeta>& states) {
            index.clear();
            for (const auto& s : states) {
              int i = find(s.name);
              if (i < 0) {
                i = add_table(s);
              } else {
                StateMeta m = tables_[static_cast<std::size_t>(i)]->meta;
                check_compatible(m, s.kind, s.ttl_ms);
              }
              index.push_back(i);
            }
          },
          [&](int state, int kg, std::string_view key, std::string_view ns, std::string_view value) {
            Table& t = *tables_[static_cast<std::size_t>(index[static_cast<std::size_t>(state)])];
            auto local = static_cast<std::size_t>(kg - key_groups().first);
            ck.clear();
            append_composite_key(key, ns, ck);
            if (t.meta.kind == StateKind::kMap) {
              std::string_view uk = get_length_prefixed(value);
              std::string_view uv = get_length_prefixed(value);
              CompactMapStore& store = map_for_write(t, local);
              store.put(store.find_or_create(ck), uk, uv);
              t.cached_store = nullptr;
            } else {
              value_map_for_write(t, local).insert_or_assign(ck, std::string(value));
            }
          });
    }
  }

 private:
  using ValueMap = absl::flat_hash_map<std::string, std::string>;
  using ValueMaps = std::vector<std::shared_ptr<ValueMap>>;  // per key group of the range
  using MapStores = std::vector<std::shared_ptr<CompactMapStore>>;
  struct Table {
    StateMeta meta;
    // Shared with the snapshot being written until copied on write.
    ValueMaps values;
    MapStores maps;
    // Per key group: the backend's epoch when the task last made sure its map is not
    // shared with a snapshot still to write it (== epoch_: write in place).
    std::vector<std::uint64_t> epoch;
    // TTL states: entries added to each key group's map since its last cleanup sweep,
    // and its size after that sweep.
    std::vector<std::size_t> added_since_sweep, size_after_sweep;
    // The current (key, namespace)'s entries of a map state, looked up once per key:
    // valid while the backend's key_version and the store's generation are unchanged.
    CompactMapStore::Entries* cached = nullptr;
    CompactMapStore* cached_store = nullptr;
    std::uint64_t cached_key_version = 0, cached_generation = 0;
    int iterating = 0;  // map_for_each calls in progress (changes are refused meanwhile)
  };

  int find(const std::string& name) const {
    for (std::size_t i = 0; i < tables_.size(); ++i)
      if (tables_[i]->meta.name == name) return static_cast<int>(i);
    return -1;
  }
  int add_table(StateMeta meta) {
    auto t = std::make_unique<Table>();
    auto n = static_cast<std::size_t>(key_groups().size());
    t->epoch.assign(n, epoch_);
    if (meta.kind == StateKind::kMap) {
      t->maps.resize(n);
      for (auto& m : t->maps) m = std::make_shared<CompactMapStore>();
    } else {
      t->values.resize(n);
      for (auto& m : t->values) m = std::make_shared<ValueMap>();
      t->added_since_sweep.assign(n, 0);
      t->size_after_sweep.assign(n, 0);
    }
    t->meta = std::move(meta);
    tables_.push_back(std::move(t));
    return static_cast<int>(tables_.size() - 1);
  }
  Table& table(StateId id) {
    if (static_cast<std::size_t>(id.index) >= tables_.size()) throw ClinkError("keyed state: unknown state id");
    return *tables_[static_cast<std::size_t>(id.index)];
  }
  std::size_t local_key_group() const {
    int kg = current_key_group();
    if (!key_groups().contains(kg))
      throw ClinkError("keyed state: key group " + std::to_string(kg) + " is not in this subtask's range [" +
                       std::to_string(key_groups().first) + ", " + std::to_string(key_groups().last) + "]");
    return static_cast<std::size_t>(kg - key_groups().first);
  }
  Table& value_table(StateId id) {
    auto& t = table(id);
    if (t.meta.kind == StateKind::kMap) throw ClinkError("keyed state: '" + t.meta.name + "' is a map state");
    return t;
  }
  Table& map_table(StateId id) {
    auto& t = table(id);
    if (t.meta.kind != StateKind::kMap) throw ClinkError("keyed state: '" + t.meta.name + "' is not a map state");
    return t;
  }
  const ValueMap& values(StateId id) { return *value_table(id).values[local_key_group()]; }
  ValueMap& values_for_write(StateId id) { return value_map_for_write(value_table(id), local_key_group()); }
  CompactMapStore& map_store(StateId id) { return *map_table(id).maps[local_key_group()]; }
  // Before a change of the current key's map entries: the key group's store is the
  // task's own (copied when a snapshot still has to write it), the cached lookup valid.
  void prepare_map_write(StateId id) {
    Table& t = map_table(id);
    const std::size_t kg = local_key_group();
    CompactMapStore* before = t.maps[kg].get();
    if (&map_for_write(t, kg) != before) t.cached_store = nullptr;
  }

  // ---- copy-on-write ----
  // How far the writer of the latest snapshot got: the first key group it has not
  // written yet (kWritten once done or dropped). Written with release after the writer
  // no longer reads that group's maps; the task reads it with acquire before writing
  // in place.
  static constexpr int kWritten = INT_MAX;
  struct Progress {
    std::atomic<int> next_kg{kWritten};
  };
  // What a snapshot writes: every table's maps as they were at begin_snapshot.
  struct Version {
    struct TableVersion {
      StateMeta meta;
      ValueMaps values;
      MapStores maps;
    };
    std::int64_t checkpoint_id = 0;
    std::filesystem::path dir;
    std::string file_name;
    KeyGroupRange key_groups;
    std::int64_t now = 0;  // TTL: entries expired at the barrier are left out
    std::vector<TableVersion> tables;
    std::shared_ptr<Progress> progress;

    ~Version() {
      tables.clear();
      progress->next_kg.store(kWritten, std::memory_order_release);
    }
    KeyedStateHandle write(const std::function<bool()>& cancelled);
  };
  template <class M>
  M& for_write(Table& t, std::vector<std::shared_ptr<M>>& slots, std::size_t kg) {
    std::shared_ptr<M>& slot = slots[kg];
    if (t.epoch[kg] != epoch_) {
      if (running_ && key_groups().first + static_cast<int>(kg) >= running_->next_kg.load(std::memory_order_acquire))
        slot = std::make_shared<M>(std::as_const(*slot));
      t.epoch[kg] = epoch_;
    }
    return *slot;
  }
  ValueMap& value_map_for_write(Table& t, std::size_t kg) { return for_write(t, t.values, kg); }
  CompactMapStore& map_for_write(Table& t, std::size_t kg) { return for_write(t, t.maps, kg); }
  // The store and the current (key, namespace)'s entries (nullptr when it has none).
  std::pair<CompactMapStore*, CompactMapStore::Entries*> current_entries(StateId id) {
    Table& t = table(id);
    if (t.cached_store && t.cached_key_version == key_version() && t.cached_generation == t.cached_store->generation())
      return {t.cached_store, t.cached};
    CompactMapStore& store = map_store(id);
    t.cached_store = &store;
    t.cached = store.find(composite());
    t.cached_key_version = key_version();
    t.cached_generation = store.generation();
    return {&store, t.cached};
  }
  std::pair<CompactMapStore*, CompactMapStore::Entries*> current_entries_for_write(StateId id) {
    auto [store, entries] = current_entries(id);
    if (entries) return {store, entries};
    Table& t = table(id);
    t.cached = &store->find_or_create(composite());
    t.cached_generation = store->generation();
    return {store, t.cached};
  }
  void check_not_iterating(StateId id) {
    const Table& t = table(id);
    if (t.iterating > 0)
      throw ClinkError("keyed state: map state '" + t.meta.name +
                       "' changed inside its own map_for_each (collect the changes and apply them after the scan)");
  }
  // Incremental TTL cleanup (Flink's heap backend cleans a few entries per access): once
  // a key group's map of a TTL state has had as many entries added as it held after its
  // last sweep (at least kMinSweep), its expired entries are removed, whether their keys
  // are read again or not. Amortised O(1) per added entry, and the map stays within
  // about twice its live entries (a unique-key GROUP BY with a TTL no longer grows
  // without bound). List entries drop their expired elements.
  void added(StateId id) {
    Table& t = *tables_[static_cast<std::size_t>(id.index)];
    if (t.meta.ttl_ms <= 0) return;
    static constexpr std::size_t kMinSweep = 64;
    const std::size_t kg = local_key_group();
    if (++t.added_since_sweep[kg] < std::max(kMinSweep, t.size_after_sweep[kg])) return;
    ValueMap& m = *t.values[kg];  // values_for_write made it the task's own
    const std::int64_t now = clock().now_ms();
    std::string scratch;
    std::string_view kept;
    for (auto it = m.begin(); it != m.end();) {
      if (!snapshot_value(t.meta.kind, t.meta.ttl_ms, now, it->second, scratch, kept)) {
        m.erase(it++);
        continue;
      }
      if (kept.data() == scratch.data() && kept.size() != it->second.size()) it->second.assign(kept);
      ++it;
    }
    t.added_since_sweep[kg] = 0;
    t.size_after_sweep[kg] = m.size();
  }

  const std::string& composite() {
    ck_.clear();
    append_composite_key(current_key(), current_namespace(), ck_);
    return ck_;
  }

  std::string stem_;
  std::vector<std::unique_ptr<Table>> tables_;
  std::uint64_t epoch_ = 0;  // snapshots begun
  std::shared_ptr<Progress> running_;  // of the latest snapshot
  std::string ck_;
  std::string next_;  // map_update's new value
};

KeyedStateHandle MemoryKeyedStateBackend::Version::write(const std::function<bool()>& cancelled) {
  std::vector<StateMeta> metas;
  for (const auto& t : tables) metas.push_back(t.meta);
  FullSnapshotWriter w(dir, file_name, key_groups, metas);
  std::string scratch, composed;
  std::string_view key, ns, out;
  for (int kg = key_groups.first; kg <= key_groups.last; ++kg) {
    if (cancelled()) throw TaskCancelled();
    w.begin_key_group(kg);
    auto local = static_cast<std::size_t>(kg - key_groups.first);
    for (std::size_t i = 0; i < tables.size(); ++i) {
      const TableVersion& t = tables[i];
      const int si = static_cast<int>(i);
      if (t.meta.kind == StateKind::kMap) {
        // The canonical format wants each key's entries together and in user-key
        // order (the B-trees give that); keys may come in any order.
        t.maps[local]->for_each([&](std::string_view ck, const CompactMapStore::Entries& entries) {
          std::string_view in(ck);
          parse_composite_key(in, key, ns);
          entries.for_each([&](const char* blob) {
            if (!snapshot_value(t.meta.kind, t.meta.ttl_ms, now, CompactMapStore::value(blob), scratch, out))
              return true;
            composed.clear();
            put_length_prefixed(CompactMapStore::user_key(blob), composed);
            put_length_prefixed(out, composed);
            w.add(si, key, ns, composed);
            return true;
          });
        });
      } else {
        for (const auto& [ck, value] : *t.values[local]) {
          if (!snapshot_value(t.meta.kind, t.meta.ttl_ms, now, value, scratch, out)) continue;
          std::string_view in(ck);
          parse_composite_key(in, key, ns);
          w.add(si, key, ns, out);
        }
      }
    }
    // Done with this group: the task may now change it in place (and a copy it made
    // is freed here).
    for (auto& t : tables) {
      if (!t.values.empty()) t.values[local].reset();
      if (!t.maps.empty()) t.maps[local].reset();
    }
    progress->next_kg.store(kg + 1, std::memory_order_release);
  }
  KeyedStateHandle handle = w.finish(checkpoint_id, "memory");
  progress->next_kg.store(kWritten, std::memory_order_release);
  return handle;
}

}  // namespace

std::unique_ptr<KeyedStateBackend> make_memory_backend(const std::string& operator_uid, int subtask,
                                                       KeyGroupRange key_groups, int max_parallelism,
                                                       const ProcessingTimeClock& clock) {
  return std::make_unique<MemoryKeyedStateBackend>(operator_uid, subtask, key_groups, max_parallelism, clock);
}

}  // namespace clink::state_internal
