#pragma once
// Internal to src/state: the RocksDB backend's writes not yet in its database, and how a
// read sees them. An operator writes a key and reads it (or another) right after: a PTF
// sets a value and reads its timers map for the same row, a join adds a row and scans
// the other side. Committing before each such read cost one RocksDB Write per row (half
// of a PTF's time); instead reads look the pending writes up here (a hash index per key,
// and per map row prefix for map scans) and the database only where nothing is pending.
//
// commit() applies them in one Write in (column family, key) order, each key's writes in
// the order made (those a later put or delete overwrites left out): the memtable's skip
// list inserts a key starting from the previous insert's position, so ascending keys cost
// fewer comparisons than keys in hash order (about half of an insert's time).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

namespace clink::state_internal {

class PendingWrites {
 public:
  enum class Op : std::uint8_t { kPut, kMerge, kDelete };
  // `prefix_size`: for a map entry, the length of its row prefix (key group, key,
  // namespace) before the user key, so that map_writes() finds it; 0 for other rows.
  void add(Op op, rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string_view value = {},
           std::size_t prefix_size = 0);
  bool empty() const { return entries_.empty(); }
  std::size_t bytes() const { return bytes_.size(); }
  void clear();
  void commit(rocksdb::DB& db, const rocksdb::WriteOptions& options);

  // What the pending writes make of one row's value.
  enum class Found : std::uint8_t {
    kNothing,  // nothing pending: the database's value is the value
    kDeleted,  // absent
    kValue,    // `out` is the value
    kAppend,   // merges (list appends) only: the value is the database's (if any) + `out`
  };
  Found find(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string& out) const;

  // The latest pending write of each map entry under a row prefix, in user-key order,
  // copied (the caller may write while it goes through them).
  struct MapWrites {
    struct Item {
      std::uint32_t key_begin, key_size, value_begin, value_size;
      bool deleted;
    };
    std::string bytes;
    std::vector<Item> items;
    std::string_view user_key(const Item& i) const { return std::string_view(bytes).substr(i.key_begin, i.key_size); }
    std::string_view value(const Item& i) const { return std::string_view(bytes).substr(i.value_begin, i.value_size); }
  };
  void map_writes(rocksdb::ColumnFamilyHandle* cf, std::string_view prefix, MapWrites& out) const;

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  struct Entry {
    rocksdb::ColumnFamilyHandle* cf;
    std::uint32_t cf_id, begin, key_size, value_size;  // key then value at bytes_[begin]
    std::uint32_t prefix_size;                          // map rows; 0: none
    std::uint32_t prev_of_key = kNone, prev_of_prefix = kNone;  // the previous write of the same key / prefix
    Op op;
  };
  // Open addressing: (column family, key or prefix) -> its latest entry, as
  // hash << 32 | (1 + entry index); 0: empty.
  struct Index {
    std::vector<std::uint64_t> slots;
    std::size_t used = 0;
  };
  static std::uint64_t slot_value(std::uint32_t hash, std::uint32_t entry) {
    return (std::uint64_t{hash} << 32) | (entry + 1);
  }
  static std::uint32_t entry_of(std::uint64_t slot) { return static_cast<std::uint32_t>(slot) - 1; }
  std::string_view key_of(const Entry& e) const { return std::string_view(bytes_).substr(e.begin, e.key_size); }
  std::string_view value_of(const Entry& e) const {
    return std::string_view(bytes_).substr(e.begin + e.key_size, e.value_size);
  }
  // The slot of (cf_id, bytes) in `index`: its latest entry, or the empty slot to fill.
  std::uint64_t* slot(Index& index, bool prefix, std::uint32_t hash, std::uint32_t cf_id, std::string_view bytes);
  std::uint32_t latest(const Index& index, bool prefix, std::uint32_t hash, std::uint32_t cf_id,
                       std::string_view bytes) const;
  bool matches(std::uint64_t slot, bool prefix, std::uint32_t hash, std::uint32_t cf_id, std::string_view bytes) const;
  static void grow(Index& index);
  void write_to_batch(const Entry& e);

  std::string bytes_;
  std::vector<Entry> entries_;
  Index by_key_, by_prefix_;
  std::vector<std::uint32_t> order_;          // commit's scratch
  mutable std::vector<std::uint32_t> chain_;  // find's scratch
  rocksdb::WriteBatch batch_;
};

}  // namespace clink::state_internal
