#pragma once
// Internal: the mini-batch of the regular join (sql_join with mini_batch_size; Flink's
// MiniBatchStreamingJoinOperator, FLIP-415). Each side's rows are buffered, in arrival
// order, until the mini-batch ends; then a row and an earlier row of the same side with
// the same values (row kind erased) and the opposite kind (accumulate +I/+U against
// retract -U/-D) cancel out, the last such earlier row first (Flink's
// InputSideHasNoUniqueKeyBundle; clink derives no unique keys, so it never uses Flink's
// JoinKeyContainsUniqueKeyBundle / InputSideHasUniqueKeyBundle, which fold by unique key:
// their changelog can differ in row kinds, never in the final table). An insert-only side
// has nothing to fold and is passed on as buffered.
// The mini-batch counts both sides' rows as they arrive (folded ones included), as
// Flink's CountCoBundleTrigger does.
#include <cstdint>
#include <string>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "sql_join_common.hpp"

namespace clink::sql {

class JoinMiniBatch {
 public:
  JoinMiniBatch(const JoinSpec& spec, std::int64_t size, const bool insert_only[2]);

  // Rows the mini-batch takes before it is full.
  std::size_t room() const { return static_cast<std::size_t>(size_ - count_); }
  bool full() const { return count_ >= size_; }
  bool empty() const { return count_ == 0; }
  // Buffers rows [from, to) of `in`, from side `side`.
  void add(int side, const ColumnBatch& in, std::size_t from, std::size_t to);
  // Side `side`'s rows left after folding, in arrival order (null when none); that side's
  // buffer is emptied and the count restarts (end_mini_batch takes both sides at once).
  std::unique_ptr<ColumnBatch> take(int side);

 private:
  struct Side {
    std::unique_ptr<ColumnBatch> rows;
    bool fold = false;
    std::string bytes;              // fold: every buffered row's values (SideRowCodec)
    std::vector<std::size_t> ends;  // fold: the end of each row's bytes
  };
  // Marks the rows that cancel out; returns how many remain.
  std::size_t fold(const Side& s, const ColumnBatch& rows);

  const JoinSpec& spec_;
  const std::int64_t size_;
  std::int64_t count_ = 0;
  Side side_[2];
  SideRowCodec codec_[2];
  std::vector<std::uint32_t> idx_;
  // fold(): per distinct row, its last remaining buffered row (-1: none); per row the
  // remaining row with its values before it.
  absl::flat_hash_map<std::string_view, std::int32_t> last_;
  std::vector<std::int32_t> previous_;
  std::vector<bool> cancelled_;
};

}  // namespace clink::sql
