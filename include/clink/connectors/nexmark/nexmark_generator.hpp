#pragma once
// Nexmark's event generator (nexmark/nexmark, nexmark-flink generator/NexmarkGenerator
// and model/*Generator), as a pure function of the position in the stream: the n-th
// event (n events before it) has event id firstEventId + adjusted event number, is a
// person, auction or bid by id % (sum of proportions), takes its fields from a
// java.util.Random seeded with that id (Nexmark's deterministic generator: the same
// events as Nexmark's Java code for the same configuration) and its dateTime from the
// inter-event delay. Any position can be generated directly, so a split of the stream
// can start anywhere, at any parallelism.
#include <cstdint>

#include "clink/connectors/nexmark/generator_config.hpp"
#include "clink/core/java_random.hpp"
#include "clink/connectors/nexmark/nexmark_event.hpp"

namespace clink::nexmark {

// n / d and n % d for a divisor fixed per generator (the sum of the proportions) by a
// multiply, exact for n <= limit; a hardware division past that.
class FixedDivider {
 public:
  explicit FixedDivider(std::int64_t d = 1)
      : d_(static_cast<std::uint64_t>(d)), magic_(~std::uint64_t{0} / d_ + 1), limit_(~std::uint64_t{0} / d_) {}
  void divide(std::int64_t n, std::int64_t& quotient, std::int64_t& remainder) const {
    auto u = static_cast<std::uint64_t>(n);
    std::uint64_t q = d_ == 1 ? u : u <= limit_ ? static_cast<std::uint64_t>((static_cast<u128>(u) * magic_) >> 64) : u / d_;
    quotient = static_cast<std::int64_t>(q);
    remainder = static_cast<std::int64_t>(u - q * d_);
  }

 private:
  std::uint64_t d_, magic_, limit_;
};

// Where an event id falls: its epoch (one round of the proportions) and offset in it.
struct EpochPosition {
  std::int64_t epoch = 0;
  std::int64_t offset = 0;
};

class NexmarkGenerator {
 public:
  // Throws ClinkError when the config cannot generate (see validate()).
  explicit NexmarkGenerator(GeneratorConfig config);

  // Checks what the generator divides by or draws bounds from: positive proportions,
  // rate, ratios, counts and group size; non-negative sizes and events.num.
  static void validate(const GeneratorConfig& config);

  const GeneratorConfig& config() const { return config_; }
  std::int64_t max_events() const { return max_events_; }

  // The n-th event, 0 <= n < max_events().
  void generate(std::int64_t n, NexmarkEvent& out) const;
  NexmarkEvent event(std::int64_t n) const {
    NexmarkEvent e;
    generate(n, e);
    return e;
  }
  // The n-th event's dateTime, without generating it.
  std::int64_t timestamp(std::int64_t n) const {
    return config_.timestamp_for_event(config_.adjusted_event_number(n));
  }
  // Nexmark's watermark after n events: no event from the n-th on is older.
  std::int64_t watermark(std::int64_t n) const {
    return config_.timestamp_for_event(config_.watermark_event_number(n));
  }

 private:
  void make_person(std::int64_t id, EpochPosition pos, std::int64_t timestamp, NexmarkPerson& p) const;
  void make_auction(std::int64_t n, std::int64_t id, EpochPosition pos, std::int64_t timestamp,
                    NexmarkAuction& a) const;
  void make_bid(std::int64_t id, EpochPosition pos, std::int64_t timestamp, NexmarkBid& b) const;
  std::int64_t last_person(EpochPosition pos) const;
  std::int64_t last_auction(EpochPosition pos) const;
  std::int64_t next_person(EpochPosition pos, JavaRandom& r) const;
  std::int64_t next_auction(EpochPosition pos, JavaRandom& r) const;

  GeneratorConfig config_;
  std::int64_t max_events_;
  std::int64_t total_;
  std::int64_t auction_horizon_events_;  // events until numInFlightAuctions more auctions
  FixedDivider epoch_divider_;
  JavaIntBound hot_sellers_, hot_auctions_, hot_bidders_;
  JavaIntBound active_people_;      // numActivePeople + PERSON_ID_LEAD: once that many people exist
  JavaIntBound in_flight_auctions_;  // numInFlightAuctions + 1 + AUCTION_ID_LEAD: past the first ones
  int bid_extra_min_ = 0;           // a bid's extra: min + nextInt(2 delta) chars (delta 0: min)
  JavaIntBound bid_extra_spread_;
  bool bid_extra_spread_used_ = false;  // delta > 0
  bool bid_extra_ = false;              // the bid's 32 bytes are within bid.avg-size
};

// PriceGenerator.nextPrice for nextDouble() = u: Math.round(Math.pow(10.0, u * 6.0) * 100.0).
std::int64_t price_from_unit(double u);

// Nexmark's id arithmetic (PersonGenerator / AuctionGenerator), base 0.
std::int64_t last_base0_person_id(const GeneratorConfig& c, std::int64_t event_id);
std::int64_t last_base0_auction_id(const GeneratorConfig& c, std::int64_t event_id);

}  // namespace clink::nexmark
