#pragma once
// Internal to src/state: RocksDB options, row keys, TTL compaction filter, reading a
// RocksDB checkpoint (restore, rescale, cross-backend restore).
#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include "pending_writes.hpp"
#include "snapshot_format.hpp"

namespace clink::state_internal {

// What the TTL compaction filter of a column family needs; changes when the state is
// registered (its TTL may differ from the checkpoint's).
struct CfSettings {
  std::atomic<int> kind{0};
  std::atomic<std::int64_t> ttl_ms{0};
  void set(const StateMeta& m) {
    kind.store(static_cast<int>(m.kind));
    ttl_ms.store(m.ttl_ms);
  }
};

// The block cache that every RocksDB state database of the process shares.
inline constexpr std::size_t kBlockCacheBytes = std::size_t{256} << 20;

void check_status(const rocksdb::Status& s, const char* what);
rocksdb::DBOptions state_db_options();
// Concatenating merge operator; TTL compaction filter when settings and clock are given.
rocksdb::ColumnFamilyOptions state_cf_options(const std::shared_ptr<CfSettings>& settings,
                                              const ProcessingTimeClock* clock);

inline std::string kg_bytes(int kg) {
  return std::string{static_cast<char>((kg >> 8) & 0xff), static_cast<char>(kg & 0xff)};
}
inline void append_row_prefix(int kg, std::string_view key, std::string_view ns, std::string& out) {
  out.push_back(static_cast<char>((kg >> 8) & 0xff));
  out.push_back(static_cast<char>(kg & 0xff));
  append_composite_key(key, ns, out);
}
// The smallest string greater than every string starting with `prefix`.
std::string prefix_successor(std::string prefix);

// Every row of key groups [kg_lo, kg_hi] of a column family as (kg, key, ns, value);
// map rows as value = lp(user key) lp(value), the for_each_entry form.
void scan_rows(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, const rocksdb::ReadOptions& ro, int kg_lo,
               int kg_hi, StateKind kind,
               const std::function<void(int, std::string_view, std::string_view, std::string_view)>& fn);

// Recreates the database of a RocksDB checkpoint handle in `target` (private files
// copied, SSTs hard-linked where possible).
void materialize_rocksdb_checkpoint(const KeyedStateHandle& handle, const std::filesystem::path& target);

}  // namespace clink::state_internal
