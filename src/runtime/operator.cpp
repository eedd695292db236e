#include "clink/runtime/operator.hpp"

#include "clink/core/error.hpp"

namespace clink {

void StreamOperator::process_watermark(Watermark wm) {
  if (!wm.idle) {
    ctx().timer_service().advance_watermark(wm.timestamp, [this](const Timer& t) { on_event_time_timer(t); });
  }
  output().emit_watermark(wm);
}

void StreamOperator::process_processing_time(std::int64_t now) {
  ctx().timer_service().advance_processing_time(now, [this](const Timer& t) { on_processing_time_timer(t); });
}

void SourceOperator::process_batch(int, BatchPtr) {
  throw ClinkError("a source has no inputs");
}

std::string RuntimeContext::task_name() const {
  return operator_name_ + " (" + std::to_string(subtask_ + 1) + "/" + std::to_string(parallelism_) + ")";
}

}  // namespace clink
