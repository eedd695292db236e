#pragma once
// Internal: what the OVER aggregate operators share (sql_over_aggregate: event time in
// sql_over_rowtime.cpp, processing time in sql_over_proctime.cpp). Flink's
// Row/ProcTime{Rows,Range}{Bounded,Unbounded}PrecedingFunction over one keyed layout:
//   "over-acc"   value per partition key: a small header (Flink's lastTriggeringTs,
//                counter, cleanup timestamp, our row sequence) then the calls'
//                accumulators (AggregateSet::serialize)
//   "over-pending", "over-frame"  maps per partition key: (time, sequence) -> the row (its
//                event time and every column's key encoding): rows waiting for their
//                time to fire, and rows emitted that are still inside a bounded frame.
//                The key's byte order is time order, then arrival order: the oldest row
//                is the first entry, so a firing reads only the rows it needs.
// A key's header and accumulators are read from state once and then cached across
// passes (input batches, watermarks, processing-time ticks); they are written back when
// a checkpoint barrier arrives (snapshot_state), at the end of the input, and whenever the
// cache outgrows kMaxCachedKeys (with a state TTL: at the end of every pass, so expiry
// is checked on each read). Rows go to their map states at once.
#include <cstdint>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "clink/runtime/operator.hpp"
#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/common/column_key.hpp"
#include "clink/sql/ops/sql_aggregates.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "sql_join_common.hpp"

namespace clink::sql {

struct OverConfig {
  std::string where;
  SchemaPtr in_schema, out_schema;
  std::vector<std::size_t> partition_keys;
  std::size_t order_column = 0;
  bool proctime = false;
  bool rows = false;
  std::optional<std::int64_t> preceding;  // ROWS: rows before the current one; RANGE: ms; none: UNBOUNDED
  std::int64_t state_ttl_ms = 0;          // table.exec.state.ttl (0: none)
  std::shared_ptr<const AggregateSet> aggs;
  bool bounded() const { return preceding.has_value(); }
  // Flink's precedingOffset: ROWS n PRECEDING keeps n + 1 rows in the frame.
  std::int64_t row_limit() const { return *preceding + 1; }
};

class OverAggregateBase : public StreamOperator {
 public:
  explicit OverAggregateBase(std::shared_ptr<const OverConfig> cfg);
  void open(RuntimeContext& ctx) override;
  void finish() override;
  void snapshot_state(std::int64_t checkpoint_id) override;

 protected:
  // Flink's per-key ValueStates, kept together.
  struct Header {
    std::optional<std::int64_t> last_triggering;  // the last event time fired (bounded event-time frames)
    std::int64_t count = 0;                       // rows in a ROWS frame (Flink's counter)
    std::optional<std::int64_t> cleanup;          // the registered cleanup timer
    std::uint64_t next_seq = 0;                   // the sequence of the next stored row
  };
  struct KeyState {
    Header header;
    AggState acc;
    bool has_acc = false;  // accumulators exist (else created on first use)
    bool exists = false;   // "over-acc" holds a value for the key
    bool dirty = false;
  };
  // One stored row of the current key, loaded by scan() (decoded on demand).
  struct StoredRow {
    std::int64_t time = 0;
    std::size_t key_at = 0, bytes_at = 0, bytes_len = 0;
    std::int64_t row = -1;  // in Scan::rows once decoded
  };
  // The rows of one map state of the current key, as far as a scan read them.
  struct Scan {
    StateId state;
    std::vector<StoredRow> entries;
    std::string bytes;  // the entries' user keys and values
    ColumnBatch rows;   // decoded entries
    AggregateInput input;  // bound to rows
    bool more = false;     // the scan stopped at a row after `until`
    explicit Scan(SchemaPtr schema) : rows(std::move(schema)) {}
  };

  // The key's state for this pass (read on first touch).
  KeyState& touch(std::string_view key);
  AggState& acc(KeyState& k);
  // Drops everything of the key: its rows, accumulators and header.
  void clear_key(std::string_view key, KeyState& k);
  // Ends a pass: writes the cached keys back when the cache is full (or state TTL is on).
  void end_pass();
  // Writes every cached key back and empties the cache.
  void write_back();

  // Stores row `r` of `in` in `state` under (time, the key's next sequence).
  void store_row(StateId state, std::string_view key, KeyState& k, std::int64_t time, const ColumnBatch& in,
                 std::size_t r);
  // Loads the key's rows of s.state with time <= `until` (at most `max_rows`), in order.
  void scan(Scan& s, std::string_view key, std::int64_t until, std::size_t max_rows = SIZE_MAX);
  // Decodes s.entries[i] into s.rows (once); its row index there.
  std::uint32_t decoded(Scan& s, std::size_t i);
  void remove(Scan& s, std::string_view key, std::size_t i);
  // ROWS n PRECEDING: before a row enters a full frame, its oldest row leaves (retracted
  // from `acc`); otherwise the frame grows by one.
  void make_room_in_rows_frame(std::string_view key, KeyState& k, AggState& acc);
  // Moves pending_.entries[i] (a row just emitted) into the frame.
  void move_to_frame(std::string_view key, std::size_t i);
  // The first of pending_'s scanned rows at time `t` (they come last); none: the size.
  std::size_t first_pending_at(std::int64_t t) const;
  // RANGE d PRECEDING at time `t` (event time, or a processing-time arrival): retracts the
  // frame's rows older than t - d, accumulates the pending rows of `t` and emits them all
  // with the same values (peers), then moves them into the frame.
  void fire_range(std::string_view key, KeyState& k, std::int64_t t);

  // Accumulates (+1) or retracts (-1) row `r` of the batch `in` is bound to (input_ for
  // an input batch, a Scan's input for its rows).
  void fold(AggState& acc, const AggregateInput& in, std::uint32_t r, int sign);
  void check_insert_only(const ColumnBatch& in) const;
  // Emission of pending_'s rows: their columns then `acc`'s values. Rows queue in
  // emit_rows_ until flush_decoded() copies their columns (before the next scan).
  void emit_decoded(std::uint32_t row, const AggState& acc);
  void flush_decoded();
  // Sends the output batch on.
  void flush();
  ColumnBatch& out();

  // Flink's registerProcessingCleanupTimer (KeyedProcessFunctionWithCleanupState): with
  // a state TTL, a processing-time timer at now + 1.5 TTL, moved later when now + TTL
  // passes it.
  void register_ttl_cleanup(std::string_view key, KeyState& k, std::int64_t now);
  bool ttl_cleanup_enabled() const { return cfg_->state_ttl_ms > 1; }

  std::int64_t row_time(const ColumnBatch& in, std::size_t r) const;
  // Encodes row `r`'s partition key into key_ (a view of it).
  std::string_view key_of(const ColumnBatch& in, std::size_t r);
  void count_late(std::size_t n);

  std::shared_ptr<const OverConfig> cfg_;
  KeyedStateBackend* backend_ = nullptr;
  StateId acc_state_;
  // "over-acc" carries a state-TTL timestamp (processing-time unbounded frames with a TTL).
  bool ttl_state_ = false;
  RowKeyEncoder key_encoder_;
  SideRowCodec row_codec_;
  absl::flat_hash_map<std::string, KeyState> touched_;
  // "over-pending": rows waiting for their time to fire; "over-frame": rows emitted and
  // still inside a bounded frame. Both keyed (time, sequence), oldest first.
  Scan pending_, frame_;
  AggregateInput input_;  // bound to the batch being processed
  std::vector<std::uint32_t> emit_rows_;
  std::unique_ptr<ColumnBatch> out_;
  std::string key_, user_key_, bytes_;
};

// The two operators the factory builds.
// An OVER window without PARTITION BY sees every row in one subtask: refuses another
// parallelism (every OVER operator's open()).
void check_over_parallelism(const std::string& where, bool partitioned, const RuntimeContext& ctx);

std::unique_ptr<StreamOperator> make_rowtime_over(std::shared_ptr<const OverConfig> cfg);
std::unique_ptr<StreamOperator> make_proctime_over(std::shared_ptr<const OverConfig> cfg);

}  // namespace clink::sql
