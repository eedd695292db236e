#pragma once
// The typed window operators the seed names, as instantiations of the one engine
// (window_operator.hpp), not copies: keyed std::pair<Key, Value> records in,
// WindowResult<Key, Agg> out (key, window, pane, value), folding each value into the
// window's aggregate with initial() + combiner(), and merger() to combine aggregates
// (sessions and sliced sliding windows need it).
//
//   auto op = make_tumbling_window_operator<std::string, std::int64_t, std::int64_t>(
//       10000, [] { return 0; }, [](std::int64_t acc, const std::int64_t& v) { return acc + v; });
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "clink/core/error.hpp"
#include "clink/windows/window_assigners.hpp"
#include "clink/windows/window_functions.hpp"
#include "clink/windows/window_operator.hpp"

namespace clink {

struct PairKeyFn {
  template <class K, class V>
  const K& operator()(const std::pair<K, V>& p) const {
    return p.first;
  }
};

template <class Key, class Value, class Agg>
class FoldAggregate {
 public:
  using input_type = std::pair<Key, Value>;
  using accumulator_type = Agg;
  using output_type = Agg;
  FoldAggregate(std::function<Agg()> initial, std::function<Agg(Agg, const Value&)> combiner,
                std::function<Agg(Agg, Agg)> merger = {})
      : initial_(std::move(initial)), combiner_(std::move(combiner)), merger_(std::move(merger)) {
    if (!initial_ || !combiner_) throw ClinkError("window operator: initial() and combiner() are required");
  }
  Agg create_accumulator() const { return initial_(); }
  void add(const input_type& v, Agg& acc) const { acc = combiner_(std::move(acc), v.second); }
  Agg get_result(const Agg& acc) const { return acc; }
  void merge(Agg& acc, const Agg& other) const {
    if (!merger_) throw ClinkError("window operator: merging aggregates needs a merger()");
    acc = merger_(std::move(acc), other);
  }

 private:
  std::function<Agg()> initial_;
  std::function<Agg(Agg, const Value&)> combiner_;
  std::function<Agg(Agg, Agg)> merger_;
};

template <class Key, class Value, class Agg>
using AggregateWindowPolicy =
    IncrementalPolicy<std::pair<Key, Value>, FoldAggregate<Key, Value, Agg>, EmitWindowResult<Key, Agg>>;
template <class Key, class Value, class Agg>
using AggregateWindowOperator = WindowOperator<Key, std::pair<Key, Value>, PairKeyFn, AggregateWindowPolicy<Key, Value, Agg>>;

template <class Key, class Value, class Agg>
using TumblingWindowOperator = AggregateWindowOperator<Key, Value, Agg>;
template <class Key, class Value, class Agg>
using SlidingWindowOperator = AggregateWindowOperator<Key, Value, Agg>;
template <class Key, class Value, class Agg>
using SessionWindowOperator = AggregateWindowOperator<Key, Value, Agg>;

namespace detail {
template <class Key, class Value, class Agg>
std::unique_ptr<AggregateWindowOperator<Key, Value, Agg>> make_aggregate_window_operator(
    WindowAssignerPtr assigner, FoldAggregate<Key, Value, Agg> agg, std::int64_t allowed_lateness,
    std::optional<OutputTag<std::pair<Key, Value>>> late_tag, bool allow_slicing) {
  WindowConfig<std::pair<Key, Value>> cfg;
  cfg.assigner = std::move(assigner);
  cfg.allowed_lateness = allowed_lateness;
  cfg.late_data_tag = std::move(late_tag);
  cfg.allow_slicing = allow_slicing;
  return std::make_unique<AggregateWindowOperator<Key, Value, Agg>>(
      cfg, PairKeyFn{}, AggregateWindowPolicy<Key, Value, Agg>(std::move(agg), {}));
}
}  // namespace detail

template <class Key, class Value, class Agg>
auto make_tumbling_window_operator(std::int64_t size, std::function<Agg()> initial,
                                   std::function<Agg(Agg, const Value&)> combiner, std::int64_t allowed_lateness = 0,
                                   std::optional<OutputTag<std::pair<Key, Value>>> late_tag = std::nullopt) {
  // One pane per window: slicing needs no merger.
  return detail::make_aggregate_window_operator<Key, Value, Agg>(
      std::make_shared<TumblingEventTimeWindows>(size),
      FoldAggregate<Key, Value, Agg>(std::move(initial), std::move(combiner)), allowed_lateness, std::move(late_tag),
      true);
}

// With a merger, each record updates one slice and windows combine slices.
template <class Key, class Value, class Agg>
auto make_sliding_window_operator(std::int64_t size, std::int64_t slide, std::function<Agg()> initial,
                                  std::function<Agg(Agg, const Value&)> combiner,
                                  std::function<Agg(Agg, Agg)> merger = {}, std::int64_t allowed_lateness = 0) {
  return detail::make_aggregate_window_operator<Key, Value, Agg>(
      std::make_shared<SlidingEventTimeWindows>(size, slide),
      FoldAggregate<Key, Value, Agg>(std::move(initial), std::move(combiner), merger), allowed_lateness, std::nullopt,
      static_cast<bool>(merger));
}

template <class Key, class Value, class Agg>
auto make_session_window_operator(std::int64_t gap, std::function<Agg()> initial,
                                  std::function<Agg(Agg, const Value&)> combiner, std::function<Agg(Agg, Agg)> merger,
                                  std::int64_t allowed_lateness = 0) {
  if (!merger) throw ClinkError("session windows need a merger()");
  return detail::make_aggregate_window_operator<Key, Value, Agg>(
      std::make_shared<EventTimeSessionWindows>(gap),
      FoldAggregate<Key, Value, Agg>(std::move(initial), std::move(combiner), std::move(merger)), allowed_lateness,
      std::nullopt, false);
}

// Buffers the records of each (key, window) so an evictor can filter them before a
// process function runs over the survivors.
template <class Key, class Value, class Out>
struct BufferedWindowFunction final : ProcessWindowFunction<std::pair<Key, Value>, Out, Key> {
  using Fn = std::function<void(const Key&, const TimeWindow&, const std::vector<Value>&, Collector<Out>&)>;
  Fn fn;
  explicit BufferedWindowFunction(Fn f) : fn(std::move(f)) {}
  void process(const Key& key, WindowContext& ctx, const WindowElements<std::pair<Key, Value>>& elements,
               Collector<Out>& out) override {
    values_.clear();
    for (const auto& e : elements) values_.push_back(e.second);
    fn(key, ctx.window(), values_, out);
  }

 private:
  std::vector<Value> values_;
};

template <class Key, class Value, class Out>
using EvictingTumblingWindowOperator =
    WindowOperator<Key, std::pair<Key, Value>, PairKeyFn,
                   BufferPolicy<std::pair<Key, Value>, ProcessBody<BufferedWindowFunction<Key, Value, Out>>>>;

template <class Key, class Value, class Out>
auto make_evicting_tumbling_window_operator(std::int64_t size, EvictorPtr<std::pair<Key, Value>> evictor,
                                            typename BufferedWindowFunction<Key, Value, Out>::Fn fn,
                                            std::int64_t allowed_lateness = 0) {
  WindowConfig<std::pair<Key, Value>> cfg;
  cfg.assigner = std::make_shared<TumblingEventTimeWindows>(size);
  cfg.allowed_lateness = allowed_lateness;
  using Policy = BufferPolicy<std::pair<Key, Value>, ProcessBody<BufferedWindowFunction<Key, Value, Out>>>;
  return std::make_unique<EvictingTumblingWindowOperator<Key, Value, Out>>(
      cfg, PairKeyFn{}, Policy({BufferedWindowFunction<Key, Value, Out>(std::move(fn))}, std::move(evictor)));
}

}  // namespace clink
