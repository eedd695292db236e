#pragma once
// The scripted source of the tests: it plays a script of steps, one per poll (records,
// watermarks, waits, or any action on its output), so a test controls exactly what an
// input sends and when. Its position is checkpointed (a restored run goes on after the
// last step taken), and a SourceControl can hold it before a step (to take a savepoint
// there, or arm a failure) and tells how many steps the running instance took.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "clink/api/data_stream.hpp"
#include "clink/core/type_name.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/runtime/runtime_context.hpp"

namespace clink::test {

struct SourceControl {
  std::atomic<std::size_t> pause_at{static_cast<std::size_t>(-1)};  // hold before this step
  std::atomic<std::size_t> emitted{0};                               // steps taken so far
};

// One step of a data script: a batch of (value, event time), then optionally a watermark.
template <class T>
struct ScriptStep {
  std::vector<std::pair<T, EventTime>> records;
  std::optional<EventTime> watermark;
};

// T: the record type of records(); a script of other batches (SQL's ColumnBatch) emits
// them with then().
template <class T>
class ScriptedSource final : public SourceOperator {
 public:
  using Step = std::function<void(Output&)>;
  // A step that is retried (the source reports nothing available) until it returns true.
  using Retry = std::function<bool(Output&)>;

  explicit ScriptedSource(std::shared_ptr<SourceControl> control = nullptr) : control_(std::move(control)) {}
  ScriptedSource(const std::vector<ScriptStep<T>>& steps, std::shared_ptr<SourceControl> control = nullptr)
      : control_(std::move(control)) {
    for (const auto& s : steps)
      then([s](Output& out) {
        if (!s.records.empty()) out.emit(batch_of(s.records));
        if (s.watermark) out.emit_watermark(Watermark::at(*s.watermark));
      });
  }

  ScriptedSource& records(std::vector<std::pair<T, EventTime>> values) {
    return then([values](Output& out) { out.emit(batch_of(values)); });
  }
  ScriptedSource& watermark(Watermark wm) {
    return then([wm](Output& out) { out.emit_watermark(wm); });
  }
  // Holds the source (polls report nothing available, as a real idle source does)
  // until `ready` holds; after 10 s the job fails.
  ScriptedSource& wait_until(std::function<bool()> ready) {
    auto deadline = std::make_shared<std::chrono::steady_clock::time_point>();
    steps_.push_back([ready, deadline](Output&) {
      if (*deadline == std::chrono::steady_clock::time_point{})
        *deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      if (ready()) return true;
      if (std::chrono::steady_clock::now() > *deadline) throw std::runtime_error("scripted source timed out");
      return false;
    });
    return *this;
  }
  ScriptedSource& then(Step step) {
    steps_.push_back([step](Output& out) {
      step(out);
      return true;
    });
    return *this;
  }

  void open(RuntimeContext& ctx) override {
    SourceOperator::open(ctx);
    if (ctx.is_restored()) {
      auto& pos = ctx.operator_state().list(kPosition);
      if (!pos.empty()) next_ = std::stoul(pos.front());
    }
  }
  PollStatus poll_next() override {
    if (next_ >= steps_.size()) return PollStatus::kEnd;
    if (control_ && next_ == control_->pause_at.load()) return PollStatus::kNothingAvailable;
    if (!steps_[next_](output())) return PollStatus::kNothingAvailable;
    ++next_;
    if (control_) control_->emitted = next_;
    return next_ >= steps_.size() ? PollStatus::kEnd : PollStatus::kMore;
  }
  void snapshot_state(std::int64_t) override { ctx().operator_state().list(kPosition).assign(1, std::to_string(next_)); }

 private:
  static constexpr const char* kPosition = "position";
  static BatchPtr batch_of(const std::vector<std::pair<T, EventTime>>& values) {
    auto b = std::make_unique<Batch<T>>();
    for (const auto& [v, ts] : values) b->push(v, ts);
    return b;
  }

  std::shared_ptr<SourceControl> control_;
  std::vector<Retry> steps_;
  std::size_t next_ = 0;
};

// A parallelism-1 source node playing a script, added straight to the graph.
template <class T>
DataStream<T> scripted(StreamExecutionEnvironment& env, std::function<void(ScriptedSource<T>&)> script,
                       std::string name = "Scripted") {
  JobNode n;
  n.factory = "scripted";
  n.name = std::move(name);
  n.num_inputs = 0;
  n.parallelism = 1;
  n.out_type = type_name<T>();
  n.build = [script] {
    auto s = std::make_unique<ScriptedSource<T>>();
    script(*s);
    return s;
  };
  return DataStream<T>(&env, env.add_node(std::move(n)));
}

// The same for a data script; `control` (optional) holds it before a step.
template <class T>
DataStream<T> scripted_source(StreamExecutionEnvironment& env, std::vector<ScriptStep<T>> steps,
                              std::shared_ptr<SourceControl> control = nullptr, std::string name = "Scripted") {
  JobNode n;
  n.factory = "scripted";
  n.name = std::move(name);
  n.num_inputs = 0;
  n.out_type = type_name<T>();
  n.parallelism = 1;
  n.build = [steps, control] { return std::make_unique<ScriptedSource<T>>(steps, control); };
  return DataStream<T>(&env, env.add_node(std::move(n)));
}

}  // namespace clink::test
