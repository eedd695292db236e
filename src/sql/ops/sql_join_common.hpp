#pragma once
// Internal: what the SQL join operators (sql_join, sql_semi_anti_join, sql_interval_join,
// sql_window_join, sql_temporal_join) share.
//   JoinSpec        the params both take (join type, keys, residual condition, schemas)
//   SideRowCodec    a side's row <-> state bytes (join_row_codec.hpp)
//   JoinedRows      candidate pairs as joined rows (the residual is evaluated over them
//                   in one vectorised pass) and the output batch built from pairs and
//                   null-padded rows in emission order.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clink/runtime/operator.hpp"
#include "clink/sql/common/column_key.hpp"
#include "clink/sql/expression/expr_compiler.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "join_row_codec.hpp"

namespace clink::sql {

struct JoinSpec {
  std::string where;
  SchemaPtr out_schema;                  // left ++ right; a semi/anti join: left
  SchemaPtr pair_schema;                 // left ++ right: what the residual reads
  SchemaPtr side[2];                     // left, right input schemas
  std::vector<std::size_t> keys[2];      // key columns per side, pairwise
  std::vector<bool> filter_nulls;        // per key: a NULL never matches
  bool outer[2] = {false, false};        // left / right side preserved (null-padded)
  bool semi_anti = false;                // LeftSemiJoin / LeftAntiJoin: output the left rows
  bool anti = false;                     // that have (semi) / have no (anti) match
  ExprPtr condition;                     // residual over left ++ right (null: TRUE)
  SessionContext session;

  // Reads join_type, left_keys, right_keys, filter_nulls, condition, schema and
  // input_schemas; checks the output schema is left ++ right with the outer join's
  // nullability (the left schema for a semi/anti join) and that every column can be kept
  // in state. join_type semi and anti where `semi_anti` allows them: kOnly
  // (sql_semi_anti_join, which takes no other join type) or kAlso (sql_window_join).
  enum class SemiAnti { kNo, kAlso, kOnly };
  static JoinSpec parse(const SqlOpParams& p, SemiAnti semi_anti = SemiAnti::kNo);
  // The params parse() reads, then an operator's own.
  static std::vector<std::string> param_names(std::initializer_list<const char*> own = {});
  // The column param `name` names in side `side`'s schema, which must be a TIMESTAMP or
  // TIMESTAMP_LTZ (the time columns of the interval, window and temporal joins).
  std::size_t time_column(const SqlOpParams& p, int side, const char* name) const;
};

// Milliseconds of the time attribute `column` (TIMESTAMP or TIMESTAMP_LTZ, microseconds)
// in row `r` of a batch of input `side`; a NULL is an error naming the column.
std::int64_t time_attribute_ms(const JoinSpec& spec, int side, const ColumnBatch& batch, std::size_t r,
                               std::size_t column);

// Whether row `r` of `batch` has a NULL in a key column that filters NULLs.
bool has_null_key(const ColumnBatch& batch, std::size_t r, const std::vector<std::size_t>& keys,
                  const std::vector<bool>& filter_nulls);

// Builds candidate joined rows and the output batch.
class JoinedRows {
 public:
  explicit JoinedRows(const JoinSpec& spec);

  // Candidates: pairs of (row of `own` on side `own_side`, row of `other`). Call
  // add_pair per pair, then evaluate() once: matches(p) says whether the residual holds.
  // Emitted pairs are gathered from the batches given to evaluate(): they must stay
  // unchanged until gather_emitted_pairs(), which the next evaluate(), emit_padded() and
  // flush() call (an operator that changes them sooner calls it first).
  void reset_pairs() {
    own_idx_.clear();
    other_idx_.clear();
  }
  std::size_t add_pair(std::uint32_t own_row, std::uint32_t other_row) {
    own_idx_.push_back(own_row);
    other_idx_.push_back(other_row);
    return own_idx_.size() - 1;
  }
  std::size_t num_pairs() const { return own_idx_.size(); }
  std::uint32_t other_row(std::size_t pair) const { return other_idx_[pair]; }
  void evaluate(int own_side, const ColumnBatch& own, const ColumnBatch& other);
  bool matches(std::size_t pair) const { return all_match_ || ((mask_[pair >> 6] >> (pair & 63)) & 1); }

  // Emission, in order: a candidate pair, a row of side `side` padded with NULLs. The
  // pairs' columns are gathered from the two sides' batches in one pass per column (before
  // the next evaluate(), padded row or flush), not copied pair by pair.
  void emit_pair(std::size_t pair, RowKind kind, EventTime t = kNoEventTime) {
    ensure_out();
    emitted_[own_side_].push_back(own_idx_[pair]);
    emitted_[1 - own_side_].push_back(other_idx_[pair]);
    out_->row_kinds().push_back(kind);
    out_->event_times().push_back(t);
  }
  void emit_padded(int side, const ColumnBatch& batch, std::size_t row, RowKind kind, EventTime t = kNoEventTime);
  std::size_t pending() const { return out_ ? out_->size() : 0; }
  // Sends the rows emitted so far (if any) to `output`.
  void flush(Output& output);
  // Appends the columns of the pairs emitted since the last call to the output (whose
  // kinds and times are already there).
  void gather_emitted_pairs();

 private:
  void ensure_out();

  const JoinSpec& spec_;
  std::optional<CompiledPredicate> residual_;
  std::vector<std::size_t> residual_columns_;  // of pair_schema: the only ones pairs_ fills
  std::vector<std::uint32_t> own_idx_, other_idx_;
  ColumnBatch pairs_;  // the candidate pairs' residual columns
  std::vector<std::uint64_t> mask_;
  bool all_match_ = true;
  int own_side_ = 0;
  const ColumnBatch* side_batch_[2] = {nullptr, nullptr};  // left, right: of the last evaluate()
  std::unique_ptr<ColumnBatch> out_;
  std::vector<std::uint32_t> emitted_[2];  // left, right rows of out_'s last rows, not yet gathered
};

}  // namespace clink::sql
