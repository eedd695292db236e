#pragma once
#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace clink {

// Time a task spends working or blocked on a full output channel. Shared by the
// operators chained into that task (as in Flink, busy and backpressured time are task
// properties, reported on every operator of the chain).
struct TaskTimeMetrics {
  std::atomic<std::int64_t> busy_ns{0};
  std::atomic<std::int64_t> backpressured_ns{0};
  std::atomic<std::int64_t> idle_ns{0};
};

// Counters of one operator subtask. Updated per batch by the runtime, read by anyone.
struct OperatorMetrics {
  std::string operator_id;
  int subtask = 0;
  std::atomic<std::int64_t> records_in{0};
  std::atomic<std::int64_t> records_out{0};
  std::atomic<std::int64_t> batches_in{0};
  std::atomic<std::int64_t> batches_out{0};
  std::atomic<std::int64_t> late_records_dropped{0};  // numLateRecordsDropped
  std::atomic<std::int64_t> dead_letters{0};
  // Flink's numBytesIn / numBytesOut: bytes of the batches this operator received from /
  // sent to network channels (serialized size; 0 over in-process channels, which move
  // batches without serializing them). A source's numBytesIn is FLIP-33's: the bytes it
  // read from outside (the filesystem source: of its files, set after each batch).
  std::atomic<std::int64_t> bytes_in{0};
  std::atomic<std::int64_t> bytes_out{0};
  // Flink's pendingRecords / pendingBytes of a source (FLIP-33): records / bytes it knows
  // are left to read; -1 when the source cannot tell. Set by the source, at most once per
  // batch.
  std::atomic<std::int64_t> pending_records{-1};
  std::atomic<std::int64_t> pending_bytes{-1};
  // The Kafka source's KafkaSourceReader.KafkaConsumer.records-lag-max: the largest
  // (high watermark - next offset) over the partitions it reads; -1 until it knows.
  std::atomic<std::int64_t> records_lag_max{-1};
  // Flink's currentInputWatermark (what the operator's inputs delivered) and
  // currentOutputWatermark (what it emitted); the minimum value until the first one.
  std::atomic<std::int64_t> input_watermark{std::numeric_limits<std::int64_t>::min()};
  std::atomic<std::int64_t> output_watermark{std::numeric_limits<std::int64_t>::min()};
  std::shared_ptr<TaskTimeMetrics> task_time;

  // Dead letters by reason ("parse-error", "missing-field", "late-record"): counted once
  // per batch of dead letters, so a mutex is cheap enough. Adds to dead_letters unless
  // the records were dropped on purpose (a format told to ignore parse errors).
  void count_dead_letters(const std::string& reason, std::int64_t n, bool dead_letter = true) {
    if (dead_letter) dead_letters.fetch_add(n, std::memory_order_relaxed);
    std::lock_guard lock(reasons_mu_);
    dead_letter_reasons_[reason] += n;
  }
  std::map<std::string, std::int64_t> dead_letters_by_reason() const {
    std::lock_guard lock(reasons_mu_);
    return dead_letter_reasons_;
  }

  void count_in(std::size_t records) {
    records_in.fetch_add(static_cast<std::int64_t>(records), std::memory_order_relaxed);
    batches_in.fetch_add(1, std::memory_order_relaxed);
  }
  void count_out(std::size_t records) {
    records_out.fetch_add(static_cast<std::int64_t>(records), std::memory_order_relaxed);
    batches_out.fetch_add(1, std::memory_order_relaxed);
  }

 private:
  mutable std::mutex reasons_mu_;
  std::map<std::string, std::int64_t> dead_letter_reasons_;
};

// A plain snapshot of one operator subtask's metrics.
struct OperatorMetricsSnapshot {
  std::string operator_id;
  int subtask = 0;
  std::int64_t records_in = 0, records_out = 0, batches_in = 0, batches_out = 0;
  std::int64_t late_records_dropped = 0, dead_letters = 0;
  std::int64_t bytes_in = 0, bytes_out = 0, pending_records = -1, pending_bytes = -1, records_lag_max = -1;
  std::map<std::string, std::int64_t> dead_letters_by_reason;
  std::int64_t busy_ns = 0, backpressured_ns = 0, idle_ns = 0;
  std::int64_t input_watermark = std::numeric_limits<std::int64_t>::min();
  std::int64_t output_watermark = std::numeric_limits<std::int64_t>::min();
};

// All metrics of one job, by (operator id, subtask). Later exposed over Prometheus
// and the web UI.
class MetricRegistry {
 public:
  std::shared_ptr<OperatorMetrics> operator_metrics(const std::string& operator_id, int subtask,
                                                    std::shared_ptr<TaskTimeMetrics> task_time);
  std::vector<OperatorMetricsSnapshot> snapshot() const;
  // Sum over subtasks of one operator.
  OperatorMetricsSnapshot total(const std::string& operator_id) const;

  // Flink's MeterView: the per-second rate of the counter `key` (any name the reader
  // picks, e.g. "op/3/numRecordsOut") over the last 60 s, from samples taken when it is
  // read (at most one a second), so nothing is computed on the hot path. 0 until two
  // samples a second or more apart exist.
  double rate(const std::string& key, double value, std::int64_t now_ms) const;

 private:
  struct Samples;
  mutable std::mutex rates_mu_;
  mutable std::map<std::string, std::shared_ptr<Samples>> rates_;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, std::shared_ptr<OperatorMetrics>> ops_;
};

}  // namespace clink
