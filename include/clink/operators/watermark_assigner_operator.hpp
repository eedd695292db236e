#pragma once
// "watermark_assigner" (Flink's assignTimestampsAndWatermarks): a pass-through that
// stamps event time with the strategy's timestamp assigner (if any), feeds every record
// to its WatermarkStrategy, and after each batch emits the strategy's watermark if it
// advanced. Upstream watermarks are swallowed, except the final Watermark::max() at the
// end of a bounded input, which is forwarded (and emitted by finish() if it never came).
//
// Idleness (strategy.with_idleness(d)): a processing-time probe, registered on open()
// and re-armed every d/2, emits an idle marker once no record arrived for d; the next
// record makes the stream active again and its watermark goes out non-idle (even if it
// did not advance), so MultiInputAlignment takes the input back into the minimum.
//
// Checkpoints. Flink does not checkpoint a WatermarkStrategy: after a restore its
// watermark starts again at Long.MIN_VALUE and the replayed records re-establish it.
// Downstream, timers are restored but the current watermark is not, so in Flink a
// record arriving after a restore can be counted into a window that had already fired
// (and fire it twice), and a partition-aware strategy can jump ahead of the slowest
// partition it no longer knows about. clink keeps the exactly-once promise instead:
// each subtask snapshots, into the union operator-state list "watermark-assigner",
// the watermark it last emitted and the max timestamp it saw per source partition.
//  - Same parallelism: a subtask takes back its own entry. The partition maxima are
//    replayed into the strategy (as records carrying only those timestamps), and the
//    restored watermark is emitted again before the first record after the restore,
//    so downstream operators see exactly the watermark they saw at the barrier and
//    every later watermark equals the failure-free run's.
//  - Other parallelism (sources rebalanced): the watermark restarts from the minimum
//    over the old subtasks (never above what any downstream operator had seen), and
//    the strategy starts empty, as in Flink.
// Emitted watermarks never fall below the restored one.
//
// Alignment groups (strategy.with_watermark_alignment): before each batch the assigner
// waits (bounded) while its watermark is more than max_drift ahead of the group's
// slowest member, and publishes every watermark it emits; see time/alignment_group.hpp.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "clink/core/error.hpp"
#include "clink/operators/watermark_strategy_params.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/state/state_codec.hpp"
#include "clink/time/watermark_strategy.hpp"

namespace clink {

template <class T>
class WatermarkAssignerOperator final : public StreamOperator {
 public:
  // Flink's BoundedOutOfOrderness(out_of_orderness_ms).
  explicit WatermarkAssignerOperator(std::int64_t out_of_orderness_ms)
      : strategy_(std::make_unique<BoundedOutOfOrdernessStrategy<T>>(out_of_orderness_ms)) {}
  // Copies the strategy: every parallel instance owns its own.
  explicit WatermarkAssignerOperator(const WatermarkStrategy<T>& strategy) : strategy_(strategy.clone()) {}

  static constexpr const char* kStateName = "watermark-assigner";

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    last_activity_ = now();
    if (ctx.is_restored()) restore();
    // A restored probe timer (checkpointed with the other timers) keeps going.
    if (idleness_ms() > 0 && ctx.timer_service().processing_time_timer_count() == 0) arm_probe();
    if (strategy_->alignment().enabled()) {
      group_ = &AlignmentGroupRegistry::group(strategy_->alignment().group);
      member_ = group_->join();
      group_->publish(member_, emitted_, false);
    }
  }
  void close() override { leave_group(); }

  void snapshot_state(std::int64_t) override {
    std::string item;
    StateCodec<std::int64_t>::encode(ctx().subtask_index(), item);
    StateCodec<std::int64_t>::encode(ctx().parallelism(), item);
    StateCodec<std::int64_t>::encode(emitted_, item);
    StateCodec<std::int64_t>::encode(static_cast<std::int64_t>(partition_max_.size()), item);
    for (const auto& [p, ts] : partition_max_) {
      StateCodec<std::int64_t>::encode(p, item);
      StateCodec<std::int64_t>::encode(ts, item);
    }
    ctx().operator_state().list(kStateName, Redistribution::kUnion).assign(1, std::move(item));
  }

  void process_batch(int, BatchPtr batch) override {
    auto& recs = batch_cast<T>(*batch).records;
    if (recs.empty()) return;
    if (group_) {
      const auto& a = strategy_->alignment();
      group_->wait_until_aligned(emitted_, a.max_drift_ms, a.max_wait_ms);
    }
    const auto& assign = strategy_->timestamp_assigner();
    for (auto& r : recs) {
      if (assign) r.event_time = assign(r.value, r.event_time);
      if (!r.has_event_time()) fail_no_event_time();
      strategy_->on_record(r);
      if (r.partition != cached_partition_ || !cached_max_) {
        cached_max_ = &partition_max_.try_emplace(r.partition, kMinEventTime).first->second;
        cached_partition_ = r.partition;
      }
      if (r.event_time > *cached_max_) *cached_max_ = r.event_time;
    }
    if (idleness_ms() > 0) last_activity_ = now();
    emit_restored();
    output().emit(std::move(batch));
    emit_current();
  }

  void process_watermark(Watermark wm) override {
    // Only the end of a bounded input gets through: it closes every open window.
    if (wm.is_max()) emit_final();
  }

  void on_processing_time_timer(const Timer&) override {
    if (finished_) return;
    std::int64_t t = now();
    if (!idle_ && t - last_activity_ >= idleness_ms()) {
      emit_restored();
      idle_ = true;
      output().emit_watermark(Watermark::idle_marker(emitted_));
      publish();
    }
    arm_probe();
  }

  void finish() override { emit_final(); }

  EventTime current_watermark() const { return emitted_; }
  bool is_idle() const { return idle_; }
  WatermarkStrategy<T>& strategy() { return *strategy_; }

 private:
  std::int64_t idleness_ms() const { return strategy_->idleness_ms(); }
  std::int64_t now() { return ctx().timer_service().current_processing_time(); }
  void arm_probe() {
    ctx().timer_service().register_processing_time_timer(sat_add(now(), std::max<std::int64_t>(1, idleness_ms() / 2)),
                                                         {}, {});
  }

  void emit_current() {
    if (finished_) return;
    auto advanced = strategy_->current_watermark();
    if (advanced && *advanced <= emitted_) advanced.reset();  // below the restored watermark
    if (advanced) emitted_ = *advanced;
    if (strategy_->all_idle()) {
      if (!idle_) {
        idle_ = true;
        output().emit_watermark(Watermark::idle_marker(emitted_));
        publish();
      }
      return;
    }
    if (advanced || idle_) {
      idle_ = false;  // back from idle: a non-idle watermark, even if it did not advance
      output().emit_watermark(Watermark::at(emitted_));
      publish();
    }
  }
  void publish() {
    if (group_) group_->publish(member_, emitted_, idle_);
  }
  void leave_group() {
    if (group_) group_->leave(member_);
    group_ = nullptr;
  }

  void emit_final() {
    if (finished_) return emit_restored();  // restored as finished: its final watermark
    finished_ = true;
    restored_pending_ = false;  // the final watermark supersedes it
    idle_ = false;
    emitted_ = kMaxEventTime;
    output().emit_watermark(Watermark::max());
    leave_group();  // finished: holds nobody back
  }

  // See the header comment: takes back this subtask's entry (same parallelism) or the
  // minimum watermark over all entries (rescaled).
  void restore() {
    struct Entry {
      std::int64_t subtask, parallelism;
      EventTime watermark;
      std::vector<std::pair<std::int64_t, EventTime>> partitions;
    };
    std::vector<Entry> entries;
    for (const std::string& item : ctx().operator_state().list(kStateName, Redistribution::kUnion)) {
      std::string_view in(item);
      Entry e;
      e.subtask = StateCodec<std::int64_t>::decode(in);
      e.parallelism = StateCodec<std::int64_t>::decode(in);
      e.watermark = StateCodec<std::int64_t>::decode(in);
      auto n = StateCodec<std::int64_t>::decode(in);
      for (std::int64_t i = 0; i < n; ++i) {
        auto p = StateCodec<std::int64_t>::decode(in);
        e.partitions.emplace_back(p, StateCodec<std::int64_t>::decode(in));
      }
      entries.push_back(std::move(e));
    }
    if (entries.empty()) return;
    const Entry* own = nullptr;
    for (const auto& e : entries)
      if (e.parallelism == ctx().parallelism() && e.subtask == ctx().subtask_index()) own = &e;
    if (own) {
      if constexpr (std::is_default_constructible_v<T>) {
        for (const auto& [p, ts] : own->partitions) {
          Record<T> r;
          r.event_time = ts;
          r.partition = static_cast<PartitionId>(p);
          strategy_->on_record(r);
          partition_max_[r.partition] = ts;
        }
        (void)strategy_->current_watermark();  // what it reports now was emitted before the checkpoint
      }
      emitted_ = own->watermark;
    } else {
      emitted_ = kMaxEventTime;
      for (const auto& e : entries) emitted_ = std::min(emitted_, e.watermark);
    }
    restored_pending_ = emitted_ != kMinEventTime;
    finished_ = emitted_ == kMaxEventTime;
  }

  // The restored watermark, once, before anything else goes out after a restore.
  void emit_restored() {
    if (!restored_pending_) return;
    restored_pending_ = false;
    output().emit_watermark(Watermark::at(emitted_));
  }

  [[noreturn]] void fail_no_event_time() {
    // The task names the operator and subtask when it reports the failure.
    throw ClinkError("watermark_assigner: record has no event time; did you forget to give the source event time "
                     "(the event_time_* options, e.g. datagen's event_time_start_ms and "
                     "event_time_step_ms) or the strategy a timestamp assigner?");
  }

  std::unique_ptr<WatermarkStrategy<T>> strategy_;
  AlignmentGroup* group_ = nullptr;
  int member_ = -1;
  EventTime emitted_ = kMinEventTime;
  std::int64_t last_activity_ = 0;
  bool idle_ = false;
  bool finished_ = false;
  bool restored_pending_ = false;
  // Max event time seen per source partition (what a checkpoint keeps), with the entry
  // of the last record's partition cached.
  std::map<PartitionId, EventTime> partition_max_;
  PartitionId cached_partition_ = kNoPartition;
  EventTime* cached_max_ = nullptr;
};

// The spec params of a built-in strategy (what the "watermark_assigner" factory reads);
// a timestamp assigner is code and has no spec form.
template <class T>
JsonValue watermark_strategy_params(const WatermarkStrategy<T>& s) {
  using Kind = WatermarkStrategyDescription::Kind;
  WatermarkStrategyDescription d;
  if (dynamic_cast<const MonotonicWatermarkStrategy<T>*>(&s)) {
    d.kind = Kind::kMonotonic;
  } else if (auto* b = dynamic_cast<const BoundedOutOfOrdernessStrategy<T>*>(&s)) {
    d.kind = Kind::kBounded;
    d.out_of_orderness_ms = b->bound();
  } else if (auto* pa = dynamic_cast<const PartitionAwareBoundedOutOfOrdernessStrategy<T>*>(&s)) {
    d.kind = Kind::kPartitionAware;
    d.out_of_orderness_ms = pa->bound();
  }
  d.idleness_ms = s.idleness_ms();
  d.alignment = s.alignment();
  return watermark_strategy_params(d);
}

}  // namespace clink
