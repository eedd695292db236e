// CepOperator driven directly (Flink's CepOperatorTest): event-time buffering and
// ordering, late records, timeouts to the side output, trailing not_followed_by,
// processing time, keys, state cleanup.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "cep_test_support.hpp"
#include "clink/cep/cep.hpp"

#include "../support/manual_clock.hpp"

namespace clink::test {

using namespace clink::cep;

namespace {

using Strings = std::vector<std::string>;

class CapturingOutput final : public Output {
 public:
  void emit(BatchPtr b) override {
    for (auto& r : batch_cast<std::string>(*b).records) main.push_back(r.value + "@" + ts(r.event_time));
  }
  void emit_watermark(Watermark wm) override { watermarks.push_back(wm.timestamp); }
  void emit_side(const std::string& tag, BatchPtr b) override {
    if (tag == "late")
      for (auto& r : batch_cast<Event>(*b).records) sides[tag].push_back(std::to_string(r.value.id) + "@" + ts(r.event_time));
    else
      for (auto& r : batch_cast<std::string>(*b).records) sides[tag].push_back(r.value + "@" + ts(r.event_time));
  }
  static std::string ts(EventTime t) { return t == kNoEventTime ? "none" : std::to_string(t); }
  Strings take() { return std::exchange(main, {}); }
  Strings take_side(const std::string& tag) { return std::exchange(sides[tag], {}); }
  Strings main;
  std::map<std::string, Strings> sides;
  std::vector<EventTime> watermarks;
};

// Select to "match" strings, timeouts to side output "timeouts".
struct RenderFn final : PatternProcessFunction<Event, std::string> {
  void process_match(const Match<Event>& m, Context&, Collector<std::string>& out) override {
    out.collect(render_match(m));
  }
  bool handles_timed_out_matches() const override { return true; }
  void process_timed_out_match(const Match<Event>& m, Context& ctx) override {
    ctx.output(OutputTag<std::string>("timeouts"), render_match(m));
  }
};

class OpHarness {
 public:
  explicit OpHarness(const Pattern<Event>& p, CepOptions<Event> opts = {})
      : op_(p, [](const Event& e) { return e.key; }, std::make_shared<RenderFn>(), std::move(opts)),
        ctx_("cep", "CEP", 0, 1, kDefaultMaxParallelism, &out_, std::make_shared<OperatorMetrics>(), clock_) {
    op_.open(ctx_);
  }
  void records(std::vector<std::pair<Event, EventTime>> rs) {
    auto b = std::make_unique<Batch<Event>>();
    for (auto& [e, t] : rs) b->push(e, t);
    op_.process_batch(0, std::move(b));
  }
  void watermark(EventTime t) { op_.process_watermark(Watermark{t, false}); }
  CapturingOutput& out() { return out_; }
  CepOperator<Event, std::string, std::int64_t>& op() { return op_; }
  // The keys whose NFA state the backend holds (after a snapshot_state), in key order.
  std::vector<std::int64_t> keys_in_backend() {
    KeyedStateBackend& b = *ctx_.keyed_state_backend_or_private();
    const StateId id = b.register_state("cep-nfa", StateKind::kValue);
    std::vector<std::int64_t> keys;
    for (int kg = b.key_groups().first; kg <= b.key_groups().last; ++kg)
      b.for_each_entry(id, kg, [&](std::string_view k, std::string_view, std::string_view) {
        keys.push_back(decode_key<std::int64_t>(k));
      });
    std::sort(keys.begin(), keys.end());
    return keys;
  }
  std::int64_t late_dropped() { return ctx_.metrics().late_records_dropped.load(); }
  ManualClock clock_;

 private:
  CapturingOutput out_;
  CepOperator<Event, std::string, std::int64_t> op_;
  RuntimeContext ctx_;
};

Pattern<Event> a_then_b() { return Pattern<Event>::begin("a").where(named("a")).followed_by("b").where(named("b")); }

TEST(CepOperator, MatchesWaitForTheWatermark) {
  OpHarness h(a_then_b());
  h.records({{ev(1, "a"), 1}, {ev(2, "b"), 2}});
  EXPECT_EQ(h.out().take(), Strings{});
  h.watermark(1);
  EXPECT_EQ(h.out().take(), Strings{});
  h.watermark(2);
  EXPECT_EQ(h.out().take(), (Strings{"a:1 b:2@2"}));
  EXPECT_EQ(h.out().watermarks, (std::vector<EventTime>{1, 2}));
}

TEST(CepOperator, OutOfOrderInputIsMatchedInTimestampOrder) {
  // Arrival: b@5 before a@2. Arrival-order matching would find nothing.
  OpHarness h(a_then_b());
  h.records({{ev(2, "b"), 5}, {ev(1, "a"), 2}, {ev(3, "a"), 7}, {ev(4, "b"), 6}});
  h.watermark(10);
  EXPECT_EQ(h.out().take(), (Strings{"a:1 b:2@5"}));
  EXPECT_EQ(h.op().live_keys(), 1u);  // a:3 waits for a "b"
}

TEST(CepOperator, EqualTimestampsKeepArrivalOrder) {
  OpHarness h(Pattern<Event>::begin("a").where(named("a")).next("b").where(named("b")));
  h.records({{ev(1, "a"), 5}, {ev(2, "b"), 5}, {ev(3, "b"), 4}});
  h.watermark(5);
  EXPECT_EQ(h.out().take(), (Strings{"a:1 b:2@5"}));
}

TEST(CepOperator, LateRecordsAreDroppedAndCounted) {
  OpHarness h(a_then_b());
  h.records({{ev(1, "a"), 10}});
  h.watermark(10);
  h.records({{ev(2, "a"), 9}, {ev(3, "a"), 10}, {ev(4, "b"), 11}});
  h.watermark(20);
  EXPECT_EQ(h.out().take(), (Strings{"a:1 b:4@11"}));
  EXPECT_EQ(h.late_dropped(), 2);
}

TEST(CepOperator, LateRecordsToTheSideOutput) {
  CepOptions<Event> o;
  o.late_data_tag = OutputTag<Event>("late");
  OpHarness h(a_then_b(), o);
  h.watermark(10);
  h.records({{ev(1, "a"), 3}, {ev(2, "a"), 11}, {ev(3, "b"), 10}, {ev(4, "b"), 12}});
  h.watermark(12);
  EXPECT_EQ(h.out().take(), (Strings{"a:2 b:4@12"}));
  EXPECT_EQ(h.out().take_side("late"), (Strings{"1@3", "3@10"}));
  EXPECT_EQ(h.late_dropped(), 0);
}

TEST(CepOperator, TimedOutPartialsGoToTheSideOutputAtWindowEnd) {
  OpHarness h(Pattern<Event>::begin("a").where(named("a")).followed_by("b").where(named("b"))
                  .followed_by("c").where(named("c")).within(10));
  h.records({{ev(1, "a"), 1}, {ev(2, "b"), 3}, {ev(3, "a"), 6}});
  h.watermark(10);
  EXPECT_EQ(h.out().take_side("timeouts"), Strings{});
  h.watermark(11);  // a:1's window [1, 11) is over
  EXPECT_EQ(h.out().take_side("timeouts"), (Strings{"a:1 b:2@11"}));
  h.records({{ev(4, "b"), 12}, {ev(5, "c"), 14}});
  h.watermark(100);
  EXPECT_EQ(h.out().take(), (Strings{"a:3 b:4 c:5@14"}));
  EXPECT_EQ(h.out().take_side("timeouts"), Strings{});
  EXPECT_EQ(h.op().live_keys(), 0u);  // nothing left for the key
}

TEST(CepOperator, TrailingNotFollowedByEmitsWhenTheWatermarkPassesTheWindow) {
  OpHarness h(Pattern<Event>::begin("a").where(named("a")).not_followed_by("nb").where(named("b")).within(10));
  h.records({{ev(1, "a"), 1}, {ev(2, "a"), 4}, {ev(3, "b"), 8}, {ev(4, "a"), 20}});
  h.watermark(15);
  EXPECT_EQ(h.out().take(), Strings{});  // a:1 and a:2 were killed by b:3
  h.watermark(29);
  EXPECT_EQ(h.out().take(), Strings{});
  h.watermark(31);
  EXPECT_EQ(h.out().take(), (Strings{"a:4@31"}));
  EXPECT_EQ(h.out().take_side("timeouts"), Strings{});
}

TEST(CepOperator, KeysMatchIndependently) {
  OpHarness h(a_then_b());
  h.records({{kev(1, 1, "a"), 1}, {kev(2, 2, "a"), 2}, {kev(2, 3, "b"), 3}, {kev(1, 4, "x"), 4}, {kev(1, 5, "b"), 5}});
  h.watermark(10);
  // Keys wake in the order of their earliest record (key 1 at 1, key 2 at 2); a woken
  // key processes all its records up to the watermark, as Flink's per-key timer does.
  EXPECT_EQ(h.out().take(), (Strings{"a:1 b:5@5", "a:2 b:3@3"}));
  EXPECT_EQ(h.op().live_keys(), 0u);
}

TEST(CepOperator, ProcessingTimeMatchesInArrivalOrder) {
  CepOptions<Event> o;
  o.event_time = false;
  OpHarness h(Pattern<Event>::begin("a").where(named("a")).followed_by("b").where(named("b")).within(100), o);
  h.clock_.now = 1000;
  h.records({{ev(1, "b"), 5}, {ev(2, "a"), 2}, {ev(3, "b"), 1}});
  EXPECT_EQ(h.out().take(), (Strings{"a:2 b:3@none"}));
  h.records({{ev(4, "a"), 0}});
  h.clock_.now = 1099;
  h.op().process_processing_time(1099);
  EXPECT_EQ(h.out().take_side("timeouts"), Strings{});
  h.clock_.now = 1100;
  h.op().process_processing_time(1100);
  EXPECT_EQ(h.out().take_side("timeouts"), (Strings{"a:4@none"}));
}

TEST(CepOperator, RecordWithoutEventTimeIsAnError) {
  OpHarness h(a_then_b());
  try {
    h.records({{ev(1, "a"), kNoEventTime}});
    FAIL() << "expected an error";
  } catch (const ClinkError& e) {
    EXPECT_NE(std::string(e.what()).find("record has no event time"), std::string::npos) << e.what();
  }
}

TEST(CepOperator, SkipStrategyThroughTheOperator) {
  OpHarness h(Pattern<Event>::begin("a", AfterMatchSkipStrategy::skip_past_last_event()).where(named("a")).times(2));
  h.records({{ev(1, "a"), 1}, {ev(2, "a"), 2}, {ev(3, "a"), 3}, {ev(4, "a"), 4}, {ev(5, "a"), 5}});
  h.watermark(5);
  EXPECT_EQ(h.out().take(), (Strings{"a:1,2@2", "a:3,4@4"}));
}

TEST(CepOperator, IdleKeysHoldNoState) {
  OpHarness h(Pattern<Event>::begin("a").where(named("a")).next("b").where(named("b")));
  std::vector<std::pair<Event, EventTime>> rs;
  for (int k = 0; k < 100; ++k) rs.push_back({kev(k, k, "x"), 1});
  h.records(rs);
  EXPECT_EQ(h.op().buffered_records(), 100u);
  h.watermark(1);
  EXPECT_EQ(h.op().live_keys(), 0u);
  EXPECT_EQ(h.op().buffered_records(), 0u);
}

// A key's state leaves the backend at the first checkpoint after it went idle, also when
// it came back and went idle again in between; a key never checkpointed leaves nothing.
TEST(CepOperator, CheckpointsRemoveKeysThatWentIdle) {
  OpHarness h(a_then_b());
  h.records({{kev(1, 1, "a"), 1}, {kev(2, 2, "a"), 2}});
  h.watermark(5);
  h.op().snapshot_state(1);
  EXPECT_EQ(h.keys_in_backend(), (std::vector<std::int64_t>{1, 2}));
  h.records({{kev(1, 3, "b"), 6}, {kev(3, 4, "x"), 6}});  // key 1 completes, key 3 never waits
  h.watermark(7);
  h.records({{kev(1, 5, "a"), 8}, {kev(1, 6, "b"), 9}});  // key 1 back, and idle again
  h.watermark(10);
  EXPECT_EQ(h.out().take(), (Strings{"a:1 b:3@6", "a:5 b:6@9"}));
  EXPECT_EQ(h.op().live_keys(), 1u);
  h.op().snapshot_state(2);
  EXPECT_EQ(h.keys_in_backend(), (std::vector<std::int64_t>{2}));
  h.records({{kev(2, 7, "b"), 11}});
  h.watermark(12);
  h.op().snapshot_state(3);
  EXPECT_EQ(h.keys_in_backend(), std::vector<std::int64_t>{});
}

// Without checkpoints, keys that come and go do not pile up bookkeeping for the next one
// (the list of changed slots and of keys to remove stay bounded by the slots).
TEST(CepOperator, KeysComingAndGoingWithoutCheckpointsKeepNoBacklog) {
  OpHarness h(a_then_b());
  for (int i = 0; i < 1000; ++i) {
    h.records({{kev(i % 3, 2 * i, "a"), 2 * i + 1}, {kev(i % 3, 2 * i + 1, "b"), 2 * i + 2}});
    h.watermark(2 * i + 2);
  }
  EXPECT_EQ(h.out().take().size(), 1000u);
  EXPECT_EQ(h.op().live_keys(), 0u);
  EXPECT_LE(h.op().pending_state_changes(), 3u);
}

}  // namespace
}  // namespace clink::test
