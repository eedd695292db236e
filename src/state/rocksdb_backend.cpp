// The RocksDB backend: an embedded database per operator subtask in a private working
// directory, one column family per state ("s:<name>"), rows
//
//   key group (2 bytes, big-endian) varint(len key) key varint(len ns) ns [user key]
//
// so that a key group is one contiguous range and the entries of a map under one
// (key, namespace) are contiguous and ordered by user key. List appends are RocksDB
// merges (concatenation). The WAL is off: checkpoints flush and are the durability.
// Writes are collected (PendingWrites) and reach the database in one Write at a
// snapshot, restore, close, full key-group scan, or when they grow past
// kMaxPendingBytes; the other reads see them through PendingWrites' index, so writes cost
// one Write per few MB however reads and writes interleave, and no read misses a write.
//
// Checkpoints are RocksDB checkpoints (hard links of the immutable SST files). With
// `incremental`, SST files go to <checkpoint root>/shared/ and a later checkpoint
// references (does not copy) those its last completed checkpoint already uploaded.
// Handle description:
//   {"format": "clink-rocksdb-v1", "backend": "rocksdb", "checkpoint_id": 8,
//    "dir": "/abs/chk-8/rocksdb-<uid>-<subtask>",       private files (copied per checkpoint)
//    "files": ["CURRENT", "MANIFEST-000012", "OPTIONS-000014", ...],
//    "shared": [{"local": "000009.sst", "path": "/abs/shared/<uid>-<sub>-<inst>-c7-000009.sst",
//                "size": 123456}, ...],                   SSTs, reference-counted across
//    "states": [{"name": ..., "kind": ..., "ttl_ms": ...}], checkpoints (shared_state_registry.hpp)
//    "incremental": true}
#include "rocksdb_support.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>

#include <nlohmann/json.hpp>
#include <rocksdb/perf_level.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>

#include "clink/core/error.hpp"
#include "clink/core/owned_directory.hpp"
#include "clink/core/private_directory.hpp"

namespace clink::state_internal {
namespace {

namespace fs = std::filesystem;

struct SharedSst {
  std::string path;
  std::uint64_t size = 0;
};

class RocksDbKeyedStateBackend final : public KeyedStateBackend {
 public:
  RocksDbKeyedStateBackend(const StateBackendConfig& config, const std::string& operator_uid, int subtask,
                           KeyGroupRange key_groups, int max_parallelism, const ProcessingTimeClock& clock)
      : KeyedStateBackend(key_groups, max_parallelism, clock),
        stem_(file_stem(operator_uid, subtask)),
        instance_(random_hex(6)),
        incremental_(config.incremental) {
    fs::path base = config.working_dir.empty() ? fs::temp_directory_path() / "clink-rocksdb" : config.working_dir;
    db_path_ = fs::absolute(base / (stem_ + "-" + instance_));
    create_private_directories(base);
    remove_abandoned_directories(base);  // databases of killed processes
    owned_ = OwnedDirectory(db_path_);
    create_private_directories(db_path_);
    write_options_.disableWAL = true;
    open_db();
  }
  ~RocksDbKeyedStateBackend() override {
    pending_writes_.clear();  // the database goes: nothing to keep
    close_db();
    std::error_code ec;
    fs::remove_all(db_path_, ec);
    owned_.release();
  }

  StateId register_state(const std::string& name, StateKind kind, std::int64_t ttl_ms) override {
    // RocksDB counts comparisons and the like per thread by default; nothing reads them,
    // and in the shared library each count is a TLS lookup on the hottest paths.
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
    int i = find(name);
    if (i >= 0) {
      auto& c = cfs_[static_cast<std::size_t>(i)];
      check_compatible(c.meta, kind, ttl_ms);
      c.settings->set(c.meta);
      return StateId{i};
    }
    i = add_cf({name, kind, ttl_ms});
    auto& c = cfs_[static_cast<std::size_t>(i)];
    check(db_->CreateColumnFamily(cf_options(c.settings), cf_name(name), &c.handle), "create column family");
    return StateId{i};
  }

  bool get(StateId id, std::string& out) override { return read(cf(id), row(), out); }
  void put(StateId id, std::string_view value) override {
    auto* h = cf(id);
    pending_writes_.add(PendingWrites::Op::kPut, h, row(), value);
    written();
  }
  void append(StateId id, std::string_view bytes) override {
    auto* h = cf(id);
    pending_writes_.add(PendingWrites::Op::kMerge, h, row(), bytes);
    written();
  }
  void remove(StateId id) override {
    auto* h = cf(id);
    pending_writes_.add(PendingWrites::Op::kDelete, h, row());
    written();
  }

  bool map_get(StateId id, std::string_view user_key, std::string& out) override {
    auto* h = cf(id);
    row().append(user_key);
    return read(h, row_, out);
  }
  void map_put(StateId id, std::string_view user_key, std::string_view value) override {
    auto* h = cf(id);
    const std::size_t prefix = row().size();
    row_.append(user_key);
    pending_writes_.add(PendingWrites::Op::kPut, h, row_, value, prefix);
    written();
  }
  void map_remove(StateId id, std::string_view user_key) override {
    auto* h = cf(id);
    const std::size_t prefix = row().size();
    row_.append(user_key);
    pending_writes_.add(PendingWrites::Op::kDelete, h, row_, {}, prefix);
    written();
  }
  void map_for_each(StateId id, const std::function<bool(std::string_view, std::string_view)>& fn) override {
    scan_map(cf(id), fn);
  }
  // Deletes the entries a scan sees (in the database or pending).
  void map_clear(StateId id) override {
    auto* h = cf(id);
    const std::string prefix = row();
    std::string& keys = clear_scratch_;
    keys.clear();
    scan_map(h, [&](std::string_view user_key, std::string_view) {
      put_length_prefixed(user_key, keys);
      return true;
    });
    std::string rk;
    for (std::string_view in = keys; !in.empty();) {
      rk.assign(prefix);
      rk.append(get_length_prefixed(in));
      pending_writes_.add(PendingWrites::Op::kDelete, h, rk, {}, prefix.size());
    }
    written();
  }

  void for_each_entry(StateId id, int key_group,
                      const std::function<void(std::string_view, std::string_view, std::string_view)>& fn) override {
    if (!key_groups().contains(key_group)) return;
    commit_writes();
    auto& c = cfs_.at(static_cast<std::size_t>(id.index));
    scan_rows(db_.get(), c.handle, read_options_, key_group, key_group, c.meta.kind,
              [&](int, std::string_view key, std::string_view ns, std::string_view value) { fn(key, ns, value); });
  }

  KeyedStateHandle snapshot(std::int64_t checkpoint_id, const fs::path& dir) override {
    return begin_snapshot(checkpoint_id, dir, false)([] { return false; });
  }
  // At the barrier only what must see the state at the barrier: the pending writes, a
  // memtable flush and RocksDB's checkpoint (hard links of the SST files, a copy of the
  // small MANIFEST) beside the database. Moving those files into the checkpoint (the new
  // SSTs into shared/) and the handle follow asynchronously, as in Flink's RocksDB
  // backend. A savepoint: see begin_savepoint.
  SnapshotWriter begin_snapshot(std::int64_t checkpoint_id, const fs::path& dir, bool savepoint) override {
    if (savepoint) return begin_savepoint(checkpoint_id, dir);
    commit_writes();
    flush_all();
    fs::path tmp = db_path_.parent_path() / (db_path_.filename().string() + "-chk-" + std::to_string(checkpoint_id));
    fs::remove_all(tmp);
    {
      rocksdb::Checkpoint* raw = nullptr;
      check(rocksdb::Checkpoint::Create(db_.get(), &raw), "checkpoint");
      std::unique_ptr<rocksdb::Checkpoint> cp(raw);
      check(cp->CreateCheckpoint(tmp.string()), "checkpoint");
    }
    std::map<std::string, SharedSst> confirmed;
    {
      std::lock_guard lock(shared_mu_);
      confirmed = confirmed_;
    }
    return [this, checkpoint_id, dir, tmp, confirmed = std::move(confirmed), states = metas()](
               const std::function<bool()>& cancelled) {
      struct Cleanup {
        fs::path p;
        ~Cleanup() {
          std::error_code ec;
          fs::remove_all(p, ec);
        }
      } cleanup{tmp};
      if (cancelled()) throw TaskCancelled();
      return write_checkpoint(checkpoint_id, dir, tmp, confirmed, states);
    };
  }

  KeyedStateHandle savepoint(std::int64_t checkpoint_id, const fs::path& dir) override {
    return begin_savepoint(checkpoint_id, dir)([] { return false; });
  }

  // A savepoint is a full scan into the canonical format. At the barrier only a RocksDB
  // snapshot is taken (a sequence number: no I/O); the scan reads that snapshot while the
  // task writes on. Scanning at the barrier stopped the task for the whole state.
  SnapshotWriter begin_savepoint(std::int64_t checkpoint_id, const fs::path& dir) {
    commit_writes();
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    for (const auto& c : cfs_) handles.push_back(c.handle);
    // Released when the writer goes, which the task ensures is before the database does.
    std::shared_ptr<const rocksdb::Snapshot> pinned(db_->GetSnapshot(), [db = db_.get()](const rocksdb::Snapshot* s) {
      db->ReleaseSnapshot(s);
    });
    rocksdb::ReadOptions ro = read_options_;
    ro.snapshot = pinned.get();
    ro.fill_cache = false;  // a scan of everything would evict what the task reads
    return [this, checkpoint_id, dir, pinned, ro, handles = std::move(handles), states = metas(),
            now = clock().now_ms()](const std::function<bool()>& cancelled) {
      if (cancelled()) throw TaskCancelled();
      FullSnapshotWriter w(dir, "keyed-" + stem_ + ".bin", key_groups(), states);
      std::string scratch, composed;
      std::string_view out;
      for (int kg = key_groups().first; kg <= key_groups().last; ++kg) {
        if (cancelled()) throw TaskCancelled();
        w.begin_key_group(kg);
        for (std::size_t i = 0; i < handles.size(); ++i) {
          const StateMeta& meta = states[i];
          const int si = static_cast<int>(i);
          scan_raw(handles[i], kg, ro, [&](std::string_view key, std::string_view ns, std::string_view uk,
                                           std::string_view value) {
            if (!snapshot_value(meta.kind, meta.ttl_ms, now, value, scratch, out)) return;
            if (meta.kind == StateKind::kMap) {
              composed.clear();
              put_length_prefixed(uk, composed);
              put_length_prefixed(out, composed);
              w.add(si, key, ns, composed);
            } else {
              w.add(si, key, ns, out);
            }
          });
        }
      }
      return w.finish(checkpoint_id, "rocksdb");
    };
  }

  void restore(const std::vector<KeyedStateHandle>& handles) override {
    std::vector<const KeyedStateHandle*> relevant;
    for (const auto& h : handles)
      if (overlaps(h.key_groups, key_groups())) relevant.push_back(&h);
    if (relevant.empty()) return;
    commit_writes();
    close_db();
    fs::remove_all(db_path_);
    const auto& first = *relevant.front();
    const bool direct = relevant.size() == 1 &&
                        first.description->value("format", std::string{}) == kRocksDbFormat &&
                        first.key_groups.first <= key_groups().first && first.key_groups.last >= key_groups().last;
    if (direct) {
      // Open the checkpoint itself and delete the key groups that are not ours.
      materialize_rocksdb_checkpoint(first, db_path_);
      for (const auto& s : states_from_json(first.description->at("states"))) adopt(s);
      open_db();
      for (auto& c : cfs_) {
        if (first.key_groups.first < key_groups().first)
          check(db_->DeleteRange(write_options_, c.handle, kg_bytes(first.key_groups.first),
                                 kg_bytes(key_groups().first)),
                "delete range");
        if (first.key_groups.last > key_groups().last)
          check(db_->DeleteRange(write_options_, c.handle, kg_bytes(key_groups().last + 1),
                                 kg_bytes(first.key_groups.last + 1)),
                "delete range");
      }
      std::lock_guard lock(shared_mu_);
      confirmed_.clear();
      pending_.clear();
      if (first.description->value("incremental", false))
        for (const auto& s : first.description->at("shared"))
          confirmed_[s.at("local").get<std::string>()] = {s.at("path").get<std::string>(),
                                                          s.at("size").get<std::uint64_t>()};
      return;
    }
    // Rescaling (or another format): copy our key groups' entries over.
    create_private_directories(db_path_);
    open_db();
    std::vector<int> index;
    rocksdb::WriteBatch batch;
    std::string rk;
    for (const auto* h : relevant) {
      read_snapshot(
          *h, key_groups(),
          [&](const std::vector<StateMeta>& states) {
            index.clear();
            for (const auto& s : states) index.push_back(adopt_and_create(s));
          },
          [&](int state, int kg, std::string_view key, std::string_view ns, std::string_view value) {
            auto& c = cfs_[static_cast<std::size_t>(index[static_cast<std::size_t>(state)])];
            rk.clear();
            append_row_prefix(kg, key, ns, rk);
            if (c.meta.kind == StateKind::kMap) {
              rk.append(get_length_prefixed(value));
              value = get_length_prefixed(value);
            }
            batch.Put(c.handle, rk, slice(value));
            if (batch.GetDataSize() > (8u << 20)) {
              check(db_->Write(write_options_, &batch), "write");
              batch.Clear();
            }
          });
    }
    if (batch.Count() > 0) check(db_->Write(write_options_, &batch), "write");
  }

  void notify_checkpoint_complete(std::int64_t checkpoint_id) override {
    std::lock_guard lock(shared_mu_);
    auto it = pending_.find(checkpoint_id);
    if (it == pending_.end()) return;
    confirmed_ = std::move(it->second);
    pending_.erase(pending_.begin(), std::next(it));
  }

 private:
  struct Cf {
    StateMeta meta;
    std::shared_ptr<CfSettings> settings;
    rocksdb::ColumnFamilyHandle* handle = nullptr;
  };

  // Moves the RocksDB checkpoint in `tmp` into the checkpoint directory `dir`: SSTs that
  // its last completed checkpoint uploaded are referenced, new ones go to shared/ (with
  // `incremental`), the other files to its private directory. Off the task thread: reads
  // no database state.
  KeyedStateHandle write_checkpoint(std::int64_t checkpoint_id, const fs::path& dir, const fs::path& tmp,
                                    const std::map<std::string, SharedSst>& confirmed,
                                    const std::vector<StateMeta>& states) {
    const fs::path priv = fs::absolute(dir / ("rocksdb-" + stem_));
    const fs::path shared_dir = fs::absolute(dir).parent_path() / "shared";
    fs::remove_all(priv);
    fs::create_directories(priv);
    std::vector<fs::path> entries;
    for (const auto& e : fs::directory_iterator(tmp)) entries.push_back(e.path());
    std::sort(entries.begin(), entries.end());

    auto files = nlohmann::json::array();
    auto shared = nlohmann::json::array();
    std::map<std::string, SharedSst> used;
    for (const auto& p : entries) {
      const std::string name = p.filename().string();
      if (incremental_ && p.extension() == ".sst") {
        SharedSst s;
        auto it = confirmed.find(name);
        const bool reused = it != confirmed.end() && fs::exists(it->second.path);
        if (reused) {
          s = it->second;  // uploaded by an earlier completed checkpoint: reference it
        } else {
          fs::create_directories(shared_dir);
          s.size = fs::file_size(p);
          s.path = (shared_dir / (stem_ + "-" + instance_ + "-c" + std::to_string(checkpoint_id) + "-" + name)).string();
          move_file(p, s.path);
        }
        // "new": uploaded by this checkpoint (its checkpointed size, as Flink's, counts it).
        shared.push_back({{"local", name}, {"path", s.path}, {"size", s.size}, {"new", !reused}});
        used.emplace(name, std::move(s));
      } else {
        move_file(p, priv / name);
        files.push_back(name);
      }
    }
    if (incremental_) {
      std::lock_guard lock(shared_mu_);
      pending_[checkpoint_id] = std::move(used);
    }

    KeyedStateHandle h;
    h.key_groups = key_groups();
    h.description = {{"format", kRocksDbFormat},
                     {"backend", "rocksdb"},
                     {"checkpoint_id", checkpoint_id},
                     {"dir", priv.string()},
                     {"files", files},
                     {"shared", shared},
                     {"states", states_to_json(states)},
                     {"incremental", incremental_}};
    return h;
  }

  // The value of `key`: its pending writes over the database's value.
  bool read(rocksdb::ColumnFamilyHandle* h, std::string_view key, std::string& out) {
    switch (pending_writes_.find(h, key, out)) {
      case PendingWrites::Found::kDeleted: return false;
      case PendingWrites::Found::kValue: return true;
      case PendingWrites::Found::kAppend: {
        auto s = db_->Get(read_options_, h, slice(key), &base_);
        if (s.IsNotFound()) return true;
        check(s, "get");
        out.insert(0, base_);
        return true;
      }
      case PendingWrites::Found::kNothing: break;
    }
    auto s = db_->Get(read_options_, h, slice(key), &out);
    if (s.IsNotFound()) return false;
    check(s, "get");
    return true;
  }
  // The map entries under the current (key, namespace) in user-key order: the database's
  // merged with the pending writes (which win).
  void scan_map(rocksdb::ColumnFamilyHandle* h, const std::function<bool(std::string_view, std::string_view)>& fn) {
    const std::string lower = row();  // the callback may use row_
    PendingWrites::MapWrites pending;  // copied: the callback may write
    pending_writes_.map_writes(h, lower, pending);
    const std::string upper = prefix_successor(lower);
    rocksdb::Slice ub(upper);
    rocksdb::ReadOptions ro = read_options_;
    ro.iterate_upper_bound = &ub;
    ro.prefix_same_as_start = true;  // one row prefix: the Bloom filters skip where it is absent
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, h));
    auto p = pending.items.begin();
    const auto end = pending.items.end();
    // Pending entries before `before` (all of them: before == nullopt); false: stop.
    auto pending_up_to = [&](std::optional<std::string_view> before, bool& same) {
      same = false;
      for (; p != end; ++p) {
        const std::string_view k = pending.user_key(*p);
        if (before) {
          const int c = k.compare(*before);
          if (c > 0) return true;
          if (c == 0) {
            same = true;  // the pending write replaces the database's entry
            const bool go = p->deleted || fn(k, pending.value(*p));
            ++p;
            return go;
          }
        }
        if (!p->deleted && !fn(k, pending.value(*p))) return false;
      }
      return true;
    };
    bool same = false;
    for (it->Seek(lower); it->Valid(); it->Next()) {
      const std::string_view k(it->key().data() + lower.size(), it->key().size() - lower.size());
      if (!pending_up_to(k, same)) return;
      if (!same && !fn(k, std::string_view(it->value().data(), it->value().size()))) return;
    }
    check(it->status(), "iterate");
    pending_up_to(std::nullopt, same);
  }

  // Less than a memtable (64 MB): a long run of writes without a read still goes in steps.
  static constexpr std::size_t kMaxPendingBytes = std::size_t{4} << 20;

  void written() {
    if (pending_writes_.bytes() >= kMaxPendingBytes) commit_writes();
  }
  void commit_writes() {
    pending_writes_.commit(*db_, write_options_);
  }

  static std::string cf_name(const std::string& state) { return "s:" + state; }
  static rocksdb::Slice slice(std::string_view s) { return {s.data(), s.size()}; }
  static void check(const rocksdb::Status& s, const char* what) { check_status(s, what); }

  rocksdb::ColumnFamilyOptions cf_options(const std::shared_ptr<CfSettings>& settings) {
    return state_cf_options(settings, &clock());
  }

  int find(const std::string& name) const {
    for (std::size_t i = 0; i < cfs_.size(); ++i)
      if (cfs_[i].meta.name == name) return static_cast<int>(i);
    return -1;
  }
  int add_cf(StateMeta meta) {
    Cf c;
    c.settings = std::make_shared<CfSettings>();
    c.settings->set(meta);
    c.meta = std::move(meta);
    cfs_.push_back(std::move(c));
    return static_cast<int>(cfs_.size() - 1);
  }
  // A state found in a checkpoint: known already (compatible) or added (no handle yet).
  int adopt(const StateMeta& s) {
    int i = find(s.name);
    if (i < 0) return add_cf(s);
    StateMeta m = cfs_[static_cast<std::size_t>(i)].meta;
    check_compatible(m, s.kind, s.ttl_ms);
    return i;
  }
  int adopt_and_create(const StateMeta& s) {
    int i = adopt(s);
    auto& c = cfs_[static_cast<std::size_t>(i)];
    if (!c.handle)
      check(db_->CreateColumnFamily(cf_options(c.settings), cf_name(c.meta.name), &c.handle), "create column family");
    return i;
  }
  std::vector<StateMeta> metas() const {
    std::vector<StateMeta> out;
    for (const auto& c : cfs_) out.push_back(c.meta);
    return out;
  }

  void open_db() {
    rocksdb::DBOptions options = state_db_options();
    std::vector<std::string> names;
    if (fs::exists(db_path_ / "CURRENT")) check(rocksdb::DB::ListColumnFamilies(options, db_path_.string(), &names), "list column families");
    if (std::find(names.begin(), names.end(), rocksdb::kDefaultColumnFamilyName) == names.end())
      names.insert(names.begin(), rocksdb::kDefaultColumnFamilyName);
    for (const auto& c : cfs_)
      if (std::find(names.begin(), names.end(), cf_name(c.meta.name)) == names.end()) names.push_back(cf_name(c.meta.name));
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    for (const auto& n : names) {
      int i = n.rfind("s:", 0) == 0 ? find(n.substr(2)) : -1;
      descriptors.emplace_back(n, i >= 0 ? cf_options(cfs_[static_cast<std::size_t>(i)].settings)
                                         : state_cf_options(nullptr, nullptr));
    }
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    check(rocksdb::DB::Open(options, db_path_.string(), descriptors, &handles, &raw), "open");
    db_.reset(raw);
    for (std::size_t j = 0; j < names.size(); ++j) {
      int i = names[j].rfind("s:", 0) == 0 ? find(names[j].substr(2)) : -1;
      if (i >= 0) cfs_[static_cast<std::size_t>(i)].handle = handles[j];
      else other_handles_.push_back(handles[j]);
    }
  }
  void close_db() {
    if (!db_) return;
    commit_writes();
    for (auto& c : cfs_) {
      if (c.handle) db_->DestroyColumnFamilyHandle(c.handle);
      c.handle = nullptr;
    }
    for (auto* h : other_handles_) db_->DestroyColumnFamilyHandle(h);
    other_handles_.clear();
    db_->Close();
    db_.reset();
  }
  void flush_all() {
    std::vector<rocksdb::ColumnFamilyHandle*> all = other_handles_;
    for (auto& c : cfs_) all.push_back(c.handle);
    rocksdb::FlushOptions fo;
    fo.wait = true;
    check(db_->Flush(fo, all), "flush");
  }

  rocksdb::ColumnFamilyHandle* cf(StateId id) {
    if (static_cast<std::size_t>(id.index) >= cfs_.size()) throw ClinkError("keyed state: unknown state id");
    return cfs_[static_cast<std::size_t>(id.index)].handle;
  }
  // The row of the current (key, namespace) in row_.
  std::string& row() {
    int kg = current_key_group();
    if (!key_groups().contains(kg))
      throw ClinkError("keyed state: key group " + std::to_string(kg) + " is not in this subtask's range [" +
                       std::to_string(key_groups().first) + ", " + std::to_string(key_groups().last) + "]");
    row_.clear();
    append_row_prefix(kg, current_key(), current_namespace(), row_);
    return row_;
  }
  void scan_raw(rocksdb::ColumnFamilyHandle* h, int kg, rocksdb::ReadOptions ro,
                const std::function<void(std::string_view, std::string_view, std::string_view, std::string_view)>& fn) {
    std::string lower = kg_bytes(kg), upper = kg_bytes(kg + 1);
    rocksdb::Slice ub(upper);
    ro.iterate_upper_bound = &ub;
    ro.total_order_seek = true;  // across rows
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, h));
    std::string_view key, ns;
    for (it->Seek(lower); it->Valid(); it->Next()) {
      std::string_view in(it->key().data(), it->key().size());
      in.remove_prefix(2);
      parse_composite_key(in, key, ns);
      fn(key, ns, in, std::string_view(it->value().data(), it->value().size()));
    }
    check(it->status(), "iterate");
  }

  std::string stem_;
  std::string instance_;
  bool incremental_;
  fs::path db_path_;
  OwnedDirectory owned_;  // "<db_path_>.clink-lock": in use while this backend lives
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<Cf> cfs_;
  std::vector<rocksdb::ColumnFamilyHandle*> other_handles_;  // default and unknown column families
  rocksdb::WriteOptions write_options_;
  PendingWrites pending_writes_;  // not yet in the database (see the top)
  rocksdb::ReadOptions read_options_;
  std::string row_;
  std::string base_;           // read's scratch
  std::string clear_scratch_;  // map_clear's
  // The snapshot's asynchronous part records what it uploaded while the task runs on.
  std::mutex shared_mu_;
  std::map<std::int64_t, std::map<std::string, SharedSst>> pending_;  // uploaded, not yet confirmed
  std::map<std::string, SharedSst> confirmed_;  // SSTs of the last completed checkpoint, by local name
};

}  // namespace

std::unique_ptr<KeyedStateBackend> make_rocksdb_backend(const StateBackendConfig& config,
                                                        const std::string& operator_uid, int subtask,
                                                        KeyGroupRange key_groups, int max_parallelism,
                                                        const ProcessingTimeClock& clock) {
  return std::make_unique<RocksDbKeyedStateBackend>(config, operator_uid, subtask, key_groups, max_parallelism, clock);
}

}  // namespace clink::state_internal
