#pragma once
// The CEP entry points of the DataStream API (Flink's CEP.pattern and PatternStream):
//
//   auto matches = cep::pattern(events.key_by(&Event::user), pattern)
//                      .side_output_late_data(late_tag)          // optional
//                      .select([](const cep::Match<Event>& m) { return Alert{...}; });
//   auto timed_out = matches.side_output(timeout_tag);          // with select(tag, fn, fn)
//
// cep::pattern(keyed_stream, p) matches per key, at any parallelism; cep::pattern(stream,
// p) matches the whole stream as one sequence (one key, parallelism 1, as Flink does).
// Event time is the default; in_processing_time() matches in arrival order.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "clink/api/data_stream.hpp"
#include "clink/cep/cep_node_params.hpp"
#include "clink/cep/cep_operator.hpp"
#include "clink/cep/pattern.hpp"
#include "clink/cep/pattern_process_function.hpp"

namespace clink::cep {

template <class T, class K>
class PatternStream {
 public:
  PatternStream(DataStream<T> input, std::function<K(const T&)> key_fn, Pattern<T> pattern, bool keyed)
      : input_(std::move(input)), key_fn_(std::move(key_fn)), pattern_(std::move(pattern)), keyed_(keyed) {
    pattern_.validate();  // malformed patterns fail here, at job construction
  }

  PatternStream& in_processing_time() {
    options_.event_time = false;
    return *this;
  }
  PatternStream& in_event_time() {
    options_.event_time = true;
    return *this;
  }
  PatternStream& side_output_late_data(const OutputTag<T>& tag) {
    options_.late_data_tag = tag;
    return *this;
  }

  // fn(const Match<T>&) -> U: one result per match.
  template <class F>
  auto select(F fn, std::string name = "CEP") {
    using U = std::decay_t<std::invoke_result_t<F&, const Match<T>&>>;
    return build<U>([fn] { return std::make_shared<function_detail::SelectFunction<T, U, F>>(fn); }, std::move(name));
  }
  // fn(const Match<T>&, Collector<U>&): zero or more results per match.
  template <class U, class F>
  DataStream<U> flat_select(F fn, std::string name = "CEP") {
    return build<U>([fn] { return std::make_shared<function_detail::FlatSelectFunction<T, U, F>>(fn); },
                    std::move(name));
  }
  // As select, and each timed-out partial match becomes timeout_fn(partial, timeout
  // time) on the side output `tag` (read it with .side_output(tag) on the result).
  template <class X, class TF, class F>
  auto select(const OutputTag<X>& tag, TF timeout_fn, F fn, std::string name = "CEP") {
    using U = std::decay_t<std::invoke_result_t<F&, const Match<T>&>>;
    return build<U>(
        [tag, timeout_fn, fn] {
          return std::make_shared<function_detail::SelectWithTimeoutFunction<T, U, X, TF, F>>(tag, timeout_fn, fn);
        },
        std::move(name));
  }
  // A PatternProcessFunction<T, U> subclass, copied for every subtask.
  template <class Fn>
  auto process(Fn fn, std::string name = "CEP") {
    using U = typename Fn::output_type;
    static_assert(std::is_base_of_v<PatternProcessFunction<T, U>, Fn>, "process() takes a PatternProcessFunction<T, U>");
    return build<U>([fn] { return std::make_shared<Fn>(fn); }, std::move(name));
  }

  JsonValue describe() const {
    CepNodeDescription d;
    for (const auto& s : pattern_.steps()) d.steps.push_back(s.name + " " + s.quantifier.describe());
    d.within_ms = pattern_.window_time();
    d.after_match_skip = pattern_.skip_strategy().describe();
    d.event_time = options_.event_time;
    d.keyed = keyed_;
    return cep_node_params(d);
  }

 private:
  template <class U>
  DataStream<U> build(std::function<PatternProcessFunctionPtr<T, U>()> make_fn, std::string name) {
    auto pattern = pattern_;
    auto key_fn = key_fn_;
    auto options = options_;
    auto out = input_.template then<U>("cep", std::move(name), [pattern, key_fn, options, make_fn] {
      return std::make_unique<CepOperator<T, U, K>>(pattern, key_fn, make_fn(), options);
    });
    out.node().params = describe();
    if (!keyed_) out.set_parallelism(1);
    return out;
  }

  DataStream<T> input_;
  std::function<K(const T&)> key_fn_;
  Pattern<T> pattern_;
  bool keyed_;
  CepOptions<T> options_;
};

// Per-key matching on a keyed stream.
template <class T, class K, class KeyFn>
PatternStream<T, K> pattern(const KeyedStream<T, K, KeyFn>& keyed, Pattern<T> p) {
  KeyFn kf = keyed.key_selector();
  return PatternStream<T, K>(keyed.stream(), [kf](const T& v) { return kf(v); }, std::move(p), true);
}

// The whole stream as one sequence: one key, parallelism 1 (Flink's non-keyed CEP).
template <class T>
PatternStream<T, std::uint8_t> pattern(DataStream<T> stream, Pattern<T> p) {
  auto keyed = stream.key_by([](const T&) { return std::uint8_t{0}; }, "cep-all");
  return PatternStream<T, std::uint8_t>(keyed.stream(), [](const T&) { return std::uint8_t{0}; }, std::move(p), false);
}

}  // namespace clink::cep
