#include "clink/connectors/sql/sql_source.hpp"

#include "clink/api/source.hpp"
#include "clink/checkpoint/operator_state.hpp"
#include "clink/connectors/dead_letter.hpp"
#include "clink/connectors/sql/sql_dead_letters.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/runtime_context.hpp"

namespace clink::sql {

void SqlSourceOperator::open(RuntimeContext& ctx) {
  SourceOperator::open(ctx);
  reader_ = source_->create_reader(ctx.subtask_index(), ctx.parallelism());
  reader_->open(ctx);
  if (watermark_spec_) watermarks_ = std::make_unique<SplitWatermarks>(watermark_spec_);
  auto restored = SourceSplitState::restored(ctx);
  if (restored.shared) reader_->restore_shared(std::move(*restored.shared));
  if (restored.splits) reader_->restore_splits(std::move(*restored.splits));
}

void SqlSourceOperator::snapshot_state(std::int64_t checkpoint_id) {
  SourceSplitState::snapshot(ctx(), reader_->snapshot_splits(), reader_->snapshot_shared());
  reader_->snapshot_taken(checkpoint_id);
}

SourceOperator::PollStatus SqlSourceOperator::poll_next() {
  auto batch = std::make_unique<ColumnBatch>(source_->output_schema(), batch_size_);
  PollStatus s = reader_->poll(*batch, batch_size_);
  if (watermarks_) {
    const std::int64_t now = ctx().timer_service().current_processing_time();
    watermarks_->set_splits(reader_->held_splits(), now);
    watermarks_->on_batch(*batch, reader_->row_splits(), now);
    if (watermark_spec_->bounds_assigner) {  // the bound for the assigner's rows: before them
      if (auto wm = watermarks_->poll(now)) output().emit_watermark(*wm);
      if (batch->size() > 0) output().emit(std::move(batch));
      return s;
    }
    if (batch->size() > 0) output().emit(std::move(batch));
    if (auto wm = watermarks_->poll(now)) output().emit_watermark(*wm);
    return s;
  }
  if (batch->size() > 0) output().emit(std::move(batch));
  return s;
}

// ---- dead letters -----------------------------------------------------------------------

// dead_letter_schema() is defined once, in src/sql/spec/sql_op_spec.cpp (both headers declare it).

void DeadLetterCollector::add(std::string_view code, std::string_view detail, std::string_view origin,
                              std::string_view position, std::string_view payload) {
  if (!batch_) batch_ = std::make_unique<ColumnBatch>(dead_letter_schema());
  scratch_.assign(code);
  scratch_ += ": ";
  scratch_ += detail;
  batch_->column(0).append_string(scratch_);
  batch_->column(1).append_string(origin);
  batch_->column(2).append_string(position);
  batch_->column(3).append_string(payload);
  batch_->commit_rows(1);
  for (auto& [c, n] : counts_)
    if (c == code) {
      ++n;
      return;
    }
  counts_.emplace_back(std::string(code), 1);
}

void DeadLetterCollector::flush(RuntimeContext& ctx) {
  if (empty()) return;
  for (const auto& [code, n] : counts_) ctx.metrics().count_dead_letters(code, n);
  counts_.clear();
  ctx.output().emit_side(kDeadLetterTag, std::move(batch_));
  batch_.reset();
}

std::string_view dead_letter_code_of(std::string_view message) {
  return message.starts_with("missing field") ? "missing-field" : "parse-error";
}

}  // namespace clink::sql
