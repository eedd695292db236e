#pragma once
// The built-in spec operators as DataStream API calls. Each adds the same operator the
// registry builds and records its factory name and params on the node, so a C++ job
// explains and serialises (to_spec) like the equivalent JobGraphSpec.
#include <cstdint>
#include <string>

#include "clink/api/data_stream.hpp"
#include "clink/api/spec_types.hpp"
#include "clink/operators/builtin_node_params.hpp"
#include "clink/operators/count_operator.hpp"
#include "clink/operators/event_time_count.hpp"
#include "clink/operators/key_selectors.hpp"
#include "clink/operators/tokenize.hpp"
#include "clink/operators/watermark_assigner_operator.hpp"

namespace clink {

// Lines -> lower-case alphanumeric tokens ("tokenize").
inline DataStream<std::string> tokenize(DataStream<std::string> lines, std::string name = "Tokenize") {
  return lines.template then<std::string>("tokenize", std::move(name),
                                          [] { return std::make_unique<TokenizeOperator>(Tokenizer{}); });
}

// Hash-partitions by key (string.self / event.key) and counts per key ("count").
template <class In>
DataStream<WordCount> count(DataStream<In> in, CountEmit emit = CountEmit::kFinal, std::string name = "Count") {
  using KeyFn = std::conditional_t<std::is_same_v<In, Event>, EventKey, StringSelfKey>;
  DataStream<In> keyed = in.key_by(KeyFn{}, KeyFn::kName).stream();
  auto out = keyed.template then<WordCount>("count", std::move(name),
                                            [emit] { return std::make_unique<CountOperator<In>>(emit); });
  out.node().params = count_node_params(emit == CountEmit::kEvery);
  return out;
}

// Bounded-out-of-orderness watermarks ("watermark_assigner").
template <class T>
DataStream<T> assign_watermarks(DataStream<T> in, std::int64_t out_of_orderness_ms,
                                std::string name = "WatermarkAssigner") {
  auto out = in.template then<T>("watermark_assigner", std::move(name), [out_of_orderness_ms] {
    return std::make_unique<WatermarkAssignerOperator<T>>(out_of_orderness_ms);
  });
  out.node().params = watermark_assigner_node_params(out_of_orderness_ms);
  return out;
}

// Hash-partitions by event.key and counts per key per tumbling bucket ("event_time_count").
inline DataStream<WindowCount> event_time_count(DataStream<Event> in, std::int64_t size_ms,
                                                std::string name = "EventTimeCount") {
  if (size_ms <= 0) throw ClinkError("event_time_count: size_ms must be positive");
  DataStream<Event> keyed = in.key_by(EventKey{}, EventKey::kName).stream();
  auto out = keyed.template then<WindowCount>("event_time_count", std::move(name),
                                              [size_ms] { return make_event_time_count_operator(size_ms); });
  out.node().params = event_time_count_node_params(size_ms);
  return out;
}

}  // namespace clink
