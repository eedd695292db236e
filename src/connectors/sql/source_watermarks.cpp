#include "clink/connectors/sql/source_watermarks.hpp"

#include <algorithm>

#include "clink/core/error.hpp"
#include "clink/sql/expression/expr_compiler.hpp"

namespace clink::sql {

namespace {
EventTime micros_to_millis(std::int64_t us) { return us >= 0 ? us / 1000 : -((-us + 999) / 1000); }
}  // namespace

SplitWatermarks::SplitWatermarks(std::shared_ptr<const SourceWatermarkSpec> spec)
    : spec_(std::move(spec)),
      watermark_(std::make_unique<CompiledExpr>(spec_->watermark, spec_->session)),
      rowtime_(std::make_unique<CompiledExpr>(spec_->rowtime, spec_->session)) {}

SplitWatermarks::~SplitWatermarks() = default;

void SplitWatermarks::set_splits(const std::vector<std::uint64_t>& splits, std::int64_t now_ms) {
  // Called every poll: nothing to do (and nothing allocated) while the splits stay.
  if (splits.size() == splits_.size() &&
      std::all_of(splits.begin(), splits.end(), [&](std::uint64_t s) { return splits_.count(s) > 0; }))
    return;
  std::map<std::uint64_t, Split> next;
  for (std::uint64_t s : splits) {
    auto it = splits_.find(s);
    next[s] = it != splits_.end() ? it->second : Split{kMinEventTime, now_ms};
  }
  if (next.size() != splits_.size()) dirty_ = true;
  splits_ = std::move(next);
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
    Split& s = splits_[row_splits.empty() ? 0 : row_splits[r]];
    s.last_active_ms = now_ms;
    if (w.is_valid(r)) s.max = std::max(s.max, micros_to_millis(w.values<std::int64_t>()[r]));
  }
  dirty_ = true;
}

std::optional<Watermark> SplitWatermarks::poll(std::int64_t now_ms) {
  const std::int64_t timeout = spec_->idle_timeout_ms;
  if (!dirty_ && timeout <= 0) return std::nullopt;
  if (spec_->interval_ms > 0 && now_ms - last_emit_ms_ < spec_->interval_ms) return std::nullopt;
  EventTime combined = kMaxEventTime;
  bool any_active = false;
  for (const auto& [id, s] : splits_) {
    if (timeout > 0 && now_ms - s.last_active_ms >= timeout) continue;  // idle
    any_active = true;
    combined = std::min(combined, s.max);
  }
  dirty_ = false;
  if (!any_active) {
    if (idle_ || (splits_.empty() && timeout <= 0)) return std::nullopt;
    idle_ = true;
    last_emit_ms_ = now_ms;
    return Watermark::idle_marker(emitted_);
  }
  if (combined > emitted_) {
    emitted_ = combined;
    idle_ = false;
    last_emit_ms_ = now_ms;
    return Watermark::at(emitted_);
  }
  if (idle_) {  // active again, but behind the watermark emitted: resume at it
    idle_ = false;
    last_emit_ms_ = now_ms;
    return Watermark::at(emitted_);
  }
  return std::nullopt;
}

}  // namespace clink::sql
