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
// Not done yet: watermark alignment groups (with_watermark_alignment across sources).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/runtime/operator.hpp"
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

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    last_activity_ = now();
    if (idleness_ms() > 0) arm_probe();
  }

  void process_batch(int, BatchPtr batch) override {
    auto& recs = batch_cast<T>(*batch).records;
    if (recs.empty()) return;
    const auto& assign = strategy_->timestamp_assigner();
    for (auto& r : recs) {
      if (assign) r.event_time = assign(r.value, r.event_time);
      if (!r.has_event_time()) fail_no_event_time();
      strategy_->on_record(r);
    }
    if (idleness_ms() > 0) last_activity_ = now();
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
      idle_ = true;
      output().emit_watermark(Watermark::idle_marker(emitted_));
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
    if (advanced) emitted_ = *advanced;
    if (strategy_->all_idle()) {
      if (!idle_) {
        idle_ = true;
        output().emit_watermark(Watermark::idle_marker(emitted_));
      }
      return;
    }
    if (advanced || idle_) {
      idle_ = false;  // back from idle: a non-idle watermark, even if it did not advance
      output().emit_watermark(Watermark::at(emitted_));
    }
  }

  void emit_final() {
    if (finished_) return;
    finished_ = true;
    idle_ = false;
    emitted_ = kMaxEventTime;
    output().emit_watermark(Watermark::max());
  }

  [[noreturn]] void fail_no_event_time() {
    // The task names the operator and subtask when it reports the failure.
    throw ClinkError("watermark_assigner: record has no event time; did you forget to give the source event time "
                     "(the event_time_* options, e.g. datagen's event_time_start_ms and "
                     "event_time_step_ms) or the strategy a timestamp assigner?");
  }

  std::unique_ptr<WatermarkStrategy<T>> strategy_;
  EventTime emitted_ = kMinEventTime;
  std::int64_t last_activity_ = 0;
  bool idle_ = false;
  bool finished_ = false;
};

// The spec params of a built-in strategy (what the "watermark_assigner" factory reads);
// a timestamp assigner is code and has no spec form.
template <class T>
nlohmann::json watermark_strategy_params(const WatermarkStrategy<T>& s) {
  nlohmann::json p = nlohmann::json::object();
  if (dynamic_cast<const MonotonicWatermarkStrategy<T>*>(&s)) {
    p["strategy"] = "monotonic";
  } else if (auto* b = dynamic_cast<const BoundedOutOfOrdernessStrategy<T>*>(&s)) {
    p["out_of_orderness_ms"] = b->bound();
  } else if (auto* pa = dynamic_cast<const PartitionAwareBoundedOutOfOrdernessStrategy<T>*>(&s)) {
    p["strategy"] = "partition_aware";
    p["out_of_orderness_ms"] = pa->bound();
  }
  if (s.idleness_ms() > 0) p["idleness_ms"] = s.idleness_ms();
  return p;
}

}  // namespace clink
