#include "clink/connectors/nexmark/nexmark_options.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <functional>
#include <limits>
#include <string_view>

#include "clink/connectors/nexmark/nexmark_generator.hpp"
#include "clink/core/error.hpp"

namespace clink::nexmark {
namespace {

[[noreturn]] void bad(const std::string& name, const std::string& value, const std::string& expected) {
  throw ClinkError("nexmark: option '" + name + "' must be " + expected + ", got '" + value + "'");
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A decimal integer (optional sign) filling `text`, else nullopt.
bool parse_int64(std::string_view text, std::int64_t& out) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && p == text.data() + text.size() && !text.empty();
}

std::int64_t parse_long(const std::string& name, const std::string& value, std::int64_t min, std::int64_t max,
                        const std::string& expected) {
  std::int64_t v = 0;
  if (!parse_int64(trim(value), v) || v < min || v > max) bad(name, value, expected);
  return v;
}

int parse_int(const std::string& name, const std::string& value, int min, const std::string& expected) {
  return static_cast<int>(parse_long(name, value, min, std::numeric_limits<std::int32_t>::max(), expected));
}

bool parse_bool(const std::string& name, const std::string& value) {
  std::string v = lower(trim(value));
  if (v == "true") return true;
  if (v == "false") return false;
  bad(name, value, "true or false");
}

// A number and a unit suffix, split at the first non-digit.
std::pair<std::string_view, std::string> number_and_unit(std::string_view text) {
  text = trim(text);
  std::size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  return {text.substr(0, i), lower(trim(text.substr(i)))};
}

// Flink's MemorySize.parse: bytes, with binary units; no unit means bytes.
int parse_memory_size(const std::string& name, const std::string& value) {
  const std::string expected = "a memory size of at most 2147483647 bytes such as '200b' or '1 kb'";
  auto [digits, unit] = number_and_unit(value);
  std::int64_t n = 0;
  if (!parse_int64(digits, n)) bad(name, value, expected);
  std::int64_t scale = 0;
  if (unit.empty() || unit == "b" || unit == "bytes") scale = 1;
  else if (unit == "k" || unit == "kb" || unit == "kibibytes") scale = 1LL << 10;
  else if (unit == "m" || unit == "mb" || unit == "mebibytes") scale = 1LL << 20;
  else if (unit == "g" || unit == "gb" || unit == "gibibytes") scale = 1LL << 30;
  else bad(name, value, expected);
  if (n > std::numeric_limits<std::int32_t>::max() / scale) bad(name, value, expected);
  return static_cast<int>(n * scale);
}

// Flink's TimeUtils.parseDuration, in whole seconds (Duration.getSeconds()).
int parse_duration_seconds(const std::string& name, const std::string& value) {
  const std::string expected = "a duration such as '600 s' or '10 min' (no unit: milliseconds)";
  auto [digits, unit] = number_and_unit(value);
  std::int64_t n = 0;
  if (!parse_int64(digits, n)) bad(name, value, expected);
  std::int64_t per_second_num = 1, per_second_den = 1;  // seconds = n * num / den
  if (unit.empty() || unit == "ms" || unit == "milli" || unit == "millis" || unit == "millisecond" ||
      unit == "milliseconds")
    per_second_den = 1000;
  else if (unit == "s" || unit == "sec" || unit == "secs" || unit == "second" || unit == "seconds")
    per_second_num = 1;
  else if (unit == "m" || unit == "min" || unit == "minute" || unit == "minutes")
    per_second_num = 60;
  else if (unit == "h" || unit == "hour" || unit == "hours")
    per_second_num = 3600;
  else if (unit == "d" || unit == "day" || unit == "days")
    per_second_num = 86400;
  else
    bad(name, value, expected);
  if (n > std::numeric_limits<std::int32_t>::max() / per_second_num * per_second_den) bad(name, value, expected);
  return static_cast<int>(n * per_second_num / per_second_den);
}

using Setter = std::function<void(NexmarkSourceOptions&, const std::string& name, const std::string& value)>;

const std::map<std::string, Setter>& setters() {
  static const std::map<std::string, Setter> s = {
      {"events.num",
       [](auto& o, auto& n, auto& v) {
         o.generator.num_events =
             parse_long(n, v, 0, std::numeric_limits<std::int64_t>::max(), "a non-negative integer (0: unbounded)");
       }},
      {"tps",
       [](auto& o, auto& n, auto& v) {
         o.generator.first_event_rate = o.generator.next_event_rate = parse_int(n, v, 1, "a positive integer");
       }},
      {"first-event.rate",
       [](auto& o, auto& n, auto& v) { o.generator.first_event_rate = parse_int(n, v, 1, "a positive integer"); }},
      {"next-event.rate",
       [](auto& o, auto& n, auto& v) { o.generator.next_event_rate = parse_int(n, v, 1, "a positive integer"); }},
      {"rate.shape",
       [](auto& o, auto& n, auto& v) {
         std::string s = lower(trim(v));
         if (s == "square") o.generator.rate_shape = RateShape::kSquare;
         else if (s == "sine") o.generator.rate_shape = RateShape::kSine;
         else bad(n, v, "SQUARE or SINE");
       }},
      {"rate.period",
       [](auto& o, auto& n, auto& v) {
         o.generator.rate_period_sec = parse_duration_seconds(n, v);
         if (o.generator.rate_period_sec <= 0) bad(n, v, "at least one second");
       }},
      {"rate.limited", [](auto& o, auto& n, auto& v) { o.rate_limited = parse_bool(n, v); }},
      {"max-emit-speed", [](auto& o, auto& n, auto& v) { o.max_emit_speed = parse_bool(n, v); }},
      {"person.avg-size",
       [](auto& o, auto& n, auto& v) { o.generator.avg_person_byte_size = parse_memory_size(n, v); }},
      {"auction.avg-size",
       [](auto& o, auto& n, auto& v) { o.generator.avg_auction_byte_size = parse_memory_size(n, v); }},
      {"bid.avg-size", [](auto& o, auto& n, auto& v) { o.generator.avg_bid_byte_size = parse_memory_size(n, v); }},
      {"person.proportion",
       [](auto& o, auto& n, auto& v) { o.generator.person_proportion = parse_int(n, v, 1, "a positive integer"); }},
      {"auction.proportion",
       [](auto& o, auto& n, auto& v) { o.generator.auction_proportion = parse_int(n, v, 1, "a positive integer"); }},
      {"bid.proportion",
       [](auto& o, auto& n, auto& v) { o.generator.bid_proportion = parse_int(n, v, 1, "a positive integer"); }},
      {"bid.hot-ratio.auctions",
       [](auto& o, auto& n, auto& v) { o.generator.hot_auction_ratio = parse_int(n, v, 1, "a positive integer"); }},
      {"bid.hot-ratio.bidders",
       [](auto& o, auto& n, auto& v) { o.generator.hot_bidders_ratio = parse_int(n, v, 1, "a positive integer"); }},
      {"auction.hot-ratio.sellers",
       [](auto& o, auto& n, auto& v) { o.generator.hot_sellers_ratio = parse_int(n, v, 1, "a positive integer"); }},
      {"events.base-time",
       [](auto& o, auto& n, auto& v) {
         o.generator.base_time = parse_long(n, v, 0, std::numeric_limits<std::int64_t>::max() / 2,
                                            "epoch milliseconds (a non-negative integer)");
         o.base_time_set = true;
       }},
      {"bid.extended.mode",
       [](auto&, auto& n, auto& v) {
         if (parse_bool(n, v))
           throw ClinkError("nexmark: option '" + n + "' = 'true' (extended bids) is not supported");
       }},
      {"events.out-of-order.group-size",
       [](auto& o, auto& n, auto& v) {
         o.generator.out_of_order_group_size = parse_long(n, v, 1, std::numeric_limits<std::int32_t>::max(),
                                                          "a positive integer (1: in order)");
       }},
      {"auction.in-flight.num",
       [](auto& o, auto& n, auto& v) {
         o.generator.num_in_flight_auctions = parse_int(n, v, 0, "a non-negative integer");
       }},
      {"bid.channel-url", [](auto& o, auto& n, auto& v) { o.generator.bid_channel_url = parse_bool(n, v); }},
      {"person.active.num",
       [](auto& o, auto& n, auto& v) { o.generator.num_active_people = parse_int(n, v, 0, "a non-negative integer"); }},
  };
  return s;
}

}  // namespace

const std::vector<std::string>& nexmark_option_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& [name, _] : setters()) v.push_back(name);
    return v;  // std::map keeps them sorted
  }();
  return names;
}

NexmarkSourceOptions parse_nexmark_options(const std::map<std::string, std::string>& options) {
  NexmarkSourceOptions o;
  if (options.count("tps") && (options.count("first-event.rate") || options.count("next-event.rate")))
    throw ClinkError("nexmark: option 'tps' sets first-event.rate and next-event.rate; give either, not both");
  for (const auto& [name, value] : options) {
    if (name == "connector") {
      if (lower(trim(value)) != "nexmark") bad(name, value, "'nexmark'");
      continue;
    }
    auto it = setters().find(name);
    if (it == setters().end()) {
      std::string known;
      for (const auto& n : nexmark_option_names()) known += (known.empty() ? "" : ", ") + n;
      throw ClinkError("nexmark: unknown option '" + name + "' (known: " + known + ")");
    }
    it->second(o, name, value);
  }
  NexmarkGenerator::validate(o.generator);
  return o;
}

}  // namespace clink::nexmark
