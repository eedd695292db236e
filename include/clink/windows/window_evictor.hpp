#pragma once
// Evictors (Flink's Evictor) remove elements from a window's buffer when it fires:
// evict_before runs before the window function, evict_after after it. The removal is
// persistent: the window keeps only the surviving elements. A window with an evictor
// buffers its elements (no incremental aggregation), as in Flink.
//
//   CountEvictor::of(n [, do_evict_after])       keep the last n elements
//   TimeEvictor::of(ms [, do_evict_after])       keep elements within ms of the newest
//   DeltaEvictor::of(threshold, fn [, after])    drop elements with fn(e, last) >= threshold
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "clink/core/error.hpp"
#include "clink/state/state_codec.hpp"
#include "clink/time/window_arithmetic.hpp"
#include "clink/windows/time_window.hpp"

namespace clink {

// An element of a window buffer with its event time (kNoEventTime if it has none).
template <class T>
struct TimestampedValue {
  T value{};
  EventTime timestamp = kNoEventTime;
  bool has_timestamp() const { return timestamp != kNoEventTime; }
  friend bool operator==(const TimestampedValue&, const TimestampedValue&) = default;
};

// Checkpoint encoding of a buffered element (needs a StateCodec for T).
template <class T>
struct StateCodec<TimestampedValue<T>> {
  static void encode(const TimestampedValue<T>& v, std::string& out) {
    StateCodec<T>::encode(v.value, out);
    StateCodec<std::int64_t>::encode(v.timestamp, out);
  }
  static TimestampedValue<T> decode(std::string_view& in) {
    T value = StateCodec<T>::decode(in);
    EventTime ts = StateCodec<std::int64_t>::decode(in);
    return TimestampedValue<T>{std::move(value), ts};
  }
};

struct EvictorContext {
  EventTime current_watermark = kMinEventTime;
  std::int64_t current_processing_time = 0;
};

template <class T>
class Evictor {
 public:
  virtual ~Evictor() = default;
  virtual void evict_before(std::vector<TimestampedValue<T>>& elements, const TimeWindow& window,
                            const EvictorContext& ctx) const = 0;
  virtual void evict_after(std::vector<TimestampedValue<T>>& elements, const TimeWindow& window,
                           const EvictorContext& ctx) const = 0;
  virtual std::string describe() const = 0;
};
template <class T>
using EvictorPtr = std::shared_ptr<const Evictor<T>>;

// Keeps the last `max_count` elements (drops from the front).
class CountEvictor {
 public:
  explicit CountEvictor(std::int64_t max_count, bool do_evict_after = false)
      : max_(max_count), after_(do_evict_after) {
    if (max_count < 0) throw ClinkError("CountEvictor: the count must be >= 0, got " + std::to_string(max_count));
  }
  static CountEvictor of(std::int64_t max_count, bool do_evict_after = false) {
    return CountEvictor(max_count, do_evict_after);
  }
  template <class T>
  void evict(std::vector<TimestampedValue<T>>& e) const {
    if (static_cast<std::int64_t>(e.size()) <= max_) return;
    e.erase(e.begin(), e.end() - max_);
  }
  bool evict_after() const { return after_; }
  std::string describe() const { return "CountEvictor(" + std::to_string(max_) + (after_ ? ", after)" : ")"); }

 private:
  std::int64_t max_;
  bool after_;
};

// Keeps the elements whose timestamp is within `window_size` of the newest element's
// (drops timestamp <= max - window_size). Does nothing if the elements have no
// timestamps.
class TimeEvictor {
 public:
  explicit TimeEvictor(std::int64_t window_size, bool do_evict_after = false)
      : size_(window_size), after_(do_evict_after) {
    if (window_size < 0) throw ClinkError("TimeEvictor: the size must be >= 0, got " + std::to_string(window_size));
  }
  static TimeEvictor of(std::int64_t window_size, bool do_evict_after = false) {
    return TimeEvictor(window_size, do_evict_after);
  }
  template <class T>
  void evict(std::vector<TimestampedValue<T>>& e) const {
    if (e.empty() || !e.front().has_timestamp()) return;
    EventTime newest = kMinEventTime;
    for (const auto& x : e) newest = std::max(newest, x.timestamp);
    EventTime cutoff = sat_sub(newest, size_);
    std::erase_if(e, [cutoff](const TimestampedValue<T>& x) { return x.timestamp <= cutoff; });
  }
  bool evict_after() const { return after_; }
  std::string describe() const { return "TimeEvictor(" + std::to_string(size_) + (after_ ? ", after)" : ")"); }

 private:
  std::int64_t size_;
  bool after_;
};

// Drops every element whose delta to the last element, fn(element, last), is at least
// the threshold.
template <class F>
class DeltaEvictorOf {
 public:
  DeltaEvictorOf(double threshold, F fn, bool do_evict_after)
      : threshold_(threshold), fn_(std::move(fn)), after_(do_evict_after) {}
  template <class T>
  void evict(std::vector<TimestampedValue<T>>& e) const {
    if (e.empty()) return;
    const T last = e.back().value;
    std::erase_if(e, [&](const TimestampedValue<T>& x) { return fn_(x.value, last) >= threshold_; });
  }
  bool evict_after() const { return after_; }
  std::string describe() const { return "DeltaEvictor(" + std::to_string(threshold_) + (after_ ? ", after)" : ")"); }

 private:
  double threshold_;
  F fn_;
  bool after_;
};
struct DeltaEvictor {
  template <class F>
  static DeltaEvictorOf<F> of(double threshold, F delta_fn, bool do_evict_after = false) {
    return DeltaEvictorOf<F>(threshold, std::move(delta_fn), do_evict_after);
  }
};

// Adapts a built-in evictor (evict + evict_after()) to Evictor<T>.
template <class T, class E>
class EvictorAdapter final : public Evictor<T> {
 public:
  explicit EvictorAdapter(E e) : e_(std::move(e)) {}
  void evict_before(std::vector<TimestampedValue<T>>& v, const TimeWindow&, const EvictorContext&) const override {
    if (!e_.evict_after()) e_.evict(v);
  }
  void evict_after(std::vector<TimestampedValue<T>>& v, const TimeWindow&, const EvictorContext&) const override {
    if (e_.evict_after()) e_.evict(v);
  }
  std::string describe() const override { return e_.describe(); }

 private:
  E e_;
};

template <class T, class E>
EvictorPtr<T> make_evictor(E e) {
  if constexpr (std::is_base_of_v<Evictor<T>, E>) return std::make_shared<E>(std::move(e));
  else return std::make_shared<EvictorAdapter<T, E>>(std::move(e));
}

}  // namespace clink
