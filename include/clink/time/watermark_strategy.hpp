#pragma once
// Watermark strategies (Flink's WatermarkStrategy / WatermarkGenerator): purely
// observational. on_record() sees every record (its event time already stamped);
// current_watermark() reports the watermark when it advanced since the last query.
// The WatermarkAssignerOperator is the only component that emits watermarks.
//
// Rules (SEMANTICS.md): Monotonic W = maxSeen - 1; BoundedOutOfOrderness(b)
// W = maxSeen - b - 1; before any record W = INT64_MIN; a watermark never regresses.
// Arithmetic saturates at the int64 limits.
//
// A strategy also carries how the assigner applies it (Flink's fluent
// withTimestampAssigner / withIdleness):
//   assign_timestamps_and_watermarks(stream,
//       BoundedOutOfOrdernessStrategy<Event>(5000)
//           .with_timestamp_assigner([](const Event& e, EventTime) { return e.ts; })
//           .with_idleness(60000));
#include <cstdint>
#include <string>

#include "clink/time/alignment_group.hpp"
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "clink/core/error.hpp"
#include "clink/core/record.hpp"
#include "clink/core/watermark.hpp"
#include "clink/time/window_arithmetic.hpp"

namespace clink {

// W for a bound, saturating; INT64_MIN before any record (max_seen == INT64_MIN).
inline EventTime bounded_out_of_orderness_watermark(EventTime max_seen, std::int64_t bound) {
  if (max_seen == kMinEventTime) return kMinEventTime;
  return sat_sub(sat_sub(max_seen, bound), 1);
}

template <class T>
class WatermarkStrategy {
 public:
  // (value, the record's current event time) -> event time. Flink's TimestampAssigner.
  using TimestampAssigner = std::function<EventTime(const T& value, EventTime record_timestamp)>;

  virtual ~WatermarkStrategy() = default;
  // A fresh copy with the same configuration: each parallel assigner owns one.
  virtual std::unique_ptr<WatermarkStrategy<T>> clone() const = 0;
  // Observes a record whose event time is set.
  virtual void on_record(const Record<T>& record) = 0;
  // True when every input the strategy tracks is idle (only per-partition strategies).
  virtual bool all_idle() const { return false; }

  // The watermark now (INT64_MIN before any record), never below one already reported.
  EventTime watermark() const {
    EventTime w = compute();
    return w > reported_ ? w : reported_;
  }
  // The watermark if it advanced since the last query, else nullopt.
  std::optional<EventTime> current_watermark() {
    EventTime w = compute();
    if (w <= reported_) return std::nullopt;
    reported_ = w;
    return w;
  }

  // ---- how the assigner applies the strategy ----
  WatermarkStrategy& with_timestamp_assigner(TimestampAssigner fn) {
    timestamp_assigner_ = std::move(fn);
    return *this;
  }
  // Mark the stream idle when no record arrived for `ms` of processing time.
  WatermarkStrategy& with_idleness(std::int64_t ms) {
    if (ms <= 0) throw ClinkError("with_idleness: the idle timeout must be positive, got " + std::to_string(ms));
    idleness_ms_ = ms;
    return *this;
  }
  // Join alignment group `group`: hold back input while this watermark is more than
  // max_drift_ms ahead of the group's slowest member (waiting at most max_wait_ms per
  // batch). Flink's withWatermarkAlignment.
  WatermarkStrategy& with_watermark_alignment(std::string group, std::int64_t max_drift_ms,
                                              std::int64_t max_wait_ms = 1000) {
    if (group.empty()) throw ClinkError("with_watermark_alignment: the group needs a name");
    if (max_drift_ms < 0 || max_wait_ms <= 0)
      throw ClinkError("with_watermark_alignment: max drift must be >= 0 and max wait > 0");
    alignment_ = WatermarkAlignment{std::move(group), max_drift_ms, max_wait_ms};
    return *this;
  }
  const TimestampAssigner& timestamp_assigner() const { return timestamp_assigner_; }
  std::int64_t idleness_ms() const { return idleness_ms_; }  // 0: never idle
  const WatermarkAlignment& alignment() const { return alignment_; }

 protected:
  // The unclamped watermark from what the strategy has seen.
  virtual EventTime compute() const = 0;

 private:
  EventTime reported_ = kMinEventTime;
  TimestampAssigner timestamp_assigner_;
  std::int64_t idleness_ms_ = 0;
  WatermarkAlignment alignment_;
};

// W = maxSeen - 1 (Flink's forMonotonousTimestamps): for strictly ascending input.
template <class T>
class MonotonicWatermarkStrategy final : public WatermarkStrategy<T> {
 public:
  std::unique_ptr<WatermarkStrategy<T>> clone() const override {
    return std::make_unique<MonotonicWatermarkStrategy>(*this);
  }
  void on_record(const Record<T>& r) override {
    if (r.event_time > max_seen_) max_seen_ = r.event_time;
  }

 protected:
  EventTime compute() const override { return bounded_out_of_orderness_watermark(max_seen_, 0); }

 private:
  EventTime max_seen_ = kMinEventTime;
};

// W = maxSeen - bound - 1 (Flink's forBoundedOutOfOrderness).
template <class T>
class BoundedOutOfOrdernessStrategy final : public WatermarkStrategy<T> {
 public:
  explicit BoundedOutOfOrdernessStrategy(std::int64_t bound_ms) : bound_(bound_ms) {
    if (bound_ms < 0) throw ClinkError("BoundedOutOfOrdernessStrategy: the bound must be >= 0, got " +
                                       std::to_string(bound_ms));
  }
  std::unique_ptr<WatermarkStrategy<T>> clone() const override {
    return std::make_unique<BoundedOutOfOrdernessStrategy>(*this);
  }
  void on_record(const Record<T>& r) override {
    if (r.event_time > max_seen_) max_seen_ = r.event_time;
  }
  std::int64_t bound() const { return bound_; }

 protected:
  EventTime compute() const override { return bounded_out_of_orderness_watermark(max_seen_, bound_); }

 private:
  std::int64_t bound_;
  EventTime max_seen_ = kMinEventTime;
};

// Tracks maxSeen per Record::partition and emits (min over active partitions) - bound - 1,
// so the watermark moves only as fast as the slowest partition. Records without a
// partition share one bucket, which makes it equal to BoundedOutOfOrderness for an
// unpartitioned source. Partitions named by set_idle_partitions() do not hold the
// minimum back until their next record; when every known partition is idle the
// watermark holds and all_idle() is true.
template <class T>
class PartitionAwareBoundedOutOfOrdernessStrategy final : public WatermarkStrategy<T> {
 public:
  explicit PartitionAwareBoundedOutOfOrdernessStrategy(std::int64_t bound_ms) : bound_(bound_ms) {
    if (bound_ms < 0)
      throw ClinkError("PartitionAwareBoundedOutOfOrdernessStrategy: the bound must be >= 0, got " +
                       std::to_string(bound_ms));
  }
  std::unique_ptr<WatermarkStrategy<T>> clone() const override {
    return std::make_unique<PartitionAwareBoundedOutOfOrdernessStrategy>(*this);
  }
  void on_record(const Record<T>& r) override {
    auto& p = partitions_[r.partition];
    if (r.event_time > p.max_seen) p.max_seen = r.event_time;
    p.idle = false;
  }
  // Replaces the set of idle partitions (e.g. a source's partitions without data).
  // A partition not seen yet is registered as idle.
  void set_idle_partitions(const std::set<PartitionId>& idle) {
    for (auto& [id, p] : partitions_) p.idle = idle.count(id) > 0;
    for (PartitionId id : idle) partitions_[id].idle = true;
  }
  bool all_idle() const override {
    if (partitions_.empty()) return false;
    for (const auto& [id, p] : partitions_)
      if (!p.idle) return false;
    return true;
  }
  std::size_t partition_count() const { return partitions_.size(); }
  std::int64_t bound() const { return bound_; }

 protected:
  EventTime compute() const override {
    bool any = false;
    EventTime min_max = kMaxEventTime;
    for (const auto& [id, p] : partitions_) {
      if (p.idle) continue;
      any = true;
      if (p.max_seen < min_max) min_max = p.max_seen;
    }
    if (!any) return kMinEventTime;  // nothing active: hold (never regresses)
    return bounded_out_of_orderness_watermark(min_max, bound_);
  }

 private:
  struct Partition {
    EventTime max_seen = kMinEventTime;
    bool idle = false;
  };
  std::int64_t bound_;
  std::map<PartitionId, Partition> partitions_;
};

}  // namespace clink
