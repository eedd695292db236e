#pragma once
// A test source that plays a script of batches, watermarks and waits, so tests control
// exactly what each input sends and when.
#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "clink/api/data_stream.hpp"
#include "clink/core/type_name.hpp"
#include "clink/runtime/operator.hpp"

namespace clink::testing {

template <class T>
class ScriptedSource final : public SourceOperator {
 public:
  using Step = std::function<void(Output&)>;
  // A step that is retried (the source reports nothing available) until it returns true.
  using Retry = std::function<bool(Output&)>;

  ScriptedSource& records(std::vector<std::pair<T, EventTime>> values) {
    return then([values](Output& out) {
      auto b = std::make_unique<Batch<T>>();
      for (const auto& [v, ts] : values) b->push(v, ts);
      out.emit(std::move(b));
    });
    return *this;
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

  PollStatus poll_next() override {
    if (next_ >= steps_.size()) return PollStatus::kEnd;
    if (!steps_[next_](output())) return PollStatus::kNothingAvailable;
    ++next_;
    return next_ >= steps_.size() ? PollStatus::kEnd : PollStatus::kMore;
  }

 private:
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

}  // namespace clink::testing
