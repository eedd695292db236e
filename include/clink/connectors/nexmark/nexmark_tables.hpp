#pragma once
// The fixed lists Nexmark draws strings from (PersonGenerator's names, cities and
// states; BidGenerator's channels and urls), as process-lifetime tables so that
// events hold views into them.
//
// Urls: Nexmark builds each url from an unseeded java.util.Random (so they differ from
// one JVM run to the next, while everything else about an event follows its id). clink
// builds the same shape of url, "https://www.nexmark.com/<a>/<b>/<c>/item.htm?query=1"
// with <a>, <b>, <c> = nextString(5, '_') and, for 9 in 10 numbered channels,
// "&channel_id=" + abs(Integer.reverse(channel)), from a Random seeded with the hot
// channel's index (0..3) or 1000000 + the channel number, so urls are deterministic.
#include <cstdint>
#include <string_view>

namespace clink::nexmark {

inline constexpr int kFirstNameCount = 11;
inline constexpr int kLastNameCount = 9;
inline constexpr int kUsCityCount = 10;
inline constexpr int kUsStateCount = 6;
inline constexpr int kHotChannelCount = 4;   // Google, Facebook, Baidu, Apple
inline constexpr int kChannelCount = 10000;  // "channel-<n>"

struct ChannelInfo {
  std::string_view name;
  std::string_view url;
};

// "<first> <last>"
std::string_view person_name(int first, int last);
std::string_view us_city(int i);
std::string_view us_state(int i);
const ChannelInfo& hot_channel(int i);
const ChannelInfo& numbered_channel(int n);

}  // namespace clink::nexmark
