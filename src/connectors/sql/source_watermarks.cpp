#include "clink/connectors/sql/source_watermarks.hpp"

#include "clink/core/error.hpp"
#include "clink/sql/expression/expr_compiler.hpp"

namespace clink::sql {

namespace {
EventTime micros_to_millis(std::int64_t us) { return us >= 0 ? us / 1000 : -((-us + 999) / 1000); }
}  // namespace

SplitWatermarks::SplitWatermarks(std::shared_ptr<const SourceWatermarkSpec> spec)
    : spec_(std::move(spec)),
      watermark_(std::make_unique<CompiledExpr>(spec_->watermark, spec_->session)),
      rowtime_(std::make_unique<CompiledExpr>(spec_->rowtime, spec_->session)),
      combiner_(spec_->idle_timeout_ms, spec_->interval_ms, 0) {}

SplitWatermarks::~SplitWatermarks() = default;

void SplitWatermarks::set_splits(const std::vector<std::uint64_t>& splits, std::int64_t now_ms) {
  combiner_.set_splits(splits, now_ms);
}

void SplitWatermarks::on_batch(ColumnBatch& batch, const std::vector<std::uint64_t>& row_splits, std::int64_t now_ms) {
  const std::size_t n = batch.size();
  if (n == 0) return;
  const Column& rt = rowtime_->evaluate(batch);
  for (std::size_t r = 0; r < n; ++r) {
    if (rt.is_null(r)) throw ClinkError("the rowtime of a row is NULL (a rowtime attribute must not be NULL)");
    batch.event_times()[r] = micros_to_millis(rt.values<std::int64_t>()[r]);
  }
  const Column& w = watermark_->evaluate(batch);
  for (std::size_t r = 0; r < n; ++r) {
    const std::uint64_t split = row_splits.empty() ? 0 : row_splits[r];
    combiner_.advance(split, w.is_valid(r) ? micros_to_millis(w.values<std::int64_t>()[r]) : kMinEventTime, now_ms);
  }
}

std::optional<Watermark> SplitWatermarks::poll(std::int64_t now_ms) { return combiner_.poll(now_ms); }

}  // namespace clink::sql
