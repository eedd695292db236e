#pragma once
// A test source that plays a script of batches, watermarks and waits, so tests control
// exactly what each input sends and when.
#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "clink/runtime/operator.hpp"

namespace clink::testing {

template <class T>
class ScriptedSource final : public SourceOperator {
 public:
  using Step = std::function<void(Output&)>;

  ScriptedSource& records(std::vector<std::pair<T, EventTime>> values) {
    steps_.push_back([values](Output& out) {
      auto b = std::make_unique<Batch<T>>();
      for (const auto& [v, ts] : values) b->push(v, ts);
      out.emit(std::move(b));
    });
    return *this;
  }
  ScriptedSource& watermark(Watermark wm) {
    steps_.push_back([wm](Output& out) { out.emit_watermark(wm); });
    return *this;
  }
  // Blocks the source until `ready` holds (or 10 s pass, which fails the job).
  ScriptedSource& wait_until(std::function<bool()> ready) {
    steps_.push_back([ready](Output&) {
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!ready()) {
        if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("scripted source timed out");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    return *this;
  }
  ScriptedSource& then(Step step) {
    steps_.push_back(std::move(step));
    return *this;
  }

  PollStatus poll_next() override {
    if (next_ >= steps_.size()) return PollStatus::kEnd;
    steps_[next_++](output());
    return next_ >= steps_.size() ? PollStatus::kEnd : PollStatus::kMore;
  }

 private:
  std::vector<Step> steps_;
  std::size_t next_ = 0;
};

}  // namespace clink::testing
