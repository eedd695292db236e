#include "clink/runtime/executor.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <atomic>
#include <mutex>
#include <thread>

#include "clink/api/data_stream.hpp"
#include "clink/connectors/collect_sink.hpp"
#include "clink/core/error.hpp"
#include "../support/scripted_source.hpp"

namespace clink::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

template <class T>
std::vector<T> sorted(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::int64_t> range(std::int64_t from, std::int64_t to) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = from; i < to; ++i) v.push_back(i);
  return v;
}


TEST(Executor, MapFilterFlatMapProduceExactRecords) {
  StreamExecutionEnvironment env;
  auto sink = std::make_shared<CollectSink<std::int64_t>>();
  env.from_collection<std::int64_t>(range(0, 10))
      .map([](std::int64_t x) { return x * 3; })
      .filter([](std::int64_t x) { return x % 2 == 0; })
      .flat_map<std::int64_t>([](std::int64_t x, Collector<std::int64_t>& out) {
        out.collect(x);
        out.collect(-x);
      })
      .sink_to(sink);
  env.execute();
  EXPECT_THAT(sink->values(), ElementsAre(0, 0, 6, -6, 12, -12, 18, -18, 24, -24));
}

TEST(Executor, ChainsForwardEdgesOfEqualParallelism) {
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  auto sink = std::make_shared<CollectSink<std::int64_t>>();
  auto src = env.from_collection<std::int64_t>(range(0, 5));                  // parallelism 1
  auto mapped = src.map([](std::int64_t x) { return x; }).set_parallelism(1);  // chained to the source
  auto filtered = mapped.rebalance().filter([](std::int64_t) { return true; });
  filtered.map([](std::int64_t x) { return x + 1; }).sink_to(sink);
  auto plan = plan_tasks(env.graph());
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].chain, (std::vector<std::string>{"collection-1", "map-1"}));
  EXPECT_EQ(plan[0].parallelism, 1);
  EXPECT_EQ(plan[1].chain, (std::vector<std::string>{"filter-1", "map-2", "collect-1"}));
  EXPECT_EQ(plan[1].parallelism, 2);
  env.execute();
  EXPECT_THAT(sorted(sink->values()), ElementsAre(1, 2, 3, 4, 5));
}

// Records which batch objects pass through, to show chaining hands over the same batch.
struct BatchAddresses {
  std::mutex mu;
  std::vector<const BatchBase*> seen;
};
class RecordingPassThrough final : public StreamOperator {
 public:
  explicit RecordingPassThrough(std::shared_ptr<BatchAddresses> a) : a_(std::move(a)) {}
  void process_batch(int, BatchPtr b) override {
    {
      std::lock_guard lock(a_->mu);
      a_->seen.push_back(b.get());
    }
    output().emit(std::move(b));
  }

 private:
  std::shared_ptr<BatchAddresses> a_;
};

TEST(Executor, ChainedOperatorsHandOverTheSameBatchWithoutCopy) {
  StreamExecutionEnvironment env;
  auto first = std::make_shared<BatchAddresses>();
  auto second = std::make_shared<BatchAddresses>();
  auto sink = std::make_shared<CollectSink<std::int64_t>>();
  env.from_collection<std::int64_t>(range(0, 3000))
      .then<std::int64_t>("rec1", "Rec1", [first] { return std::make_unique<RecordingPassThrough>(first); })
      .then<std::int64_t>("rec2", "Rec2", [second] { return std::make_unique<RecordingPassThrough>(second); })
      .sink_to(sink);
  ASSERT_EQ(plan_tasks(env.graph()).size(), 1u);
  env.execute();
  ASSERT_EQ(first->seen.size(), 3u);  // 3000 records in batches of 1024
  EXPECT_EQ(first->seen, second->seen);
  EXPECT_EQ(sink->values(), range(0, 3000));
}

TEST(Executor, HashPartitioningRoutesEachKeyToTheSubtaskOfItsKeyGroup) {
  StreamExecutionEnvironment env;
  env.set_parallelism(3);
  struct Where final : KeyedProcessFunction<std::int64_t, std::int64_t, std::pair<std::int64_t, int>> {
    void process_element(const std::int64_t& v, Context& ctx, Collector<std::pair<std::int64_t, int>>& out) override {
      out.collect({v, ctx.runtime_context().subtask_index()});
    }
  };
  auto sink = std::make_shared<CollectSink<std::pair<std::int64_t, int>>>();
  env.from_collection<std::int64_t>(range(0, 1000))
      .key_by([](std::int64_t v) { return v % 50; })
      .process(Where{})
      .sink_to(sink);
  env.execute();
  auto got = sink->values();
  ASSERT_EQ(got.size(), 1000u);
  std::set<int> used;
  for (auto [v, subtask] : got) {
    int kg = key_group_for_hash(key_hash(encode_key<std::int64_t>(v % 50)), 128);
    EXPECT_EQ(subtask, subtask_for_key_group(kg, 128, 3)) << v;
    used.insert(subtask);
  }
  EXPECT_EQ(used.size(), 3u);
}

TEST(Executor, EverySubtaskGetsItsOwnCopyOfTheFunction) {
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  struct Counting final : KeyedProcessFunction<std::int64_t, std::int64_t, std::pair<int, std::int64_t>> {
    std::int64_t seen = 0;  // per-subtask state: a shared instance would count both subtasks
    void process_element(const std::int64_t&, Context& ctx, Collector<std::pair<int, std::int64_t>>& out) override {
      out.collect({ctx.runtime_context().subtask_index(), ++seen});
    }
  };
  auto sink = std::make_shared<CollectSink<std::pair<int, std::int64_t>>>();
  env.from_collection<std::int64_t>(range(0, 400)).key_by([](std::int64_t v) { return v; }).process(Counting{}).sink_to(sink);
  env.execute();
  std::map<int, std::int64_t> last, records;
  for (auto [subtask, seen] : sink->values()) {
    EXPECT_EQ(seen, ++records[subtask]);  // each copy counts exactly its own records, in order
    last[subtask] = seen;
  }
  ASSERT_EQ(last.size(), 2u);
  EXPECT_EQ(last[0] + last[1], 400);
}

TEST(Executor, RebalanceSpreadsAndBroadcastCopiesToEverySubtask) {
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  auto rebalanced = std::make_shared<CollectSink<int>>();
  auto broadcast = std::make_shared<CollectSink<int>>();
  auto src = env.from_collection<std::int64_t>(range(0, 4096));
  struct Sub final : ProcessFunction<std::int64_t, int> {
    void process_element(const std::int64_t&, Context& ctx, Collector<int>& out) override {
      out.collect(ctx.runtime_context().subtask_index());
    }
  };
  src.rebalance().process(Sub{}).sink_to(rebalanced);
  src.broadcast().process(Sub{}).sink_to(broadcast);
  env.execute();
  auto r = rebalanced->values();
  EXPECT_EQ(std::count(r.begin(), r.end(), 0), 2048);  // 4 batches of 1024, round-robin
  EXPECT_EQ(std::count(r.begin(), r.end(), 1), 2048);
  auto b = broadcast->values();
  EXPECT_EQ(std::count(b.begin(), b.end(), 0), 4096);
  EXPECT_EQ(std::count(b.begin(), b.end(), 1), 4096);
}

TEST(Executor, FailingOperatorFailsTheJobWithItsMessageAndStopsEveryTask) {
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  // An unbounded source: only the failure can stop this job.
  auto forever = scripted<std::int64_t>(env, [](ScriptedSource<std::int64_t>& s) {
    s.then([](Output& out) {
      for (;;) {
        auto b = std::make_unique<Batch<std::int64_t>>();
        for (int i = 0; i < 100; ++i) b->push(i);
        out.emit(std::move(b));
      }
    });
  });
  forever.rebalance()
      .map([](std::int64_t x) -> std::int64_t {
        if (x == 42) throw std::runtime_error("boom at 42");
        return x;
      }, "Exploder")
      .sink_to(std::make_shared<CollectSink<std::int64_t>>());
  try {
    env.execute();
    FAIL() << "the job should have failed";
  } catch (const JobFailedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("Exploder ("));
    EXPECT_THAT(e.what(), HasSubstr("/2) failed: boom at 42"));
  }
}

TEST(Executor, FailureInsideAChainNamesTheFailingOperator) {
  StreamExecutionEnvironment env;
  env.from_collection<std::int64_t>(range(0, 10))
      .map([](std::int64_t x) { return x; }, "Fine")
      .filter([](std::int64_t x) -> bool {
        if (x == 7) throw std::invalid_argument("bad record 7");
        return true;
      }, "Picky")
      .sink_to(std::make_shared<CollectSink<std::int64_t>>());
  auto handle = env.execute_async();
  EXPECT_THROW(handle.wait(), JobFailedError);
  EXPECT_EQ(handle.status(), JobStatus::kFailed);
  EXPECT_EQ(handle.error(), "Picky (1/1) failed: bad record 7");
}

// Buffers everything and emits it, tagged, at end of input.
class TagAtFinish final : public StreamOperator {
 public:
  explicit TagAtFinish(std::string tag) : tag_(std::move(tag)) {}
  void process_batch(int, BatchPtr b) override {
    for (auto& r : batch_cast<std::string>(*b).records) buffered_.push_back(r.value + ">" + tag_);
  }
  void finish() override {
    auto out = std::make_unique<Batch<std::string>>();
    for (auto& v : buffered_) out->push(v);
    out->push("end-of-" + tag_);
    output().emit(std::move(out));
  }

 private:
  std::string tag_;
  std::vector<std::string> buffered_;
};

TEST(Executor, EndOfInputFlushesOperatorsInTopologicalOrder) {
  for (bool chaining : {true, false}) {
    StreamExecutionEnvironment env;
    if (!chaining) env.disable_operator_chaining();
    auto sink = std::make_shared<CollectSink<std::string>>();
    env.from_collection<std::string>({"x", "y"})
        .then<std::string>("a", "A", [] { return std::make_unique<TagAtFinish>("A"); })
        .then<std::string>("b", "B", [] { return std::make_unique<TagAtFinish>("B"); })
        .sink_to(sink);
    env.execute();
    EXPECT_THAT(sink->values(), ElementsAre("x>A>B", "y>A>B", "end-of-A>B", "end-of-B")) << chaining;
  }
}

// Records every watermark it is given; read from other threads.
struct SeenWatermarks {
  mutable std::mutex mu;
  std::vector<Watermark> list;
  std::vector<Watermark> get() const {
    std::lock_guard lock(mu);
    return list;
  }
  bool contains(Watermark wm) const {
    std::lock_guard lock(mu);
    return std::find(list.begin(), list.end(), wm) != list.end();
  }
};
class WatermarkRecorder final : public StreamOperator {
 public:
  explicit WatermarkRecorder(std::shared_ptr<SeenWatermarks> seen) : seen_(std::move(seen)) {}
  void process_batch(int, BatchPtr b) override { output().emit(std::move(b)); }
  void process_watermark(Watermark wm) override {
    {
      std::lock_guard lock(seen_->mu);
      seen_->list.push_back(wm);
    }
    StreamOperator::process_watermark(wm);
  }

 private:
  std::shared_ptr<SeenWatermarks> seen_;
};

TEST(Executor, UnionWatermarkIsTheMinimumOverLiveInputsAndIgnoresIdleOnes) {
  StreamExecutionEnvironment env;
  auto seen = std::make_shared<SeenWatermarks>();
  // Each source waits for the downstream to have seen the previous step, so the
  // interleaving (and with it the exact sequence) is fixed.
  auto a = scripted<std::int64_t>(env, [seen](ScriptedSource<std::int64_t>& s) {
    s.watermark(Watermark::at(10))
        .wait_until([seen] { return seen->contains(Watermark::at(10)); })  // B went idle
        .watermark(Watermark::at(30))
        .wait_until([seen] { return seen->contains(Watermark::at(30)); });
  }, "A");
  auto b = scripted<std::int64_t>(env, [seen](ScriptedSource<std::int64_t>& s) {
    s.watermark(Watermark::at(5))
        .wait_until([seen] { return seen->contains(Watermark::at(5)); })
        .watermark(Watermark::idle_marker())
        .wait_until([seen] { return seen->contains(Watermark::at(30)); });
  }, "B");
  a.union_with(b)
      .then<std::int64_t>("rec", "Recorder", [seen] { return std::make_unique<WatermarkRecorder>(seen); })
      .sink_to(std::make_shared<CollectSink<std::int64_t>>());
  env.execute();
  // 5 (min of 10 and 5), 10 (B idle), 30 (B still idle), then max when both end.
  EXPECT_THAT(seen->get(), ElementsAre(Watermark::at(5), Watermark::at(10), Watermark::at(30), Watermark::max()));
}

TEST(Executor, KeyedEventTimeTimersFireInOrderOncePerKeyAndTime) {
  StreamExecutionEnvironment env;
  using Out = std::tuple<std::string, std::int64_t, std::int64_t>;  // key, timer, watermark seen
  struct TimerFn final : KeyedProcessFunction<std::string, std::string, Out> {
    void process_element(const std::string&, Context& ctx, Collector<Out>&) override {
      ctx.timer_service().register_event_time_timer(ctx.timestamp() + 10);
    }
    void on_timer(std::int64_t ts, OnTimerContext& ctx, Collector<Out>& out) override {
      out.collect({ctx.current_key(), ts, ctx.timer_service().current_watermark()});
    }
  };
  auto sink = std::make_shared<CollectSink<Out>>();
  scripted<std::string>(env, [](ScriptedSource<std::string>& s) {
    s.records({{"b", 5}, {"a", 5}, {"a", 5}, {"a", 1}})  // a@15 registered twice: fires once
        .watermark(Watermark::at(14))                     // fires a@11
        .records({{"c", 20}})
        .watermark(Watermark::at(15))  // fires a@15, b@15 (time, then key order)
        .watermark(Watermark::at(100));
  }).key_by([](const std::string& s) { return s; })
      .process(TimerFn{})
      .sink_to(sink);
  env.execute();
  auto recs = sink->records();
  std::vector<Out> values;
  std::vector<EventTime> stamps;
  for (auto& r : recs) {
    values.push_back(r.value);
    stamps.push_back(r.event_time);
  }
  EXPECT_THAT(values, ElementsAre(Out{"a", 11, 14}, Out{"a", 15, 15}, Out{"b", 15, 15}, Out{"c", 30, 100}));
  EXPECT_THAT(stamps, ElementsAre(11, 15, 15, 30));  // output carries the timer's time
}

TEST(Executor, ProcessingTimeTimersFireWhenTheClockPasses) {
  StreamExecutionEnvironment env;
  std::atomic<bool> fired{false};
  struct ProcFn final : KeyedProcessFunction<std::string, std::string, std::string> {
    void process_element(const std::string& v, Context& ctx, Collector<std::string>&) override {
      ctx.timer_service().register_processing_time_timer(ctx.timer_service().current_processing_time() + 20);
      (void)v;
    }
    void on_timer(std::int64_t, OnTimerContext& ctx, Collector<std::string>& out) override {
      EXPECT_EQ(ctx.time_domain(), TimeDomain::kProcessingTime);
      out.collect("timer:" + ctx.current_key());
    }
  };
  auto sink = std::make_shared<CollectSink<std::string>>();
  scripted<std::string>(env, [&fired, sink](ScriptedSource<std::string>& s) {
    s.records({{"k", kNoEventTime}}).wait_until([sink] { return !sink->values().empty(); });
  }).key_by([](const std::string& s) { return s; })
      .process(ProcFn{})
      .sink_to(sink);
  env.execute();
  EXPECT_THAT(sink->values(), ElementsAre("timer:k"));
  (void)fired;
}

TEST(Executor, SideOutputsCarryTaggedRecords) {
  StreamExecutionEnvironment env;
  OutputTag<std::string> odd_tag("odd");
  struct Split final : ProcessFunction<std::int64_t, std::int64_t> {
    OutputTag<std::string> tag{"odd"};
    void process_element(const std::int64_t& v, Context& ctx, Collector<std::int64_t>& out) override {
      if (v % 2 == 0) out.collect(v);
      else ctx.output(tag, "odd-" + std::to_string(v));
    }
  };
  auto evens = std::make_shared<CollectSink<std::int64_t>>();
  auto odds = std::make_shared<CollectSink<std::string>>();
  auto split = env.from_collection<std::int64_t>(range(0, 6)).process(Split{});
  split.sink_to(evens);
  split.side_output(odd_tag).sink_to(odds);
  env.execute();
  EXPECT_THAT(evens->values(), ElementsAre(0, 2, 4));
  EXPECT_THAT(odds->values(), ElementsAre("odd-1", "odd-3", "odd-5"));
}

TEST(Executor, ConnectFeedsTwoInputsToOneOperator) {
  StreamExecutionEnvironment env;
  auto sink = std::make_shared<CollectSink<std::string>>();
  auto numbers = env.from_collection<std::int64_t>({1, 2});
  auto words = env.from_collection<std::string>({"x", "y"});
  numbers.connect(words)
      .map([](std::int64_t n) { return "n" + std::to_string(n); }, [](const std::string& w) { return "w" + w; })
      .sink_to(sink);
  env.execute();
  EXPECT_THAT(sorted(sink->values()), ElementsAre("n1", "n2", "wx", "wy"));
}

TEST(Executor, SlowSinkKeepsMemoryBoundedByChannelCapacity) {
  StreamExecutionEnvironment env;
  env.set_channel_capacity(4).disable_operator_chaining();
  auto produced = std::make_shared<std::atomic<std::int64_t>>(0);
  auto consumed = std::make_shared<std::atomic<std::int64_t>>(0);
  std::atomic<bool> stop{false};
  scripted<std::int64_t>(env, [&, produced](ScriptedSource<std::int64_t>& s) {
    s.then([&, produced](Output& out) {
      while (!stop) {
        auto b = std::make_unique<Batch<std::int64_t>>();
        b->records.resize(1024);
        out.emit(std::move(b));
        *produced += 1024;
      }
    });
  }).map([consumed](std::int64_t x) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      ++*consumed;
      return x;
    }).sink_to(std::make_shared<CollectSink<std::int64_t>>());
  auto handle = env.execute_async();
  // Sample until the sink consumed a few batches: progress, not wall time, bounds the
  // loop, so a loaded machine only makes it slower.
  std::int64_t worst = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (consumed->load() < 3 * 1024 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    worst = std::max(worst, produced->load() - consumed->load());
  }
  stop = true;
  handle.cancel();
  handle.wait();
  EXPECT_GT(consumed->load(), 1024);  // the sink did make progress
  // In flight at most: 4 queued batches + 1 in the sink + 1 being pushed by the source.
  EXPECT_LE(worst, 6 * 1024);
  EXPECT_GT(handle.metrics().total("scripted-1").backpressured_ns, 0);
  EXPECT_EQ(handle.status(), JobStatus::kCanceled);
}

TEST(Executor, CancelStopsAnUnboundedJob) {
  StreamExecutionEnvironment env;
  std::atomic<bool> started{false};
  scripted<std::int64_t>(env, [&](ScriptedSource<std::int64_t>& s) {
    s.then([&](Output&) { started = true; }).wait_until([] { return false; });
  }).sink_to(std::make_shared<CollectSink<std::int64_t>>());
  auto handle = env.execute_async();
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(handle.status(), JobStatus::kRunning);
  EXPECT_FALSE(handle.wait_for(std::chrono::milliseconds(20)));
  handle.cancel();
  EXPECT_TRUE(handle.wait_for(std::chrono::seconds(15)));
  EXPECT_EQ(handle.status(), JobStatus::kCanceled);
}

TEST(Executor, MetricsCountRecordsAndBatchesPerOperator) {
  StreamExecutionEnvironment env;
  env.from_collection<std::int64_t>(range(0, 2500))
      .filter([](std::int64_t x) { return x < 2000; })
      .sink_to(std::make_shared<CollectSink<std::int64_t>>());
  auto handle = env.execute_async();
  handle.wait();
  auto src = handle.metrics().total("collection-1");
  auto filter = handle.metrics().total("filter-1");
  EXPECT_EQ(src.records_out, 2500);
  EXPECT_EQ(src.batches_out, 3);
  EXPECT_EQ(filter.records_in, 2500);
  EXPECT_EQ(filter.batches_in, 3);
  EXPECT_EQ(filter.records_out, 2000);
  EXPECT_EQ(filter.batches_out, 2);  // the last batch (2048..2499) is filtered out entirely
  EXPECT_GT(filter.busy_ns, 0);
}

TEST(Executor, InvalidGraphsAreRejectedBeforeRunning) {
  StreamExecutionEnvironment env;
  env.set_parallelism(200);
  env.from_collection<std::int64_t>({1}).map([](std::int64_t x) { return x; }).set_parallelism(200);
  EXPECT_THROW(
      {
        try {
          env.execute();
        } catch (const ClinkError& e) {
          EXPECT_THAT(e.what(), HasSubstr("exceeds max parallelism 128"));
          throw;
        }
      },
      ClinkError);
}

}  // namespace
}  // namespace clink::test
