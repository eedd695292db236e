#pragma once
// Flink's WindowedStream: keyed.window(assigner) [.trigger(t)] [.evictor(e)]
// [.allowed_lateness(ms)] [.side_output_late_data(tag)] then reduce / aggregate /
// process. Every form builds the one window engine (clink/windows/window_operator.hpp).
//
//   auto sums = stream.key_by([](const Event& e) { return e.key; })
//                   .window(TumblingEventTimeWindows::of(10000))
//                   .allowed_lateness(2000)
//                   .side_output_late_data(late_tag)
//                   .reduce([](const Event& a, const Event& b) { return Event{a.key, a.value + b.value}; });
//
// clink additions: reduce_with_info / aggregate_with_info emit WindowResult<K, R>
// (key, window, pane, value), and slicing(false) forces the generic engine path.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "clink/api/data_stream.hpp"
#include "clink/api/window_node_params.hpp"
#include "clink/windows/time_window.hpp"
#include "clink/windows/window_assigners.hpp"
#include "clink/windows/window_evictor.hpp"
#include "clink/windows/window_functions.hpp"
#include "clink/windows/window_operator.hpp"
#include "clink/windows/window_trigger.hpp"

namespace clink {

namespace window_detail {
template <class P>
concept ProcessWindowFn = requires {
  typename P::input_type;
  typename P::output_type;
  typename P::key_type;
} && std::is_base_of_v<ProcessWindowFunction<typename P::input_type, typename P::output_type, typename P::key_type>, P>;

template <class A>
concept AggregateFn = requires {
  typename A::input_type;
  typename A::accumulator_type;
  typename A::output_type;
};
}  // namespace window_detail

template <class T, class K, class KeyFn>
class WindowedStream {
 public:
  template <class Assigner>
  WindowedStream(KeyedStream<T, K, KeyFn> keyed, const Assigner& assigner) : keyed_(std::move(keyed)) {
    static_assert(std::is_base_of_v<WindowAssigner, Assigner>, "window() takes a WindowAssigner");
    config_.assigner = WindowAssignerPtr(assigner.clone());
    if constexpr (requires { assigner.gap_fn(); }) {
      auto f = assigner.gap_fn();
      config_.dynamic_gap = [f](const T& v) { return static_cast<std::int64_t>(f(v)); };
    }
  }

  WindowedStream(KeyedStream<T, K, KeyFn> keyed, WindowAssignerPtr assigner) : keyed_(std::move(keyed)) {
    if (!assigner) throw ClinkError("window() needs an assigner");
    config_.assigner = std::move(assigner);
  }

  WindowedStream& trigger(TriggerPtr t) {
    config_.trigger = std::move(t);
    return *this;
  }
  // An Evictor<T> subclass or a built-in (CountEvictor, TimeEvictor, DeltaEvictor).
  template <class E>
  WindowedStream& evictor(E e) {
    evictor_ = make_evictor<T>(std::move(e));
    return *this;
  }
  WindowedStream& allowed_lateness(std::int64_t ms) {
    if (ms < 0) throw ClinkError("allowed_lateness must be >= 0, got " + std::to_string(ms));
    config_.allowed_lateness = ms;
    return *this;
  }
  WindowedStream& side_output_late_data(const OutputTag<T>& tag) {
    config_.late_data_tag = tag;
    return *this;
  }
  WindowedStream& slicing(bool enabled) {
    config_.allow_slicing = enabled;
    return *this;
  }

  // f(const T&, const T&) -> T
  template <class F>
  DataStream<T> reduce(F f, std::string name = "Window") {
    using Agg = ReduceAggregate<T, F>;
    if (evictor_)
      return build(std::move(name), BufferPolicy<T, FoldBody<Agg, EmitResult<T>>>({Agg(f), {}}, evictor_));
    return build(std::move(name), IncrementalPolicy<T, Agg, EmitResult<T>>(Agg(f), {}));
  }
  // The reduced value handed to a ProcessWindowFunction<T, Out, K>.
  template <class F, window_detail::ProcessWindowFn PWF>
  auto reduce(F f, PWF fn, std::string name = "Window") {
    static_assert(std::is_same_v<typename PWF::input_type, T> && std::is_same_v<typename PWF::key_type, K>);
    using Agg = ReduceAggregate<T, F>;
    if (evictor_)
      return build(std::move(name), BufferPolicy<T, FoldBody<Agg, ProcessResult<PWF>>>({Agg(f), {fn}}, evictor_));
    return build(std::move(name), IncrementalPolicy<T, Agg, ProcessResult<PWF>>(Agg(f), {fn}));
  }
  // An AggregateFunction<T, Acc, R> (or any type with its members).
  template <window_detail::AggregateFn Agg>
  auto aggregate(Agg agg, std::string name = "Window") {
    using R = typename Agg::output_type;
    if (evictor_)
      return build(std::move(name), BufferPolicy<T, FoldBody<Agg, EmitResult<R>>>({agg, {}}, evictor_));
    return build(std::move(name), IncrementalPolicy<T, Agg, EmitResult<R>>(agg, {}));
  }
  // The aggregate's result handed to a ProcessWindowFunction<R, Out, K>.
  template <window_detail::AggregateFn Agg, window_detail::ProcessWindowFn PWF>
  auto aggregate(Agg agg, PWF fn, std::string name = "Window") {
    static_assert(std::is_same_v<typename PWF::input_type, typename Agg::output_type> &&
                  std::is_same_v<typename PWF::key_type, K>);
    if (evictor_)
      return build(std::move(name), BufferPolicy<T, FoldBody<Agg, ProcessResult<PWF>>>({agg, {fn}}, evictor_));
    return build(std::move(name), IncrementalPolicy<T, Agg, ProcessResult<PWF>>(agg, {fn}));
  }
  // A ProcessWindowFunction<T, Out, K> over all the window's elements.
  template <window_detail::ProcessWindowFn PWF>
  auto process(PWF fn, std::string name = "Window") {
    static_assert(std::is_same_v<typename PWF::input_type, T> && std::is_same_v<typename PWF::key_type, K>,
                  "process() takes a ProcessWindowFunction<T, Out, K> for this stream's T and K");
    return build(std::move(name), BufferPolicy<T, ProcessBody<PWF>>({fn}, evictor_));
  }
  // Results with their key, window and pane: WindowResult<K, T> / WindowResult<K, R>.
  template <class F>
  auto reduce_with_info(F f, std::string name = "Window") {
    using Agg = ReduceAggregate<T, F>;
    using Fin = EmitWindowResult<K, T>;
    if (evictor_) return build(std::move(name), BufferPolicy<T, FoldBody<Agg, Fin>>({Agg(f), {}}, evictor_));
    return build(std::move(name), IncrementalPolicy<T, Agg, Fin>(Agg(f), {}));
  }
  template <window_detail::AggregateFn Agg>
  auto aggregate_with_info(Agg agg, std::string name = "Window") {
    using Fin = EmitWindowResult<K, typename Agg::output_type>;
    if (evictor_) return build(std::move(name), BufferPolicy<T, FoldBody<Agg, Fin>>({agg, {}}, evictor_));
    return build(std::move(name), IncrementalPolicy<T, Agg, Fin>(agg, {}));
  }

  // What explain shows for the window operator.
  JsonValue describe() const {
    WindowNodeDescription d;
    d.assigner = config_.assigner->describe();
    d.trigger = (config_.trigger ? config_.trigger : config_.assigner->default_trigger())->describe();
    d.allowed_lateness_ms = config_.allowed_lateness;
    if (evictor_) d.evictor = evictor_->describe();
    if (config_.late_data_tag) d.late_data_side_output = config_.late_data_tag->name;
    return window_node_params(d);
  }

 private:
  template <class Policy>
  DataStream<typename Policy::Out> build(std::string name, Policy policy) {
    using Out = typename Policy::Out;
    auto cfg = config_;
    auto key_fn = keyed_.key_selector();
    DataStream<T> in = keyed_.stream();
    auto out = in.template then<Out>("window", std::move(name), [cfg, key_fn, policy] {
      return std::make_unique<WindowOperator<K, T, KeyFn, Policy>>(cfg, key_fn, policy);
    });
    out.node().params = describe();
    return out;
  }

  KeyedStream<T, K, KeyFn> keyed_;
  WindowConfig<T> config_;
  EvictorPtr<T> evictor_;
};

}  // namespace clink
