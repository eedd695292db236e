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
#include "clink/connectors/nexmark/nexmark_event.hpp"

namespace clink::nexmark {

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
  void make_person(std::int64_t id, std::int64_t timestamp, NexmarkPerson& p) const;
  void make_auction(std::int64_t n, std::int64_t id, std::int64_t timestamp, NexmarkAuction& a) const;
  void make_bid(std::int64_t id, std::int64_t timestamp, NexmarkBid& b) const;

  GeneratorConfig config_;
  std::int64_t max_events_;
  std::int64_t total_;
  std::int64_t auction_horizon_events_;  // events until numInFlightAuctions more auctions
};

// Nexmark's id arithmetic (PersonGenerator / AuctionGenerator), base 0.
std::int64_t last_base0_person_id(const GeneratorConfig& c, std::int64_t event_id);
std::int64_t last_base0_auction_id(const GeneratorConfig& c, std::int64_t event_id);

}  // namespace clink::nexmark
