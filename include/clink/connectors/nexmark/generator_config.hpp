#pragma once
// What Nexmark's NexmarkConfiguration and GeneratorConfig hold (nexmark/nexmark,
// nexmark-flink generator/GeneratorConfig.java), with Nexmark's defaults, and the
// derived values its generator uses: the inter-event delay, the event number and id of
// the n-th event (out-of-order groups included) and event timestamps.
#include <cstdint>
#include <limits>

namespace clink::nexmark {

// Nexmark's RateShape. Its Flink generator keeps one constant inter-event delay from
// first-event.rate; the shape, next-event.rate and rate.period are accepted and
// validated for compatibility but change nothing there, nor here.
enum class RateShape { kSquare, kSine };

// How far an event's draws go, in the order its Random draws its fields. Each event
// draws from its own Random (seeded with its id), so stopping after the last field a
// consumer reads changes nothing it reads, in this event or any other; the fields past
// the stop are left empty (0, "", no extra). Fields drawn from nothing (ids, dateTime)
// are always there.
enum class PersonDraws : std::uint8_t { kNone, kName, kEmail, kCreditCard, kCity, kState, kAll };
enum class AuctionDraws : std::uint8_t {
  kNone, kSeller, kCategory, kInitialBid, kExpires, kItemName, kDescription, kReserve, kAll
};
enum class BidDraws : std::uint8_t { kNone, kAuction, kBidder, kPrice, kChannel, kAll };  // kChannel: and url
struct NexmarkDraws {
  PersonDraws person = PersonDraws::kAll;
  AuctionDraws auction = AuctionDraws::kAll;
  BidDraws bid = BidDraws::kAll;
};

struct GeneratorConfig {
  // Ids start here so that queries find matches even on small data sets.
  static constexpr std::int64_t kFirstAuctionId = 1000;
  static constexpr std::int64_t kFirstPersonId = 1000;
  static constexpr std::int64_t kFirstCategoryId = 10;

  // ---- NexmarkConfiguration (option names in nexmark_options.hpp) ----
  std::int64_t num_events = 0;  // events.num; 0: as many as the counters allow
  int num_event_generators = 1;  // timelines the rate is split over (1: clink's one global timeline)
  RateShape rate_shape = RateShape::kSquare;
  int first_event_rate = 10000;  // events/s over all generators: sets the inter-event delay
  int next_event_rate = 10000;
  int rate_period_sec = 600;
  int person_proportion = 1;
  int auction_proportion = 3;
  int bid_proportion = 46;
  int avg_person_byte_size = 200;
  int avg_auction_byte_size = 500;
  int avg_bid_byte_size = 100;
  int hot_auction_ratio = 2;   // bids for a hot auction : others
  int hot_sellers_ratio = 4;   // auctions by a hot seller : others
  int hot_bidders_ratio = 4;   // bids by a hot bidder : others
  int num_in_flight_auctions = 100;
  int num_active_people = 1000;
  std::int64_t out_of_order_group_size = 1;  // 1: in order
  std::int64_t base_time = 0;                // event time of event number 0, ms since epoch
  // Bids with channel and url (Nexmark's model since it added them), or without: the
  // Random then draws the extra right after the price, as in Nexmark's releases before
  // those fields, whose events clink then reproduces exactly (channel and url empty).
  bool bid_channel_url = true;
  NexmarkDraws draws;  // not an option: what the consumer reads (all by default)

  // ---- GeneratorConfig: Nexmark's table source starts both at 1 ----
  std::int64_t first_event_id = 1;
  std::int64_t first_event_number = 1;

  int total_proportion() const { return person_proportion + auction_proportion + bid_proportion; }
  double inter_event_delay_us() const { return 1000000.0 / first_event_rate * num_event_generators; }

  // Events in the stream: events.num, or Nexmark's bound for "unbounded" (a little over
  // 3.6e14 with the defaults), chosen there to keep size estimates from overflowing.
  std::int64_t max_events() const {
    if (num_events != 0) return num_events;
    int biggest = avg_person_byte_size > avg_auction_byte_size ? avg_person_byte_size : avg_auction_byte_size;
    if (avg_bid_byte_size > biggest) biggest = avg_bid_byte_size;
    return std::numeric_limits<std::int64_t>::max() / (static_cast<std::int64_t>(total_proportion()) * biggest);
  }

  // Event number of the n-th event (n events emitted before it).
  std::int64_t event_number(std::int64_t n) const { return first_event_number + n; }
  // ... with the out-of-order shuffle inside groups of out_of_order_group_size.
  std::int64_t adjusted_event_number(std::int64_t n) const {
    std::int64_t g = out_of_order_group_size;
    std::int64_t number = event_number(n);
    // Java's long arithmetic: number * 953 wraps, the remainder keeps the sign.
    return (number / g) * g + static_cast<std::int64_t>(static_cast<std::uint64_t>(number) * 953u) % g;
  }
  // The event id: what the event's content is drawn from (the Random's seed).
  std::int64_t event_id(std::int64_t n) const { return first_event_id + adjusted_event_number(n); }
  // Event number whose timestamp bounds the n-th and all later events' timestamps.
  std::int64_t watermark_event_number(std::int64_t n) const {
    std::int64_t g = out_of_order_group_size;
    return (event_number(n) / g) * g;
  }
  // baseTime + (long) (eventNumber * interEventDelayUs) / 1000, with Java's saturating cast.
  std::int64_t timestamp_for_event(std::int64_t event_number) const {
    double us = static_cast<double>(event_number) * inter_event_delay_us();
    std::int64_t whole = us >= 9.223372036854775807e18 ? std::numeric_limits<std::int64_t>::max()
                                                       : static_cast<std::int64_t>(us);
    return base_time + whole / 1000;
  }
};

}  // namespace clink::nexmark
