#pragma once
// "watermark_assigner": passes event-time records through and generates watermarks
// with Flink's BoundedOutOfOrderness rule, W = maxSeenTimestamp - bound - 1, emitted
// after each batch when it advanced. Upstream watermarks are swallowed, except the
// final Watermark::max() at the end of a bounded input, which is forwarded.
//
// A minimal assigner: watermark strategies (monotonic, custom generators, periodic
// emission) and idleness arrive with the watermark issue and grow here.
#include <cstdint>
#include <string>

#include "clink/core/error.hpp"
#include "clink/time/window_arithmetic.hpp"
#include "clink/runtime/operator.hpp"

namespace clink {

// W for the bound, saturating; INT64_MIN before any record.
inline EventTime bounded_out_of_orderness_watermark(EventTime max_seen, std::int64_t bound) {
  if (max_seen == kMinEventTime) return kMinEventTime;
  return sat_sub(sat_sub(max_seen, bound), 1);
}

template <class T>
class WatermarkAssignerOperator final : public StreamOperator {
 public:
  explicit WatermarkAssignerOperator(std::int64_t out_of_orderness_ms) : bound_(out_of_orderness_ms) {}

  void process_batch(int, BatchPtr batch) override {
    const auto& recs = batch_cast<T>(*batch).records;
    if (recs.empty()) return;
    for (const auto& r : recs) {
      if (!r.has_event_time()) fail_no_event_time();
      if (r.event_time > max_seen_) max_seen_ = r.event_time;
    }
    output().emit(std::move(batch));
    EventTime wm = bounded_out_of_orderness_watermark(max_seen_, bound_);
    if (wm > emitted_) {
      emitted_ = wm;
      output().emit_watermark(Watermark::at(wm));
    }
  }

  void process_watermark(Watermark wm) override {
    // Only the end of a bounded input gets through: it closes every open window.
    if (wm.is_max() && emitted_ != kMaxEventTime) {
      emitted_ = kMaxEventTime;
      output().emit_watermark(wm);
    }
  }

  EventTime current_watermark() const { return emitted_; }

 private:
  [[noreturn]] void fail_no_event_time() {
    // The task names the operator and subtask when it reports the failure.
    throw ClinkError("watermark_assigner: record has no event time; did you forget to give the source event time "
                     "(the event_time_* options, e.g. datagen's event_time_start_ms and "
                     "event_time_step_ms)?");
  }

  std::int64_t bound_;
  EventTime max_seen_ = kMinEventTime;
  EventTime emitted_ = kMinEventTime;
};

}  // namespace clink
