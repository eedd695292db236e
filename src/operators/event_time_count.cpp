#include "clink/operators/event_time_count.hpp"

#include "clink/core/error.hpp"
#include "clink/time/window_arithmetic.hpp"

namespace clink {

EventTimeCountFunction::EventTimeCountFunction(std::int64_t size_ms) : size_(size_ms) {
  if (size_ <= 0) throw ClinkError("event_time_count: size_ms must be positive");
}

void EventTimeCountFunction::process_element(const Event& value, Context& ctx, Collector<WindowCount>&) {
  EventTime ts = ctx.timestamp();
  if (ts == kNoEventTime) {
    throw ClinkError("event_time_count: record has no event time; did you forget a watermark_assigner after a source "
                     "with event time (the event_time_* options)?");
  }
  std::int64_t start = window_start_for(ts, size_);
  std::int64_t fire_at = window_max_timestamp_for(start, size_);
  auto& timers = ctx.timer_service();
  if (fire_at <= timers.current_watermark()) {
    // The bucket already fired: late, dropped (allowed lateness 0).
    ctx.runtime_context().metrics().late_records_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  ++counts_[value.key][start];
  timers.register_event_time_timer(fire_at);
}

void EventTimeCountFunction::on_timer(std::int64_t timestamp, OnTimerContext& ctx, Collector<WindowCount>& out) {
  auto it = counts_.find(ctx.current_key());
  if (it == counts_.end()) return;
  auto& buckets = it->second;
  while (!buckets.empty() && window_max_timestamp_for(buckets.begin()->first, size_) <= timestamp) {
    out.collect(WindowCount{it->first, buckets.begin()->first, buckets.begin()->second});
    buckets.erase(buckets.begin());
  }
  if (buckets.empty()) counts_.erase(it);
}

}  // namespace clink
