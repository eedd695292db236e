#include "clink/runtime/operator.hpp"

#include "clink/core/error.hpp"
#include "clink/state/keyed_state_backend.hpp"

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

RuntimeContext::RuntimeContext(std::string operator_id, std::string operator_name, int subtask, int parallelism,
                               int max_parallelism, Output* output, std::shared_ptr<OperatorMetrics> metrics,
                               const ProcessingTimeClock& clock)
    : operator_id_(std::move(operator_id)),
      operator_name_(std::move(operator_name)),
      subtask_(subtask),
      parallelism_(parallelism),
      max_parallelism_(max_parallelism),
      output_(output),
      metrics_(std::move(metrics)),
      timers_(clock) {}

RuntimeContext::~RuntimeContext() = default;

void RuntimeContext::set_keyed_state_backend(std::unique_ptr<KeyedStateBackend> backend) {
  keyed_backend_ = std::move(backend);
}

KeyedStateBackend* RuntimeContext::keyed_state_backend_or_private() {
  if (!keyed_backend_)
    keyed_backend_ = make_keyed_state_backend(StateBackendConfig{}, operator_id(), subtask_index(), key_groups(),
                                              max_parallelism(), SystemClock::instance());
  return keyed_backend_.get();
}

std::string RuntimeContext::task_name() const {
  return operator_name_ + " (" + std::to_string(subtask_ + 1) + "/" + std::to_string(parallelism_) + ")";
}

}  // namespace clink
