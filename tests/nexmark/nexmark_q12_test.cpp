// Nexmark q12 (bids per bidder in 10-second processing-time windows over PROCTIME()) on
// the window engine's processing-time assigners and timers, with an injected clock that
// advances by a fixed step per poll of the nexmark source. The job's operators are chained
// into one task (its hash edge made forward: parallelism 1), so each poll's rows reach the
// window at the clock of that poll, and the result is exact.
//
// At the end of the input processing-time windows that the clock has not passed are not
// fired, as in Flink's streaming mode (the task quiesces its processing-time service before
// finish()): the last window is dropped.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <map>

#include "clink/runtime/operator.hpp"
#include "nexmark_query_support.hpp"

namespace clink::test {
namespace {

constexpr std::int64_t kStart = 1600000000000;  // a multiple of 10 s
constexpr std::int64_t kStepMs = 6000;          // the clock per source poll

struct PollClock final : ProcessingTimeClock {
  std::atomic<std::int64_t> polls{0};
  std::int64_t now_ms() const override { return kStart + polls.load() * kStepMs; }
};

// The nexmark source, counting its polls for the clock (after the poll's rows went
// through the chain).
class CountedSource final : public SourceOperator {
 public:
  CountedSource(std::unique_ptr<StreamOperator> inner, PollClock* clock)
      : inner_(std::move(inner)), source_(dynamic_cast<SourceOperator*>(inner_.get())), clock_(clock) {}
  void open(RuntimeContext& ctx) override {
    SourceOperator::open(ctx);
    inner_->open(ctx);
  }
  PollStatus poll_next() override {
    PollStatus s = source_->poll_next();
    ++clock_->polls;
    return s;
  }
  void snapshot_state(std::int64_t id) override { inner_->snapshot_state(id); }
  void close() override { inner_->close(); }

 private:
  std::unique_ptr<StreamOperator> inner_;
  SourceOperator* source_;
  PollClock* clock_;
};

TEST(NexmarkQ12, ProcessingTimeTumbleCountsBidsPerBidderPerWindowAndDropsTheOpenWindowAtTheEnd) {
  // 2 * 1024 events in polls 0 and 1 (clock +0 s, +6 s: the window [0 s, 10 s)), the
  // rest in poll 2 (+12 s: [10 s, 20 s)), which is still open when the input ends.
  Sizing s{.events = 2500, .base_time = 1600023599500};
  std::map<std::int64_t, std::int64_t> first_window;
  auto events = generator_events(s);
  for (std::size_t n = 0; n < 2 * kDefaultBatchSize; ++n)
    if (events[n].type == NexmarkEventType::kBid) ++first_window[events[n].bid.bidder];
  std::vector<std::string> expected;
  for (const auto& [bidder, count] : first_window)
    expected.push_back(fmt::format("+I[{}, {}, {}, {}]", bidder, count, timestamp_of(kStart), timestamp_of(kStart + 10000)));
  ASSERT_GT(expected.size(), 3u);

  PollClock clock;
  ExecutionOptions options;
  options.clock = &clock;
  auto chain_everything = [&](JobGraph& g) {
    for (auto& e : g.edges) e.partitioning = Partitioning::kForward;
    for (auto& n : g.nodes) {
      n.parallelism = 1;
      if (n.factory != "sql_nexmark_source") continue;
      auto build = n.build;
      n.build = [build, &clock] { return std::make_unique<CountedSource>(build(), &clock); };
    }
  };
  auto r = run_script(sized_script("q12", s), "nexmark_q12", chain_everything, options);
  EXPECT_GE(clock.polls.load(), 3);  // a fourth, empty poll may report the end
  EXPECT_LE(clock.polls.load(), 4);
  std::sort(r.changelog.begin(), r.changelog.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(r.changelog, expected);
}

TEST(NexmarkQ12, RunsToCompletionOnTheSystemClock) {
  // As planned (a hash edge into the window), at the wall clock: how many windows close
  // during a short run depends on timing, but no bid is counted twice.
  Sizing s{.events = 20000, .base_time = 1600023599500};
  auto r = run_script(sized_script("q12", s), "nexmark_q12");
  std::int64_t counted = 0;
  for (const auto& row : r.changelog) {
    auto first = row.find(", ") + 2;
    counted += std::stoll(row.substr(first, row.find(',', first) - first));
  }
  EXPECT_LE(counted, static_cast<std::int64_t>(bids_of(generator_events(s)).size()));
}

}  // namespace
}  // namespace clink::test
