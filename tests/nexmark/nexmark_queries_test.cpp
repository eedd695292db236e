// Nexmark q14, q15, q16 and q17 of examples/nexmark/ on a small generated stream, each
// result row computed here from the generator's bids. The streams run at one event per
// millisecond from a base time chosen so that the hour (q14) or the day and minute (q15,
// q16, q17) change mid-stream.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "nexmark_query_support.hpp"

namespace clink::test {
namespace {

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// q14: 2020-09-13 18:59:59.500 on, so bids fall in hour 18 (dayTime) and 19 (otherTime).
TEST(NexmarkQueries, Q14CalculationWithTheCountCharUdf) {
  Sizing s{.events = 2000, .base_time = 1600023599500, .rate = 1000};
  std::vector<std::string> expected;
  std::set<std::string> types;
  for (const auto& b : bids_of(generator_events(s))) {
    const std::int64_t thousandths = 908 * b.price;  // 0.908 * price, DECIMAL(23, 3)
    if (!(thousandths > 1'000'000'000 && thousandths < 50'000'000'000)) continue;
    const int hour = civil(b.date_time).hour;
    std::string type = hour >= 8 && hour <= 18 ? "dayTime" : (hour <= 6 || hour >= 20) ? "nightTime" : "otherTime";
    types.insert(type);
    std::string extra = b.extra.str();
    expected.push_back(fmt::format("+I[{}, {}, {}.{:03}, {}, {}, {}, {}]", b.auction, b.bidder, thousandths / 1000,
                                   thousandths % 1000, type, timestamp_of(b.date_time), extra,
                                   std::count(extra.begin(), extra.end(), 'c')));
  }
  ASSERT_EQ(types, (std::set<std::string>{"dayTime", "otherTime"})) << "the stream should cross 19:00";
  ASSERT_GT(expected.size(), 100u);
  auto r = run_script(sized_script("q14", s), "nexmark_q14");
  EXPECT_EQ(r.changelog, expected);  // insert-only, in the source's order
}

struct RankCounts {
  std::int64_t bids[4] = {0, 0, 0, 0};  // total, rank1 (< 10000), rank2 (< 1000000), rank3
  std::set<std::int64_t> bidders[4], auctions[4];
  void add(const NexmarkBid& b) {
    const int rank = b.price < 10000 ? 1 : b.price < 1000000 ? 2 : 3;
    for (int k : {0, rank}) {
      ++bids[k];
      bidders[k].insert(b.bidder);
      auctions[k].insert(b.auction);
    }
  }
  std::string columns() const {
    return fmt::format("{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}", bids[0], bids[1], bids[2], bids[3],
                       bidders[0].size(), bidders[1].size(), bidders[2].size(), bidders[3].size(),
                       auctions[0].size(), auctions[1].size(), auctions[2].size(), auctions[3].size());
  }
};

TEST(NexmarkQueries, Q15BiddingStatisticsPerDayWithDistinctFilteredCounts) {
  Sizing s{.events = 3000, .base_time = kHalfSecondBeforeMidnight, .rate = 1000};
  std::map<std::string, RankCounts> days;
  for (const auto& b : bids_of(generator_events(s))) days[day_of(b.date_time)].add(b);
  ASSERT_EQ(days.size(), 2u);
  std::vector<std::string> expected;
  for (const auto& [day, c] : days) {
    ASSERT_GT(c.bids[1] * c.bids[2] * c.bids[3], 0) << "every price rank should occur on " << day;
    expected.push_back(fmt::format("+I[{}, {}]", day, c.columns()));
  }
  auto r = run_script(sized_script("q15", s), "nexmark_q15");
  EXPECT_EQ(sorted(r.rows), expected);
  // An unbounded aggregation: one +I per day, then -U/+U pairs as its counts grow.
  EXPECT_EQ(std::count_if(r.changelog.begin(), r.changelog.end(), [](const auto& l) { return l.rfind("+I", 0) == 0; }),
            2);
}

TEST(NexmarkQueries, Q16ChannelStatisticsPerDay) {
  Sizing s{.events = 3000, .base_time = kHalfSecondBeforeMidnight, .rate = 1000};
  std::map<std::pair<std::string, std::string>, std::pair<std::string, RankCounts>> groups;
  for (const auto& b : bids_of(generator_events(s))) {
    auto& [minute, counts] = groups[{std::string(b.channel), day_of(b.date_time)}];
    minute = std::max(minute, hm_of(b.date_time));
    counts.add(b);
  }
  std::vector<std::string> expected;
  std::set<std::string> channels;
  for (const auto& [key, g] : groups) {
    expected.push_back(fmt::format("+I[{}, {}, {}, {}]", key.first, key.second, g.first, g.second.columns()));
    channels.insert(key.first);
  }
  ASSERT_GT(channels.size(), 4u);
  ASSERT_LT(channels.size(), groups.size()) << "some channel should have bids on both days";
  auto r = run_script(sized_script("q16", s), "nexmark_q16");
  EXPECT_EQ(sorted(r.rows), sorted(expected));
}

TEST(NexmarkQueries, Q17AuctionStatisticsPerDay) {
  Sizing s{.events = 3000, .base_time = kHalfSecondBeforeMidnight, .rate = 1000};
  struct Stats {
    std::int64_t n = 0, r1 = 0, r2 = 0, r3 = 0, min = INT64_MAX, max = INT64_MIN, sum = 0;
  };
  std::map<std::pair<std::int64_t, std::string>, Stats> groups;
  for (const auto& b : bids_of(generator_events(s))) {
    Stats& st = groups[{b.auction, day_of(b.date_time)}];
    ++st.n;
    (b.price < 10000 ? st.r1 : b.price < 1000000 ? st.r2 : st.r3) += 1;
    st.min = std::min(st.min, b.price);
    st.max = std::max(st.max, b.price);
    st.sum += b.price;
  }
  ASSERT_GE(groups.size(), 3u);
  std::vector<std::string> expected;
  for (const auto& [key, st] : groups)  // AVG(BIGINT) is a BIGINT: the sum divided by the count, truncated
    expected.push_back(fmt::format("+I[{}, {}, {}, {}, {}, {}, {}, {}, {}, {}]", key.first, key.second, st.n, st.r1,
                                   st.r2, st.r3, st.min, st.max, st.sum / st.n, st.sum));
  auto r = run_script(sized_script("q17", s), "nexmark_q17");
  EXPECT_EQ(sorted(r.rows), sorted(expected));
}

}  // namespace
}  // namespace clink::test
