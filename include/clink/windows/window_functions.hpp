#pragma once
// Window functions and how the engine applies them.
//
// User-facing (Flink's names): AggregateFunction (create_accumulator / add /
// get_result / merge), ProcessWindowFunction (all elements of a window plus its
// metadata), and reduce functions (any callable T(const T&, const T&)).
//
// Engine-facing: a window *policy* says what a window keeps and what firing emits.
//   IncrementalPolicy<In, Agg, Finish>  keeps one accumulator per window (or pane)
//   BufferPolicy<In, Body>              keeps the elements, optionally evicting
// A policy has: State, kIncremental, kInvertible, create(), add(state, value, ts),
// merge(into, from), retract(from, part) (if kInvertible), fire(key, state, ctx, out),
// clear(key, ctx), empty(state), open(rc), close(). The SQL window operators plug their compiled aggregate state in
// as another Agg type.
#include <cstddef>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "clink/api/functions.hpp"
#include "clink/windows/time_window.hpp"
#include "clink/windows/window_evictor.hpp"

namespace clink {

// kInvertible is optional in a policy (absent: false), so policies written before
// running pane combinations existed (the SQL window aggregate's) keep compiling.
template <class P>
inline constexpr bool policy_invertible = [] {
  if constexpr (requires { P::kInvertible; }) return static_cast<bool>(P::kInvertible);
  else return false;
}();

// ---- user-facing ----

// Incremental aggregation: one accumulator per window. merge() is needed by merging
// windows (sessions) and by sliding windows (which combine per-slice accumulators).
// The engine calls these through the concrete type, so a final class inlines.
//
// Optionally, an aggregate whose merge can be undone exactly declares
//   void retract(Acc& acc, const Acc& part) const;   // acc := acc (-) part
// (part was merged into acc before; COUNT and integer SUM can, MIN and MAX cannot, nor
// floating-point sums, whose rounding would drift). A sliding window then keeps, per
// key, one running combination of its panes and retracts the pane leaving it at every
// slide; without retract() it keeps two stacks of partial combinations. Both give
// exactly what merging every pane of the window gives.
template <class In, class Acc, class Out>
class AggregateFunction {
 public:
  using input_type = In;
  using accumulator_type = Acc;
  using output_type = Out;
  virtual ~AggregateFunction() = default;
  virtual Acc create_accumulator() const = 0;
  virtual void add(const In& value, Acc& acc) const = 0;
  virtual Out get_result(const Acc& acc) const = 0;
  // acc := acc (+) other
  virtual void merge(Acc& acc, const Acc& other) const = 0;
};

// What a window function knows about the window it runs for.
class WindowContext {
 public:
  WindowContext(RuntimeContext& rc, SideOutputBuffers& sides) : rc_(&rc), sides_(&sides) {}
  const TimeWindow& window() const { return window_; }
  const PaneInfo& pane() const { return pane_; }
  EventTime current_watermark() const { return rc_->timer_service().current_watermark(); }
  std::int64_t current_processing_time() const { return rc_->timer_service().current_processing_time(); }
  // Side output, with the window's max timestamp as event time.
  template <class X>
  void output(const OutputTag<X>& tag, X value) { sides_->add(tag, std::move(value), window_.max_timestamp()); }
  RuntimeContext& runtime_context() { return *rc_; }

  // Engine side.
  void set(const TimeWindow& w, PaneInfo pane) {
    window_ = w;
    pane_ = pane;
  }
  EvictorContext evictor_context() const { return {current_watermark(), current_processing_time()}; }

 private:
  RuntimeContext* rc_;
  SideOutputBuffers* sides_;
  TimeWindow window_;
  PaneInfo pane_;
};

// A read-only view of a window's elements: the buffered elements, or the single
// pre-aggregated result of aggregate(agg, fn) / reduce(f, fn).
template <class T>
class WindowElements {
 public:
  explicit WindowElements(const std::vector<TimestampedValue<T>>& many) : many_(&many) {}
  explicit WindowElements(const T& one) : one_(&one) {}
  std::size_t size() const { return many_ ? many_->size() : 1; }
  bool empty() const { return size() == 0; }
  const T& operator[](std::size_t i) const { return many_ ? (*many_)[i].value : *one_; }
  // The event time of element i (kNoEventTime for a pre-aggregated result).
  EventTime timestamp(std::size_t i) const { return many_ ? (*many_)[i].timestamp : kNoEventTime; }

  class iterator {
   public:
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    iterator(const WindowElements* e, std::size_t i) : e_(e), i_(i) {}
    const T& operator*() const { return (*e_)[i_]; }
    const T* operator->() const { return &(*e_)[i_]; }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    iterator operator++(int) {
      auto c = *this;
      ++i_;
      return c;
    }
    friend bool operator==(const iterator& a, const iterator& b) { return a.i_ == b.i_; }

   private:
    const WindowElements* e_ = nullptr;
    std::size_t i_ = 0;
  };
  iterator begin() const { return iterator(this, 0); }
  iterator end() const { return iterator(this, size()); }
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

 private:
  const std::vector<TimestampedValue<T>>* many_ = nullptr;
  const T* one_ = nullptr;
};

// Flink's ProcessWindowFunction: called when a window fires, with its key, context
// (window, pane, watermark, side outputs) and elements. Copied for every subtask.
template <class In, class Out, class K>
class ProcessWindowFunction {
 public:
  using input_type = In;
  using output_type = Out;
  using key_type = K;
  using Context = WindowContext;
  virtual ~ProcessWindowFunction() = default;
  virtual void open(RuntimeContext&) {}
  virtual void process(const K& key, Context& ctx, const WindowElements<In>& elements, Collector<Out>& out) = 0;
  // The window is being cleaned (its allowed lateness is over).
  virtual void clear(Context&) {}
  virtual void close() {}
};

// ---- adapters ----

// A reduce function as an aggregate: the accumulator is the reduced value so far.
template <class T, class F>
class ReduceAggregate {
 public:
  using input_type = T;
  using accumulator_type = std::optional<T>;
  using output_type = T;
  explicit ReduceAggregate(F f) : f_(std::move(f)) {}
  accumulator_type create_accumulator() const { return std::nullopt; }
  void add(const T& v, accumulator_type& acc) const {
    if (acc) *acc = f_(*acc, v);
    else acc = v;
  }
  T get_result(const accumulator_type& acc) const { return *acc; }
  void merge(accumulator_type& acc, const accumulator_type& other) const {
    if (!other) return;
    if (acc) *acc = f_(*acc, *other);
    else acc = other;
  }
  bool has_result(const accumulator_type& acc) const { return acc.has_value(); }

 private:
  F f_;
};

// ---- finishers: what a firing emits for an aggregated result ----

template <class R>
struct EmitResult {
  using output_type = R;
  void open(RuntimeContext&) {}
  void close() {}
  void clear(WindowContext&) {}
  template <class K>
  void finish(const K&, R&& result, WindowContext&, Collector<R>& out) {
    out.collect(std::move(result));
  }
};

template <class K, class R>
struct EmitWindowResult {
  using output_type = WindowResult<K, R>;
  void open(RuntimeContext&) {}
  void close() {}
  void clear(WindowContext&) {}
  void finish(const K& key, R&& result, WindowContext& ctx, Collector<output_type>& out) {
    out.collect(output_type{key, ctx.window(), ctx.pane(), std::move(result)});
  }
};

// Hands the single result to a ProcessWindowFunction (aggregate(agg, fn), reduce(f, fn)).
template <class PWF>
struct ProcessResult {
  using output_type = typename PWF::output_type;
  PWF fn;
  void open(RuntimeContext& rc) { fn.open(rc); }
  void close() { fn.close(); }
  void clear(WindowContext& ctx) { fn.clear(ctx); }
  template <class K, class R>
  void finish(const K& key, R&& result, WindowContext& ctx, Collector<output_type>& out) {
    fn.process(key, ctx, WindowElements<std::decay_t<R>>(result), out);
  }
};

// ---- policies ----

template <class In, class Agg, class Finish>
class IncrementalPolicy {
 public:
  using State = typename Agg::accumulator_type;
  using Out = typename Finish::output_type;
  static constexpr bool kIncremental = true;
  static constexpr bool kInvertible = requires(const Agg& a, State& acc, const State& part) { a.retract(acc, part); };

  IncrementalPolicy(Agg agg, Finish finish) : agg_(std::move(agg)), finish_(std::move(finish)) {}
  void open(RuntimeContext& rc) { finish_.open(rc); }
  void close() { finish_.close(); }
  State create() const { return agg_.create_accumulator(); }
  void add(State& s, const In& v, EventTime) const { agg_.add(v, s); }
  void merge(State& into, const State& from) const { agg_.merge(into, from); }
  void retract(State& from, const State& part) const
    requires kInvertible
  {
    agg_.retract(from, part);
  }
  template <class K>
  void fire(const K& key, State& s, WindowContext& ctx, Collector<Out>& out) {
    if constexpr (requires { agg_.has_result(s); }) {
      if (!agg_.has_result(s)) return;
    }
    finish_.finish(key, agg_.get_result(s), ctx, out);
  }
  template <class K>
  void clear(const K&, WindowContext& ctx) { finish_.clear(ctx); }
  bool empty(const State&) const { return false; }
  const Agg& aggregate() const { return agg_; }

 private:
  Agg agg_;
  Finish finish_;
};

// Runs a ProcessWindowFunction over the buffered elements.
template <class PWF>
struct ProcessBody {
  using output_type = typename PWF::output_type;
  PWF fn;
  void open(RuntimeContext& rc) { fn.open(rc); }
  void close() { fn.close(); }
  void clear(WindowContext& ctx) { fn.clear(ctx); }
  template <class K, class T>
  void run(const K& key, const WindowElements<T>& elements, WindowContext& ctx, Collector<output_type>& out) {
    fn.process(key, ctx, elements, out);
  }
};

// Folds the buffered elements with an aggregate, then finishes (reduce / aggregate
// on a window with an evictor). A reduce over no elements emits nothing.
template <class Agg, class Finish>
struct FoldBody {
  using output_type = typename Finish::output_type;
  Agg agg;
  Finish finish;
  void open(RuntimeContext& rc) { finish.open(rc); }
  void close() { finish.close(); }
  void clear(WindowContext& ctx) { finish.clear(ctx); }
  template <class K, class T>
  void run(const K& key, const WindowElements<T>& elements, WindowContext& ctx, Collector<output_type>& out) {
    auto acc = agg.create_accumulator();
    for (const auto& v : elements) agg.add(v, acc);
    if constexpr (requires { agg.has_result(acc); }) {
      if (!agg.has_result(acc)) return;
    }
    finish.finish(key, agg.get_result(acc), ctx, out);
  }
};

template <class In, class Body>
class BufferPolicy {
 public:
  using State = std::vector<TimestampedValue<In>>;
  using Out = typename Body::output_type;
  static constexpr bool kIncremental = false;
  static constexpr bool kInvertible = false;

  BufferPolicy(Body body, EvictorPtr<In> evictor) : body_(std::move(body)), evictor_(std::move(evictor)) {}
  void open(RuntimeContext& rc) { body_.open(rc); }
  void close() { body_.close(); }
  State create() const { return {}; }
  void add(State& s, const In& v, EventTime ts) const { s.push_back(TimestampedValue<In>{v, ts}); }
  void merge(State& into, const State& from) const { into.insert(into.end(), from.begin(), from.end()); }
  template <class K>
  void fire(const K& key, State& s, WindowContext& ctx, Collector<Out>& out) {
    if (evictor_) evictor_->evict_before(s, ctx.window(), ctx.evictor_context());
    body_.run(key, WindowElements<In>(s), ctx, out);
    if (evictor_) evictor_->evict_after(s, ctx.window(), ctx.evictor_context());
  }
  template <class K>
  void clear(const K&, WindowContext& ctx) { body_.clear(ctx); }
  bool empty(const State& s) const { return s.empty(); }

 private:
  Body body_;
  EvictorPtr<In> evictor_;
};

}  // namespace clink
