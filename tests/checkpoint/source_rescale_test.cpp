// Sources restore at another parallelism, as Flink's FLIP-27 sources do: each reader
// checkpoints its splits and a restore deals them over the new readers. The
// exactly-once output must equal the failure-free run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <thread>

#include "clink/api/data_stream.hpp"
#include "clink/checkpoint/checkpoint_metadata.hpp"
#include "clink/connectors/datagen.hpp"
#include "clink/connectors/exactly_once_collect_sink.hpp"
#include "clink/connectors/file_source.hpp"
#include "clink/state/keyed_state.hpp"

#include "../support/checkpoint_support.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kKeys = 8;


// Counts each key's values in keyed state and fails on more than `per_key` (a repeat
// the sink could not hide); passes the value on.
struct CountChecker final : KeyedProcessFunction<std::int64_t, std::int64_t, std::int64_t> {
  std::int64_t per_key;
  explicit CountChecker(std::int64_t n) : per_key(n) {}
  void process_element(const std::int64_t& v, Context& ctx, Collector<std::int64_t>& out) override {
    auto& count = ctx.state().get_state(ValueStateDescriptor<std::int64_t>{"count"});
    std::int64_t c = count.value().value_or(0) + 1;
    if (c > per_key) throw std::runtime_error("key " + std::to_string(ctx.current_key()) + " repeated a value");
    count.update(c);
    out.collect(v);
  }
};

// datagen 0..n-1 at `source_parallelism` (rate-limited so checkpoints happen) ->
// keyBy -> count checker (parallelism 2) -> exactly-once sink.
void build_datagen_job(StreamExecutionEnvironment& env, std::int64_t n, double rate, int source_parallelism,
                       std::shared_ptr<ExactlyOnceCollectSink<std::int64_t>> sink) {
  DatagenOptions opts;
  opts.rows_per_second = rate;
  env.from_source<std::int64_t>(DatagenSource<std::int64_t>::sequence(0, n - 1, opts), "Numbers")
      .set_parallelism(source_parallelism)
      .uid("numbers")
      .key_by([](std::int64_t v) { return v % kKeys; })
      .process(CountChecker{n / kKeys}, "Checker")
      .set_parallelism(2)
      .uid("checker")
      .sink_to(sink, "Sink");
}

class SourceRescale : public BackendTest {};
INSTANTIATE_TEST_SUITE_P(Backends, SourceRescale, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });



std::vector<std::int64_t> rows(std::int64_t n) {
  std::vector<std::int64_t> all(static_cast<std::size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  return all;
}

// Source parallelism 3 -> (checkpoint) 1 -> (savepoint) 2, to the end: one reader
// restored with all three splits, then two readers with two and one.
TEST_P(SourceRescale, DatagenRestoresAtAnotherSourceParallelismExactlyOnce) {
  TempDir dir;
  auto sink = std::make_shared<ExactlyOnceCollectSink<std::int64_t>>();
  const std::int64_t n = 20000;  // at 6000 rows/s no part gets near the end
  {
    StreamExecutionEnvironment env;
    build_datagen_job(env, n, 6000, 3, sink);
    run_until_checkpoints(env, checkpointing(dir.path));
  }
  auto from = latest_checkpoint(dir.path);
  ASSERT_TRUE(from.has_value());
  std::size_t committed = sink->values().size();
  EXPECT_GT(committed, 0u);
  {
    StreamExecutionEnvironment env;
    build_datagen_job(env, n, 6000, 1, sink);
    auto options = checkpointing(dir.path, 0);
    options.restore = RestoreSettings{*from};
    auto handle = execute_async(env.graph(), options);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    handle.stop_with_savepoint(dir.path / "sp-1");
  }
  EXPECT_GT(sink->values().size(), committed) << "parallelism 1 made progress";
  EXPECT_LT(sink->values().size(), static_cast<std::size_t>(n));
  StreamExecutionEnvironment env;
  build_datagen_job(env, n, 0, 2, sink);
  auto options = checkpointing(dir.path);
  options.restore = RestoreSettings{dir.path / "sp-1"};
  execute_async(env.graph(), options).wait();
  EXPECT_EQ(sorted(sink->values()), rows(n));
}

// Source parallelism 1 -> 3: the one split goes to one reader, the other two have none
// and end at once (and wait for their final checkpoint while the first reads on).
TEST_P(SourceRescale, DatagenScaledUpPastItsSplitsReadsEachRowOnce) {
  TempDir dir;
  auto sink = std::make_shared<ExactlyOnceCollectSink<std::int64_t>>();
  const std::int64_t n = 20000;
  {
    StreamExecutionEnvironment env;
    build_datagen_job(env, n, 6000, 1, sink);
    run_until_checkpoints(env, checkpointing(dir.path));
  }
  auto from = latest_checkpoint(dir.path);
  ASSERT_TRUE(from.has_value());
  EXPECT_GT(sink->values().size(), 0u);
  StreamExecutionEnvironment env;
  build_datagen_job(env, n, 0, 3, sink);
  auto options = checkpointing(dir.path);
  options.restore = RestoreSettings{*from};
  execute_async(env.graph(), options).wait();
  EXPECT_EQ(sorted(sink->values()), rows(n));
}

// A directory of 5 files read at parallelism 2 -> 1 -> 3 (the first two throttled so
// checkpoints fall mid-file).
TEST_P(SourceRescale, FileSourceRestoresAtAnotherSourceParallelismExactlyOnce) {
  TempDir dir;
  const int files = 5, lines = 4000;
  std::vector<std::string> expected;
  fs::create_directories(dir.path / "in");
  for (int f = 0; f < files; ++f) {
    std::ofstream out(dir.path / "in" / ("part-" + std::to_string(f) + ".txt"));
    for (int i = 0; i < lines; ++i) {
      std::string line = "f" + std::to_string(f) + "-" + std::to_string(i);
      out << line << "\n";
      expected.push_back(line);
    }
  }
  auto sink = std::make_shared<ExactlyOnceCollectSink<std::string>>();
  auto seen = std::make_shared<std::atomic<std::int64_t>>(0);
  auto build = [&](StreamExecutionEnvironment& env, int p, bool throttled) {
    env.from_source<std::string>(FileSource<std::string>::text((dir.path / "in").string()), "Lines")
        .set_parallelism(p)
        .uid("lines")
        .map([throttled, seen](const std::string& s) {
          if (throttled && seen->fetch_add(1) % 10 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
          return s;
        }, "Throttle")
        .set_parallelism(p)
        .uid("throttle")
        .sink_to(sink, "Sink");
  };
  fs::path ckpt = dir.path / "checkpoints";
  std::optional<fs::path> from;
  std::size_t committed = 0;
  for (int p : {2, 1}) {
    StreamExecutionEnvironment env;
    build(env, p, true);
    auto options = checkpointing(ckpt);
    if (from) options.restore = RestoreSettings{*from};
    run_until_checkpoints(env, options);
    from = latest_checkpoint(ckpt);
    ASSERT_TRUE(from.has_value());
    EXPECT_GT(sink->values().size(), committed) << "parallelism " << p << " made progress";
    committed = sink->values().size();
  }
  EXPECT_LT(committed, expected.size());
  StreamExecutionEnvironment env;
  build(env, 3, false);
  auto options = checkpointing(ckpt);
  options.restore = RestoreSettings{*from};
  execute_async(env.graph(), options).wait();
  EXPECT_EQ(sorted(sink->values()), sorted(expected));
}

// Counts the records behind the watermark (what a window drops as late).
struct LateCounter final : ProcessFunction<std::string, std::string> {
  std::shared_ptr<std::atomic<std::int64_t>> late;
  explicit LateCounter(std::shared_ptr<std::atomic<std::int64_t>> l) : late(std::move(l)) {}
  void process_element(const std::string& s, Context& ctx, Collector<std::string>& out) override {
    if (ctx.timestamp() <= ctx.current_watermark()) late->fetch_add(1);
    out.collect(s);
  }
};

// Issue 16: a restored reader given two old readers' files read them one after the other,
// so the first's later files pushed the source's watermark past the second's rows. Each
// old reader's files are a lane, read interleaved with a watermark each. Files 0 and 1
// hold event times 0..2999, files 2 and 3 3000..5999; stopped at parallelism 2 in files 0
// and 1, resumed at 1.
TEST_P(SourceRescale, FileSourceScaledDownMakesNoRecordLate) {
  TempDir dir;
  const int lines = 3000;
  std::vector<std::string> expected;
  fs::create_directories(dir.path / "in");
  for (int f = 0; f < 4; ++f) {
    std::ofstream out(dir.path / "in" / ("part-" + std::to_string(f) + ".txt"));
    for (int i = 0; i < lines; ++i) {
      std::string line = std::to_string((f / 2) * lines + i) + " f" + std::to_string(f);
      out << line << "\n";
      expected.push_back(line);
    }
  }
  auto sink = std::make_shared<ExactlyOnceCollectSink<std::string>>();
  auto seen = std::make_shared<std::atomic<std::int64_t>>(0);
  auto late = std::make_shared<std::atomic<std::int64_t>>(0);
  auto build = [&](StreamExecutionEnvironment& env, int p, bool throttled) {
    MonotonicWatermarkStrategy<std::string> watermarks;
    watermarks.with_timestamp_assigner(
        [](const std::string& s, EventTime) { return std::stoll(s.substr(0, s.find(' '))); });
    env.from_source<std::string>(FileSource<std::string>::text((dir.path / "in").string()), watermarks, "Lines")
        .set_parallelism(p)
        .uid("lines")
        .map([throttled, seen](const std::string& s) {
          if (throttled && seen->fetch_add(1) % 10 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
          return s;
        }, "Throttle")
        .set_parallelism(p)
        .uid("throttle")
        .process(LateCounter{late}, "Late")
        .set_parallelism(1)
        .uid("late")
        .sink_to(sink, "Sink");
  };
  {
    StreamExecutionEnvironment env;
    build(env, 2, true);
    auto handle = execute_async(env.graph(), checkpointing(dir.path, 0));
    for (int i = 0; i < 3000 && seen->load() < 1000; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    handle.stop_with_savepoint(dir.path / "sp");
  }
  const std::size_t committed = sink->values().size();
  EXPECT_GT(committed, 0u);
  EXPECT_LT(committed, static_cast<std::size_t>(2 * lines)) << "stopped within the first two files";
  late->store(0);
  StreamExecutionEnvironment env;
  build(env, 1, false);
  auto options = checkpointing(dir.path);
  options.restore = RestoreSettings{dir.path / "sp"};
  execute_async(env.graph(), options).wait();
  EXPECT_EQ(late->load(), 0);
  EXPECT_EQ(sorted(sink->values()), sorted(expected));
}

}  // namespace
}  // namespace clink::test
