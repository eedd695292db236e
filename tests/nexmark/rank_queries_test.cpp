// The Nexmark queries with ROW_NUMBER (examples/nexmark/q9, q18, q19) run as written, on a
// small generated stream (20000 events at 1000 events/s, a fixed base time, emitted as fast
// as possible), their blackhole sink swapped for a collect sink. Each result is compared
// with one computed here from the generator's events directly (plain loops and maps, no
// SQL): the changelog applied must equal the final Top-N / last rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "clink/sql/common/temporal.hpp"
#include "nexmark_query_support.hpp"

namespace clink::test {
namespace {

const Sizing kSizing{20000, 1700000000000, 1000, true};

std::vector<std::string> bid_fields(const NexmarkBid& b) {
  return {std::to_string(b.auction), std::to_string(b.bidder), std::to_string(b.price), str(b.channel), str(b.url),
          timestamp_of(b.date_time), b.extra.str()};
}

QueryResult run(const std::string& q, int parallelism) {
  const std::string sql = "SET 'parallelism.default' = '" + std::to_string(parallelism) + "';\n" + sized_script(q, kSizing);
  return run_script(sql, "nexmark_" + q);
}

// Query 18: per (bidder, auction) the last bid (a later or equal dateTime replaces the kept one).
TEST(NexmarkRankQueries, Q18LastBidPerBidderAndAuction) {
  std::map<std::pair<std::int64_t, std::int64_t>, NexmarkBid> last;
  for (const auto& b : bids_of(generator_events(kSizing))) {
    auto [it, fresh] = last.try_emplace({b.bidder, b.auction}, b);
    if (!fresh && b.date_time >= it->second.date_time) it->second = b;
  }
  std::vector<std::string> expected;
  for (const auto& [key, b] : last) expected.push_back(row(bid_fields(b)));
  ASSERT_GT(expected.size(), 100u);
  for (int p : {1, 2}) {
    QueryResult r = run("q18", p);
    EXPECT_EQ(sorted(r.rows), sorted(expected)) << "parallelism " << p;
    EXPECT_GT(r.changelog.size(), expected.size()) << "bidders bid again on an auction: -U / +U";
  }
}

// Query 19: per auction the 10 highest bids with their rank (ties in arrival order).
TEST(NexmarkRankQueries, Q19TopTenBidsPerAuction) {
  std::map<std::int64_t, std::vector<NexmarkBid>> per_auction;
  for (const auto& b : bids_of(generator_events(kSizing))) per_auction[b.auction].push_back(b);
  std::vector<std::string> expected;
  for (auto& [auction, bids] : per_auction) {
    std::stable_sort(bids.begin(), bids.end(), [](const auto& a, const auto& b) { return a.price > b.price; });
    for (std::size_t i = 0; i < bids.size() && i < 10; ++i) {
      auto f = bid_fields(bids[i]);
      f.push_back(std::to_string(i + 1));
      expected.push_back(row(f));
    }
  }
  ASSERT_GT(per_auction.size(), 10u);
  for (int p : {1, 2}) EXPECT_EQ(sorted(run("q19", p).rows), sorted(expected)) << "parallelism " << p;
}

// Query 9: per auction the winning bid among those made while it was open: the highest price,
// the earliest of equal prices.
TEST(NexmarkRankQueries, Q9WinningBids) {
  auto es = generator_events(kSizing);
  std::map<std::int64_t, const NexmarkAuction*> auctions;
  for (const auto& e : es)
    if (e.type == NexmarkEventType::kAuction) auctions[e.auction.id] = &e.auction;
  std::map<std::int64_t, NexmarkBid> winner;
  for (const auto& e : es) {
    if (e.type != NexmarkEventType::kBid) continue;
    const NexmarkBid& b = e.bid;
    auto a = auctions.find(b.auction);
    if (a == auctions.end() || b.date_time < a->second->date_time || b.date_time > a->second->expires) continue;
    auto [it, fresh] = winner.try_emplace(b.auction, b);
    if (!fresh && (b.price > it->second.price || (b.price == it->second.price && b.date_time < it->second.date_time)))
      it->second = b;
  }
  std::vector<std::string> expected;
  for (const auto& [id, b] : winner) {
    const NexmarkAuction& a = *auctions.at(id);
    expected.push_back(row({std::to_string(a.id), str(a.item_name), str(a.description), std::to_string(a.initial_bid),
                            std::to_string(a.reserve), timestamp_of(a.date_time), timestamp_of(a.expires), std::to_string(a.seller),
                            std::to_string(a.category), a.extra.str(), std::to_string(b.auction), std::to_string(b.bidder),
                            std::to_string(b.price), timestamp_of(b.date_time), b.extra.str()}));
  }
  ASSERT_GT(expected.size(), 10u);
  for (int p : {1, 2}) EXPECT_EQ(sorted(run("q9", p).rows), sorted(expected)) << "parallelism " << p;
}

}  // namespace
}  // namespace clink::test
