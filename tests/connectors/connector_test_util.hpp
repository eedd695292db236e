#pragma once
// Helpers for connector tests: a temporary directory, whole-file I/O, and a runtime
// context so that readers and writers can be driven directly, without an executor.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "clink/api/sink.hpp"
#include "clink/api/source.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/runtime/runtime_context.hpp"

#include "../support/temp_dir.hpp"

namespace clink::test {

namespace fs = std::filesystem;

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Records what an operator emits, main and side outputs.
class CapturingOutput final : public Output {
 public:
  void emit(BatchPtr batch) override { main.push_back(std::move(batch)); }
  void emit_watermark(Watermark wm) override { watermarks.push_back(wm); }
  void emit_side(const std::string& tag, BatchPtr batch) override { side[tag].push_back(std::move(batch)); }

  template <class X>
  std::vector<X> side_values(const std::string& tag) const {
    std::vector<X> out;
    auto it = side.find(tag);
    if (it == side.end()) return out;
    for (const auto& b : it->second)
      for (const auto& r : batch_cast<X>(*b).records) out.push_back(r.value);
    return out;
  }

  std::vector<BatchPtr> main;
  std::map<std::string, std::vector<BatchPtr>> side;
  std::vector<Watermark> watermarks;
};

// A runtime context for subtask `subtask` of `parallelism`, emitting into `output`.
struct TestContext {
  CapturingOutput output;
  std::shared_ptr<OperatorMetrics> metrics = std::make_shared<OperatorMetrics>();
  RuntimeContext ctx;
  explicit TestContext(int subtask = 0, int parallelism = 1, std::string id = "src")
      : ctx(id, id, subtask, parallelism, 128, &output, metrics, SystemClock::instance()) {}
};

// Polls a reader until it ends; returns all records. Fails the test (throws) if the
// reader keeps reporting nothing available for longer than a generous bound.
template <class T>
std::vector<Record<T>> drain(SourceReader<T>& reader, std::size_t batch = 1024) {
  std::vector<Record<T>> all;
  for (;;) {
    Batch<T> b;
    auto s = reader.poll(b, batch);
    all.insert(all.end(), b.records.begin(), b.records.end());
    if (s == SourceOperator::PollStatus::kEnd) return all;
    if (s == SourceOperator::PollStatus::kNothingAvailable)
      ::usleep(static_cast<useconds_t>(reader.wait_hint_ms() * 1000));
  }
}

// Reads the whole share of subtask `subtask` of `source`, opened in a TestContext.
template <class T>
std::vector<T> read_all(const Source<T>& source, int subtask = 0, int parallelism = 1) {
  TestContext tc(subtask, parallelism);
  auto reader = source.create_reader(subtask, parallelism);
  reader->open(tc.ctx);
  std::vector<T> values;
  for (auto& r : drain(*reader)) values.push_back(std::move(r.value));
  reader->close();
  return values;
}

template <class T>
std::vector<T> values_of(const std::vector<Record<T>>& records) {
  std::vector<T> v;
  for (const auto& r : records) v.push_back(r.value);
  return v;
}

}  // namespace clink::test
