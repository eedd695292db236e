#include "clink/connectors/nexmark/nexmark_event.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "clink/core/java_random.hpp"

namespace clink {

// StringsGenerator.nextExactString: six chars from each nextInt(), 'a' + rnd % 26 with
// Java's (and C++'s) truncating remainder, so negative draws give 'H'..'`' too. Each
// char is written from rnd / 26^i directly (truncating divisions compose), which lets
// the six divisions by constants run in parallel instead of as a chain.
namespace {
// The chars of three base-26 digits d0 d1 d2 (of 0..17575), for a non-negative draw
// ('a' + d) and a negative one ('a' - d), packed little-endian: one lookup per three chars.
struct TripleTables {
  std::uint32_t chars[2][17576];  // [0]: non-negative draw, [1]: negative
  TripleTables() {
    for (std::uint32_t v = 0; v < 17576; ++v) {
      std::uint32_t d0 = v % 26, d1 = v / 26 % 26, d2 = v / 676;
      chars[0][v] = ('a' + d0) | ('a' + d1) << 8 | ('a' + d2) << 16;
      chars[1][v] = ('a' - d0) | ('a' - d1) << 8 | ('a' - d2) << 16;
    }
  }
};
const TripleTables& triples() {
  static const TripleTables t;
  return t;
}

// The six chars of one draw, little-endian in the low 48 bits: 'a' + rnd % 26, then
// rnd /= 26, six times, with truncating division (so a negative draw gives 'a' - digit
// of |rnd|).
inline std::uint64_t six_chars(const TripleTables& t, std::int32_t rnd) {
  // Branch-free: draws are negative half the time.
  std::uint32_t negative = static_cast<std::uint32_t>(rnd) >> 31;
  const std::uint32_t* table = t.chars[negative];
  std::uint32_t a = (static_cast<std::uint32_t>(rnd) ^ (0u - negative)) + negative;  // |rnd|
  std::uint32_t high = a / 17576;
  return table[a - high * 17576] | static_cast<std::uint64_t>(table[high % 17576]) << 24;
}
}  // namespace

void NexmarkExtra::write(char* out) const {
  auto r = JavaRandom::from_state(random_state);
  const TripleTables& t = triples();
  std::uint32_t i = 0;
  // Eight-byte stores while they fit: the two spare bytes are overwritten by the next draw.
  for (; i + 8 <= length; i += 6) {
    std::uint64_t w = six_chars(t, r.next_int());
    std::memcpy(out + i, &w, 8);
  }
  if (i < length) {
    std::uint64_t w = 0;
    for (; i < length; i += 6) {
      w = six_chars(t, r.next_int());
      std::memcpy(out + i, &w, std::min<std::uint32_t>(6, length - i));
    }
  }
}

void NexmarkExtra::append_to(std::string& out) const {
  std::size_t at = out.size();
  out.resize(at + length);
  write(out.data() + at);
}

std::string NexmarkExtra::str() const {
  std::string s;
  append_to(s);
  return s;
}

bool operator==(const NexmarkEvent& a, const NexmarkEvent& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case NexmarkEventType::kPerson: return a.person == b.person;
    case NexmarkEventType::kAuction: return a.auction == b.auction;
    default: return a.bid == b.bid;
  }
}

void to_string_into(const NexmarkEvent& e, std::string& out) {
  auto o = std::back_inserter(out);
  switch (e.type) {
    case NexmarkEventType::kPerson: {
      const auto& p = e.person;
      fmt::format_to(o, "Person{{id={}, name={}, emailAddress={}, creditCard={}, city={}, state={}, dateTime={}, extra=",
                     p.id, p.name, p.email_address.view(), p.credit_card.view(), p.city, p.state, p.date_time);
      p.extra.append_to(out);
      break;
    }
    case NexmarkEventType::kAuction: {
      const auto& a = e.auction;
      fmt::format_to(o,
                     "Auction{{id={}, itemName={}, description={}, initialBid={}, reserve={}, dateTime={}, expires={}, "
                     "seller={}, category={}, extra=",
                     a.id, a.item_name.view(), a.description.view(), a.initial_bid, a.reserve, a.date_time, a.expires,
                     a.seller, a.category);
      a.extra.append_to(out);
      break;
    }
    default: {
      const auto& b = e.bid;
      fmt::format_to(o, "Bid{{auction={}, bidder={}, price={}, channel={}, url={}, dateTime={}, extra=", b.auction,
                     b.bidder, b.price, b.channel, b.url, b.date_time);
      b.extra.append_to(out);
      break;
    }
  }
  out += '}';
}

}  // namespace clink
