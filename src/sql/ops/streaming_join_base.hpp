#pragma once
// Internal: the keyed two-input machinery the regular streaming join (sql_join, Flink's
// StreamingJoinOperator) and the semi/anti join (sql_semi_anti_join, Flink's
// StreamingSemiAntiJoinOperator) share. Both inputs are hash-partitioned by the equi-join
// key and keyed by it; each side keeps, per key, a map state from the row (SideRowCodec's
// bytes, row kind erased) to [TTL timestamp] varint(count) varint(matches): how often the
// row is present and, where the side needs it, how many other-side rows it joined with
// (Flink's OuterJoinRecordStateView). A side whose input only inserts and whose rows
// need no match count (JoinConfig::list_state; no TTL) keeps a list state instead,
// "join-left-rows" / "join-right-rows": per key the rows as varint(length) bytes, a
// duplicate stored twice, appended without reading (Flink's InputSideHasNoUniqueKey
// view without the count); its rows iterate in arrival order, each with count 1.
//
// Per input batch: every row's key, the other side's rows of each distinct key (decoded
// once), the residual over all candidate pairs of a chunk in one vectorised pass, then
// process_row() per row in order (the subclass's transitions and emissions), then the
// match counts of other-side rows the batch changed are written back.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "clink/state/keyed_state_backend.hpp"
#include "sql_join_common.hpp"

namespace clink::sql {

struct JoinConfig {
  JoinSpec spec;
  std::int64_t state_ttl_ms = 0;
  // Per side: its rows are a list (see above). Only for an insert-only input whose rows'
  // match counts are never read, without TTL; a retraction on such a side is an error.
  bool list_state[2] = {false, false};
};

class StreamingJoinBase : public StreamOperator {
 public:
  explicit StreamingJoinBase(std::shared_ptr<const JoinConfig> cfg);

  int num_inputs() const override { return 2; }
  void open(RuntimeContext& ctx) override;
  void process_batch(int input, BatchPtr batch) override;

 protected:
  // The other side's rows of the current key, each once (it counts `count` times).
  struct OtherEntry {
    std::string_view key;  // into keys_ (stable for the batch)
    std::size_t bytes_at = 0, bytes_len = 0;  // the row bytes in entry_bytes_
    std::int32_t count = 0;
    std::int32_t matches = 0;
    bool dirty = false;  // matches changed: written back at the end of the batch
  };

  // Row `r` of the batch from side `own`: matched_ holds its matching pairs and
  // occurrences_ how many other-side rows they stand for; row_bytes_ is its encoding and
  // the backend's current key is its key.
  virtual void process_row(const ColumnBatch& in, std::size_t r, int own, int other) = 0;

  std::uint32_t pair_entry(std::size_t p) const { return joined_.other_row(p); }
  OtherEntry& entry_of_pair(std::size_t p) { return entries_[pair_entry(p)]; }
  // Sends what was emitted when a batch's worth is pending.
  void flush_if_full() {
    if (joined_.pending() >= kDefaultBatchSize) joined_.flush(output());
  }
  // The current key's entry for row_bytes_ on `side`: one more occurrence with `matches`
  // (Flink's addRecord(record, numOfAssociations) overwrites it), one less (removed at 0).
  // On a list side: appends the row (matches are not kept); a retraction is an error.
  void add_record(int side, std::int32_t matches);
  void retract_record(int side);

  std::shared_ptr<const JoinConfig> cfg_;
  const JoinSpec& spec_;
  JoinedRows joined_;
  ColumnBatch other_rows_[2];  // the loaded other-side rows, one per entry
  std::vector<std::size_t> matched_;
  std::int32_t occurrences_ = 0;

 private:
  struct RecordValue {
    std::int32_t count = 0;
    std::int32_t matches = 0;
  };
  using Range = std::pair<std::uint32_t, std::uint32_t>;

  std::string_view key_of(std::size_t r) const {
    std::size_t from = r == 0 ? 0 : key_end_[r - 1];
    return std::string_view(keys_).substr(from, key_end_[r] - from);
  }
  Range load_other(std::string_view key, int other);
  void load_other_list(std::string_view key, int other);
  void add_entry(std::string_view key, std::string_view row, RecordValue v, int other);
  bool read_value(std::string_view value, RecordValue& v) const;
  void encode_value(RecordValue v, std::string& out) const;
  void put_value(int side, std::string_view row, RecordValue v);

  SideRowCodec codec_[2];
  RowKeyEncoder key_encoder_[2];
  KeyedStateBackend* backend_ = nullptr;
  StateId state_[2];
  std::int64_t now_ = 0;
  // Per batch (buffers reused across batches).
  std::string keys_;
  std::vector<std::size_t> key_end_;
  absl::flat_hash_map<std::string_view, Range> touched_;
  std::vector<OtherEntry> entries_;
  std::string entry_bytes_;
  std::vector<Range> row_entries_;  // per row: its candidates in entries_ (none for a NULL key)
  std::vector<Range> row_range_;    // per row: its pairs in the current chunk
  std::vector<std::string> expired_;
  std::string row_bytes_, value_, list_bytes_;
};

}  // namespace clink::sql
