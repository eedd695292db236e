// Flink parity: the cases of Flink's WindowOperatorTest (same input, same trigger and
// lateness, same emissions), driven through the real executor with a scripted source.
// Emissions are asserted in order, interleaved with the watermarks that caused them;
// Flink's tests compare sorted output, clink's order is by time, then key bytes.
// Tumbling and sliding cases run on both engine paths (sliced panes and generic).
#include <gtest/gtest.h>

#include "window_test_support.hpp"

namespace clink::test {
namespace {
using V = std::vector<std::string>;

class WindowPaths : public ::testing::TestWithParam<bool> {
 protected:
  bool slicing() const { return GetParam(); }
};
INSTANTIATE_TEST_SUITE_P(Engine, WindowPaths, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Sliced" : "Generic"; });

std::int64_t dropped(const JobHandle& h, const std::string& node) {
  return h.metrics().total(node).late_records_dropped;
}

// Flink's out-of-order input of the tumbling and sliding tests.
void flink_input(ScriptedSource<KV>& s) {
  s.records({{{"key2", 1}, 3999}, {{"key2", 1}, 3000}, {{"key1", 1}, 20}, {{"key1", 1}, 0}, {{"key1", 1}, 999},
             {{"key2", 1}, 1998}, {{"key2", 1}, 1999}, {{"key2", 1}, 1000}});
  for (EventTime w : {999, 1999, 2999, 3999, 4999, 5999, 6999, 7999}) s.watermark(Watermark::at(w));
}

// Sums the elements (Flink's RichSumReducer as a window function over all elements).
struct SumFn final : ProcessWindowFunction<KV, KV, std::string> {
  void process(const std::string& key, Context&, const WindowElements<KV>& elements, Collector<KV>& out) override {
    std::int64_t sum = 0;
    for (const auto& e : elements) sum += e.second;
    out.collect({key, sum});
  }
};

const V kTumbling = {"W999", "W1999", "(key1,3)@2999", "(key2,3)@2999", "W2999", "W3999", "W4999",
                     "(key2,2)@5999", "W5999", "W6999", "W7999", "WMAX"};
const V kSliding = {"(key1,3)@999",  "W999",          "(key1,3)@1999", "(key2,3)@1999", "W1999",
                    "(key1,3)@2999", "(key2,3)@2999", "W2999",         "(key2,5)@3999", "W3999",
                    "(key2,2)@4999", "W4999",         "(key2,2)@5999", "W5999",         "W6999",
                    "W7999",         "WMAX"};

TEST_P(WindowPaths, TumblingEventTimeWindowsReduce) {
  StreamExecutionEnvironment env;
  auto log = probe(keyed(source(env, flink_input))
                       .window(TumblingEventTimeWindows::of(3000))
                       .slicing(slicing())
                       .reduce(SumReducer{}));
  env.execute();
  EXPECT_EQ(log->get(), kTumbling);
}

TEST(FlinkWindowOperator, TumblingEventTimeWindowsApply) {
  StreamExecutionEnvironment env;
  auto log = probe(keyed(source(env, flink_input)).window(TumblingEventTimeWindows::of(3000)).process(SumFn{}));
  env.execute();
  EXPECT_EQ(log->get(), kTumbling);
}

TEST_P(WindowPaths, SlidingEventTimeWindowsReduce) {
  StreamExecutionEnvironment env;
  auto log = probe(keyed(source(env, flink_input))
                       .window(SlidingEventTimeWindows::of(3000, 1000))
                       .slicing(slicing())
                       .reduce(SumReducer{}));
  env.execute();
  EXPECT_EQ(log->get(), kSliding);
}

TEST(FlinkWindowOperator, SlidingEventTimeWindowsApply) {
  StreamExecutionEnvironment env;
  auto log = probe(keyed(source(env, flink_input)).window(SlidingEventTimeWindows::of(3000, 1000)).process(SumFn{}));
  env.execute();
  EXPECT_EQ(log->get(), kSliding);
}

void session_input(ScriptedSource<KV>& s) {
  s.records({{{"key2", 1}, 0}, {{"key2", 2}, 1000}, {{"key2", 3}, 2500}, {{"key1", 1}, 10}, {{"key1", 2}, 1000}})
      .records({{{"key1", 3}, 2500}, {{"key2", 4}, 5501}, {{"key2", 5}, 6000}, {{"key2", 5}, 6000}, {{"key2", 6}, 6050}})
      .watermark(Watermark::at(12000))
      .records({{{"key2", 10}, 15000}, {{"key2", 20}, 15000}})
      .watermark(Watermark::at(17999));
}
const V kSessions = {"(key1-6,10,5500)@5499", "(key2-6,0,5500)@5499", "(key2-20,5501,9050)@9049", "W12000",
                     "(key2-30,15000,18000)@17999", "W17999", "WMAX"};

TEST(FlinkWindowOperator, SessionWindows) {
  StreamExecutionEnvironment env;
  auto log = probe(keyed(source(env, session_input)).window(EventTimeSessionWindows::with_gap(3000)).process(SessionFn{}));
  env.execute();
  EXPECT_EQ(log->get(), kSessions);
}

TEST(FlinkWindowOperator, ReduceSessionWindows) {
  StreamExecutionEnvironment env;
  auto log = probe(keyed(source(env, session_input))
                       .window(EventTimeSessionWindows::with_gap(3000))
                       .reduce(SumReducer{}, ReducedSessionFn{}));
  env.execute();
  EXPECT_EQ(log->get(), kSessions);
}

TEST(FlinkWindowOperator, SessionWindowsWithCountTrigger) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"key2", 1}, 0}, {{"key2", 2}, 1000}, {{"key2", 3}, 2500}, {{"key2", 4}, 3500}, {{"key1", 1}, 10},
               {{"key1", 2}, 1000}, {{"key1", 3}, 2500}, {{"key1", 1}, 6000}, {{"key1", 2}, 6500}, {{"key1", 3}, 7000}})
        .watermark(Watermark::at(100))
        // merges the two "key1" sessions: their counts add up to 6, plus this one: fires
        .records({{{"key1", 10}, 4500}});
  });
  auto log = probe(keyed(src)
                       .window(EventTimeSessionWindows::with_gap(3000))
                       .trigger(PurgingTrigger::of(CountTrigger::of(4)))
                       .process(SessionFn{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"(key2-10,0,6500)@6499", "W100", "(key1-22,10,10000)@9999", "WMAX"}));
}

TEST(FlinkWindowOperator, SessionWindowsWithContinuousEventTimeTrigger) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"key1", 1}, 1500}, {{"key2", 1}, 0}, {{"key2", 3}, 2500}, {{"key2", 2}, 1000}})
        .watermark(Watermark::at(2500))  // first fire time 2000; next 4000
        .records({{{"key2", 5}, 4000}})
        .watermark(Watermark::at(3000))
        .records({{{"key1", 2}, 4000}, {{"key2", 4}, 3500}})
        .watermark(Watermark::at(4000));
  });
  auto log = probe(keyed(src)
                       .window(EventTimeSessionWindows::with_gap(3000))
                       .trigger(ContinuousEventTimeTrigger::of(2000))
                       .process(SessionFn{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"(key1-1,1500,4500)@4499", "(key2-6,0,5500)@5499", "W2500", "W3000",
                           "(key1-3,1500,7000)@6999", "(key2-15,0,7000)@6999", "W4000",
                           // the end of input: the continuous timers at 6000, then the
                           // end-of-window timers at 6999
                           "(key1-3,1500,7000)@6999", "(key2-15,0,7000)@6999", "(key1-3,1500,7000)@6999",
                           "(key2-15,0,7000)@6999", "WMAX"}));
}

TEST(FlinkWindowOperator, ContinuousWatermarkTriggerOnGlobalWindows) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"key1", 1}, 0}, {{"key2", 1}, 3000}, {{"key2", 1}, 3999}, {{"key1", 1}, 20}, {{"key1", 1}, 999},
               {{"key2", 1}, 1998}, {{"key2", 1}, 1999}, {{"key2", 1}, 1000}});
    for (EventTime w : {1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000}) s.watermark(Watermark::at(w));
  });
  auto log = probe(keyed(src)
                       .window(GlobalWindows::create())
                       .trigger(ContinuousEventTimeTrigger::of(3000))
                       .reduce(SumReducer{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"W1000", "W2000", "(key1,3)@MAX", "W3000", "W4000", "W5000", "(key1,3)@MAX",
                           "(key2,5)@MAX", "W6000", "W7000", "W8000",
                           // the end of input: the pending continuous timers (9000) fire once
                           // (no further ones are scheduled at W = MAX), then the global
                           // window's own timer at its max timestamp
                           "(key1,3)@MAX", "(key2,5)@MAX", "(key1,3)@MAX", "(key2,5)@MAX", "WMAX"}));
}

TEST(FlinkWindowOperator, CountTriggerOnGlobalWindows) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"key2", 1}, 3000}, {{"key2", 1}, 3999}, {{"key1", 1}, 20}, {{"key1", 1}, 0}, {{"key1", 1}, 999},
               {{"key2", 1}, 1998}, {{"key2", 1}, 1999}})
        .records({{{"key2", 1}, 1000}})
        .records({{{"key1", 1}, 10999}, {{"key2", 1}, 1000}, {{"key2", 1}, 1000}, {{"key2", 1}, 1000}});
  });
  auto log = probe(keyed(src)
                       .window(GlobalWindows::create())
                       .trigger(PurgingTrigger::of(CountTrigger::of(4)))
                       .reduce(SumReducer{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"(key2,4)@MAX", "(key1,4)@MAX", "(key2,4)@MAX", "WMAX"}));
}

// Processing time: the window is chained to the source (a forward "keyed" stream at
// parallelism 1), so clock changes between steps are seen in order.
template <class Assigner>
auto chained_window(StreamExecutionEnvironment& env, ManualClock* c,
                    std::function<void(ScriptedSource<KV>&, ManualClock*)> script, const Assigner& a) {
  auto src = source(env, [c, script](ScriptedSource<KV>& s) { script(s, c); });
  return KeyedStream<KV, std::string, KeyOf>(src, KeyOf{}).window(a);
}

TEST(FlinkWindowOperator, ProcessingTimeTumblingWindows) {
  ManualClock clock(3);
  StreamExecutionEnvironment env;
  env.set_clock(clock);
  auto log = probe(chained_window(env, &clock, [](ScriptedSource<KV>& s, ManualClock* c) {
    // the timestamps are ignored in processing time
    s.records({{{"key2", 1}, kMaxEventTime}, {{"key2", 1}, 7000}, {{"key2", 1}, 7000}, {{"key1", 1}, 7000},
               {{"key1", 1}, 7000}})
        .then([c](Output&) { c->set(5000); })
        .records({{{"key1", 1}, 7000}, {{"key1", 1}, 7000}, {{"key1", 1}, 7000}})
        .then([c](Output&) { c->set(7000); })
        .then([](Output&) {});
  }, TumblingProcessingTimeWindows::of(3000)).reduce(SumReducer{}), false);
  env.execute();
  EXPECT_EQ(log->get(), (V{"(key1,2)@2999", "(key2,3)@2999", "(key1,3)@5999"}));
}

TEST(FlinkWindowOperator, ProcessingTimeSlidingWindows) {
  ManualClock clock(3);
  StreamExecutionEnvironment env;
  env.set_clock(clock);
  auto log = probe(chained_window(env, &clock, [](ScriptedSource<KV>& s, ManualClock* c) {
    s.records({{{"key2", 1}, kMaxEventTime}})
        .then([c](Output&) { c->set(1000); })
        .records({{{"key2", 1}, kMaxEventTime}, {{"key2", 1}, kMaxEventTime}})
        .then([c](Output&) { c->set(2000); })
        .records({{{"key1", 1}, kMaxEventTime}, {{"key1", 1}, kMaxEventTime}})
        .then([c](Output&) { c->set(3000); })
        .records({{{"key1", 1}, kMaxEventTime}, {{"key1", 1}, kMaxEventTime}, {{"key1", 1}, kMaxEventTime}})
        .then([c](Output&) { c->set(7000); })
        .then([](Output&) {});
  }, SlidingProcessingTimeWindows::of(3000, 1000)).reduce(SumReducer{}), false);
  env.execute();
  EXPECT_EQ(log->get(), (V{"(key2,1)@999", "(key2,3)@1999", "(key1,2)@2999", "(key2,3)@2999", "(key1,5)@3999",
                           "(key2,2)@3999", "(key1,5)@4999", "(key1,3)@5999"}));
}

TEST(FlinkWindowOperator, ProcessingTimeSessionWindows) {
  ManualClock clock(3);
  StreamExecutionEnvironment env;
  env.set_clock(clock);
  auto log = probe(chained_window(env, &clock, [](ScriptedSource<KV>& s, ManualClock* c) {
    s.records({{{"key2", 1}, 1}})
        .then([c](Output&) { c->set(1000); })
        .records({{{"key2", 1}, 1002}})
        .then([c](Output&) { c->set(5000); })
        .records({{{"key2", 1}, 5000}, {{"key2", 1}, 5000}, {{"key1", 1}, 5000}, {{"key1", 1}, 5000},
                  {{"key1", 1}, 5000}})
        .then([c](Output&) { c->set(10000); })
        .then([](Output&) {});
  }, ProcessingTimeSessionWindows::with_gap(3000)).reduce(SumReducer{}), false);
  env.execute();
  EXPECT_EQ(log->get(), (V{"(key2,2)@3999", "(key1,3)@7999", "(key2,2)@7999"}));
}

TEST(FlinkWindowOperator, LatenessWithPurgingTrigger) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"key2", 1}, 500}})
        .watermark(Watermark::at(1500))
        .records({{{"key2", 1}, 1300}})
        .watermark(Watermark::at(2300))
        // not dropped: window.maxTimestamp() + allowedLateness > currentWatermark
        .records({{{"key2", 1}, 1997}})
        .watermark(Watermark::at(6000))
        // dropped: window.maxTimestamp() + allowedLateness < currentWatermark
        .records({{{"key2", 1}, 1998}})
        .watermark(Watermark::at(7000));
  });
  auto out = keyed(src)
                 .window(TumblingEventTimeWindows::of(2000))
                 .trigger(PurgingTrigger::of(EventTimeTrigger::create()))
                 .allowed_lateness(500)
                 .reduce(SumReducer{});
  auto log = probe(out);
  auto h = env.execute_async();
  h.wait();
  // 1 and not 3 for the late element: the trigger fires and purges.
  EXPECT_EQ(log->get(), (V{"W1500", "(key2,2)@1999", "W2300", "(key2,1)@1999", "W6000", "W7000", "WMAX"}));
  EXPECT_EQ(dropped(h, out.id()), 1);
}

TEST_P(WindowPaths, CleanupTimeOverflow) {
  StreamExecutionEnvironment env;
  const EventTime ts = kMaxEventTime - 1750;
  const std::int64_t start = window_start_for(ts, 1000);
  const EventTime max_ts = start + 999;  // the window's max timestamp + 2000 would wrap around
  auto src = source(env, [=](ScriptedSource<KV>& s) {
    s.records({{{"key2", 1}, ts}}).watermark(Watermark::at(kMaxEventTime - 1500)).watermark(Watermark::at(max_ts));
  });
  auto log = probe(keyed(src)
                       .window(TumblingEventTimeWindows::of(1000))
                       .allowed_lateness(2000)
                       .slicing(slicing())
                       .reduce(SumReducer{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"W" + std::to_string(kMaxEventTime - 1500), "(key2,1)@" + std::to_string(max_ts),
                           "W" + std::to_string(max_ts), "WMAX"}));
}

TEST_P(WindowPaths, DropDueToLatenessTumbling) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"key2", 1}, 1000}})
        .watermark(Watermark::at(1985))
        .records({{{"key2", 1}, 1980}})  // not late: max timestamp 1999 > 1985
        .watermark(Watermark::at(1999))
        .records({{{"key2", 1}, 1998}})  // late: dropped
        .records({{{"key2", 1}, 2001}})
        .watermark(Watermark::at(2999))
        .watermark(Watermark::at(3999));
  });
  auto out = keyed(src).window(TumblingEventTimeWindows::of(2000)).slicing(slicing()).reduce(SumReducer{});
  auto log = probe(out);
  auto h = env.execute_async();
  h.wait();
  EXPECT_EQ(log->get(), (V{"W1985", "(key2,2)@1999", "W1999", "W2999", "(key2,1)@3999", "W3999", "WMAX"}));
  EXPECT_EQ(dropped(h, out.id()), 1);
}

TEST_P(WindowPaths, DropDueToLatenessSliding) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"key2", 1}, 1000}})
        .watermark(Watermark::at(1999))
        .records({{{"key2", 1}, 2000}})
        .watermark(Watermark::at(3000))
        // 2400 belongs to the windows ending at 2999, 3999 and 4999: the first is
        // already cleaned, the element goes to the other two and is not late
        .records({{{"key1", 1}, 3001}, {{"key2", 1}, 2400}, {{"key2", 1}, 2400}, {{"key1", 1}, 3001},
                  {{"key2", 1}, 3900}})
        .watermark(Watermark::at(6000))
        .records({{{"key1", 1}, 3001}})  // dropped: every window of it is cleaned
        .watermark(Watermark::at(25000));
  });
  auto out = keyed(src).window(SlidingEventTimeWindows::of(3000, 1000)).slicing(slicing()).reduce(SumReducer{});
  auto log = probe(out);
  auto h = env.execute_async();
  h.wait();
  EXPECT_EQ(log->get(), (V{"(key2,1)@1999", "W1999", "(key2,2)@2999", "W3000", "(key1,2)@3999", "(key2,5)@3999",
                           "(key1,2)@4999", "(key2,4)@4999", "(key1,2)@5999", "(key2,1)@5999", "W6000", "W25000",
                           "WMAX"}));
  EXPECT_EQ(dropped(h, out.id()), 1);
}

// The session lateness cases share their input up to W = 14600.
void session_lateness_prefix(ScriptedSource<KV>& s) {
  s.records({{{"key2", 1}, 1000}})
      .watermark(Watermark::at(1999))
      .records({{{"key2", 1}, 2000}})
      .watermark(Watermark::at(4998))
      // not dropped: the session it joins ends after the watermark
      .records({{{"key2", 1}, 4500}})
      .records({{{"key2", 1}, 8500}})  // a new session
      .watermark(Watermark::at(7400))
      .records({{{"key2", 1}, 7000}})  // merges the two sessions
      .watermark(Watermark::at(11501))
      .records({{{"key2", 1}, 11600}})  // a new session
      .watermark(Watermark::at(14600));
}
const V kSessionPrefix = {"W1999", "W4998", "W7400", "(key2-5,1000,11500)@11499", "W11501",
                          "(key2-1,11600,14600)@14599", "W14600"};

V concat(V a, const V& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

struct SessionLatenessCase {
  const char* name;
  std::int64_t lateness;
  bool purging;
  V tail;  // after the common prefix
};

class SessionLateness : public ::testing::TestWithParam<SessionLatenessCase> {};

TEST_P(SessionLateness, DropDueToLateness) {
  const auto& c = GetParam();
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    session_lateness_prefix(s);
    s.records({{{"key2", 1}, 10000}})
        .records({{{"key2", 1}, 10100}})
        .records({{{"key2", 1}, 14500}})
        .watermark(Watermark::at(20000))
        .watermark(Watermark::at(100000));
  });
  auto w = keyed(src).window(EventTimeSessionWindows::with_gap(3000)).allowed_lateness(c.lateness);
  if (c.purging) w.trigger(PurgingTrigger::of(EventTimeTrigger::create()));
  auto log = probe(w.reduce(SumReducer{}, ReducedSessionFn{}));
  env.execute();
  EXPECT_EQ(log->get(), concat(kSessionPrefix, c.tail));
}

INSTANTIATE_TEST_SUITE_P(
    Flink, SessionLateness,
    ::testing::Values(
        // 10000 and 10100 are late (and not merged with each other); 14500 opens a session.
        SessionLatenessCase{"ZeroLatenessPurgingTrigger", 0, true,
                            {"(key2-1,14500,17500)@17499", "W20000", "W100000", "WMAX"}},
        SessionLatenessCase{"ZeroLateness", 0, false, {"(key2-1,14500,17500)@17499", "W20000", "W100000", "WMAX"}},
        // the lateness is too small to make a difference
        // purging keeps the fired session (11600-14600) until its cleanup: 10000 joins it
        // and fires it at once with just itself, as does 10100; 14500 extends it
        SessionLatenessCase{"WithLatenessPurgingTrigger", 10, true,
                            {"(key2-1,10000,14600)@14599", "(key2-1,10000,14600)@14599",
                             "(key2-1,10000,17500)@17499", "W20000", "W100000", "WMAX"}},
        // accumulating: 10000 joins the fired session (11600-14600), which fires again at
        // once; 10100 joins it too; 14500 extends it past the watermark
        SessionLatenessCase{"WithLateness", 10, false,
                            {"(key2-2,10000,14600)@14599", "(key2-3,10000,14600)@14599",
                             "(key2-4,10000,17500)@17499", "W20000", "W100000", "WMAX"}},
        // 10000 bridges both purged sessions (1000-11500, 11600-14600)
        SessionLatenessCase{"WithHugeLatenessPurgingTrigger", 10000, true,
                            {"(key2-1,1000,14600)@14599", "(key2-1,1000,14600)@14599",
                             "(key2-1,1000,17500)@17499", "W20000", "W100000", "WMAX"}},
        // the merged session (1000-14600) is already past the watermark: immediate firings
        SessionLatenessCase{"WithHugeLateness", 10000, false,
                            {"(key2-7,1000,14600)@14599", "(key2-8,1000,14600)@14599",
                             "(key2-9,1000,17500)@17499", "W20000", "W100000", "WMAX"}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(FlinkWindowOperator, SideOutputDueToLatenessSessionZeroLateness) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    session_lateness_prefix(s);
    s.records({{{"key2", 1}, 10000}})
        .records({{{"key2", 1}, 10100}})  // also late: not merged with the one before
        .records({{{"key2", 1}, 14500}})
        .watermark(Watermark::at(20000));
  });
  OutputTag<KV> late("late-output");
  auto out = keyed(src)
                 .window(EventTimeSessionWindows::with_gap(3000))
                 .trigger(PurgingTrigger::of(EventTimeTrigger::create()))
                 .side_output_late_data(late)
                 .reduce(SumReducer{}, ReducedSessionFn{});
  auto log = probe(out);
  auto side = probe(out.side_output(late), false);
  auto h = env.execute_async();
  h.wait();
  EXPECT_EQ(log->get(), concat(kSessionPrefix, {"(key2-1,14500,17500)@17499", "W20000", "WMAX"}));
  EXPECT_EQ(side->get(), (V{"(key2,1)@10000", "(key2,1)@10100"}));
  EXPECT_EQ(dropped(h, out.id()), 0);
}

TEST(FlinkWindowOperator, CleanupTimerWithEmptyListStateForTumblingWindows) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"key2", 1}, 1000}})
        .watermark(Watermark::at(1599))
        .watermark(Watermark::at(1999))   // fires
        .watermark(Watermark::at(2000))   // the cleanup timer
        .watermark(Watermark::at(5000));
  });
  auto log = probe(keyed(src).window(TumblingEventTimeWindows::of(2000)).allowed_lateness(1).process(SumFn{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"W1599", "(key2,1)@1999", "W1999", "W2000", "W5000", "WMAX"}));
}

}  // namespace
}  // namespace clink::test
