#include "clink/connectors/nexmark/nexmark_tables.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "clink/core/java_random.hpp"

namespace clink::nexmark {
namespace {

constexpr std::array<std::string_view, kFirstNameCount> kFirstNames = {
    "Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"};
constexpr std::array<std::string_view, kLastNameCount> kLastNames = {
    "Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"};
constexpr std::array<std::string_view, kUsCityCount> kUsCities = {
    "Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"};
constexpr std::array<std::string_view, kUsStateCount> kUsStates = {"AZ", "CA", "ID", "OR", "WA", "WY"};
constexpr std::array<std::string_view, kHotChannelCount> kHotChannels = {"Google", "Facebook", "Baidu", "Apple"};

// StringsGenerator.nextString(random, maxLength, special), trimmed of spaces.
std::string next_string(JavaRandom& r, int max_length, char special) {
  int len = 3 + r.next_int(max_length - 3);
  std::string s;
  for (int i = 0; i < len; ++i) s += r.next_int(13) == 0 ? special : static_cast<char>('a' + r.next_int(26));
  auto b = s.find_first_not_of(' ');
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

// BidGenerator.getBaseUrl, drawing from `r`.
std::string base_url(JavaRandom& r) {
  std::string a = next_string(r, 5, '_');
  std::string b = next_string(r, 5, '_');
  std::string c = next_string(r, 5, '_');
  return "https://www.nexmark.com/" + a + '/' + b + '/' + c + '/' + "item.htm?query=1";
}

// Java's Integer.reverse: the 32 bits in reverse order.
std::int32_t integer_reverse(std::int32_t v) {
  auto x = static_cast<std::uint32_t>(v);
  std::uint32_t out = 0;
  for (int i = 0; i < 32; ++i, x >>= 1) out = (out << 1) | (x & 1u);
  return static_cast<std::int32_t>(out);
}

// Java's Math.abs(int): Integer.MIN_VALUE stays negative.
std::int64_t java_abs(std::int32_t v) { return v == INT32_MIN ? v : (v < 0 ? -v : v); }

struct Tables {
  std::vector<std::string> names;  // first * kLastNameCount + last
  std::vector<std::string> strings;  // channel names and urls (stable: reserved up front)
  std::array<ChannelInfo, kHotChannelCount> hot;
  std::vector<ChannelInfo> numbered;

  std::string_view keep(std::string s) {
    strings.push_back(std::move(s));
    return strings.back();
  }

  Tables() {
    for (auto first : kFirstNames)
      for (auto last : kLastNames) names.push_back(std::string(first) + " " + std::string(last));
    strings.reserve(2 * (kHotChannelCount + kChannelCount));
    for (int i = 0; i < kHotChannelCount; ++i) {
      JavaRandom r(i);
      hot[static_cast<std::size_t>(i)] = ChannelInfo{kHotChannels[static_cast<std::size_t>(i)], keep(base_url(r))};
    }
    numbered.reserve(kChannelCount);
    for (int n = 0; n < kChannelCount; ++n) {
      JavaRandom r(1000000 + n);
      std::string url = base_url(r);
      if (r.next_int(10) > 0) url += "&channel_id=" + std::to_string(java_abs(integer_reverse(n)));
      std::string_view name = keep("channel-" + std::to_string(n));
      numbered.push_back(ChannelInfo{name, keep(std::move(url))});
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

std::string_view person_name(int first, int last) {
  return tables().names[static_cast<std::size_t>(first * kLastNameCount + last)];
}
std::string_view us_city(int i) { return kUsCities[static_cast<std::size_t>(i)]; }
std::string_view us_state(int i) { return kUsStates[static_cast<std::size_t>(i)]; }
const ChannelInfo& hot_channel(int i) { return tables().hot[static_cast<std::size_t>(i)]; }
const ChannelInfo& numbered_channel(int n) { return tables().numbered[static_cast<std::size_t>(n)]; }

}  // namespace clink::nexmark
