#pragma once
// Triggers decide when a window emits (Flink's Trigger). Each call returns a
// TriggerResult; FIRE emits the window's current contents, PURGE drops them (the window
// itself lives on until its cleanup time), FIRE_AND_PURGE does both.
//
// Triggers are stateless objects shared by all windows; per-(key, window) state goes
// through the context (one int64: the count of CountTrigger, the next fire time of
// ContinuousEventTimeTrigger), which the engine stores and merges for merging windows.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "clink/core/error.hpp"
#include "clink/time/window_arithmetic.hpp"
#include "clink/windows/time_window.hpp"

namespace clink {

enum class TriggerResult : std::uint8_t { kContinue, kFire, kPurge, kFireAndPurge };
inline constexpr bool is_fire(TriggerResult r) { return r == TriggerResult::kFire || r == TriggerResult::kFireAndPurge; }
inline constexpr bool is_purge(TriggerResult r) { return r == TriggerResult::kPurge || r == TriggerResult::kFireAndPurge; }

// What a trigger sees of the engine, for the current key and window.
class TriggerContext {
 public:
  virtual ~TriggerContext() = default;
  virtual EventTime current_watermark() const = 0;
  virtual std::int64_t current_processing_time() const = 0;
  virtual void register_event_time_timer(std::int64_t time) = 0;
  virtual void register_processing_time_timer(std::int64_t time) = 0;
  virtual void delete_event_time_timer(std::int64_t time) = 0;
  virtual void delete_processing_time_timer(std::int64_t time) = 0;
  // The trigger's state for this key and window (absent until set).
  virtual std::optional<std::int64_t> get_state() = 0;
  virtual void set_state(std::int64_t value) = 0;
  virtual void clear_state() = 0;
};

// During a merge of windows: the context of the merged (result) window.
class OnMergeContext : public TriggerContext {
 public:
  // Folds the states of the windows being merged into the result window's state
  // (Flink's mergePartitionedState over a ReducingState with this reduce function).
  virtual void merge_state(const std::function<std::int64_t(std::int64_t, std::int64_t)>& fold) = 0;
};

class Trigger {
 public:
  virtual ~Trigger() = default;
  // An element (with this timestamp) was added to `window`.
  virtual TriggerResult on_element(EventTime timestamp, const TimeWindow& window, TriggerContext& ctx) const = 0;
  virtual TriggerResult on_event_time(std::int64_t time, const TimeWindow& window, TriggerContext& ctx) const = 0;
  virtual TriggerResult on_processing_time(std::int64_t time, const TimeWindow& window, TriggerContext& ctx) const = 0;
  // The window is being cleaned (or merged away): delete timers and state.
  virtual void clear(const TimeWindow& window, TriggerContext& ctx) const = 0;
  // Merging windows (sessions) need triggers that can merge.
  virtual bool can_merge() const { return false; }
  virtual void on_merge(const TimeWindow&, OnMergeContext&) const {
    throw ClinkError("trigger " + describe() + " does not support merging windows");
  }
  virtual std::string describe() const = 0;
};
using TriggerPtr = std::shared_ptr<const Trigger>;

// Fires once the watermark passes the window's end (max timestamp); returns FIRE, not
// FIRE_AND_PURGE, so the state survives until the allowed lateness ends. An element
// added after that (within the lateness) fires the window again at once.
class EventTimeTrigger final : public Trigger {
 public:
  static TriggerPtr create() { return std::make_shared<EventTimeTrigger>(); }
  TriggerResult on_element(EventTime, const TimeWindow& w, TriggerContext& ctx) const override {
    if (w.max_timestamp() <= ctx.current_watermark()) return TriggerResult::kFire;
    ctx.register_event_time_timer(w.max_timestamp());
    return TriggerResult::kContinue;
  }
  TriggerResult on_event_time(std::int64_t time, const TimeWindow& w, TriggerContext&) const override {
    return time == w.max_timestamp() ? TriggerResult::kFire : TriggerResult::kContinue;
  }
  TriggerResult on_processing_time(std::int64_t, const TimeWindow&, TriggerContext&) const override {
    return TriggerResult::kContinue;
  }
  void clear(const TimeWindow& w, TriggerContext& ctx) const override { ctx.delete_event_time_timer(w.max_timestamp()); }
  bool can_merge() const override { return true; }
  void on_merge(const TimeWindow& w, OnMergeContext& ctx) const override {
    // Only register a timer if the watermark is not yet past the end of the merged
    // window; otherwise the merged window's elements fire it (Flink's behaviour).
    if (w.max_timestamp() > ctx.current_watermark()) ctx.register_event_time_timer(w.max_timestamp());
  }
  std::string describe() const override { return "EventTimeTrigger()"; }
};

// Fires when processing time passes the window's end.
class ProcessingTimeTrigger final : public Trigger {
 public:
  static TriggerPtr create() { return std::make_shared<ProcessingTimeTrigger>(); }
  TriggerResult on_element(EventTime, const TimeWindow& w, TriggerContext& ctx) const override {
    ctx.register_processing_time_timer(w.max_timestamp());
    return TriggerResult::kContinue;
  }
  TriggerResult on_event_time(std::int64_t, const TimeWindow&, TriggerContext&) const override {
    return TriggerResult::kContinue;
  }
  TriggerResult on_processing_time(std::int64_t, const TimeWindow&, TriggerContext&) const override {
    return TriggerResult::kFire;
  }
  void clear(const TimeWindow& w, TriggerContext& ctx) const override {
    ctx.delete_processing_time_timer(w.max_timestamp());
  }
  bool can_merge() const override { return true; }
  void on_merge(const TimeWindow& w, OnMergeContext& ctx) const override {
    if (w.max_timestamp() > ctx.current_processing_time()) ctx.register_processing_time_timer(w.max_timestamp());
  }
  std::string describe() const override { return "ProcessingTimeTrigger()"; }
};

// Fires (FIRE, keeping the contents) every `count` elements of a window.
class CountTrigger final : public Trigger {
 public:
  explicit CountTrigger(std::int64_t count) : count_(count) {
    if (count <= 0) throw ClinkError("CountTrigger: the count must be positive, got " + std::to_string(count));
  }
  static TriggerPtr of(std::int64_t count) { return std::make_shared<CountTrigger>(count); }
  TriggerResult on_element(EventTime, const TimeWindow&, TriggerContext& ctx) const override {
    std::int64_t n = ctx.get_state().value_or(0) + 1;
    if (n >= count_) {
      ctx.clear_state();
      return TriggerResult::kFire;
    }
    ctx.set_state(n);
    return TriggerResult::kContinue;
  }
  TriggerResult on_event_time(std::int64_t, const TimeWindow&, TriggerContext&) const override {
    return TriggerResult::kContinue;
  }
  TriggerResult on_processing_time(std::int64_t, const TimeWindow&, TriggerContext&) const override {
    return TriggerResult::kContinue;
  }
  void clear(const TimeWindow&, TriggerContext& ctx) const override { ctx.clear_state(); }
  bool can_merge() const override { return true; }
  void on_merge(const TimeWindow&, OnMergeContext& ctx) const override {
    ctx.merge_state([](std::int64_t a, std::int64_t b) { return a + b; });
  }
  std::string describe() const override { return "CountTrigger(" + std::to_string(count_) + ")"; }

 private:
  std::int64_t count_;
};

// Turns the FIRE of the trigger it wraps into FIRE_AND_PURGE.
class PurgingTrigger final : public Trigger {
 public:
  explicit PurgingTrigger(TriggerPtr nested) : nested_(std::move(nested)) {
    if (!nested_) throw ClinkError("PurgingTrigger needs a trigger to wrap");
  }
  static TriggerPtr of(TriggerPtr nested) { return std::make_shared<PurgingTrigger>(std::move(nested)); }
  TriggerResult on_element(EventTime ts, const TimeWindow& w, TriggerContext& ctx) const override {
    return purging(nested_->on_element(ts, w, ctx));
  }
  TriggerResult on_event_time(std::int64_t t, const TimeWindow& w, TriggerContext& ctx) const override {
    return purging(nested_->on_event_time(t, w, ctx));
  }
  TriggerResult on_processing_time(std::int64_t t, const TimeWindow& w, TriggerContext& ctx) const override {
    return purging(nested_->on_processing_time(t, w, ctx));
  }
  void clear(const TimeWindow& w, TriggerContext& ctx) const override { nested_->clear(w, ctx); }
  bool can_merge() const override { return nested_->can_merge(); }
  void on_merge(const TimeWindow& w, OnMergeContext& ctx) const override { nested_->on_merge(w, ctx); }
  std::string describe() const override { return "PurgingTrigger(" + nested_->describe() + ")"; }
  const TriggerPtr& nested() const { return nested_; }

 private:
  static TriggerResult purging(TriggerResult r) { return is_fire(r) ? TriggerResult::kFireAndPurge : r; }
  TriggerPtr nested_;
};

// Fires every `interval` of event time while the window is open (early panes), and at
// the window's end. The first fire time is aligned to the interval (floored, also for
// negative timestamps).
class ContinuousEventTimeTrigger final : public Trigger {
 public:
  explicit ContinuousEventTimeTrigger(std::int64_t interval) : interval_(interval) {
    if (interval <= 0)
      throw ClinkError("ContinuousEventTimeTrigger: the interval must be positive, got " + std::to_string(interval));
  }
  static TriggerPtr of(std::int64_t interval) { return std::make_shared<ContinuousEventTimeTrigger>(interval); }
  TriggerResult on_element(EventTime ts, const TimeWindow& w, TriggerContext& ctx) const override {
    if (w.max_timestamp() <= ctx.current_watermark()) return TriggerResult::kFire;  // already past: fire now
    ctx.register_event_time_timer(w.max_timestamp());
    if (!ctx.get_state()) register_next(window_start_for(ts, interval_), w, ctx);
    return TriggerResult::kContinue;
  }
  TriggerResult on_event_time(std::int64_t time, const TimeWindow& w, TriggerContext& ctx) const override {
    if (time == w.max_timestamp()) return TriggerResult::kFire;
    auto next = ctx.get_state();
    if (next && *next == time) {
      ctx.clear_state();
      // At the end of input (W = INT64_MAX) Flink would schedule and fire one timer per
      // interval up to INT64_MAX; clink fires once and schedules no more.
      if (ctx.current_watermark() != kMaxEventTime) register_next(time, w, ctx);
      return TriggerResult::kFire;
    }
    return TriggerResult::kContinue;
  }
  TriggerResult on_processing_time(std::int64_t, const TimeWindow&, TriggerContext&) const override {
    return TriggerResult::kContinue;
  }
  void clear(const TimeWindow&, TriggerContext& ctx) const override {
    if (auto next = ctx.get_state()) {
      ctx.delete_event_time_timer(*next);
      ctx.clear_state();
    }
  }
  bool can_merge() const override { return true; }
  void on_merge(const TimeWindow&, OnMergeContext& ctx) const override {
    ctx.merge_state([](std::int64_t a, std::int64_t b) { return a < b ? a : b; });
    if (auto next = ctx.get_state()) ctx.register_event_time_timer(*next);
  }
  std::string describe() const override { return "ContinuousEventTimeTrigger(" + std::to_string(interval_) + ")"; }

 private:
  void register_next(std::int64_t time, const TimeWindow& w, TriggerContext& ctx) const {
    std::int64_t next = std::min(sat_add(time, interval_), w.max_timestamp());
    ctx.set_state(next);
    ctx.register_event_time_timer(next);
  }
  std::int64_t interval_;
};

// Never fires: the default trigger of GlobalWindows.
class NeverTrigger final : public Trigger {
 public:
  static TriggerPtr create() { return std::make_shared<NeverTrigger>(); }
  TriggerResult on_element(EventTime, const TimeWindow&, TriggerContext&) const override { return TriggerResult::kContinue; }
  TriggerResult on_event_time(std::int64_t, const TimeWindow&, TriggerContext&) const override {
    return TriggerResult::kContinue;
  }
  TriggerResult on_processing_time(std::int64_t, const TimeWindow&, TriggerContext&) const override {
    return TriggerResult::kContinue;
  }
  void clear(const TimeWindow&, TriggerContext&) const override {}
  bool can_merge() const override { return true; }
  void on_merge(const TimeWindow&, OnMergeContext&) const override {}
  std::string describe() const override { return "NeverTrigger()"; }
};

}  // namespace clink
