#pragma once
// DataStream-level CEP test support: a scripted source of Event batches and watermarks
// that checkpoints its position and can pause at a step (for savepoints and injected
// failures), and a process function rendering matches and timeouts with key and time.
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cep_test_support.hpp"
#include "clink/api/data_stream.hpp"
#include "clink/cep/cep.hpp"

namespace clink::cep::testing {

struct Step {
  std::vector<std::pair<Event, EventTime>> records;
  std::optional<EventTime> watermark;
};
using Script = std::vector<Step>;

struct Control {
  std::atomic<std::size_t> pause_at{static_cast<std::size_t>(-1)};
  std::atomic<std::size_t> emitted{0};
};

class PausableSource final : public SourceOperator {
 public:
  PausableSource(Script steps, std::shared_ptr<Control> control) : steps_(std::move(steps)), control_(std::move(control)) {}
  void open(RuntimeContext& ctx) override {
    SourceOperator::open(ctx);
    if (ctx.is_restored()) {
      auto& pos = ctx.operator_state().list("position");
      if (!pos.empty()) next_ = std::stoul(pos.front());
    }
  }
  PollStatus poll_next() override {
    if (next_ >= steps_.size()) return PollStatus::kEnd;
    if (next_ == control_->pause_at.load()) return PollStatus::kNothingAvailable;
    const Step& s = steps_[next_++];
    if (!s.records.empty()) {
      auto b = std::make_unique<Batch<Event>>();
      for (const auto& [v, t] : s.records) b->push(v, t);
      output().emit(std::move(b));
    }
    if (s.watermark) output().emit_watermark(Watermark{*s.watermark, false});
    control_->emitted = next_;
    return next_ < steps_.size() ? PollStatus::kMore : PollStatus::kEnd;
  }
  void snapshot_state(std::int64_t) override { ctx().operator_state().list("position").assign(1, std::to_string(next_)); }

 private:
  Script steps_;
  std::shared_ptr<Control> control_;
  std::size_t next_ = 0;
};

inline DataStream<Event> script_source(StreamExecutionEnvironment& env, Script script, std::shared_ptr<Control> control) {
  JobNode n;
  n.factory = "pausable_cep_source";
  n.name = "Scripted";
  n.num_inputs = 0;
  n.out_type = type_name<Event>();
  n.parallelism = 1;
  n.build = [script, control] { return std::make_unique<PausableSource>(script, control); };
  DataStream<Event> src(&env, env.add_node(std::move(n)));
  src.uid("source");
  return src;
}

inline const OutputTag<std::string>& timeout_tag() {
  static const OutputTag<std::string> tag("timeouts");
  return tag;
}

// "k<key> name:id,id ...@ts" per match; "timeout k<key> ...@ts" per timed-out partial to
// timeout_tag().
struct KeyedRender final : PatternProcessFunction<Event, std::string> {
  static std::string key_of(const Match<Event>& m) {
    for (const auto& [n, evs] : m)
      if (!evs.empty()) return "k" + std::to_string(evs.front().key);
    return "k?";
  }
  void process_match(const Match<Event>& m, Context& ctx, Collector<std::string>& out) override {
    out.collect(key_of(m) + " " + render_match(m) + "@" + std::to_string(ctx.timestamp()));
  }
  bool handles_timed_out_matches() const override { return true; }
  void process_timed_out_match(const Match<Event>& m, Context& ctx) override {
    ctx.output(timeout_tag(), "timeout " + key_of(m) + " " + render_match(m) + "@" + std::to_string(ctx.timestamp()));
  }
};

}  // namespace clink::cep::testing

// Instantiated once, in cep_engine_instances.cpp (three test files run it).
namespace clink::cep {
extern template class CepOperator<testing::Event, std::string, std::int64_t>;
}  // namespace clink::cep
