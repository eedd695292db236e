// The nexmark connector's options by Nexmark's names, and the `nexmark` spec factory.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "clink/connectors/nexmark/nexmark_options.hpp"
#include "clink/core/error.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/operator_registry.hpp"

namespace clink::test {

using namespace clink::nexmark;

namespace {

std::string parse_error(const std::map<std::string, std::string>& options) {
  try {
    parse_nexmark_options(options);
  } catch (const ClinkError& e) {
    return e.what();
  }
  return "no error";
}

TEST(NexmarkOptions, DefaultsAreNexmarks) {
  auto o = parse_nexmark_options({});
  const auto& g = o.generator;
  EXPECT_EQ(g.num_events, 0);
  EXPECT_EQ(g.first_event_rate, 10000);
  EXPECT_EQ(g.next_event_rate, 10000);
  EXPECT_EQ(g.rate_shape, RateShape::kSquare);
  EXPECT_EQ(g.rate_period_sec, 600);
  EXPECT_EQ(g.person_proportion, 1);
  EXPECT_EQ(g.auction_proportion, 3);
  EXPECT_EQ(g.bid_proportion, 46);
  EXPECT_EQ(g.avg_person_byte_size, 200);
  EXPECT_EQ(g.avg_auction_byte_size, 500);
  EXPECT_EQ(g.avg_bid_byte_size, 100);
  EXPECT_EQ(g.hot_auction_ratio, 2);
  EXPECT_EQ(g.hot_sellers_ratio, 4);
  EXPECT_EQ(g.hot_bidders_ratio, 4);
  EXPECT_EQ(g.num_in_flight_auctions, 100);
  EXPECT_EQ(g.num_active_people, 1000);
  EXPECT_EQ(g.out_of_order_group_size, 1);
  EXPECT_TRUE(g.bid_channel_url);
  EXPECT_EQ(g.first_event_id, 1);
  EXPECT_EQ(g.first_event_number, 1);
  EXPECT_FALSE(o.base_time_set);
  EXPECT_FALSE(o.max_emit_speed);
  EXPECT_FALSE(o.rate_limited);
}

TEST(NexmarkOptions, EveryOptionSetsItsField) {
  auto o = parse_nexmark_options({{"connector", "nexmark"},
                                  {"events.num", "100000000"},
                                  {"first-event.rate", "2000000"},
                                  {"next-event.rate", "3000000"},
                                  {"rate.shape", "sine"},
                                  {"rate.period", "10 min"},
                                  {"rate.limited", "TRUE"},
                                  {"max-emit-speed", "true"},
                                  {"person.avg-size", "1kb"},
                                  {"auction.avg-size", "2 mb"},
                                  {"bid.avg-size", "64"},
                                  {"person.proportion", "2"},
                                  {"auction.proportion", "5"},
                                  {"bid.proportion", " 93 "},
                                  {"bid.hot-ratio.auctions", "3"},
                                  {"bid.hot-ratio.bidders", "5"},
                                  {"auction.hot-ratio.sellers", "7"},
                                  {"events.base-time", "1600000000000"},
                                  {"bid.extended.mode", "false"},
                                  {"events.out-of-order.group-size", "1000"},
                                  {"auction.in-flight.num", "50"},
                                  {"person.active.num", "20"},
                                  {"bid.channel-url", "false"}});
  const auto& g = o.generator;
  EXPECT_EQ(g.num_events, 100000000);
  EXPECT_EQ(g.first_event_rate, 2000000);
  EXPECT_EQ(g.next_event_rate, 3000000);
  EXPECT_EQ(g.rate_shape, RateShape::kSine);
  EXPECT_EQ(g.rate_period_sec, 600);
  EXPECT_TRUE(o.rate_limited);
  EXPECT_TRUE(o.max_emit_speed);
  EXPECT_EQ(g.avg_person_byte_size, 1024);
  EXPECT_EQ(g.avg_auction_byte_size, 2 * 1024 * 1024);
  EXPECT_EQ(g.avg_bid_byte_size, 64);
  EXPECT_EQ(g.person_proportion, 2);
  EXPECT_EQ(g.auction_proportion, 5);
  EXPECT_EQ(g.bid_proportion, 93);
  EXPECT_EQ(g.hot_auction_ratio, 3);
  EXPECT_EQ(g.hot_bidders_ratio, 5);
  EXPECT_EQ(g.hot_sellers_ratio, 7);
  EXPECT_EQ(g.base_time, 1600000000000);
  EXPECT_TRUE(o.base_time_set);
  EXPECT_EQ(g.out_of_order_group_size, 1000);
  EXPECT_EQ(g.num_in_flight_auctions, 50);
  EXPECT_EQ(g.num_active_people, 20);
  EXPECT_FALSE(g.bid_channel_url);

  auto t = parse_nexmark_options({{"tps", "10000000"}, {"rate.period", "5000"}});
  EXPECT_EQ(t.generator.first_event_rate, 10000000);
  EXPECT_EQ(t.generator.next_event_rate, 10000000);
  EXPECT_EQ(t.generator.rate_period_sec, 5);  // no unit: milliseconds
}

TEST(NexmarkOptions, BadOptionsAreErrorsNamingTheOption) {
  std::string known;
  for (const auto& n : nexmark_option_names()) known += (known.empty() ? "" : ", ") + n;
  EXPECT_EQ(known,
            "auction.avg-size, auction.hot-ratio.sellers, auction.in-flight.num, auction.proportion, bid.avg-size, "
            "bid.channel-url, bid.extended.mode, bid.hot-ratio.auctions, bid.hot-ratio.bidders, bid.proportion, events.base-time, "
            "events.num, events.out-of-order.group-size, first-event.rate, max-emit-speed, next-event.rate, "
            "person.active.num, person.avg-size, person.proportion, rate.limited, rate.period, rate.shape, tps");
  EXPECT_EQ(parse_error({{"event.num", "5"}}), "nexmark: unknown option 'event.num' (known: " + known + ")");
  EXPECT_EQ(parse_error({{"events.num", "-1"}}),
            "nexmark: option 'events.num' must be a non-negative integer (0: unbounded), got '-1'");
  EXPECT_EQ(parse_error({{"events.num", "1e6"}}),
            "nexmark: option 'events.num' must be a non-negative integer (0: unbounded), got '1e6'");
  EXPECT_EQ(parse_error({{"first-event.rate", "0"}}),
            "nexmark: option 'first-event.rate' must be a positive integer, got '0'");
  EXPECT_EQ(parse_error({{"first-event.rate", "3000000000"}}),
            "nexmark: option 'first-event.rate' must be a positive integer, got '3000000000'");
  EXPECT_EQ(parse_error({{"bid.proportion", "0"}}),
            "nexmark: option 'bid.proportion' must be a positive integer, got '0'");
  EXPECT_EQ(parse_error({{"bid.avg-size", "100 furlongs"}}),
            "nexmark: option 'bid.avg-size' must be a memory size of at most 2147483647 bytes such as '200b' or "
            "'1 kb', got '100 furlongs'");
  EXPECT_EQ(parse_error({{"rate.period", "soon"}}),
            "nexmark: option 'rate.period' must be a duration such as '600 s' or '10 min' (no unit: milliseconds), "
            "got 'soon'");
  EXPECT_EQ(parse_error({{"rate.period", "10 ms"}}), "nexmark: option 'rate.period' must be at least one second, got '10 ms'");
  EXPECT_EQ(parse_error({{"rate.shape", "triangle"}}), "nexmark: option 'rate.shape' must be SQUARE or SINE, got 'triangle'");
  EXPECT_EQ(parse_error({{"max-emit-speed", "yes"}}), "nexmark: option 'max-emit-speed' must be true or false, got 'yes'");
  EXPECT_EQ(parse_error({{"bid.extended.mode", "true"}}),
            "nexmark: option 'bid.extended.mode' = 'true' (extended bids) is not supported");
  EXPECT_EQ(parse_error({{"tps", "5"}, {"first-event.rate", "5"}}),
            "nexmark: option 'tps' sets first-event.rate and next-event.rate; give either, not both");
  EXPECT_EQ(parse_error({{"connector", "datagen"}}), "nexmark: option 'connector' must be 'nexmark', got 'datagen'");
  EXPECT_EQ(parse_error({{"events.out-of-order.group-size", "0"}}),
            "nexmark: option 'events.out-of-order.group-size' must be a positive integer (1: in order), got '0'");
  EXPECT_EQ(parse_error({{"person.avg-size", "0"}, {"auction.avg-size", "0"}, {"bid.avg-size", "0"}}),
            "nexmark: person.avg-size, auction.avg-size and bid.avg-size cannot all be 0");
}

OperatorSpecContext spec(nlohmann::json params) { return OperatorSpecContext{"nx", std::move(params), {}}; }

std::string spec_error(nlohmann::json params) {
  try {
    builtin_registry().get("nexmark").make(spec(std::move(params)));
  } catch (const ClinkError& e) {
    return e.what();
  }
  return "no error";
}

TEST(NexmarkSpec, BuildsASourceFromNexmarkOptionNames) {
  const auto& info = builtin_registry().get("nexmark");
  auto ctx = spec({{"events.num", 10}, {"tps", "1000"}, {"max-emit-speed", true}});
  EXPECT_EQ(info.num_inputs, 0);
  EXPECT_EQ(info.out_type(ctx), "nexmark_event");
  auto build = info.make(ctx);
  ASSERT_TRUE(build);
  auto op = build();
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->num_inputs(), 0);
  EXPECT_EQ(spec_error(nlohmann::json::object()), "no error");
  EXPECT_EQ(spec_error({{"bid.proportion", 0}}),
            "op 'nx' (nexmark): option 'bid.proportion' must be a positive integer, got '0'");
  EXPECT_EQ(spec_error({{"events.num", 1.5}}),
            "op 'nx' (nexmark): param 'events.num' must be a string, an integer or a boolean, got 1.5");
  EXPECT_EQ(spec_error({{"max-emit-speeds", true}}).substr(0, 59),
            "op 'nx' (nexmark): unknown option 'max-emit-speeds' (known:");
  EXPECT_EQ(spec_error(nlohmann::json::array()), "op 'nx' (nexmark): params must be a JSON object");
}

}  // namespace
}  // namespace clink::test
