#include "clink/metrics/metric_registry.hpp"

#include <deque>

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
  s.bytes_in = m.bytes_in.load(std::memory_order_relaxed);
  s.bytes_out = m.bytes_out.load(std::memory_order_relaxed);
  s.pending_records = m.pending_records.load(std::memory_order_relaxed);
  s.pending_bytes = m.pending_bytes.load(std::memory_order_relaxed);
  s.records_lag_max = m.records_lag_max.load(std::memory_order_relaxed);
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
    t.bytes_in += s.bytes_in;
    t.bytes_out += s.bytes_out;
    for (const auto& [reason, n] : s.dead_letters_by_reason) t.dead_letters_by_reason[reason] += n;
    t.busy_ns += s.busy_ns;
    t.backpressured_ns += s.backpressured_ns;
    t.idle_ns += s.idle_ns;
  }
  return t;
}

// The samples of one rate: (time, value), oldest first, spanning at most the window.
struct MetricRegistry::Samples {
  std::deque<std::pair<std::int64_t, double>> points;
};

double MetricRegistry::rate(const std::string& key, double value, std::int64_t now_ms) const {
  constexpr std::int64_t kWindowMs = 60'000;  // Flink's MeterView default time span
  constexpr std::int64_t kMinStepMs = 1'000;
  std::lock_guard lock(rates_mu_);
  auto& slot = rates_[key];
  if (!slot) slot = std::make_shared<Samples>();
  auto& p = slot->points;
  if (!p.empty() && value < p.back().second) p.clear();  // the counter restarted (a new attempt)
  if (p.empty() || now_ms - p.back().first >= kMinStepMs) p.emplace_back(now_ms, value);
  // Keep one sample at or before the window's start, so the rate spans the whole window.
  while (p.size() > 2 && now_ms - p[1].first >= kWindowMs) p.pop_front();
  const auto& [t0, v0] = p.front();
  if (now_ms - t0 < kMinStepMs) return 0;
  return (value - v0) * 1000.0 / static_cast<double>(now_ms - t0);
}

}  // namespace clink
