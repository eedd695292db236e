#include "rocksdb_support.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>
#include <rocksdb/cache.h>
#include <rocksdb/compaction_filter.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>

#include "clink/core/error.hpp"
#include "clink/state/state_ttl.hpp"

namespace clink::state_internal {

namespace fs = std::filesystem;

namespace {

// List state appends: plain concatenation (elements are self-delimiting).
class ConcatMergeOperator final : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice&, const rocksdb::Slice* existing, const rocksdb::Slice& value,
             std::string* new_value, rocksdb::Logger*) const override {
    new_value->clear();
    if (existing) {
      new_value->reserve(existing->size() + value.size());
      new_value->assign(existing->data(), existing->size());
    }
    new_value->append(value.data(), value.size());
    return true;
  }
  const char* Name() const override { return "clink.concat"; }
};

// Drops expired TTL values (and expired list elements) during compaction, as Flink's
// RocksDB compaction-filter cleanup. Runs on RocksDB's threads: never throws.
class TtlCompactionFilter final : public rocksdb::CompactionFilter {
 public:
  TtlCompactionFilter(StateKind kind, std::int64_t ttl_ms, std::int64_t now) : kind_(kind), ttl_ms_(ttl_ms), now_(now) {}
  bool Filter(int, const rocksdb::Slice&, const rocksdb::Slice& existing, std::string* new_value,
              bool* value_changed) const override {
    std::string_view v(existing.data(), existing.size());
    try {
      if (kind_ == StateKind::kList) {
        std::string kept;
        if (!ttl_filter_list(v, ttl_ms_, now_, kept)) return false;
        if (kept.empty()) return true;
        *new_value = std::move(kept);
        *value_changed = true;
        return false;
      }
      return ttl_value_expired(v, ttl_ms_, now_);
    } catch (...) {
      return false;  // malformed: keep it, a read will report it
    }
  }
  const char* Name() const override { return "clink.ttl"; }

 private:
  StateKind kind_;
  std::int64_t ttl_ms_;
  std::int64_t now_;
};

// A row's (key group, key, namespace) prefix: a map row without its user key, any other
// row whole. Map scans seek by this prefix, so the memtable's and the SST files' Bloom
// filters hold it and answer a scan of an absent (key, namespace) without a search (a
// join probes the other side's map for every row). Runs on RocksDB's threads: never
// throws; a key it cannot parse is out of its domain.
class RowPrefixTransform final : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "clink.row_prefix"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override { return {key.data(), prefix_size(key)}; }
  bool InDomain(const rocksdb::Slice& key) const override { return prefix_size(key) > 0; }

 private:
  // 0: not a row key.
  static std::size_t prefix_size(const rocksdb::Slice& key) {
    std::size_t pos = 2;  // the key group
    for (int part = 0; part < 2; ++part) {  // varint(len) bytes, for the key then the namespace
      std::uint64_t len = 0;
      for (int shift = 0;; shift += 7) {
        if (pos >= key.size() || shift > 63) return 0;
        const auto b = static_cast<unsigned char>(key[pos++]);
        len |= std::uint64_t{b & 0x7fu} << shift;
        if ((b & 0x80u) == 0) break;
      }
      if (len > key.size() - pos) return 0;
      pos += len;
    }
    return pos;
  }
};

class TtlCompactionFilterFactory final : public rocksdb::CompactionFilterFactory {
 public:
  TtlCompactionFilterFactory(std::shared_ptr<CfSettings> settings, const ProcessingTimeClock* clock)
      : settings_(std::move(settings)), clock_(clock) {}
  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(const rocksdb::CompactionFilter::Context&) override {
    std::int64_t ttl = settings_->ttl_ms.load();
    if (ttl <= 0) return nullptr;
    return std::make_unique<TtlCompactionFilter>(static_cast<StateKind>(settings_->kind.load()), ttl, clock_->now_ms());
  }
  const char* Name() const override { return "clink.ttl"; }

 private:
  std::shared_ptr<CfSettings> settings_;
  const ProcessingTimeClock* clock_;
};

}  // namespace

void check_status(const rocksdb::Status& s, const char* what) {
  if (!s.ok()) throw ClinkError(std::string("rocksdb state backend: ") + what + ": " + s.ToString());
}

rocksdb::DBOptions state_db_options() {
  rocksdb::DBOptions o;
  o.create_if_missing = true;
  o.create_missing_column_families = true;
  o.info_log_level = rocksdb::WARN_LEVEL;
  o.keep_log_file_num = 2;
  o.max_background_jobs = 2;
  o.avoid_flush_during_shutdown = true;
  return o;
}

rocksdb::ColumnFamilyOptions state_cf_options(const std::shared_ptr<CfSettings>& settings,
                                              const ProcessingTimeClock* clock) {
  static const auto merge = std::make_shared<ConcatMergeOperator>();
  // One block cache for every database of the process (Flink shares one per slot from
  // managed memory), instead of RocksDB's 8 MB per column family.
  static const std::shared_ptr<rocksdb::Cache> cache = rocksdb::NewLRUCache(kBlockCacheBytes);
  // Keyed state reads mostly keys that may be absent (a new group, window, join key): a
  // whole-key Bloom filter in the SST files and in the memtable answers most misses
  // without a skip-list search or an index and data block lookup (10 bits/key, ~1 %
  // false positives; iterators, which always seek by prefix, do not use it).
  static const std::shared_ptr<rocksdb::TableFactory> table = [] {
    rocksdb::BlockBasedTableOptions t;
    t.block_cache = cache;
    t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    t.whole_key_filtering = true;
    return std::shared_ptr<rocksdb::TableFactory>(rocksdb::NewBlockBasedTableFactory(t));
  }();
  rocksdb::ColumnFamilyOptions o;
  o.merge_operator = merge;
  o.table_factory = table;
  o.memtable_whole_key_filtering = true;
  static const std::shared_ptr<const rocksdb::SliceTransform> row_prefix = std::make_shared<RowPrefixTransform>();
  o.prefix_extractor = row_prefix;
  o.memtable_prefix_bloom_size_ratio = 0.02;  // of the write buffer: ~1.3 MB for 64 MB
  if (settings && clock) o.compaction_filter_factory = std::make_shared<TtlCompactionFilterFactory>(settings, clock);
  return o;
}

std::string prefix_successor(std::string prefix) {
  while (!prefix.empty() && static_cast<unsigned char>(prefix.back()) == 0xff) prefix.pop_back();
  if (prefix.empty()) throw ClinkError("rocksdb state backend: no successor of an all-0xff prefix");
  prefix.back() = static_cast<char>(static_cast<unsigned char>(prefix.back()) + 1);
  return prefix;
}

void scan_rows(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, const rocksdb::ReadOptions& read_options,
               int kg_lo, int kg_hi, StateKind kind,
               const std::function<void(int, std::string_view, std::string_view, std::string_view)>& fn) {
  std::string lower = kg_bytes(kg_lo), upper = kg_bytes(kg_hi + 1);
  rocksdb::Slice ub(upper);
  rocksdb::ReadOptions ro = read_options;
  ro.iterate_upper_bound = &ub;
  ro.total_order_seek = true;  // across rows (the prefix extractor's Bloom filters do not apply)
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro, cf));
  std::string composed;
  std::string_view key, ns;
  for (it->Seek(lower); it->Valid(); it->Next()) {
    std::string_view in(it->key().data(), it->key().size());
    if (in.size() < 2) continue;
    int kg = (static_cast<unsigned char>(in[0]) << 8) | static_cast<unsigned char>(in[1]);
    in.remove_prefix(2);
    parse_composite_key(in, key, ns);
    std::string_view value(it->value().data(), it->value().size());
    if (kind == StateKind::kMap) {
      composed.clear();
      put_length_prefixed(in, composed);
      put_length_prefixed(value, composed);
      fn(kg, key, ns, composed);
    } else {
      fn(kg, key, ns, value);
    }
  }
  check_status(it->status(), "iterate");
}

void materialize_rocksdb_checkpoint(const KeyedStateHandle& handle, const fs::path& target) {
  const nlohmann::json& d = *handle.description;
  fs::create_directories(target);
  const fs::path dir = d.at("dir").get<std::string>();
  for (const auto& f : d.at("files")) {
    const std::string name = f.get<std::string>();
    if (fs::path(name).extension() == ".sst") link_or_copy(dir / name, target / name);
    else fs::copy_file(dir / name, target / name, fs::copy_options::overwrite_existing);  // MANIFEST is appended to
  }
  for (const auto& s : d.at("shared")) {
    fs::path from = s.at("path").get<std::string>();
    if (!fs::exists(from)) throw ClinkError("state restore: shared state file " + from.string() + " is missing");
    link_or_copy(from, target / s.at("local").get<std::string>());
  }
}

void read_rocksdb_snapshot(const KeyedStateHandle& handle, KeyGroupRange range, const OnStates& on_states,
                           const OnEntry& on_entry) {
  auto states = states_from_json(handle.description->at("states"));
  on_states(states);
  int lo = std::max(range.first, handle.key_groups.first);
  int hi = std::min(range.last, handle.key_groups.last);
  if (lo > hi) return;
  const fs::path tmp = fs::temp_directory_path() / ("clink-restore-" + random_hex(8));
  struct Cleanup {
    fs::path p;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  } cleanup{tmp};
  materialize_rocksdb_checkpoint(handle, tmp);

  rocksdb::DBOptions options = state_db_options();
  options.create_if_missing = false;
  std::vector<std::string> names;
  check_status(rocksdb::DB::ListColumnFamilies(options, tmp.string(), &names), "list column families");
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const auto& n : names) descriptors.emplace_back(n, state_cf_options(nullptr, nullptr));
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  check_status(rocksdb::DB::OpenForReadOnly(options, tmp.string(), descriptors, &handles, &raw), "open checkpoint");
  std::unique_ptr<rocksdb::DB> db(raw);
  struct Handles {
    rocksdb::DB* db;
    std::vector<rocksdb::ColumnFamilyHandle*>& h;
    ~Handles() {
      for (auto* x : h) db->DestroyColumnFamilyHandle(x);
    }
  } release{db.get(), handles};

  for (std::size_t i = 0; i < states.size(); ++i) {
    auto it = std::find(names.begin(), names.end(), "s:" + states[i].name);
    if (it == names.end()) continue;
    auto* cf = handles[static_cast<std::size_t>(it - names.begin())];
    scan_rows(db.get(), cf, rocksdb::ReadOptions(), lo, hi, states[i].kind,
              [&](int kg, std::string_view key, std::string_view ns, std::string_view value) {
                on_entry(static_cast<int>(i), kg, key, ns, value);
              });
  }
}

}  // namespace clink::state_internal
