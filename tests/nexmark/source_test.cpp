// NexmarkSource: splits of the stream positions over subtasks, the same events at any
// parallelism, checkpointed splits (with their base time) restored exactly, pacing.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "../connectors/connector_test_util.hpp"
#include "clink/api/data_stream.hpp"
#include "clink/checkpoint/operator_state.hpp"
#include "clink/connectors/collect_sink.hpp"
#include "clink/connectors/nexmark/nexmark_generator.hpp"
#include "clink/connectors/nexmark/nexmark_source.hpp"
#include "clink/core/error.hpp"

namespace clink::test {
namespace {

using nexmark::NexmarkGenerator;

std::shared_ptr<NexmarkSource> fast_source(std::int64_t events, std::int64_t base_time = 0) {
  return NexmarkSource::from_options({{"events.num", std::to_string(events)},
                                      {"events.base-time", std::to_string(base_time)},
                                      {"max-emit-speed", "true"}});
}

std::vector<NexmarkEvent> expected_events(const NexmarkSource& source, std::vector<std::int64_t> positions) {
  NexmarkGenerator g(source.options().generator);
  std::vector<NexmarkEvent> out;
  for (auto n : positions) out.push_back(g.event(n));
  return out;
}

std::vector<std::string> texts(const std::vector<NexmarkEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(to_string(e));
  std::sort(out.begin(), out.end());
  return out;
}

TEST(NexmarkSource, SubtaskReadsEveryParallelismthPositionWithItsDateTimeAsEventTime) {
  auto source = fast_source(10);
  EXPECT_EQ(read_all<NexmarkEvent>(*source, 1, 4), expected_events(*source, {1, 5, 9}));
  EXPECT_EQ(read_all<NexmarkEvent>(*source, 3, 4), expected_events(*source, {3, 7}));
  EXPECT_EQ(read_all<NexmarkEvent>(*source, 0, 1), expected_events(*source, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  auto tiny = fast_source(2);
  EXPECT_EQ(read_all<NexmarkEvent>(*tiny, 1, 4), expected_events(*tiny, {1}));
  EXPECT_TRUE(read_all<NexmarkEvent>(*tiny, 2, 4).empty());
  EXPECT_TRUE(read_all<NexmarkEvent>(*tiny, 3, 4).empty());

  TestContext tc(0, 1);
  auto reader = source->create_reader(0, 1);
  reader->open(tc.ctx);
  auto records = drain(*reader, 3);  // batches of 3: 3 + 3 + 3 + 1
  ASSERT_EQ(records.size(), 10u);
  for (const auto& r : records) EXPECT_EQ(r.event_time, r.value.date_time());
  EXPECT_EQ(records[9].event_time, 1);  // event number 10 at 100 us apart: 1 ms
}

TEST(NexmarkSource, ParallelismOneAndFourProduceTheSameEvents) {
  const std::int64_t n = 5000;
  auto run = [&](int parallelism) {
    auto source = fast_source(n, 1600000000000);
    auto sink = std::make_shared<CollectSink<NexmarkEvent>>();
    StreamExecutionEnvironment env;
    env.from_source<NexmarkEvent>(source, "Nexmark").set_parallelism(parallelism).sink_to(sink);
    env.execute();
    return texts(sink->values());
  };
  std::vector<std::int64_t> all(n);
  for (std::int64_t i = 0; i < n; ++i) all[static_cast<std::size_t>(i)] = i;
  auto expected = texts(expected_events(*fast_source(n, 1600000000000), all));
  EXPECT_EQ(run(1), expected);
  EXPECT_EQ(run(4), expected);
}

// Reads `batches` batches of `size` from each of `p` readers (restored from `from` when
// given), appending events to `out`; returns each reader's split snapshot.
std::vector<OperatorStateStore> read_some(const NexmarkSource& source, int p, int batches, std::size_t size,
                                          std::vector<NexmarkEvent>& out,
                                          const std::vector<OperatorStateStore>* from = nullptr) {
  std::vector<OperatorStateStore> stores(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) {
    TestContext tc(s, p);
    auto reader = source.create_reader(s, p);
    reader->open(tc.ctx);
    if (from) reader->restore_splits(OperatorStateStore::redistribute(*from, s, p).list("source-splits"));
    for (int i = 0; i < batches; ++i) {
      Batch<NexmarkEvent> b;
      auto status = reader->poll(b, size);
      for (auto& r : b.records) out.push_back(r.value);
      if (status == SourceOperator::PollStatus::kEnd) break;
    }
    stores[static_cast<std::size_t>(s)].list("source-splits") = *reader->snapshot_splits();
  }
  return stores;
}

TEST(NexmarkSource, RestoredSplitsContinueExactlyAtAnyParallelism) {
  auto source = fast_source(1000, 7000);
  std::vector<NexmarkEvent> got;
  auto st = read_some(*source, 2, 3, 100, got);  // each reader: 300 of its 500
  EXPECT_EQ(st[0].list("source-splits"), (std::vector<std::string>{"600 2 999 7000"}));
  EXPECT_EQ(st[1].list("source-splits"), (std::vector<std::string>{"601 2 999 7000"}));
  st = read_some(*source, 3, 1, 50, got, &st);  // one reader with nothing: 100 more in all
  st = read_some(*source, 1, 1000, 64, got, &st);  // one reader with both splits, to the end
  EXPECT_EQ(st[0].list("source-splits"), std::vector<std::string>{});
  std::vector<std::int64_t> all(1000);
  for (std::int64_t i = 0; i < 1000; ++i) all[static_cast<std::size_t>(i)] = i;
  EXPECT_EQ(texts(got), texts(expected_events(*source, all)));
}

TEST(NexmarkSource, ARestoreKeepsTheCheckpointedBaseTime) {
  auto first = fast_source(100, 5000);
  std::vector<NexmarkEvent> got;
  auto st = read_some(*first, 1, 1, 40, got);
  auto second = fast_source(100, 999999);  // a later run: another base time
  read_some(*second, 1, 10, 40, got, &st);
  std::vector<std::int64_t> all(100);
  for (std::int64_t i = 0; i < 100; ++i) all[static_cast<std::size_t>(i)] = i;
  EXPECT_EQ(got, expected_events(*first, all));  // in order: one reader
  EXPECT_EQ(got[99].date_time(), 5000 + 10);     // event number 100 at 100 us apart
}

TEST(NexmarkSource, BadRestoredSplitsAreErrors) {
  auto source = fast_source(100);
  auto error = [&](std::vector<std::string> splits) -> std::string {
    TestContext tc(0, 1);
    auto reader = source->create_reader(0, 1);
    reader->open(tc.ctx);
    try {
      reader->restore_splits(std::move(splits));
    } catch (const ClinkError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(error({"1 2 3"}), "nexmark: malformed split '1 2 3' in the restored checkpoint");
  EXPECT_EQ(error({"1 0 3 0"}), "nexmark: malformed split '1 0 3 0' in the restored checkpoint");
  EXPECT_EQ(error({"1 1 3 0 x"}), "nexmark: malformed split '1 1 3 0 x' in the restored checkpoint");
  EXPECT_EQ(error({"0 1 500 0"}),
            "nexmark: restored split '0 1 500 0' goes past the 100 events of this source's configuration");
  EXPECT_EQ(error({"0 2 99 0", "1 2 99 5"}), "nexmark: restored splits have different base times (0 and 5)");
  EXPECT_EQ(error({"0 2 99 0", "1 2 99 0"}), "no error");
}

TEST(NexmarkSource, PacedAtTheFirstEventRateUnlessMaxEmitSpeed) {
  auto paced = NexmarkSource::from_options({{"events.num", "300"}, {"first-event.rate", "1000"}});
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(read_all<NexmarkEvent>(*paced).size(), 300u);
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GE(elapsed, std::chrono::milliseconds(250));  // 300 events at 1000/s, from an empty bucket
  EXPECT_LT(elapsed, std::chrono::seconds(5));
  EXPECT_FALSE(paced->options().max_emit_speed);
  EXPECT_EQ(read_all<NexmarkEvent>(*fast_source(50000)).size(), 50000u);
}

TEST(NexmarkSource, BaseTimeDefaultsToWhenTheSourceIsMade) {
  auto before = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  auto source = NexmarkSource::from_options({{"events.num", "5"}});
  auto after = std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  EXPECT_GE(source->options().generator.base_time, before);
  EXPECT_LE(source->options().generator.base_time, after);
  EXPECT_EQ(source->factory_name(), "nexmark");
}

}  // namespace
}  // namespace clink::test
