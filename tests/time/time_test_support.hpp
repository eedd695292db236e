#pragma once
// Helpers for the event-time and window tests: tests/support's scripted source (exact
// batches, watermarks and waits) and manual clock, and a probe that logs records
// ("value@ts"), watermarks ("W<ts>") and idle markers ("IDLE") in arrival order.
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "../support/manual_clock.hpp"
#include "../support/scripted_source.hpp"
#include "clink/api/data_stream.hpp"
#include "clink/core/format_value.hpp"

namespace clink::test {

inline std::string ts_text(EventTime t) {
  if (t == kMaxEventTime) return "MAX";
  if (t == kMinEventTime) return "MIN";
  return std::to_string(t);
}

struct ProbeLog {
  mutable std::mutex mu;
  std::vector<std::string> lines;
  std::vector<std::string> get() const {
    std::lock_guard lock(mu);
    return lines;
  }
  bool contains(const std::string& line) const {
    std::lock_guard lock(mu);
    for (const auto& l : lines)
      if (l == line) return true;
    return false;
  }
  std::size_t size() const {
    std::lock_guard lock(mu);
    return lines.size();
  }
  void add(std::string line) {
    std::lock_guard lock(mu);
    lines.push_back(std::move(line));
  }
};

template <class T>
class ProbeOperator final : public StreamOperator {
 public:
  ProbeOperator(std::shared_ptr<ProbeLog> log, bool watermarks) : log_(std::move(log)), watermarks_(watermarks) {}
  void process_batch(int, BatchPtr batch) override {
    for (const auto& r : batch_cast<T>(*batch).records) log_->add(format_value(r.value) + "@" + ts_text(r.event_time));
    output().emit(std::move(batch));
  }
  void process_watermark(Watermark wm) override {
    if (watermarks_) log_->add(wm.idle ? "IDLE" : "W" + ts_text(wm.timestamp));
    output().emit_watermark(wm);
  }

 private:
  std::shared_ptr<ProbeLog> log_;
  bool watermarks_;
};

// Logs what `stream` carries (chained to its operator: same subtasks, same order).
template <class T>
std::shared_ptr<ProbeLog> probe(DataStream<T> stream, bool watermarks = true) {
  auto log = std::make_shared<ProbeLog>();
  stream.template then<T>("probe", "Probe", [log, watermarks] {
    return std::make_unique<ProbeOperator<T>>(log, watermarks);
  });
  return log;
}

}  // namespace clink::test
