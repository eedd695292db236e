#include "clink/operators/event_time_count.hpp"

#include "clink/core/error.hpp"
#include "clink/runtime/lateness.hpp"
#include "clink/time/window_arithmetic.hpp"

namespace clink {

EventTimeCountFunction::EventTimeCountFunction(std::int64_t size_ms) : size_(size_ms) {
  if (size_ <= 0) throw ClinkError("event_time_count: size_ms must be positive");
}

void EventTimeCountFunction::open(RuntimeContext& rc) {
  backend_ = rc.keyed_state_backend();
  count_ = &keyed_state_store(rc).get_state(ValueStateDescriptor<std::int64_t>{"count"});
}

void EventTimeCountFunction::set_bucket(std::int64_t start) {
  ns_.clear();
  KeyCodec<std::int64_t>::encode(start, ns_);
  backend_->set_current_namespace(ns_);
}

void EventTimeCountFunction::process_element(const Event&, Context& ctx, Collector<WindowCount>&) {
  EventTime ts = ctx.timestamp();
  if (ts == kNoEventTime) {
    throw ClinkError("event_time_count: record has no event time; did you forget a watermark_assigner after a source "
                     "with event time (the event_time_* options)?");
  }
  std::int64_t start = window_start_for(ts, size_);
  std::int64_t fire_at = window_max_timestamp_for(start, size_);
  auto& timers = ctx.timer_service();
  if (fire_at <= lateness_watermark(ctx.runtime_context())) {
    // The bucket already fired: late, dropped (allowed lateness 0).
    ctx.runtime_context().metrics().late_records_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  set_bucket(start);
  count_->update(count_->value().value_or(0) + 1);
  timers.register_event_time_timer(fire_at);
}

void EventTimeCountFunction::on_timer(std::int64_t timestamp, OnTimerContext& ctx, Collector<WindowCount>& out) {
  // One timer per (key, bucket), at the bucket's last millisecond.
  std::int64_t start = window_start_for(timestamp, size_);
  set_bucket(start);
  auto count = count_->value();
  if (!count) return;
  out.collect(WindowCount{ctx.current_key(), start, *count});
  count_->clear();
}

}  // namespace clink
