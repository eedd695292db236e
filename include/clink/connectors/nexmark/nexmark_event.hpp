#pragma once
// Nexmark's event model (nexmark/nexmark, model/Person, Auction, Bid, Event): one
// stream of people, auctions and bids. NexmarkEvent is a fixed-size, trivially
// copyable value: numbers are plain int64 (times are epoch milliseconds), short strings
// live inline, strings drawn from fixed lists (names, cities, states, channels, urls)
// are views into process-lifetime tables, and the long random `extra` payload is kept
// as the Random state it is drawn from and materialised on demand. So generating an
// event never allocates, and a projection into columns reads numbers and string views
// (and writes `extra` straight into its destination only when a query selects it).
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "clink/core/type_name.hpp"

namespace clink {

// Nexmark's Event.Type values, which its tables expose as `event_type`.
enum class NexmarkEventType : std::uint8_t { kPerson = 0, kAuction = 1, kBid = 2 };

// At most N chars stored inline; converts to std::string_view.
template <std::size_t N>
struct InlineString {
  static_assert(N < 256);
  std::uint8_t size = 0;
  char data[N] = {};

  std::string_view view() const { return {data, size}; }
  operator std::string_view() const { return view(); }  // NOLINT: a string field reads as a view
  friend bool operator==(const InlineString& a, const InlineString& b) { return a.view() == b.view(); }
};

// Nexmark's `extra` (StringsGenerator.nextExactString): `length` chars drawn from a
// java.util.Random in state `random_state`. Its chars are 'H'..'z' (Java's
// 'a' + rnd % 26 with negative remainders), exactly as Nexmark's.
struct NexmarkExtra {
  std::uint64_t random_state = 0;
  std::uint32_t length = 0;

  std::size_t size() const { return length; }
  // Writes the `length` chars to out[0..length).
  void write(char* out) const;
  void append_to(std::string& out) const;
  std::string str() const;
  friend bool operator==(const NexmarkExtra& a, const NexmarkExtra& b) {
    return a.length == b.length && (a.length == 0 || a.random_state == b.random_state);
  }
};

struct NexmarkPerson {
  std::int64_t id = 0;
  std::string_view name;
  InlineString<16> email_address;  // nextString(7) "@" nextString(5) ".com": at most 15 chars
  InlineString<19> credit_card;    // "dddd dddd dddd dddd"
  std::string_view city;
  std::string_view state;
  std::int64_t date_time = 0;
  NexmarkExtra extra;
  friend bool operator==(const NexmarkPerson&, const NexmarkPerson&) = default;
};

struct NexmarkAuction {
  std::int64_t id = 0;
  InlineString<20> item_name;     // nextString(20): at most 19 chars
  InlineString<100> description;  // nextString(100): at most 99 chars
  std::int64_t initial_bid = 0;
  std::int64_t reserve = 0;
  std::int64_t date_time = 0;
  std::int64_t expires = 0;
  std::int64_t seller = 0;
  std::int64_t category = 0;
  NexmarkExtra extra;
  friend bool operator==(const NexmarkAuction&, const NexmarkAuction&) = default;
};

struct NexmarkBid {
  std::int64_t auction = 0;
  std::int64_t bidder = 0;
  std::int64_t price = 0;  // cents
  std::string_view channel;
  std::string_view url;
  std::int64_t date_time = 0;
  NexmarkExtra extra;
  friend bool operator==(const NexmarkBid&, const NexmarkBid&) = default;
};

// One event: the type tag says which body is valid (they share storage).
struct NexmarkEvent {
  NexmarkEventType type = NexmarkEventType::kBid;
  union {
    NexmarkPerson person;
    NexmarkAuction auction;
    NexmarkBid bid;
  };

  NexmarkEvent() : bid() {}
  // The event's dateTime: its event time.
  std::int64_t date_time() const {
    switch (type) {
      case NexmarkEventType::kPerson: return person.date_time;
      case NexmarkEventType::kAuction: return auction.date_time;
      default: return bid.date_time;
    }
  }
  const NexmarkExtra& extra() const {
    switch (type) {
      case NexmarkEventType::kPerson: return person.extra;
      case NexmarkEventType::kAuction: return auction.extra;
      default: return bid.extra;
    }
  }
  friend bool operator==(const NexmarkEvent& a, const NexmarkEvent& b);
};

// Text form, e.g. Bid{auction=1000, bidder=1001, price=32530001, channel=Google, url=...,
// dateTime=1600000000000, extra=...}: the fields in Nexmark's model order.
void to_string_into(const NexmarkEvent& e, std::string& out);
inline std::string to_string(const NexmarkEvent& e) {
  std::string s;
  to_string_into(e, s);
  return s;
}

template <>
struct TypeName<NexmarkEvent> {
  static std::string get() { return "nexmark_event"; }
};

}  // namespace clink
