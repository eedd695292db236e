#pragma once
// The nexmark connector's options, by the names of Nexmark's Flink table source
// (NexmarkSourceOptions), with their defaults:
//   events.num (0: unbounded)         first-event.rate (10000 events/s)
//   next-event.rate (10000)           rate.shape (SQUARE | SINE)   rate.period (600 s)
//   rate.limited (false)              person.avg-size (200b) auction.avg-size (500b) bid.avg-size (100b)
//   person.proportion (1)             auction.proportion (3)       bid.proportion (46)
//   bid.hot-ratio.auctions (2)        bid.hot-ratio.bidders (4)    auction.hot-ratio.sellers (4)
//   events.base-time (ms; default: when the source is made)       bid.extended.mode (false only)
//   max-emit-speed (false: emit each event when due at first-event.rate; true: as fast as possible)
// and, as Nexmark's workload files name it, `tps`: first-event.rate and next-event.rate
// at once. clink adds NexmarkConfiguration fields the Flink source does not expose:
//   events.out-of-order.group-size (1)  auction.in-flight.num (100)  person.active.num (1000)
// and bid.channel-url (true; false: bids without channel and url, as Nexmark's releases
// before those fields drew them, see GeneratorConfig::bid_channel_url).
// As in Nexmark's Flink generator, next-event.rate, rate.shape, rate.period and
// rate.limited are validated but do not change the events or their pacing.
// Sizes are Flink memory sizes ("200b", "1 kb", "2mb"; binary units), durations Flink
// durations ("600 s", "10 min"; no unit: ms), booleans true/false, enums any case.
#include <map>
#include <string>
#include <vector>

#include "clink/connectors/nexmark/generator_config.hpp"

namespace clink::nexmark {

struct NexmarkSourceOptions {
  GeneratorConfig generator;
  bool base_time_set = false;   // events.base-time given; otherwise the source sets it when made
  bool max_emit_speed = false;  // true: no pacing
  bool rate_limited = false;    // Nexmark's rate.limited, kept for completeness
};

// Parses `options` (name -> text, as in a SQL WITH clause; a 'connector' entry must be
// 'nexmark'). Throws ClinkError naming the option for an unknown name or a bad value.
NexmarkSourceOptions parse_nexmark_options(const std::map<std::string, std::string>& options);

// The accepted option names, sorted.
const std::vector<std::string>& nexmark_option_names();

}  // namespace clink::nexmark
