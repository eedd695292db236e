// The nexmark source through checkpoints on both state backends: a job checkpointed
// mid-stream and restored in a new run, at another parallelism and with another base
// time by default, emits exactly the events of an uninterrupted run, each once.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "../support/checkpoint_support.hpp"
#include "clink/api/data_stream.hpp"
#include "clink/checkpoint/checkpoint_metadata.hpp"
#include "clink/connectors/exactly_once_collect_sink.hpp"
#include "clink/connectors/nexmark/nexmark_generator.hpp"
#include "clink/connectors/nexmark/nexmark_source.hpp"

namespace clink::test {
namespace {

constexpr std::int64_t kEvents = 20000;

// nexmark (events.num = kEvents, first-event.rate 6000: paced, or at max speed) ->
// text -> exactly-once sink. The rate sets the timestamps, so every run keeps it; no
// events.base-time: each run's source takes its own, and a restore must keep the first.
void build_job(StreamExecutionEnvironment& env, bool paced, int parallelism,
               std::shared_ptr<ExactlyOnceCollectSink<std::string>> sink,
               std::shared_ptr<NexmarkSource>* made = nullptr) {
  std::map<std::string, std::string> options = {{"events.num", std::to_string(kEvents)},
                                                {"first-event.rate", "6000"},
                                                {"max-emit-speed", paced ? "false" : "true"}};
  auto source = NexmarkSource::from_options(options);
  if (made) *made = source;
  env.from_source<NexmarkEvent>(source, "Nexmark")
      .set_parallelism(parallelism)
      .uid("nexmark")
      .map([](const NexmarkEvent& e) { return to_string(e); }, "Text")
      .set_parallelism(parallelism)
      .uid("text")
      .sink_to(sink, "Sink");
}

std::vector<std::string> expected_texts(const NexmarkSource& source) {
  nexmark::NexmarkGenerator g(source.options().generator);
  std::vector<std::string> out;
  for (std::int64_t n = 0; n < kEvents; ++n) out.push_back(to_string(g.event(n)));
  return sorted(out);
}

// Equal, or a short account of the first difference (the full lists are long).
::testing::AssertionResult same_texts(const std::vector<std::string>& got, const std::vector<std::string>& want) {
  if (got == want) return ::testing::AssertionSuccess();
  std::size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  return ::testing::AssertionFailure() << got.size() << " events, expected " << want.size() << "; first difference at "
                                       << i << ": got '" << (i < got.size() ? got[i].substr(0, 160) : "<end>")
                                       << "', expected '" << (i < want.size() ? want[i].substr(0, 160) : "<end>")
                                       << "'";
}

class NexmarkRestore : public BackendTest {};
INSTANTIATE_TEST_SUITE_P(Backends, NexmarkRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

// Parallelism 2 (checkpointed, cancelled) -> 3, to the end.
TEST_P(NexmarkRestore, RestoredRunEmitsExactlyTheUninterruptedEvents) {
  TempDir dir;
  auto sink = std::make_shared<ExactlyOnceCollectSink<std::string>>();
  std::shared_ptr<NexmarkSource> first;
  {
    StreamExecutionEnvironment env;
    build_job(env, true, 2, sink, &first);  // at 6000 events/s no subtask nears the end
    run_until_checkpoints(env, checkpointing(dir.path));
  }
  auto from = latest_checkpoint(dir.path);
  ASSERT_TRUE(from.has_value());
  std::size_t committed = sink->values().size();
  EXPECT_GT(committed, 0u);
  EXPECT_LT(committed, static_cast<std::size_t>(kEvents));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the next source's base time differs
  StreamExecutionEnvironment env;
  std::shared_ptr<NexmarkSource> second;
  build_job(env, false, 3, sink, &second);
  EXPECT_NE(second->options().generator.base_time, first->options().generator.base_time);
  auto options = checkpointing(dir.path);
  options.restore = RestoreSettings{*from};
  execute_async(env.graph(), options).wait();
  EXPECT_TRUE(same_texts(sorted(sink->values()), expected_texts(*first)));
}

// Parallelism 3 -> (checkpoint) 1 -> (savepoint) 2: one reader with all three splits,
// then two readers with two and one.
TEST_P(NexmarkRestore, SavepointAndRescaleKeepEveryEventOnce) {
  TempDir dir;
  auto sink = std::make_shared<ExactlyOnceCollectSink<std::string>>();
  std::shared_ptr<NexmarkSource> first;
  {
    StreamExecutionEnvironment env;
    build_job(env, true, 3, sink, &first);
    run_until_checkpoints(env, checkpointing(dir.path));
  }
  auto from = latest_checkpoint(dir.path);
  ASSERT_TRUE(from.has_value());
  std::size_t committed = sink->values().size();
  {
    StreamExecutionEnvironment env;
    build_job(env, true, 1, sink);
    auto options = checkpointing(dir.path, 0);
    options.restore = RestoreSettings{*from};
    auto handle = execute_async(env.graph(), options);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    handle.stop_with_savepoint(dir.path / "sp-1");
  }
  EXPECT_GT(sink->values().size(), committed) << "parallelism 1 made progress";
  EXPECT_LT(sink->values().size(), static_cast<std::size_t>(kEvents));
  StreamExecutionEnvironment env;
  build_job(env, false, 2, sink);
  auto options = checkpointing(dir.path);
  options.restore = RestoreSettings{dir.path / "sp-1"};
  execute_async(env.graph(), options).wait();
  EXPECT_TRUE(same_texts(sorted(sink->values()), expected_texts(*first)));
}

}  // namespace
}  // namespace clink::test
