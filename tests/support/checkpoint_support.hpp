#pragma once
// What the checkpoint and restore tests share: a scratch directory, checkpointed
// execution options per state backend, and running a job until it has checkpointed.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <tuple>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "clink/api/data_stream.hpp"
#include "clink/connectors/datagen.hpp"
#include "clink/state/keyed_state.hpp"
#include "clink/runtime/executor.hpp"

#include "temp_dir.hpp"

namespace clink::test {

template <class T>
std::vector<T> sorted(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Parameterised over the state backend ("memory", "rocksdb"); instantiate with
// INSTANTIATE_TEST_SUITE_P(Backends, Suite, ::testing::Values("memory", "rocksdb"), ...).
class BackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  // Checkpoints every `interval_ms` into `dir` on this test's backend; up to 5 restarts.
  ExecutionOptions checkpointing(const std::filesystem::path& dir, std::int64_t interval_ms = 50) const {
    ExecutionOptions o;
    o.checkpoints.interval_ms = interval_ms;
    o.checkpoints.directory = dir;
    o.checkpoints.state_backend.kind = GetParam();
    o.checkpoints.state_backend.working_dir = dir / "working";
    o.restart = RestartStrategy::fixed_delay(5, 10);
    return o;
  }
};

// Runs the job until `checkpoints` more checkpoints completed (or it ended), then cancels.
inline void run_until_checkpoints(StreamExecutionEnvironment& env, ExecutionOptions options, int checkpoints = 2) {
  auto handle = execute_async(env.graph(), std::move(options));
  auto start = handle.checkpoint_counts().completed;
  while (handle.checkpoint_counts().completed < start + checkpoints && !handle.wait_for(std::chrono::milliseconds(5))) {
  }
  handle.cancel();
  handle.wait();
}

// The self-checking job of the exactly-once tests (Flink's all-round job in small):
// every key k of kSequenceKeys sees k, k+8, k+16, ... in keyed state, and a gap or a
// repeat fails the job.
inline constexpr std::int64_t kSequenceKeys = 8;
using SequenceOut = std::tuple<std::int64_t, std::int64_t, std::int64_t>;  // key, value, count so far

struct SequenceChecker final : KeyedProcessFunction<std::int64_t, std::int64_t, SequenceOut> {
  void process_element(const std::int64_t& v, Context& ctx, Collector<SequenceOut>& out) override {
    auto& last = ctx.state().get_state(ValueStateDescriptor<std::int64_t>{"last"});
    auto& count = ctx.state().get_state(ValueStateDescriptor<std::int64_t>{"count"});
    std::int64_t expected = last.value() ? *last.value() + kSequenceKeys : ctx.current_key();
    if (v != expected)
      throw std::runtime_error("key " + std::to_string(ctx.current_key()) + ": expected " + std::to_string(expected) +
                               ", got " + std::to_string(v));
    last.update(v);
    std::int64_t c = count.value().value_or(0) + 1;
    count.update(c);
    out.collect({ctx.current_key(), v, c});
  }
};

// Fails the record `at`, `failures_left` times in a row (once per attempt).
struct Injector {
  std::atomic<int> failures_left{0};
  std::atomic<std::int64_t> at{-1};
};

// The injector's map function: fails on its record, passes every other one on.
inline auto failing_at(std::shared_ptr<Injector> injector) {
  return [injector](std::int64_t v) {
    if (v == injector->at.load() && injector->failures_left.fetch_sub(1) > 0)
      throw std::runtime_error("injected failure at " + std::to_string(v));
    return v;
  };
}

// datagen 0..n-1 (parallelism 1, rate-limited so that checkpoints happen) -> failure
// injector -> keyBy(v % 8) -> SequenceChecker (uid "checker"; set its parallelism).
inline DataStream<SequenceOut> checked_sequence(StreamExecutionEnvironment& env, std::int64_t n, double rate,
                                                std::shared_ptr<Injector> injector) {
  DatagenOptions opts;
  opts.rows_per_second = rate;
  return env.from_source<std::int64_t>(DatagenSource<std::int64_t>::sequence(0, n - 1, opts), "Numbers")
      .set_parallelism(1)
      .uid("numbers")
      .map(failing_at(injector), "Injector")
      .set_parallelism(1)
      .uid("injector")
      .key_by([](std::int64_t v) { return v % kSequenceKeys; })
      .process(SequenceChecker{}, "Checker")
      .uid("checker");
}

}  // namespace clink::test
