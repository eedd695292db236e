#pragma once
// Window assigners (Flink's WindowAssigner): which windows an element belongs to.
// Every boundary comes from clink/time/window_arithmetic.hpp.
//
//   TumblingEventTimeWindows::of(size [, offset [, stagger]])   [start, start + size)
//   SlidingEventTimeWindows::of(size, slide [, offset])         size / slide windows per element
//   EventTimeSessionWindows::with_gap(gap)                      merging: [ts, ts + gap), joined when touching
//   DynamicEventTimeSessionWindows::with_dynamic_gap(fn)        gap per element
//   CumulativeEventTimeWindows::of(step, max_size)              [s, s + k*step) inside each max_size window
//   GlobalWindows::create()                                     one window; never fires by default
// and the processing-time variants (assigning by the current processing time).
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "clink/core/error.hpp"
#include "clink/time/window_arithmetic.hpp"
#include "clink/windows/time_window.hpp"
#include "clink/windows/window_trigger.hpp"

namespace clink {

// Aligned windows that are unions of equal slices: windows [s, s + size) with s aligned
// to slide + offset. The engine then keeps one pane per slice of gcd(size, slide) and
// combines a window's panes when it fires (the cost per element does not grow with
// size / slide).
struct SliceSpec {
  std::int64_t size = 0;
  std::int64_t slide = 0;
  std::int64_t offset = 0;
};

class WindowAssigner {
 public:
  virtual ~WindowAssigner() = default;
  // A copy for one parallel instance (stagger offsets are per instance).
  virtual std::unique_ptr<WindowAssigner> clone() const = 0;
  // Appends the windows of an element with event time `ts`, at processing time `now`,
  // in Flink's order.
  virtual void assign(EventTime ts, std::int64_t now, std::vector<TimeWindow>& out) = 0;
  virtual bool is_event_time() const = 0;
  virtual bool is_merging() const { return false; }
  virtual TriggerPtr default_trigger() const = 0;
  virtual std::optional<SliceSpec> slicing() const { return std::nullopt; }
  virtual std::string describe() const = 0;
};
using WindowAssignerPtr = std::shared_ptr<const WindowAssigner>;

// How tumbling windows of different parallel instances are shifted against each
// other (Flink's WindowStagger), so that they do not all fire at the same instant.
enum class WindowStagger {
  kAligned,  // no shift: all windows start at offset + k * size
  kRandom,   // a random shift in [0, size) per instance
  kNatural,  // the shift of the processing time at the instance's first element
};

namespace detail {
inline void check_size(const char* what, std::int64_t size, std::int64_t offset) {
  if (size <= 0) throw ClinkError(std::string(what) + ": the size must be positive, got " + std::to_string(size));
  if (offset <= -size || offset >= size)
    throw ClinkError(std::string(what) + ": the offset must satisfy |offset| < size, got offset " +
                     std::to_string(offset) + " for size " + std::to_string(size));
}

class TumblingWindows : public WindowAssigner {
 public:
  TumblingWindows(std::int64_t size, std::int64_t offset, WindowStagger stagger, bool event_time)
      : size_(size), offset_(offset), stagger_(stagger), event_time_(event_time) {
    check_size(event_time ? "TumblingEventTimeWindows" : "TumblingProcessingTimeWindows", size, offset);
  }
  void assign(EventTime ts, std::int64_t now, std::vector<TimeWindow>& out) override {
    if (!stagger_offset_) stagger_offset_ = compute_stagger(now);
    std::int64_t t = event_time_ ? ts : now;
    std::int64_t start = window_start_for(t, size_, (offset_ + *stagger_offset_) % size_);
    out.push_back(TimeWindow{start, window_end_for(start, size_)});
  }
  bool is_event_time() const override { return event_time_; }
  TriggerPtr default_trigger() const override {
    return event_time_ ? EventTimeTrigger::create() : ProcessingTimeTrigger::create();
  }
  std::optional<SliceSpec> slicing() const override {
    if (!event_time_ || stagger_ != WindowStagger::kAligned) return std::nullopt;
    return SliceSpec{size_, size_, offset_};
  }
  std::string describe() const override {
    return std::string(event_time_ ? "TumblingEventTimeWindows(" : "TumblingProcessingTimeWindows(") +
           std::to_string(size_) + (offset_ ? ", offset " + std::to_string(offset_) : "") + ")";
  }
  std::int64_t size() const { return size_; }
  std::int64_t offset() const { return offset_; }
  std::optional<std::int64_t> stagger_offset() const { return stagger_offset_; }

 private:
  std::int64_t compute_stagger(std::int64_t now) const {
    switch (stagger_) {
      case WindowStagger::kAligned: return 0;
      case WindowStagger::kRandom: {
        std::random_device rd;
        return std::uniform_int_distribution<std::int64_t>(0, size_ - 1)(rd);
      }
      case WindowStagger::kNatural: return now - window_start_for(now, size_);
    }
    return 0;
  }
  std::int64_t size_, offset_;
  WindowStagger stagger_;
  bool event_time_;
  std::optional<std::int64_t> stagger_offset_;
};

class SlidingWindows : public WindowAssigner {
 public:
  SlidingWindows(std::int64_t size, std::int64_t slide, std::int64_t offset, bool event_time)
      : size_(size), slide_(slide), offset_(offset), event_time_(event_time) {
    const char* what = event_time ? "SlidingEventTimeWindows" : "SlidingProcessingTimeWindows";
    if (size <= 0 || slide <= 0)
      throw ClinkError(std::string(what) + ": size and slide must be positive, got size " + std::to_string(size) +
                       ", slide " + std::to_string(slide));
    if (offset <= -slide || offset >= slide)
      throw ClinkError(std::string(what) + ": the offset must satisfy |offset| < slide, got offset " +
                       std::to_string(offset) + " for slide " + std::to_string(slide));
  }
  void assign(EventTime ts, std::int64_t now, std::vector<TimeWindow>& out) override {
    std::int64_t t = event_time_ ? ts : now;
    for_each_hop_window_start(t, size_, slide_, offset_,
                              [&](std::int64_t s) { out.push_back(TimeWindow{s, window_end_for(s, size_)}); });
  }
  bool is_event_time() const override { return event_time_; }
  TriggerPtr default_trigger() const override {
    return event_time_ ? EventTimeTrigger::create() : ProcessingTimeTrigger::create();
  }
  std::optional<SliceSpec> slicing() const override {
    if (!event_time_) return std::nullopt;
    return SliceSpec{size_, slide_, offset_};
  }
  std::string describe() const override {
    return std::string(event_time_ ? "SlidingEventTimeWindows(" : "SlidingProcessingTimeWindows(") +
           std::to_string(size_) + ", " + std::to_string(slide_) +
           (offset_ ? ", offset " + std::to_string(offset_) : "") + ")";
  }

 private:
  std::int64_t size_, slide_, offset_;
  bool event_time_;
};

class SessionWindows : public WindowAssigner {
 public:
  SessionWindows(std::int64_t gap, bool event_time) : gap_(gap), event_time_(event_time) {
    if (gap <= 0)
      throw ClinkError(std::string(event_time ? "EventTimeSessionWindows" : "ProcessingTimeSessionWindows") +
                       ": the gap must be positive, got " + std::to_string(gap));
  }
  void assign(EventTime ts, std::int64_t now, std::vector<TimeWindow>& out) override {
    std::int64_t t = event_time_ ? ts : now;
    out.push_back(TimeWindow{t, sat_add(t, gap_)});
  }
  bool is_event_time() const override { return event_time_; }
  bool is_merging() const override { return true; }
  TriggerPtr default_trigger() const override {
    return event_time_ ? EventTimeTrigger::create() : ProcessingTimeTrigger::create();
  }
  std::string describe() const override {
    return std::string(event_time_ ? "EventTimeSessionWindows(" : "ProcessingTimeSessionWindows(") +
           std::to_string(gap_) + ")";
  }
  std::int64_t gap() const { return gap_; }

 private:
  std::int64_t gap_;
  bool event_time_;
};

// Flink SQL's CUMULATE: within each max_size window starting at s, the windows
// [s, s + step), [s, s + 2 step), ..., [s, s + max_size); an element belongs to every
// one that has not ended before it.
class CumulativeWindows : public WindowAssigner {
 public:
  CumulativeWindows(std::int64_t step, std::int64_t max_size, std::int64_t offset, bool event_time)
      : step_(step), max_size_(max_size), offset_(offset), event_time_(event_time) {
    if (step <= 0 || max_size <= 0 || max_size % step != 0)
      throw ClinkError("CumulativeWindows: max_size must be a positive multiple of a positive step, got step " +
                       std::to_string(step) + ", max_size " + std::to_string(max_size));
    check_size("CumulativeWindows", max_size, offset);
  }
  void assign(EventTime ts, std::int64_t now, std::vector<TimeWindow>& out) override {
    std::int64_t t = event_time_ ? ts : now;
    std::int64_t start = window_start_for(t, max_size_, offset_);
    std::int64_t last_end = window_end_for(start, max_size_);
    // The first cumulative window holding t ends at the end of t's step slice.
    std::int64_t end = window_end_for(window_start_for(t, step_, offset_), step_);
    for (;; end = sat_add(end, step_)) {
      if (end > last_end) end = last_end;
      out.push_back(TimeWindow{start, end});
      if (end >= last_end) break;
    }
  }
  bool is_event_time() const override { return event_time_; }
  TriggerPtr default_trigger() const override {
    return event_time_ ? EventTimeTrigger::create() : ProcessingTimeTrigger::create();
  }
  std::string describe() const override {
    return std::string(event_time_ ? "CumulativeEventTimeWindows(" : "CumulativeProcessingTimeWindows(") +
           std::to_string(step_) + ", " + std::to_string(max_size_) + ")";
  }

 private:
  std::int64_t step_, max_size_, offset_;
  bool event_time_;
};
}  // namespace detail

struct TumblingEventTimeWindows final : detail::TumblingWindows {
  TumblingEventTimeWindows(std::int64_t size, std::int64_t offset = 0, WindowStagger stagger = WindowStagger::kAligned)
      : TumblingWindows(size, offset, stagger, true) {}
  static TumblingEventTimeWindows of(std::int64_t size, std::int64_t offset = 0,
                                     WindowStagger stagger = WindowStagger::kAligned) {
    return TumblingEventTimeWindows(size, offset, stagger);
  }
  std::unique_ptr<WindowAssigner> clone() const override { return std::make_unique<TumblingEventTimeWindows>(*this); }
};

struct TumblingProcessingTimeWindows final : detail::TumblingWindows {
  TumblingProcessingTimeWindows(std::int64_t size, std::int64_t offset = 0,
                                WindowStagger stagger = WindowStagger::kAligned)
      : TumblingWindows(size, offset, stagger, false) {}
  static TumblingProcessingTimeWindows of(std::int64_t size, std::int64_t offset = 0,
                                          WindowStagger stagger = WindowStagger::kAligned) {
    return TumblingProcessingTimeWindows(size, offset, stagger);
  }
  std::unique_ptr<WindowAssigner> clone() const override {
    return std::make_unique<TumblingProcessingTimeWindows>(*this);
  }
};

struct SlidingEventTimeWindows final : detail::SlidingWindows {
  SlidingEventTimeWindows(std::int64_t size, std::int64_t slide, std::int64_t offset = 0)
      : SlidingWindows(size, slide, offset, true) {}
  static SlidingEventTimeWindows of(std::int64_t size, std::int64_t slide, std::int64_t offset = 0) {
    return SlidingEventTimeWindows(size, slide, offset);
  }
  std::unique_ptr<WindowAssigner> clone() const override { return std::make_unique<SlidingEventTimeWindows>(*this); }
};

struct SlidingProcessingTimeWindows final : detail::SlidingWindows {
  SlidingProcessingTimeWindows(std::int64_t size, std::int64_t slide, std::int64_t offset = 0)
      : SlidingWindows(size, slide, offset, false) {}
  static SlidingProcessingTimeWindows of(std::int64_t size, std::int64_t slide, std::int64_t offset = 0) {
    return SlidingProcessingTimeWindows(size, slide, offset);
  }
  std::unique_ptr<WindowAssigner> clone() const override {
    return std::make_unique<SlidingProcessingTimeWindows>(*this);
  }
};

struct EventTimeSessionWindows final : detail::SessionWindows {
  explicit EventTimeSessionWindows(std::int64_t gap) : SessionWindows(gap, true) {}
  static EventTimeSessionWindows with_gap(std::int64_t gap) { return EventTimeSessionWindows(gap); }
  std::unique_ptr<WindowAssigner> clone() const override { return std::make_unique<EventTimeSessionWindows>(*this); }
};

struct ProcessingTimeSessionWindows final : detail::SessionWindows {
  explicit ProcessingTimeSessionWindows(std::int64_t gap) : SessionWindows(gap, false) {}
  static ProcessingTimeSessionWindows with_gap(std::int64_t gap) { return ProcessingTimeSessionWindows(gap); }
  std::unique_ptr<WindowAssigner> clone() const override {
    return std::make_unique<ProcessingTimeSessionWindows>(*this);
  }
};

// Session windows whose gap comes from each element: fn(const T&) -> gap (> 0).
// The windowed stream reads gap_fn(); the assigner itself merges like a session.
template <class F>
struct DynamicSessionWindows final : detail::SessionWindows {
  DynamicSessionWindows(F fn, bool event_time) : SessionWindows(1, event_time), fn_(std::move(fn)) {}
  std::unique_ptr<WindowAssigner> clone() const override { return std::make_unique<DynamicSessionWindows>(*this); }
  std::string describe() const override {
    return is_event_time() ? "DynamicEventTimeSessionWindows()" : "DynamicProcessingTimeSessionWindows()";
  }
  const F& gap_fn() const { return fn_; }

 private:
  F fn_;
};
struct DynamicEventTimeSessionWindows {
  template <class F>
  static DynamicSessionWindows<F> with_dynamic_gap(F fn) { return DynamicSessionWindows<F>(std::move(fn), true); }
};
struct DynamicProcessingTimeSessionWindows {
  template <class F>
  static DynamicSessionWindows<F> with_dynamic_gap(F fn) { return DynamicSessionWindows<F>(std::move(fn), false); }
};

struct CumulativeEventTimeWindows final : detail::CumulativeWindows {
  CumulativeEventTimeWindows(std::int64_t step, std::int64_t max_size, std::int64_t offset = 0)
      : CumulativeWindows(step, max_size, offset, true) {}
  static CumulativeEventTimeWindows of(std::int64_t step, std::int64_t max_size, std::int64_t offset = 0) {
    return CumulativeEventTimeWindows(step, max_size, offset);
  }
  std::unique_ptr<WindowAssigner> clone() const override { return std::make_unique<CumulativeEventTimeWindows>(*this); }
};

struct CumulativeProcessingTimeWindows final : detail::CumulativeWindows {
  CumulativeProcessingTimeWindows(std::int64_t step, std::int64_t max_size, std::int64_t offset = 0)
      : CumulativeWindows(step, max_size, offset, false) {}
  static CumulativeProcessingTimeWindows of(std::int64_t step, std::int64_t max_size, std::int64_t offset = 0) {
    return CumulativeProcessingTimeWindows(step, max_size, offset);
  }
  std::unique_ptr<WindowAssigner> clone() const override {
    return std::make_unique<CumulativeProcessingTimeWindows>(*this);
  }
};

// One window holding every element of a key; its default trigger never fires, so it
// is used with a custom trigger (CountTrigger) and often an evictor.
struct GlobalWindows final : WindowAssigner {
  static GlobalWindows create() { return GlobalWindows(); }
  std::unique_ptr<WindowAssigner> clone() const override { return std::make_unique<GlobalWindows>(*this); }
  void assign(EventTime, std::int64_t, std::vector<TimeWindow>& out) override { out.push_back(TimeWindow::global()); }
  bool is_event_time() const override { return false; }
  TriggerPtr default_trigger() const override { return NeverTrigger::create(); }
  std::string describe() const override { return "GlobalWindows()"; }
};

}  // namespace clink
