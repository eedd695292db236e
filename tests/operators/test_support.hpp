#pragma once
// Test helpers local to the operator tests (with tests/support's scripted source): a
// collecting sink and a probe that logs records and watermarks.
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "clink/api/data_stream.hpp"
#include "clink/core/format_value.hpp"

#include "../support/scripted_source.hpp"

namespace clink::test {

// What a CollectSink saw: every record with the subtask that wrote it, in order.
template <class T>
struct Collected {
  struct Entry {
    int subtask;
    T value;
    EventTime event_time;
  };
  std::mutex mu;
  std::vector<Entry> entries;

  std::vector<T> values() {
    std::lock_guard lock(mu);
    std::vector<T> v;
    for (const auto& e : entries) v.push_back(e.value);
    return v;
  }
  std::vector<T> values_of(int subtask) {
    std::lock_guard lock(mu);
    std::vector<T> v;
    for (const auto& e : entries)
      if (e.subtask == subtask) v.push_back(e.value);
    return v;
  }
  std::vector<std::string> strings() {
    std::vector<std::string> out;
    for (const auto& v : values()) out.push_back(format_value(v));
    return out;
  }
};

template <class T>
class CollectSink final : public Sink<T> {
 public:
  explicit CollectSink(std::shared_ptr<Collected<T>> into) : into_(std::move(into)) {}
  std::string factory_name() const override { return "test_collect"; }
  std::unique_ptr<SinkWriter<T>> create_writer(int subtask, int) const override {
    return std::make_unique<Writer>(into_, subtask);
  }

 private:
  class Writer final : public SinkWriter<T> {
   public:
    Writer(std::shared_ptr<Collected<T>> into, int subtask) : into_(std::move(into)), subtask_(subtask) {}
    void write(const Batch<T>& batch) override {
      std::lock_guard lock(into_->mu);
      for (const auto& r : batch.records) into_->entries.push_back({subtask_, r.value, r.event_time});
    }

   private:
    std::shared_ptr<Collected<T>> into_;
    int subtask_;
  };
  std::shared_ptr<Collected<T>> into_;
};

// Sinks `stream` into a fresh Collected, at the stream's parallelism (chained).
template <class T>
std::shared_ptr<Collected<T>> collect(DataStream<T> stream) {
  auto c = std::make_shared<Collected<T>>();
  int parallelism = stream.env().graph().parallelism_of(stream.node());
  stream.sink_to(std::make_shared<CollectSink<T>>(c), "Collect");
  stream.env().graph().nodes.back().parallelism = parallelism;  // chained to the stream's subtasks
  return c;
}

// Logs "value@ts" for records and "W<ts>" for watermarks, in arrival order.
struct ProbeLog {
  std::mutex mu;
  std::vector<std::string> lines;
  std::vector<std::string> get() {
    std::lock_guard lock(mu);
    return lines;
  }
};

inline std::string ts_text(EventTime t) {
  if (t == kMaxEventTime) return "MAX";
  if (t == kMinEventTime) return "MIN";
  return std::to_string(t);
}

template <class T>
class ProbeOperator final : public StreamOperator {
 public:
  explicit ProbeOperator(std::shared_ptr<ProbeLog> log) : log_(std::move(log)) {}
  void process_batch(int, BatchPtr batch) override {
    std::lock_guard lock(log_->mu);
    for (const auto& r : batch_cast<T>(*batch).records)
      log_->lines.push_back(format_value(r.value) + "@" + ts_text(r.event_time));
  }
  void process_watermark(Watermark wm) override {
    std::lock_guard lock(log_->mu);
    log_->lines.push_back("W" + ts_text(wm.timestamp));
  }

 private:
  std::shared_ptr<ProbeLog> log_;
};

template <class T>
std::shared_ptr<ProbeLog> probe(DataStream<T> stream) {
  auto log = std::make_shared<ProbeLog>();
  stream.template then<T>("probe", "Probe", [log] { return std::make_unique<ProbeOperator<T>>(log); });
  return log;
}

}  // namespace clink::test
