// The memory backend: a CompactValueStore per (state, key group) from composite key
// (key, namespace) to value (compact_value_store.hpp: arena blobs); map states keep their entries in a CompactMapStore per (state, key
// group) (compact_map_store.hpp: arena blobs per composite key, ordered by user key, or
// hashed for an unordered map state, unordered_map_state.hpp).
//
// Snapshots are full snapshots in the canonical format (snapshot_format.hpp), written
// asynchronously as Flink's heap backend does: begin_snapshot (at the barrier) only
// starts a new snapshot epoch (O(states), not O(keys)); the writer then writes the key
// groups in order on another thread while the task goes on. Flink copies an entry on
// write while a snapshot holds its old version; here the first change of an entry in a
// key group the writer has not written yet keeps the entry's value at the barrier in
// the snapshot's undo log of that group (its map entries, for a map state), and the
// writer writes the undo log's values instead of the live ones. The task's changes to
// an unwritten group and the writer's pass over it exclude each other with a lock per
// key group (uncontended but for the few milliseconds the writer spends in a group);
// changes to written groups take no lock. So a checkpoint costs the task a copy of the
// entries it changes before the writer reaches them, never a copy of the whole state.
#include <algorithm>
#include <atomic>
#include <climits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include <absl/container/flat_hash_map.h>

#include "clink/core/error.hpp"
#include "clink/state/unordered_map_state.hpp"
#include "compact_map_store.hpp"
#include "compact_value_store.hpp"
#include "snapshot_format.hpp"

namespace clink::state_internal {
namespace {

class MemoryKeyedStateBackend final : public KeyedStateBackend, public UnorderedMapStates {
 public:
  MemoryKeyedStateBackend(const std::string& operator_uid, int subtask, KeyGroupRange key_groups,
                          int max_parallelism, const ProcessingTimeClock& clock)
      : KeyedStateBackend(key_groups, max_parallelism, clock), stem_(file_stem(operator_uid, subtask)) {}
  StateId register_state(const std::string& name, StateKind kind, std::int64_t ttl_ms) override {
    return register_ordered(name, kind, ttl_ms, true);
  }
  StateId register_unordered_map_state(const std::string& name, std::int64_t ttl_ms) override {
    return register_ordered(name, StateKind::kMap, ttl_ms, false);
  }

  bool get(StateId id, std::string& out) override {
    auto value = values(id).get(composite(), out);
    if (!value) return false;
    if (value->data() != out.data()) out.assign(*value);
    return true;
  }
  void put(StateId id, std::string_view value) override {
    Change change = begin_change(value_table(id));
    CompactValueStore& store = values(id);
    const std::string& ck = composite();
    if (change.undo) change.keep_value(ck, store.get(ck, scratch_));
    if (store.put(ck, value)) added(id, change);
  }
  void append(StateId id, std::string_view bytes) override {
    Change change = begin_change(value_table(id));
    CompactValueStore& store = values(id);
    const std::string& ck = composite();
    if (change.undo) change.keep_value(ck, store.get(ck, scratch_));
    if (store.append(ck, bytes)) added(id, change);
  }
  void prefetch(StateId id, std::string_view key_bytes) override {
    const Table& t = table(id);
    const int kg = key_group_for_hash(key_hash(key_bytes), max_parallelism());
    if (!key_groups().contains(kg)) return;
    const auto local = static_cast<std::size_t>(kg - key_groups().first);
    prefetch_ck_.clear();
    append_composite_key(key_bytes, current_namespace(), prefetch_ck_);
    if (t.meta.kind == StateKind::kMap) t.maps[local].prefetch(prefetch_ck_);
    else t.values[local].prefetch(prefetch_ck_);
  }
  void remove(StateId id) override {
    Change change = begin_change(value_table(id));
    CompactValueStore& store = values(id);
    const std::string& ck = composite();
    if (change.undo) change.keep_value(ck, store.get(ck, scratch_));
    store.erase(ck);
  }

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
    Change change = begin_map_change(id);
    auto [store, entries] = current_entries_for_write(id);
    store->put(*entries, user_key, value);
  }
  void map_update(StateId id, std::string_view user_key, MapUpdateFn fn) override {
    check_not_iterating(id);
    Change change = begin_map_change(id);
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
    Change change = begin_map_change(id);
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
    Change change = begin_map_change(id);
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
      t.maps[kg].for_each([&](std::string_view ck, const CompactMapStore::Entries& entries) {
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
      t.values[kg].for_each([&](std::string_view ck, std::string_view value) {
        parse_composite_key(ck, key, ns);
        fn(key, ns, value);
      });
    }
  }

  KeyedStateHandle snapshot(std::int64_t checkpoint_id, const std::filesystem::path& dir) override {
    return begin_snapshot(checkpoint_id, dir, false)([] { return false; });
  }
  // Checkpoints and savepoints are the same full snapshot.
  SnapshotWriter begin_snapshot(std::int64_t checkpoint_id, const std::filesystem::path& dir, bool) override {
    if (running_ && running_->next_kg.load(std::memory_order_acquire) != kWritten)
      throw ClinkError("keyed state: a snapshot began while the previous one was still being written");
    auto r = std::make_shared<Running>();
    const auto groups = static_cast<std::size_t>(key_groups().size());
    r->locks = std::make_unique<std::mutex[]>(groups);
    r->next_kg.store(key_groups().first, std::memory_order_relaxed);
    for (const auto& t : tables_) {
      r->tables.push_back(t.get());
      r->metas.push_back(t->meta);
      r->undo.emplace_back(groups);
    }
    running_ = r;
    ++epoch_;
    auto w = std::make_shared<Writer>();
    w->running = std::move(r);
    w->checkpoint_id = checkpoint_id;
    w->dir = dir;
    w->file_name = "keyed-" + stem_ + ".bin";
    w->key_groups = key_groups();
    w->now = clock().now_ms();
    return [w](const std::function<bool()>& cancelled) { return w->write(cancelled); };
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
              CompactMapStore& store = t.maps[local];
              store.put(store.find_or_create(ck), uk, uv);
              t.cached_store = nullptr;
            } else {
              t.values[local].put(ck, value);
            }
          });
    }
  }

 private:
  struct Table {
    int index = 0;  // in tables_
    StateMeta meta;
    // Per key group: the snapshot epoch whose writer is known to have written the group
    // (changes need no undo log until the next snapshot).
    std::vector<std::uint64_t> written_epoch;
    std::vector<CompactValueStore> values;  // per key group of the range
    // TTL states: entries added to each key group's map since its last cleanup sweep,
    // and its size after that sweep.
    std::vector<std::size_t> added_since_sweep, size_after_sweep;
    std::vector<CompactMapStore> maps;
    bool ordered = true;  // a map state's: its stores' flavour
    // The current (key, namespace)'s entries of a map state, looked up once per key:
    // valid while the backend's key_version and the store's generation are unchanged.
    CompactMapStore::Entries* cached = nullptr;
    CompactMapStore* cached_store = nullptr;
    std::uint64_t cached_key_version = 0, cached_generation = 0;
    int iterating = 0;  // map_for_each calls in progress (changes are refused meanwhile)
  };

  // ---- asynchronous snapshots ----
  // How far the writer of the latest snapshot got: the first key group it has not
  // written (kWritten once done or dropped), published with release after its pass
  // over a group, under the group's lock.
  static constexpr int kWritten = INT_MAX;
  // A table's entries of one key group at the barrier that the task changed since.
  struct Undo {
    absl::flat_hash_map<std::string, std::optional<std::string>> values;  // nullopt: absent
    using MapEntries = std::vector<std::pair<std::string, std::string>>;   // as Entries::for_each
    absl::flat_hash_map<std::string, std::optional<MapEntries>> maps;
    bool empty() const { return values.empty() && maps.empty(); }
  };
  struct Running {
    std::unique_ptr<std::mutex[]> locks;  // per key group of the range
    std::atomic<int> next_kg{kWritten};
    std::vector<Table*> tables;            // those of the snapshot (registered before it)
    std::vector<StateMeta> metas;          // theirs, at the barrier
    std::vector<std::vector<Undo>> undo;   // [table][key group]
  };
  // The writer's part (another thread): reads the live tables and the undo logs.
  struct Writer {
    std::shared_ptr<Running> running;
    std::int64_t checkpoint_id = 0;
    std::filesystem::path dir;
    std::string file_name;
    KeyGroupRange key_groups;
    std::int64_t now = 0;  // TTL: entries expired at the barrier are left out
    ~Writer() { running->next_kg.store(kWritten, std::memory_order_release); }
    KeyedStateHandle write(const std::function<bool()>& cancelled);
  };
  // One change of a table's key group by the task: while the running snapshot has not
  // written the group, holds its lock and keeps the barrier's value of each entry it
  // changes (the first change of an entry only).
  struct Change {
    std::unique_lock<std::mutex> lock;
    Undo* undo = nullptr;
    void keep_value(std::string_view ck, std::optional<std::string_view> value) {
      if (!undo) return;
      auto [it, first] = undo->values.try_emplace(std::string(ck));  // nullopt: absent
      if (first && value) it->second = std::string(*value);
    }
  };
  Change begin_change(Table& t) {
    Change c;
    const std::size_t kg = local_key_group();
    if (t.written_epoch[kg] == epoch_) return c;
    Running* r = running_.get();
    const int group = key_groups().first + static_cast<int>(kg);
    if (r && static_cast<std::size_t>(t.index) < r->tables.size() &&
        group >= r->next_kg.load(std::memory_order_acquire)) {
      c.lock = std::unique_lock(r->locks[kg]);
      if (group >= r->next_kg.load(std::memory_order_relaxed)) {
        c.undo = &r->undo[static_cast<std::size_t>(t.index)][kg];
        return c;
      }
      c.lock.unlock();
    }
    t.written_epoch[kg] = epoch_;
    return c;
  }
  // A map state's change of the current (key, namespace): keeps its entries first.
  Change begin_map_change(StateId id) {
    Change c = begin_change(map_table(id));
    if (!c.undo || c.undo->maps.contains(composite())) return c;
    auto [store, entries] = current_entries(id);
    std::optional<Undo::MapEntries> kept;
    if (entries) {
      kept.emplace();
      entries->for_each([&](const char* blob) {
        kept->emplace_back(CompactMapStore::user_key(blob), CompactMapStore::value(blob));
        return true;
      });
    }
    c.undo->maps.emplace(ck_, std::move(kept));
    return c;
  }
  Table& value_table(StateId id) {
    Table& t = table(id);
    if (t.meta.kind == StateKind::kMap) throw ClinkError("keyed state: '" + t.meta.name + "' is a map state");
    return t;
  }
  Table& map_table(StateId id) {
    Table& t = table(id);
    if (t.meta.kind != StateKind::kMap) throw ClinkError("keyed state: '" + t.meta.name + "' is not a map state");
    return t;
  }

  // A map state's flavour is its last registration's (a restored one is ordered until
  // it is registered).
  StateId register_ordered(const std::string& name, StateKind kind, std::int64_t ttl_ms, bool ordered) {
    int i = find(name);
    if (i >= 0) check_compatible(tables_[static_cast<std::size_t>(i)]->meta, kind, ttl_ms);
    else i = add_table({name, kind, ttl_ms});
    Table& t = *tables_[static_cast<std::size_t>(i)];
    if (kind == StateKind::kMap && t.ordered != ordered) {
      t.ordered = ordered;
      for (CompactMapStore& store : t.maps) store.set_ordered(ordered);
    }
    return StateId{i};
  }
  int find(const std::string& name) const {
    for (std::size_t i = 0; i < tables_.size(); ++i)
      if (tables_[i]->meta.name == name) return static_cast<int>(i);
    return -1;
  }
  int add_table(StateMeta meta) {
    auto t = std::make_unique<Table>();
    auto n = static_cast<std::size_t>(key_groups().size());
    t->index = static_cast<int>(tables_.size());
    t->written_epoch.assign(n, epoch_);
    if (meta.kind == StateKind::kMap) {
      t->maps.resize(n);
    } else {
      t->values.resize(n);
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
  CompactValueStore& values(StateId id) {
    auto& t = table(id);
    if (t.meta.kind == StateKind::kMap) throw ClinkError("keyed state: '" + t.meta.name + "' is a map state");
    return t.values[local_key_group()];
  }
  CompactMapStore& map_store(StateId id) {
    auto& t = table(id);
    if (t.meta.kind != StateKind::kMap) throw ClinkError("keyed state: '" + t.meta.name + "' is not a map state");
    return t.maps[local_key_group()];
  }
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
  void added(StateId id, Change& change) {
    Table& t = *tables_[static_cast<std::size_t>(id.index)];
    if (t.meta.ttl_ms <= 0) return;
    static constexpr std::size_t kMinSweep = 64;
    const std::size_t kg = local_key_group();
    if (++t.added_since_sweep[kg] < std::max(kMinSweep, t.size_after_sweep[kg])) return;
    CompactValueStore& store = t.values[kg];
    const std::int64_t now = clock().now_ms();
    std::string scratch;
    store.rewrite([&](std::string_view ck, std::string_view value) -> std::optional<std::string_view> {
      std::string_view kept;
      if (!snapshot_value(t.meta.kind, t.meta.ttl_ms, now, value, scratch, kept)) {
        change.keep_value(ck, value);
        return std::nullopt;
      }
      if (kept.data() != scratch.data() || kept.size() == value.size()) return value;
      change.keep_value(ck, value);
      return kept;
    });
    t.added_since_sweep[kg] = 0;
    t.size_after_sweep[kg] = store.size();
  }

  const std::string& composite() {
    ck_.clear();
    append_composite_key(current_key(), current_namespace(), ck_);
    return ck_;
  }

  std::string stem_;
  std::vector<std::unique_ptr<Table>> tables_;
  std::uint64_t epoch_ = 0;            // snapshots begun
  std::shared_ptr<Running> running_;  // the latest snapshot's
  std::string ck_;
  std::string prefetch_ck_;
  std::string scratch_;  // a value in segments, joined
  std::string next_;  // map_update's new value
};

KeyedStateHandle MemoryKeyedStateBackend::Writer::write(const std::function<bool()>& cancelled) {
  Running& r = *running;
  if (cancelled()) throw TaskCancelled();
  FullSnapshotWriter w(dir, file_name, key_groups, r.metas);
  // A key group's entries at the barrier, copied under its lock as
  // len-prefixed(ck) len-prefixed(value) (a map state: len-prefixed(ck) varint(n)
  // n x (len-prefixed(uk) len-prefixed(uv))), then encoded without the lock: the task
  // waits for the group only as long as the copy takes.
  std::string copied;
  std::vector<std::size_t> ends(r.tables.size());
  std::string scratch, composed;
  std::string_view key, ns, out;
  std::vector<std::pair<std::string_view, std::string_view>> pairs;  // one key's map entries
  for (int kg = key_groups.first; kg <= key_groups.last; ++kg) {
    if (cancelled()) throw TaskCancelled();
    auto local = static_cast<std::size_t>(kg - key_groups.first);
    copied.clear();
    {
      std::lock_guard lock(r.locks[local]);
      for (std::size_t i = 0; i < r.tables.size(); ++i) {
        const Table& t = *r.tables[i];
        Undo& undo = r.undo[i][local];
        // The undo log's entries where the task changed them since the barrier, else
        // the live ones.
        if (r.metas[i].kind == StateKind::kMap) {
          for (const auto& [ck, kept] : undo.maps) {
            if (!kept) continue;
            put_length_prefixed(ck, copied);
            put_varint(kept->size(), copied);
            for (const auto& [uk, uv] : *kept) {
              put_length_prefixed(uk, copied);
              put_length_prefixed(uv, copied);
            }
          }
          t.maps[local].for_each([&](std::string_view ck, const CompactMapStore::Entries& entries) {
            if (!undo.maps.empty() && undo.maps.contains(absl::string_view(ck.data(), ck.size()))) return;
            put_length_prefixed(ck, copied);
            put_varint(entries.size(), copied);
            entries.for_each([&](const char* blob) {
              put_length_prefixed(CompactMapStore::user_key(blob), copied);
              put_length_prefixed(CompactMapStore::value(blob), copied);
              return true;
            });
          });
        } else {
          for (const auto& [ck, kept] : undo.values) {
            if (!kept) continue;
            put_length_prefixed(ck, copied);
            put_length_prefixed(*kept, copied);
          }
          t.values[local].for_each([&](std::string_view ck, std::string_view value) {
            if (!undo.values.empty() && undo.values.contains(absl::string_view(ck.data(), ck.size()))) return;
            put_length_prefixed(ck, copied);
            put_length_prefixed(value, copied);
          });
        }
        undo = Undo{};
        ends[i] = copied.size();
      }
      r.next_kg.store(kg + 1, std::memory_order_release);
    }
    w.begin_key_group(kg);
    std::string_view in(copied);
    for (std::size_t i = 0; i < r.tables.size(); ++i) {
      const StateMeta& meta = r.metas[i];
      const int si = static_cast<int>(i);
      while (copied.size() - in.size() < ends[i]) {
        std::string_view ck = get_length_prefixed(in);
        parse_composite_key(ck, key, ns);
        if (meta.kind == StateKind::kMap) {
          // The canonical format wants each key's entries together and in user-key
          // order (B-trees give that, hash sets do not: sorted here); keys may come in
          // any order.
          pairs.clear();
          for (std::uint64_t n = get_varint(in); n > 0; --n) {
            std::string_view uk = get_length_prefixed(in);
            pairs.emplace_back(uk, get_length_prefixed(in));
          }
          if (!std::is_sorted(pairs.begin(), pairs.end())) std::sort(pairs.begin(), pairs.end());
          for (const auto& [uk, uv] : pairs) {
            if (!snapshot_value(meta.kind, meta.ttl_ms, now, uv, scratch, out)) continue;
            composed.clear();
            put_length_prefixed(uk, composed);
            put_length_prefixed(out, composed);
            w.add(si, key, ns, composed);
          }
        } else {
          std::string_view value = get_length_prefixed(in);
          if (snapshot_value(meta.kind, meta.ttl_ms, now, value, scratch, out)) w.add(si, key, ns, out);
        }
      }
    }
  }
  KeyedStateHandle handle = w.finish(checkpoint_id, "memory");
  r.next_kg.store(kWritten, std::memory_order_release);
  return handle;
}

}  // namespace

std::unique_ptr<KeyedStateBackend> make_memory_backend(const std::string& operator_uid, int subtask,
                                                       KeyGroupRange key_groups, int max_parallelism,
                                                       const ProcessingTimeClock& clock) {
  return std::make_unique<MemoryKeyedStateBackend>(operator_uid, subtask, key_groups, max_parallelism, clock);
}

}  // namespace clink::state_internal
