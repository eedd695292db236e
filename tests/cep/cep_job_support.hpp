#pragma once
// DataStream-level CEP test support: scripts of Event batches and watermarks for the
// scripted source (tests/support: it checkpoints its position and can pause at a step,
// for savepoints and injected failures), and a process function rendering matches and
// timeouts with key and time.
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cep_test_support.hpp"
#include "clink/api/data_stream.hpp"
#include "clink/cep/cep.hpp"

#include "../support/scripted_source.hpp"

namespace clink::test {

// Scripts of Event batches and watermarks for tests/support's scripted source.
using Script = std::vector<ScriptStep<Event>>;
using Control = SourceControl;

// The scripted source (uid "source"), held by `control`.
inline DataStream<Event> script_source(StreamExecutionEnvironment& env, Script script, std::shared_ptr<Control> control) {
  auto src = scripted_source(env, std::move(script), std::move(control));
  src.uid("source");
  return src;
}

inline const OutputTag<std::string>& timeout_tag() {
  static const OutputTag<std::string> tag("timeouts");
  return tag;
}

// "k<key> name:id,id ...@ts" per match; "timeout k<key> ...@ts" per timed-out partial to
// timeout_tag().
struct KeyedRender final : cep::PatternProcessFunction<Event, std::string> {
  static std::string key_of(const cep::Match<Event>& m) {
    for (const auto& [n, evs] : m)
      if (!evs.empty()) return "k" + std::to_string(evs.front().key);
    return "k?";
  }
  void process_match(const cep::Match<Event>& m, Context& ctx, Collector<std::string>& out) override {
    out.collect(key_of(m) + " " + render_match(m) + "@" + std::to_string(ctx.timestamp()));
  }
  bool handles_timed_out_matches() const override { return true; }
  void process_timed_out_match(const cep::Match<Event>& m, Context& ctx) override {
    ctx.output(timeout_tag(), "timeout " + key_of(m) + " " + render_match(m) + "@" + std::to_string(ctx.timestamp()));
  }
};

}  // namespace clink::test

// Instantiated once, in cep_engine_instances.cpp (three test files run it).
namespace clink::cep {
extern template class CepOperator<test::Event, std::string, std::int64_t>;
}  // namespace clink::cep
