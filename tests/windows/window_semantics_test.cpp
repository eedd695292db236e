// One test per rule of shared/SEMANTICS.md (windows, firing, lateness, panes), each
// asserting the exact emissions in order, through the executor. Aggregations that can
// slice run on both engine paths.
#include <gtest/gtest.h>

#include <random>

#include "clink/core/error.hpp"
#include "window_test_support.hpp"

namespace clink::test {
namespace {
using V = std::vector<std::string>;

class Paths : public ::testing::TestWithParam<bool> {
 protected:
  bool slicing() const { return GetParam(); }
};
INSTANTIATE_TEST_SUITE_P(Engine, Paths, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Sliced" : "Generic"; });

std::string n(EventTime t) { return std::to_string(t); }

// ---- assignment ----

TEST_P(Paths, FiresWhenTheWatermarkReachesEndMinusOne) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"a", 1}, 0}, {{"a", 1}, 9999}}).watermark(Watermark::at(9998)).watermark(Watermark::at(9999));
  });
  auto log = probe(keyed(src).window(TumblingEventTimeWindows::of(10000)).slicing(slicing()).aggregate_with_info(CountAgg{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"W9998", "(a,[0,10000),2,ON_TIME#0 first last)@9999", "W9999", "WMAX"}));
}

TEST_P(Paths, NegativeTimestampsFloor) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"a", 1}, -15000}, {{"a", 1}, -10001}, {{"a", 1}, -10000}})
        .watermark(Watermark::at(-10002))
        .watermark(Watermark::at(-10001));
  });
  auto log = probe(keyed(src).window(TumblingEventTimeWindows::of(10000)).slicing(slicing()).aggregate_with_info(CountAgg{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"W-10002", "(a,[-20000,-10000),2,ON_TIME#0 first last)@-10001", "W-10001",
                           "(a,[-10000,0),1,ON_TIME#0 first last)@-1", "WMAX"}));
}

TEST_P(Paths, TumblingOffsetShiftsTheWindows) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) { s.records({{{"a", 1}, 5000}, {{"a", 1}, 7000}}); });
  auto log = probe(keyed(src)
                       .window(TumblingEventTimeWindows::of(10000, -3000))
                       .slicing(slicing())
                       .aggregate_with_info(CountAgg{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"(a,[-3000,7000),1,ON_TIME#0 first last)@6999",
                           "(a,[7000,17000),1,ON_TIME#0 first last)@16999", "WMAX"}));
  EXPECT_THROW(TumblingEventTimeWindows::of(10000, 10000), ClinkError);
  EXPECT_THROW(TumblingEventTimeWindows::of(10000, -10000), ClinkError);
  EXPECT_THROW(TumblingEventTimeWindows::of(0), ClinkError);
}

TEST_P(Paths, SlidingElementBelongsToSizeOverSlideWindows) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) { s.records({{{"a", 1}, 2500}}); });
  auto log = probe(keyed(src)
                       .window(SlidingEventTimeWindows::of(3000, 1000))
                       .slicing(slicing())
                       .aggregate_with_info(CountAgg{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"(a,[0,3000),1,ON_TIME#0 first last)@2999", "(a,[1000,4000),1,ON_TIME#0 first last)@3999",
                           "(a,[2000,5000),1,ON_TIME#0 first last)@4999", "WMAX"}));
}

TEST_P(Paths, SlidingSizeNotAMultipleOfSlide) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) { s.records({{{"a", 1}, 9}, {{"a", 1}, 10}, {{"a", 1}, 3}}); });
  auto log = probe(keyed(src).window(SlidingEventTimeWindows::of(10, 4)).slicing(slicing()).aggregate_with_info(CountAgg{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"(a,[-4,6),1,ON_TIME#0 first last)@5", "(a,[0,10),2,ON_TIME#0 first last)@9",
                           "(a,[4,14),2,ON_TIME#0 first last)@13", "(a,[8,18),2,ON_TIME#0 first last)@17", "WMAX"}));
}

TEST_P(Paths, SaturatesAtTheInt64Limits) {
  StreamExecutionEnvironment env;
  const EventTime lo = kMinEventTime + 1;  // INT64_MIN itself means "no event time"
  auto src = source(env, [=](ScriptedSource<KV>& s) { s.records({{{"a", 1}, kMaxEventTime}, {{"b", 1}, lo}}); });
  auto log = probe(keyed(src).window(TumblingEventTimeWindows::of(10000)).slicing(slicing()).aggregate_with_info(CountAgg{}));
  env.execute();
  // The bottom window starts clamped at INT64_MIN; the top one ends (closed) at INT64_MAX.
  const EventTime top = kMaxEventTime - 5807;
  EXPECT_EQ(log->get(), (V{"(b,[" + n(kMinEventTime) + "," + n(kMinEventTime + 10000) + "),1,ON_TIME#0 first last)@" +
                               n(kMinEventTime + 9999),
                           "(a,[" + n(top) + "," + n(kMaxEventTime) + "),1,ON_TIME#0 first last)@MAX", "WMAX"}));
}

TEST(WindowSemantics, CumulativeWindows) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) { s.records({{{"a", 1}, 500}, {{"a", 1}, 1500}, {{"a", 1}, 2500}}); });
  auto log = probe(keyed(src).window(CumulativeEventTimeWindows::of(1000, 3000)).aggregate_with_info(CountAgg{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"(a,[0,1000),1,ON_TIME#0 first last)@999", "(a,[0,2000),2,ON_TIME#0 first last)@1999",
                           "(a,[0,3000),3,ON_TIME#0 first last)@2999", "WMAX"}));
}

TEST(WindowSemantics, NaturalStaggerShiftsByTheProcessingTimeOfTheFirstElement) {
  ManualClock clock(2500);
  StreamExecutionEnvironment env;
  env.set_clock(clock);
  auto src = source(env, [](ScriptedSource<KV>& s) { s.records({{{"a", 1}, 1000}, {{"a", 1}, 2600}}); });
  auto log = probe(keyed(src)
                       .window(TumblingEventTimeWindows::of(10000, 0, WindowStagger::kNatural))
                       .aggregate_with_info(CountAgg{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"(a,[-7500,2500),1,ON_TIME#0 first last)@2499",
                           "(a,[2500,12500),1,ON_TIME#0 first last)@12499", "WMAX"}));
}

TEST(WindowSemantics, RandomStaggerKeepsTheWindowSize) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) { s.records({{{"a", 1}, 1000}, {{"a", 1}, 50000}}); });
  auto c = std::make_shared<CollectSink<WindowResult<std::string, std::int64_t>>>();
  keyed(src).window(TumblingEventTimeWindows::of(10000, 0, WindowStagger::kRandom)).aggregate_with_info(CountAgg{}).sink_to(c);
  env.execute();
  auto got = c->values();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].window.end - got[0].window.start, 10000);
  EXPECT_EQ(floor_mod(got[0].window.start, 10000), floor_mod(got[1].window.start, 10000));  // one shift
  EXPECT_LE(got[0].window.start, 1000);
  EXPECT_GT(got[0].window.end, 1000);
}

// ---- sessions ----

TEST(WindowSemantics, SessionExampleAndArrivalOrder) {
  // SEMANTICS.md: gap 3 s, records at 1, 2, 10, 7, 20 s -> [1,5) 2 records, [7,13) 2,
  // [20,23) 1; the session formed by 10 s then 7 s lists [10, 7].
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"a", 1}, 1000}, {{"a", 2}, 2000}, {{"a", 10}, 10000}, {{"a", 7}, 7000}, {{"a", 20}, 20000}});
  });
  auto log = probe(keyed(src).window(EventTimeSessionWindows::with_gap(3000)).process(ListFn{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"a [1000,5000) 1,2 ON_TIME#0 first last@4999", "a [7000,13000) 10,7 ON_TIME#0 first last@12999",
                           "a [20000,23000) 20 ON_TIME#0 first last@22999", "WMAX"}));
}

TEST(WindowSemantics, SessionsMergeWhenTheyTouch) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) { s.records({{{"a", 1}, 0}, {{"a", 2}, 3000}, {{"a", 3}, 7000}}); });
  auto log = probe(keyed(src).window(EventTimeSessionWindows::with_gap(3000)).process(ListFn{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"a [0,6000) 1,2 ON_TIME#0 first last@5999", "a [7000,10000) 3 ON_TIME#0 first last@9999",
                           "WMAX"}));
}

TEST(WindowSemantics, SessionBridgeMergesStateIntoTheEarliestWindow) {
  // [1000,4000) holds 1, [6000,9000) holds 2; 3 at 4000 bridges them: the merged state is
  // the earliest window's, then the other's, then the new element.
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"a", 2}, 6000}}).records({{{"a", 1}, 1000}}).records({{{"a", 3}, 4000}});
  });
  auto log = probe(keyed(src).window(EventTimeSessionWindows::with_gap(3000)).process(ListFn{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"a [1000,9000) 1,2,3 ON_TIME#0 first last@8999", "WMAX"}));
}

TEST(WindowSemantics, DynamicSessionGap) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) { s.records({{{"a", 1}, 0}, {{"a", 5}, 1500}, {{"a", 1}, 6500}}); });
  auto log = probe(keyed(src)
                       .window(DynamicEventTimeSessionWindows::with_dynamic_gap([](const KV& v) { return v.second * 1000; }))
                       .process(ListFn{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"a [0,1000) 1 ON_TIME#0 first last@999", "a [1500,7500) 5,1 ON_TIME#0 first last@7499",
                           "WMAX"}));
}

// ---- firing, cleanup and late data ----

TEST_P(Paths, AllowedLatenessRefiresWithTheFullResultThenDrops) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"a", 1}, 1000}, {{"a", 2}, 2000}})
        .watermark(Watermark::at(9999))  // fires: 9999 >= end - 1
        .records({{{"a", 3}, 3000}})     // end - 1 <= W < end - 1 + L: added, fires again at once
        .watermark(Watermark::at(14998))
        .records({{{"a", 4}, 4000}})
        .watermark(Watermark::at(14999))  // cleaned: W >= end - 1 + L
        .records({{{"a", 5}, 5000}});     // fully late, no side output: dropped
  });
  auto out = keyed(src)
                 .window(TumblingEventTimeWindows::of(10000))
                 .allowed_lateness(5000)
                 .slicing(slicing())
                 .aggregate_with_info(SumAgg{});
  auto log = probe(out);
  auto h = env.execute_async();
  h.wait();
  EXPECT_EQ(log->get(), (V{"(a,[0,10000),3,ON_TIME#0 first)@9999", "W9999", "(a,[0,10000),6,LATE#1)@9999",
                           "W14998", "(a,[0,10000),10,LATE#2)@9999", "W14999", "WMAX"}));
  EXPECT_EQ(h.metrics().total(out.id()).late_records_dropped, 1);
}

TEST_P(Paths, FullyLateRecordsGoToTheSideOutput) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"a", 1}, 1000}})
        .watermark(Watermark::at(14999))
        .records({{{"a", 5}, 5000}, {{"b", 6}, 4999}, {{"a", 7}, 15000}});
  });
  OutputTag<KV> late("late");
  auto out = keyed(src)
                 .window(TumblingEventTimeWindows::of(10000))
                 .allowed_lateness(5000)
                 .side_output_late_data(late)
                 .slicing(slicing())
                 .aggregate_with_info(SumAgg{});
  auto log = probe(out);
  auto side = probe(out.side_output(late), false);
  auto h = env.execute_async();
  h.wait();
  // The cleanup timer (14999) and the on-time timer (9999) both fire at W = 14999.
  EXPECT_EQ(log->get(), (V{"(a,[0,10000),1,ON_TIME#0 first last)@9999", "W14999",
                           "(a,[10000,20000),7,ON_TIME#0 first last)@19999", "WMAX"}));
  EXPECT_EQ(side->get(), (V{"(a,5)@5000", "(b,6)@4999"}));
  EXPECT_EQ(h.metrics().total(out.id()).late_records_dropped, 0);
}

TEST_P(Paths, PartlyLateSlidingRecordsGoOnlyToTheLiveWindows) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"a", 1}, 2500}})
        .watermark(Watermark::at(2999))
        .records({{{"a", 2}, 2600}})  // [0,3000) is cleaned, [1000,4000) and [2000,5000) are not
        .watermark(Watermark::at(4999))
        .records({{{"a", 7}, 2700}})  // every window of it is cleaned: side output
        .watermark(Watermark::at(5999));
  });
  OutputTag<KV> late("late");
  auto out = keyed(src)
                 .window(SlidingEventTimeWindows::of(3000, 1000))
                 .side_output_late_data(late)
                 .slicing(slicing())
                 .aggregate_with_info(SumAgg{});
  auto log = probe(out);
  auto side = probe(out.side_output(late), false);
  env.execute();
  EXPECT_EQ(log->get(), (V{"(a,[0,3000),1,ON_TIME#0 first last)@2999", "W2999",
                           "(a,[1000,4000),3,ON_TIME#0 first last)@3999", "(a,[2000,5000),3,ON_TIME#0 first last)@4999",
                           "W4999", "W5999", "WMAX"}));
  EXPECT_EQ(side->get(), (V{"(a,7)@2700"}));
}

TEST_P(Paths, LateBandRefireOfSlidingWindowsInAssignerOrder) {
  // L = 2000: at W = 4999, 2500's windows [0,3000) (cleaned at 4999), [1000,4000) and
  // [2000,5000) (both fired, not cleaned): the latest window re-fires first.
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"a", 1}, 2000}}).watermark(Watermark::at(4999)).records({{{"a", 2}, 2500}});
  });
  auto log = probe(keyed(src)
                       .window(SlidingEventTimeWindows::of(3000, 1000))
                       .allowed_lateness(2000)
                       .slicing(slicing())
                       .aggregate_with_info(SumAgg{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"(a,[0,3000),1,ON_TIME#0 first last)@2999", "(a,[1000,4000),1,ON_TIME#0 first)@3999",
                           "(a,[2000,5000),1,ON_TIME#0 first)@4999", "W4999", "(a,[2000,5000),3,LATE#1)@4999",
                           "(a,[1000,4000),3,LATE#1)@3999", "WMAX"}));
}

TEST_P(Paths, ALateRecordOpeningAWindowInTheBandIsALateFirstPane) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"a", 1}, 1000}}).watermark(Watermark::at(9999)).records({{{"b", 2}, 3000}});
  });
  auto log = probe(keyed(src)
                       .window(TumblingEventTimeWindows::of(10000))
                       .allowed_lateness(5000)
                       .slicing(slicing())
                       .aggregate_with_info(SumAgg{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"(a,[0,10000),1,ON_TIME#0 first)@9999", "W9999", "(b,[0,10000),2,LATE#0 first)@9999", "WMAX"}));
}

TEST(WindowSemantics, RecordWithoutEventTimeFailsTheJob) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) { s.records({{{"a", 1}, kNoEventTime}}); });
  probe(keyed(src).window(TumblingEventTimeWindows::of(1000)).reduce(SumReducer{}, "my-window"));
  try {
    env.execute();
    FAIL() << "expected the job to fail";
  } catch (const JobFailedError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("my-window"), std::string::npos) << msg;
    EXPECT_NE(msg.find("record has no event time"), std::string::npos) << msg;
    EXPECT_NE(msg.find("assign_timestamps_and_watermarks"), std::string::npos) << msg;
  }
}

// ---- triggers ----

TEST(WindowSemantics, CountTriggerFiresEarlyAndKeepsTheContents) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"a", 1}, 1000}, {{"a", 1}, 2000}, {{"a", 1}, 3000}, {{"a", 1}, 4000}, {{"a", 1}, 5000}});
  });
  auto log = probe(keyed(src).window(TumblingEventTimeWindows::of(10000)).trigger(CountTrigger::of(2)).aggregate_with_info(CountAgg{}));
  env.execute();
  // The count trigger replaces the event-time one: nothing fires at the window's end.
  EXPECT_EQ(log->get(), (V{"(a,[0,10000),2,EARLY#0 first)@9999", "(a,[0,10000),4,EARLY#1)@9999", "WMAX"}));
}

TEST(WindowSemantics, PurgingTriggerDiscardsWhatItFired) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"a", 1}, 1000}, {{"a", 1}, 2000}, {{"a", 1}, 3000}, {{"a", 1}, 4000}, {{"a", 1}, 5000}});
  });
  auto log = probe(keyed(src)
                       .window(TumblingEventTimeWindows::of(10000))
                       .trigger(PurgingTrigger::of(CountTrigger::of(2)))
                       .aggregate_with_info(CountAgg{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"(a,[0,10000),2,EARLY#0 first)@9999", "(a,[0,10000),2,EARLY#1)@9999", "WMAX"}));
}

TEST(WindowSemantics, ContinuousTriggerPanesEarlyOnTimeLate) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"a", 1}, 1000}})
        .watermark(Watermark::at(3000))
        .records({{{"a", 1}, 4000}})
        .watermark(Watermark::at(6000))
        .watermark(Watermark::at(9000))
        .watermark(Watermark::at(9999))
        .records({{{"a", 1}, 5000}})
        .watermark(Watermark::at(14999));
  });
  auto log = probe(keyed(src)
                       .window(TumblingEventTimeWindows::of(10000))
                       .trigger(ContinuousEventTimeTrigger::of(3000))
                       .allowed_lateness(5000)
                       .aggregate_with_info(CountAgg{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"(a,[0,10000),1,EARLY#0 first)@9999", "W3000", "(a,[0,10000),2,EARLY#1)@9999", "W6000",
                           "(a,[0,10000),2,EARLY#2)@9999", "W9000", "(a,[0,10000),2,ON_TIME#3)@9999", "W9999",
                           "(a,[0,10000),3,LATE#4)@9999", "W14999", "WMAX"}));
}

TEST(WindowSemantics, GlobalWindowsNeverFireByDefault) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) { s.records({{{"a", 1}, 1000}, {{"b", 1}, kNoEventTime}}); });
  auto log = probe(keyed(src).window(GlobalWindows::create()).reduce(SumReducer{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"WMAX"}));
}

// ---- evictors ----

template <class E>
V global_count_evicting(E evictor, std::int64_t every, std::vector<std::int64_t> values) {
  StreamExecutionEnvironment env;
  auto src = source(env, [values](ScriptedSource<KV>& s) {
    std::vector<std::pair<KV, EventTime>> r;
    for (auto v : values) r.push_back({{"a", v}, v});
    s.records(r);
  });
  auto log = probe(keyed(src).window(GlobalWindows::create()).trigger(CountTrigger::of(every)).evictor(evictor).process(ListFn{}),
                   false);
  env.execute();
  return log->get();
}

TEST(WindowEvictors, CountEvictorBeforeKeepsTheLastN) {
  EXPECT_EQ(global_count_evicting(CountEvictor::of(3), 2, {1, 2, 3, 4, 5, 6}),
            (V{"a GlobalWindow 1,2 EARLY#0 first@MAX", "a GlobalWindow 2,3,4 EARLY#1@MAX",
               "a GlobalWindow 4,5,6 EARLY#2@MAX"}));
}

TEST(WindowEvictors, CountEvictorAfterEvictsOnceTheFunctionRan) {
  EXPECT_EQ(global_count_evicting(CountEvictor::of(3, true), 2, {1, 2, 3, 4, 5, 6}),
            (V{"a GlobalWindow 1,2 EARLY#0 first@MAX", "a GlobalWindow 1,2,3,4 EARLY#1@MAX",
               "a GlobalWindow 2,3,4,5,6 EARLY#2@MAX"}));
}

TEST(WindowEvictors, DeltaEvictorDropsElementsFarFromTheLast) {
  auto delta = [](const KV& a, const KV& b) { return static_cast<double>(std::abs(a.second - b.second)); };
  EXPECT_EQ(global_count_evicting(DeltaEvictor::of(5.0, delta), 4, {1, 8, 9, 10}), (V{"a GlobalWindow 8,9,10 EARLY#0 first@MAX"}));
}

TEST(WindowEvictors, TimeEvictorBeforeKeepsElementsWithinTheSizeOfTheNewest) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"a", 1}, 1000}, {{"a", 2}, 1500}, {{"a", 3}, 2600}, {{"a", 4}, 3000}});
  });
  auto log = probe(keyed(src).window(TumblingEventTimeWindows::of(10000)).evictor(TimeEvictor::of(1000)).process(ListFn{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"a [0,10000) 3,4 ON_TIME#0 first last@9999", "WMAX"}));
}

TEST(WindowEvictors, TimeEvictorAfterShapesTheNextFiring) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"a", 1}, 1000}, {{"a", 2}, 1500}, {{"a", 3}, 2600}, {{"a", 4}, 3000}})
        .watermark(Watermark::at(9999))
        .records({{{"a", 5}, 4000}})
        .records({{{"a", 6}, 4100}});
  });
  auto log = probe(keyed(src)
                       .window(TumblingEventTimeWindows::of(10000))
                       .allowed_lateness(5000)
                       .evictor(TimeEvictor::of(1000, true))
                       .process(ListFn{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"a [0,10000) 1,2,3,4 ON_TIME#0 first@9999", "W9999", "a [0,10000) 3,4,5 LATE#1@9999",
                           "a [0,10000) 5,6 LATE#2@9999", "WMAX"}));
}

TEST(WindowEvictors, EvictorWithReduceFoldsTheSurvivors) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) { s.records({{{"a", 1}, 1000}, {{"a", 2}, 2000}, {{"a", 3}, 3000}}); });
  auto log = probe(keyed(src).window(TumblingEventTimeWindows::of(10000)).evictor(CountEvictor::of(2)).reduce(SumReducer{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"(a,5)@9999", "WMAX"}));
}

TEST(WindowEvictors, EvictorOnSessionWindows) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) { s.records({{{"a", 1}, 1000}, {{"a", 2}, 2000}, {{"a", 3}, 3000}}); });
  auto log = probe(keyed(src).window(EventTimeSessionWindows::with_gap(2000)).evictor(CountEvictor::of(2)).process(ListFn{}));
  env.execute();
  EXPECT_EQ(log->get(), (V{"a [1000,5000) 2,3 ON_TIME#0 first last@4999", "WMAX"}));
}

// ---- window functions ----

struct Describe final : ProcessWindowFunction<std::int64_t, std::string, std::string> {
  void process(const std::string& key, Context& ctx, const WindowElements<std::int64_t>& e,
               Collector<std::string>& out) override {
    std::string s = key + "=" + std::to_string(e[0]) + " ";
    to_string_into(ctx.window(), s);
    out.collect(s);
    ctx.output(OutputTag<std::string>("meta"), "wm " + (ctx.current_watermark() == kMaxEventTime ? std::string("MAX")
                                                                                                 : std::to_string(ctx.current_watermark())));
  }
};

TEST(WindowFunctions, AggregateThenProcessWithSideOutput) {
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    s.records({{{"a", 1}, 1000}, {{"b", 5}, 1000}, {{"a", 2}, 1500}}).watermark(Watermark::at(2000));
  });
  auto out = keyed(src).window(TumblingEventTimeWindows::of(2000)).aggregate(SumAgg{}, Describe{});
  auto log = probe(out);
  auto meta = probe(out.side_output(OutputTag<std::string>("meta")), false);
  env.execute();
  EXPECT_EQ(log->get(), (V{"a=3 [0,2000)@1999", "b=5 [0,2000)@1999", "W2000", "WMAX"}));
  EXPECT_EQ(meta->get(), (V{"wm 2000@1999", "wm 2000@1999"}));
}

TEST(WindowFunctions, ParallelWindowsPartitionByKey) {
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  auto src = source(env, [](ScriptedSource<KV>& s) {
    std::vector<std::pair<KV, EventTime>> r;
    for (int i = 0; i < 200; ++i) r.push_back({{"k" + std::to_string(i % 20), i}, i * 10});
    s.records(r);
  });
  auto c = std::make_shared<CollectSink<WindowResult<std::string, std::int64_t>>>();
  keyed(src).window(TumblingEventTimeWindows::of(1000)).aggregate_with_info(SumAgg{}).sink_to(c);
  env.execute();
  std::map<std::pair<std::string, EventTime>, std::int64_t> got, want;
  for (const auto& r : c->values()) got[{r.key, r.window.start}] += r.value;
  for (int i = 0; i < 200; ++i) want[{"k" + std::to_string(i % 20), window_start_for(i * 10, 1000)}] += i;
  EXPECT_EQ(got, want);
}

TEST(WindowFunctions, NonMergingTriggerIsRejectedForSessions) {
  struct NoMerge final : Trigger {
    TriggerResult on_element(EventTime, const TimeWindow&, TriggerContext&) const override { return TriggerResult::kFire; }
    TriggerResult on_event_time(std::int64_t, const TimeWindow&, TriggerContext&) const override {
      return TriggerResult::kContinue;
    }
    TriggerResult on_processing_time(std::int64_t, const TimeWindow&, TriggerContext&) const override {
      return TriggerResult::kContinue;
    }
    void clear(const TimeWindow&, TriggerContext&) const override {}
    std::string describe() const override { return "NoMerge()"; }
  };
  WindowConfig<KV> cfg;
  cfg.assigner = std::make_shared<EventTimeSessionWindows>(1000);
  cfg.trigger = std::make_shared<NoMerge>();
  using P = IncrementalPolicy<KV, SumAgg, EmitResult<std::int64_t>>;
  try {
    WindowOperator<std::string, KV, KeyOf, P> op(cfg, KeyOf{}, P(SumAgg{}, {}));
    FAIL() << "expected an error";
  } catch (const ClinkError& e) {
    EXPECT_NE(std::string(e.what()).find("NoMerge() cannot be used with merging windows"), std::string::npos) << e.what();
  }
}

// ---- the sliced path equals the generic one ----

// keys > 5: most records in order, so that window key lists name most of the keys (the
// firings scan the table, the record loop starts panes on its shortcuts).
V run_random(bool slicing, std::uint32_t seed, bool sliding, std::int64_t lateness, std::uint32_t keys = 5) {
  StreamExecutionEnvironment env;
  auto src = source(env, [seed, keys](ScriptedSource<KV>& s) {
    std::mt19937 rng(seed);
    EventTime wm = -5000;
    for (int step = 0; step < 60; ++step) {
      std::vector<std::pair<KV, EventTime>> r;
      int count = static_cast<int>(rng() % (keys > 5 ? 4 * keys : 20));
      for (int i = 0; i < count; ++i) {
        // Some late, some ahead; with many keys mostly just past the watermark.
        EventTime ts = keys > 5 && rng() % 8 != 0 ? wm + 1 + static_cast<EventTime>(rng() % 1500)
                                                  : wm + static_cast<EventTime>(rng() % 9000) - 3000;
        r.push_back({{"k" + std::to_string(rng() % keys), static_cast<std::int64_t>(rng() % 100)}, ts});
      }
      s.records(r);
      wm += static_cast<EventTime>(rng() % 1500);
      s.watermark(Watermark::at(wm));
    }
  });
  OutputTag<KV> late("late");
  auto w = keyed(src)
               .window(sliding ? WindowAssignerPtr(std::make_shared<SlidingEventTimeWindows>(5000, 1000))
                               : WindowAssignerPtr(std::make_shared<TumblingEventTimeWindows>(2000, 500)))
               .allowed_lateness(lateness)
               .side_output_late_data(late)
               .slicing(slicing);
  auto out = w.aggregate_with_info(SumAgg{});
  auto log = probe(out);
  auto side = probe(out.side_output(late), false);
  env.execute();
  V all = log->get();
  for (auto& l : side->get()) all.push_back("late " + l);
  return all;
}

TEST(SlicedPath, EqualsTheGenericPathOnRandomInput) {
  for (std::uint32_t seed : {1u, 2u, 3u, 4u}) {
    for (bool sliding : {false, true}) {
      for (std::int64_t lateness : {0, 2500}) {
        V generic = run_random(false, seed, sliding, lateness);
        V sliced = run_random(true, seed, sliding, lateness);
        EXPECT_GT(generic.size(), 50u);
        EXPECT_EQ(sliced, generic) << "seed " << seed << " sliding " << sliding << " lateness " << lateness;
      }
    }
  }
}

TEST(SlicedPath, EqualsTheGenericPathOnRandomInputWithManyKeys) {
  for (std::uint32_t seed : {5u, 6u}) {
    for (bool sliding : {false, true}) {
      for (std::int64_t lateness : {0, 2500}) {
        V generic = run_random(false, seed, sliding, lateness, 600);
        V sliced = run_random(true, seed, sliding, lateness, 600);
        EXPECT_GT(generic.size(), 10000u);
        EXPECT_EQ(sliced, generic) << "seed " << seed << " sliding " << sliding << " lateness " << lateness;
      }
    }
  }
}

}  // namespace
}  // namespace clink::test
