#include "clink/metrics/metric_registry.hpp"

namespace clink {

std::shared_ptr<OperatorMetrics> MetricRegistry::operator_metrics(const std::string& operator_id, int subtask,
                                                                  std::shared_ptr<TaskTimeMetrics> task_time) {
  std::lock_guard lock(mu_);
  auto& slot = ops_[{operator_id, subtask}];
  if (!slot) {
    slot = std::make_shared<OperatorMetrics>();
    slot->operator_id = operator_id;
    slot->subtask = subtask;
  }
  slot->task_time = std::move(task_time);
  return slot;
}

static OperatorMetricsSnapshot snap(const OperatorMetrics& m) {
  OperatorMetricsSnapshot s;
  s.operator_id = m.operator_id;
  s.subtask = m.subtask;
  s.records_in = m.records_in.load(std::memory_order_relaxed);
  s.records_out = m.records_out.load(std::memory_order_relaxed);
  s.batches_in = m.batches_in.load(std::memory_order_relaxed);
  s.batches_out = m.batches_out.load(std::memory_order_relaxed);
  s.late_records_dropped = m.late_records_dropped.load(std::memory_order_relaxed);
  s.dead_letters = m.dead_letters.load(std::memory_order_relaxed);
  s.dead_letters_by_reason = m.dead_letters_by_reason();
  s.input_watermark = m.input_watermark.load(std::memory_order_relaxed);
  s.output_watermark = m.output_watermark.load(std::memory_order_relaxed);
  if (m.task_time) {
    s.busy_ns = m.task_time->busy_ns.load(std::memory_order_relaxed);
    s.backpressured_ns = m.task_time->backpressured_ns.load(std::memory_order_relaxed);
    s.idle_ns = m.task_time->idle_ns.load(std::memory_order_relaxed);
  }
  return s;
}

std::vector<OperatorMetricsSnapshot> MetricRegistry::snapshot() const {
  std::lock_guard lock(mu_);
  std::vector<OperatorMetricsSnapshot> out;
  for (const auto& [k, m] : ops_) out.push_back(snap(*m));
  return out;
}

OperatorMetricsSnapshot MetricRegistry::total(const std::string& operator_id) const {
  OperatorMetricsSnapshot t;
  t.operator_id = operator_id;
  t.subtask = -1;
  for (const auto& s : snapshot()) {
    if (s.operator_id != operator_id) continue;
    t.records_in += s.records_in;
    t.records_out += s.records_out;
    t.batches_in += s.batches_in;
    t.batches_out += s.batches_out;
    t.late_records_dropped += s.late_records_dropped;
    t.dead_letters += s.dead_letters;
    for (const auto& [reason, n] : s.dead_letters_by_reason) t.dead_letters_by_reason[reason] += n;
    t.busy_ns += s.busy_ns;
    t.backpressured_ns += s.backpressured_ns;
    t.idle_ns += s.idle_ns;
  }
  return t;
}

}  // namespace clink
