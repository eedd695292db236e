#pragma once
// Internal: what the ranking operators (sql_rank, sql_deduplicate, sql_window_rank) share.
//   SortKeyEncoder  ORDER BY columns as bytes whose memcmp order is the sort order (ASC / DESC,
//                   NULLS FIRST / LAST), so buffers and map state sort by plain byte order;
//   RankRowCodec    a row <-> bytes: its event time, then every column's key encoding;
//   TopNBuffer      a small sorted buffer of (sort key, row) in one arena: ties keep arrival
//                   order, as Flink's TopNBuffer; reused across keys and batches;
//   RankEmitter     the output batch: decoded rows, the rank number when output, row kinds.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clink/runtime/operator.hpp"
#include "clink/sql/common/column_key.hpp"
#include "clink/sql/spec/plan_structs.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"

namespace clink::sql {

class SortKeyEncoder {
 public:
  SortKeyEncoder(const Schema& schema, std::vector<SortKey> keys);
  void encode(const ColumnBatch& batch, std::size_t row, std::string& out) const;
  // Fails (at build) for a type without an order (ARRAY, MAP, ROW).
  static void check_sortable(const LogicalType& type, const SqlOpParams& p);

 private:
  std::vector<SortKey> keys_;
  mutable std::string scratch_;
};

class RankRowCodec {
 public:
  explicit RankRowCodec(const Schema& schema);
  // [event time: 8 bytes][the row's columns].
  void encode(const ColumnBatch& batch, std::size_t row, std::string& out) const;
  // Appends the row's columns to out's first columns; returns its event time.
  EventTime decode(std::string_view bytes, ColumnBatch& out) const;
  static EventTime event_time(std::string_view bytes);
  // Equal column values (Flink's RecordEqualiser: the event time is not a column).
  static bool same_values(std::string_view a, std::string_view b) { return a.substr(8) == b.substr(8); }
  // Fails (at build) for a type rows cannot be kept with (nested types).
  static void check_storable(const Schema& schema, const SqlOpParams& p);

 private:
  RowKeyEncoder encoder_;
  std::size_t columns_;
};

class TopNBuffer {
 public:
  void clear() {
    arena_.clear();
    entries_.clear();
  }
  // [u32 count]{[u32 key length][key][u32 row length][row]}...
  void load(std::string_view bytes);
  void save(std::string& out) const;
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  std::string_view key(std::size_t i) const { return {arena_.data() + entries_[i].key_off, entries_[i].key_len}; }
  std::string_view row(std::size_t i) const { return {arena_.data() + entries_[i].row_off, entries_[i].row_len}; }
  // The position after every entry whose key is <= `k` (a new row ranks after its ties).
  std::size_t upper_bound(std::string_view k) const;
  void insert(std::size_t pos, std::string_view k, std::string_view row);
  void erase(std::size_t pos) { entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(pos)); }
  void truncate(std::size_t n) {
    if (n < entries_.size()) entries_.resize(n);
  }
  // Drops the bytes of erased entries once they outweigh the live ones (a buffer kept
  // across batches would otherwise grow with every row that passed through it).
  void compact_if_sparse();
  // The end of the group of equal keys starting at `i`.
  std::size_t group_end(std::size_t i) const;

 private:
  struct Entry {
    std::uint32_t key_off, key_len, row_off, row_len;
  };
  std::string arena_;  // rows of erased entries stay until the buffer is saved and loaded
  std::vector<Entry> entries_;
};

class RankEmitter {
 public:
  // constant_rank: the rank output is this number whatever emit() is given (a rank range
  // of one number, which Flink computes without the rank and projects as a constant).
  RankEmitter(SchemaPtr out_schema, const RankRowCodec& codec, bool output_rank,
              std::optional<std::int64_t> constant_rank = std::nullopt)
      : schema_(std::move(out_schema)), codec_(codec), output_rank_(output_rank), constant_rank_(constant_rank) {}
  // A stored row; `rank` is appended when the rank is output. `time`: the row's own when absent.
  void emit(std::string_view row, RowKind kind, std::int64_t rank, std::optional<EventTime> time = std::nullopt);
  void flush(Output& out);
  std::size_t pending() const { return out_ ? out_->size() : 0; }

 private:
  SchemaPtr schema_;
  const RankRowCodec& codec_;
  bool output_rank_;
  std::optional<std::int64_t> constant_rank_;
  std::unique_ptr<ColumnBatch> out_;
};

// The order keys of param "order" ([{column, descending, nulls_first}]).
std::vector<SortKey> parse_order_keys(const SqlOpParams& p, const Schema& input);
// The key bytes of a partition: the key columns' encoding, a single 0x01 without keys (as a
// global aggregate's group).
inline void partition_key(const RowKeyEncoder& keys, const ColumnBatch& b, std::size_t row, std::string& out) {
  out.clear();
  if (keys.key_columns().empty()) {
    out.push_back('\1');
    return;
  }
  keys.encode(b, row, out);
}

}  // namespace clink::sql
