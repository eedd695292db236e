#include "clink/connectors/nexmark/nexmark_event.hpp"

#include <fmt/format.h>

#include "clink/connectors/nexmark/java_random.hpp"

namespace clink {

// StringsGenerator.nextExactString: six chars from each nextInt(), 'a' + rnd % 26 with
// Java's (and C++'s) truncating remainder, so negative draws give 'H'..'`' too.
void NexmarkExtra::write(char* out) const {
  auto r = nexmark::JavaRandom::from_state(random_state);
  std::int32_t rnd = 0;
  int left = 0;
  for (std::uint32_t i = 0; i < length; ++i) {
    if (left == 0) {
      rnd = r.next_int();
      left = 6;
    }
    out[i] = static_cast<char>('a' + rnd % 26);
    rnd /= 26;
    --left;
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
