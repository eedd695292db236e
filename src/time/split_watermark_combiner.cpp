#include "clink/time/split_watermark_combiner.hpp"

#include <algorithm>

namespace clink {

void SplitWatermarkCombiner::set_splits(const std::vector<std::uint64_t>& splits, std::int64_t now_ms) {
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
  cached_ = nullptr;
}

std::optional<Watermark> SplitWatermarkCombiner::poll(std::int64_t now_ms) {
  const std::int64_t timeout = idle_timeout_ms_;
  if (!dirty_ && timeout <= 0) return std::nullopt;
  if (interval_ms_ > 0 && now_ms - last_emit_ms_ < interval_ms_) return std::nullopt;
  EventTime combined = kMaxEventTime;
  EventTime just_idle = kMaxEventTime;  // over the splits with records that went idle now
  bool any_active = false;
  for (auto& [id, s] : splits_) {
    const bool was_idle = s.idle;
    s.idle = timeout > 0 && now_ms - s.last_active_ms >= timeout;
    if (s.idle) {
      if (!was_idle && s.watermark > kMinEventTime) just_idle = std::min(just_idle, s.watermark);
      continue;
    }
    any_active = true;
    combined = std::min(combined, s.watermark);
  }
  dirty_ = false;
  if (!any_active && just_idle != kMaxEventTime && just_idle > emitted_) {
    emitted_ = just_idle;  // the source goes idle at the next poll
    idle_ = false;
    dirty_ = true;
    last_emit_ms_ = now_ms;
    return Watermark::at(emitted_);
  }
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

}  // namespace clink
