#pragma once
// Shared by the Nexmark tests: an event's fields as one "|"-separated line, the form
// the reference values were produced in by running Nexmark's Java generator code
// (java.util.Random seeded with each event id) for the same configuration.
#include <charconv>
#include <cstdint>
#include <string>

#include "clink/connectors/nexmark/nexmark_generator.hpp"

namespace clink::test {

inline void pipe_line_into(const NexmarkEvent& e, std::string& s) {
  s.clear();
  auto field = [&s](const auto& v) {
    if constexpr (std::is_integral_v<std::decay_t<decltype(v)>>) {
      char buf[24];
      s.append(buf, static_cast<std::size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
    } else {
      s += std::string_view(v);
    }
    s += '|';
  };
  switch (e.type) {
    case NexmarkEventType::kPerson: {
      const auto& p = e.person;
      s += "P|";
      field(p.id), field(p.name), field(p.email_address), field(p.credit_card), field(p.city), field(p.state);
      field(p.date_time);
      p.extra.append_to(s);
      break;
    }
    case NexmarkEventType::kAuction: {
      const auto& a = e.auction;
      s += "A|";
      field(a.id), field(a.item_name), field(a.description), field(a.initial_bid), field(a.reserve);
      field(a.date_time), field(a.expires), field(a.seller), field(a.category);
      a.extra.append_to(s);
      break;
    }
    case NexmarkEventType::kBid: {
      const auto& b = e.bid;
      s += "B|";
      field(b.auction), field(b.bidder), field(b.price), field(b.channel), field(b.url), field(b.date_time);
      b.extra.append_to(s);
      break;
    }
  }
}

inline std::string pipe_line(const NexmarkEvent& e) {
  std::string s;
  pipe_line_into(e, s);
  return s;
}

// Java's String.hashCode of an ASCII string.
inline std::int32_t java_string_hash(const std::string& s) {
  std::uint32_t h = 0;
  for (unsigned char c : s) h = 31 * h + c;
  return static_cast<std::int32_t>(h);
}

// checksum = checksum * 31 + line.hashCode() over events [0, n), in Java's long arithmetic.
inline std::int64_t java_checksum(const nexmark::NexmarkGenerator& g, std::int64_t n) {
  std::uint64_t sum = 0;
  NexmarkEvent e;
  std::string line;
  for (std::int64_t k = 0; k < n; ++k) {
    g.generate(k, e);
    pipe_line_into(e, line);
    sum = sum * 31 + static_cast<std::uint64_t>(static_cast<std::int64_t>(java_string_hash(line)));
  }
  return static_cast<std::int64_t>(sum);
}

inline nexmark::GeneratorConfig config_at(std::int64_t base_time = 1600000000000) {
  nexmark::GeneratorConfig c;
  c.base_time = base_time;
  return c;
}

}  // namespace clink::test
