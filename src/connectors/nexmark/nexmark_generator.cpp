// Follows nexmark-flink's generator/model classes draw for draw: every Random call
// below is one of theirs, in their order, so the events equal Nexmark's.
#include "clink/connectors/nexmark/nexmark_generator.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "clink/core/java_random.hpp"
#include "clink/connectors/nexmark/nexmark_tables.hpp"
#include "clink/core/error.hpp"

namespace clink::nexmark {
namespace {

constexpr int kMinStringLength = 3;  // StringsGenerator.MIN_STRING_LENGTH
constexpr int kPersonIdLead = 10;    // PersonGenerator.PERSON_ID_LEAD
constexpr int kAuctionIdLead = 10;   // AuctionGenerator.AUCTION_ID_LEAD
constexpr int kHotSellerRatio = 100;
constexpr int kHotAuctionRatio = 100;
constexpr int kHotBidderRatio = 100;
constexpr int kNumCategories = 5;
constexpr int kHotChannelsRatio = 2;

// LongGenerator.nextLong: [0, n).
std::int64_t next_long(JavaRandom& r, std::int64_t n) {
  if (n < 2147483647) return r.next_int(static_cast<std::int32_t>(n));
  std::int64_t x = r.next_long() % n;
  return x < 0 ? -x : x;
}

// Java's Math.round for 0 <= y < 2^62: ties round up. y - floor(y) is exact there.
std::int64_t java_round(double y) {
  auto whole = static_cast<std::int64_t>(y);
  return whole + (y - static_cast<double>(whole) >= 0.5 ? 1 : 0);
}

// PriceGenerator.nextPrice: Math.round(Math.pow(10.0, nextDouble() * 6.0) * 100.0).
// exp2(x log2 10) is about twice as fast as pow and within 1e-14 of it (relative), so
// it decides the rounding unless the value lies that close to a .5 tie, where pow
// itself decides: the prices are pow's, at the cost of exp2 almost always.
std::int64_t next_price(JavaRandom& r) { return price_from_unit(r.next_double()); }

}  // namespace

std::int64_t price_from_unit(double u) {
  double x = u * 6.0;
  double fast = std::exp2(x * 3.321928094887362) * 100.0;
  auto whole = static_cast<std::int64_t>(fast);
  double frac = fast - static_cast<double>(whole);
  if (std::fabs(frac - 0.5) > fast * 1e-13) return whole + (frac > 0.5 ? 1 : 0);
  return java_round(std::pow(10.0, x) * 100.0);
}

namespace {

// StringsGenerator.nextString(random, maxLength, special) then String.trim(), into dst.
template <std::size_t N>
void next_string(JavaRandom& r, int max_length, char special, InlineString<N>& dst) {
  static_assert(N >= 1);
  int len = kMinStringLength + r.next_int(max_length - kMinStringLength);  // < max_length <= N
  for (int i = 0; i < len; ++i) dst.data[i] = r.next_int(13) == 0 ? special : static_cast<char>('a' + r.next_int(26));
  int begin = 0, end = len;
  while (begin < end && dst.data[begin] == ' ') ++begin;
  while (end > begin && dst.data[end - 1] == ' ') --end;
  if (begin > 0) std::memmove(dst.data, dst.data + begin, static_cast<std::size_t>(end - begin));
  dst.size = static_cast<std::uint8_t>(end - begin);
}

// StringsGenerator.nextExtra: draws the length; the chars are drawn later, on demand,
// from the Random's state here (nothing is drawn after `extra` in any event).
NexmarkExtra next_extra(JavaRandom& r, int current_size, int desired_average_size) {
  if (current_size > desired_average_size) return {};
  desired_average_size -= current_size;
  auto delta = static_cast<int>(java_round(desired_average_size * 0.2));
  int min_size = desired_average_size - delta;
  int size = min_size + (delta == 0 ? 0 : r.next_int(2 * delta));
  return NexmarkExtra{r.state(), static_cast<std::uint32_t>(std::max(size, 0))};
}

void write_four_digits(std::int32_t v, char* out) {
  out[3] = static_cast<char>('0' + v % 10);
  out[2] = static_cast<char>('0' + v / 10 % 10);
  out[1] = static_cast<char>('0' + v / 100 % 10);
  out[0] = static_cast<char>('0' + v / 1000);
}

}  // namespace

std::int64_t last_base0_person_id(const GeneratorConfig& c, std::int64_t event_id) {
  std::int64_t total = c.total_proportion();
  std::int64_t epoch = event_id / total;
  std::int64_t offset = event_id % total;
  if (offset >= c.person_proportion) offset = c.person_proportion - 1;  // the epoch's last person
  return epoch * c.person_proportion + offset;
}

std::int64_t last_base0_auction_id(const GeneratorConfig& c, std::int64_t event_id) {
  std::int64_t total = c.total_proportion();
  std::int64_t epoch = event_id / total;
  std::int64_t offset = event_id % total;
  if (offset < c.person_proportion) {
    --epoch;  // a person: the previous epoch's last auction
    offset = c.auction_proportion - 1;
  } else if (offset >= c.person_proportion + c.auction_proportion) {
    offset = c.auction_proportion - 1;  // a bid: this epoch's last auction
  } else {
    offset -= c.person_proportion;
  }
  return epoch * c.auction_proportion + offset;
}

void NexmarkGenerator::validate(const GeneratorConfig& c) {
  auto positive = [](long long v, const char* what) {
    if (v <= 0) throw ClinkError(std::string("nexmark: ") + what + " must be positive, got " + std::to_string(v));
  };
  auto non_negative = [](long long v, const char* what) {
    if (v < 0) throw ClinkError(std::string("nexmark: ") + what + " must not be negative, got " + std::to_string(v));
  };
  non_negative(c.num_events, "events.num");
  positive(c.num_event_generators, "the number of event generators");
  positive(c.first_event_rate, "first-event.rate");
  positive(c.next_event_rate, "next-event.rate");
  positive(c.rate_period_sec, "rate.period");
  positive(c.person_proportion, "person.proportion");
  positive(c.auction_proportion, "auction.proportion");
  positive(c.bid_proportion, "bid.proportion");
  if (static_cast<long long>(c.person_proportion) + c.auction_proportion + c.bid_proportion > 1000000)
    throw ClinkError("nexmark: person.proportion + auction.proportion + bid.proportion must be at most 1000000");
  non_negative(c.avg_person_byte_size, "person.avg-size");
  non_negative(c.avg_auction_byte_size, "auction.avg-size");
  non_negative(c.avg_bid_byte_size, "bid.avg-size");
  positive(c.hot_auction_ratio, "bid.hot-ratio.auctions");
  positive(c.hot_sellers_ratio, "auction.hot-ratio.sellers");
  positive(c.hot_bidders_ratio, "bid.hot-ratio.bidders");
  non_negative(c.num_in_flight_auctions, "auction.in-flight.num");
  non_negative(c.num_active_people, "person.active.num");
  positive(c.out_of_order_group_size, "events.out-of-order.group-size");
  if (std::max({c.avg_person_byte_size, c.avg_auction_byte_size, c.avg_bid_byte_size}) == 0)
    throw ClinkError("nexmark: person.avg-size, auction.avg-size and bid.avg-size cannot all be 0");
}

NexmarkGenerator::NexmarkGenerator(GeneratorConfig config) : config_(config) {
  validate(config_);
  max_events_ = config_.max_events();
  total_ = config_.total_proportion();
  auction_horizon_events_ =
      static_cast<std::int64_t>(config_.num_in_flight_auctions) * total_ / config_.auction_proportion;
  epoch_divider_ = FixedDivider(total_);
  hot_sellers_ = JavaIntBound(config_.hot_sellers_ratio);
  hot_auctions_ = JavaIntBound(config_.hot_auction_ratio);
  hot_bidders_ = JavaIntBound(config_.hot_bidders_ratio);
  active_people_ = JavaIntBound(config_.num_active_people + kPersonIdLead);
  in_flight_auctions_ = JavaIntBound(config_.num_in_flight_auctions + 1 + kAuctionIdLead);
  constexpr int kBidSize = 8 + 8 + 8 + 8;
  bid_extra_ = kBidSize <= config_.avg_bid_byte_size;
  if (bid_extra_) {
    int wanted = config_.avg_bid_byte_size - kBidSize;
    auto delta = static_cast<int>(java_round(wanted * 0.2));
    bid_extra_min_ = wanted - delta;
    bid_extra_spread_ = delta == 0 ? JavaIntBound() : JavaIntBound(2 * delta);
    bid_extra_spread_used_ = delta != 0;
  }
}

// Ids from the epoch and offset of an event id, as PersonGenerator.lastBase0PersonId.
std::int64_t NexmarkGenerator::last_person(EpochPosition pos) const {
  std::int64_t offset = pos.offset >= config_.person_proportion ? config_.person_proportion - 1 : pos.offset;
  return pos.epoch * config_.person_proportion + offset;
}

// AuctionGenerator.lastBase0AuctionId.
std::int64_t NexmarkGenerator::last_auction(EpochPosition pos) const {
  std::int64_t epoch = pos.epoch, offset = pos.offset;
  if (offset < config_.person_proportion) {
    --epoch;  // a person: the previous epoch's last auction
    offset = config_.auction_proportion - 1;
  } else if (offset >= config_.person_proportion + config_.auction_proportion) {
    offset = config_.auction_proportion - 1;  // a bid: this epoch's last auction
  } else {
    offset -= config_.person_proportion;
  }
  return epoch * config_.auction_proportion + offset;
}

// PersonGenerator.nextBase0PersonId: one of the active people, or a few ahead.
std::int64_t NexmarkGenerator::next_person(EpochPosition pos, JavaRandom& r) const {
  std::int64_t num_people = last_person(pos) + 1;
  std::int64_t active = std::min<std::int64_t>(num_people, config_.num_active_people);
  std::int64_t n = active == config_.num_active_people ? r.next_int(active_people_)
                                                       : next_long(r, active + kPersonIdLead);
  return num_people - active + n;
}

// AuctionGenerator.nextBase0AuctionId: one likely still in flight, or a few ahead.
std::int64_t NexmarkGenerator::next_auction(EpochPosition pos, JavaRandom& r) const {
  std::int64_t max_auction = last_auction(pos);
  std::int64_t min_auction = std::max<std::int64_t>(max_auction - config_.num_in_flight_auctions, 0);
  std::int64_t range = max_auction - min_auction + 1 + kAuctionIdLead;
  return min_auction + (range == in_flight_auctions_.bound() ? r.next_int(in_flight_auctions_) : next_long(r, range));
}

void NexmarkGenerator::generate(std::int64_t n, NexmarkEvent& out) const {
  std::int64_t adjusted = config_.adjusted_event_number(n);
  std::int64_t timestamp = config_.timestamp_for_event(adjusted);
  std::int64_t id = config_.first_event_id + adjusted;
  EpochPosition pos;
  epoch_divider_.divide(id, pos.epoch, pos.offset);
  if (pos.offset < config_.person_proportion) {
    out.type = NexmarkEventType::kPerson;
    make_person(id, pos, timestamp, out.person);
  } else if (pos.offset < config_.person_proportion + config_.auction_proportion) {
    out.type = NexmarkEventType::kAuction;
    make_auction(n, id, pos, timestamp, out.auction);
  } else {
    out.type = NexmarkEventType::kBid;
    make_bid(id, pos, timestamp, out.bid);
  }
}

// PersonGenerator.nextPerson, up to config_.draws.person.
void NexmarkGenerator::make_person(std::int64_t id, EpochPosition pos, std::int64_t timestamp, NexmarkPerson& p) const {
  const PersonDraws draws = config_.draws.person;
  if (draws != PersonDraws::kAll) p = NexmarkPerson{};
  p.id = last_person(pos) + GeneratorConfig::kFirstPersonId;
  p.date_time = timestamp;
  if (draws == PersonDraws::kNone) return;
  JavaRandom r(id);
  int first = r.next_int(kFirstNameCount);
  p.name = person_name(first, r.next_int(kLastNameCount));
  if (draws == PersonDraws::kName) return;
  // nextEmail: nextString(7) + "@" + nextString(5) + ".com"
  InlineString<7> user;
  InlineString<5> host;
  next_string(r, 7, ' ', user);
  next_string(r, 5, ' ', host);
  char* e = p.email_address.data;
  std::memcpy(e, user.data, user.size);
  e += user.size;
  *e++ = '@';
  std::memcpy(e, host.data, host.size);
  e += host.size;
  std::memcpy(e, ".com", 4);
  p.email_address.size = static_cast<std::uint8_t>(user.size + host.size + 5);
  if (draws == PersonDraws::kEmail) return;
  for (int i = 0; i < 4; ++i) {  // nextCreditCard: four "%04d" of nextInt(10000)
    if (i > 0) p.credit_card.data[i * 5 - 1] = ' ';
    write_four_digits(r.next_int(10000), p.credit_card.data + i * 5);
  }
  p.credit_card.size = 19;
  if (draws == PersonDraws::kCreditCard) return;
  p.city = us_city(r.next_int(kUsCityCount));
  if (draws == PersonDraws::kCity) return;
  p.state = us_state(r.next_int(kUsStateCount));
  if (draws == PersonDraws::kState) return;
  int current_size = 8 + static_cast<int>(p.name.size() + p.email_address.size + p.credit_card.size + p.city.size() +
                                          p.state.size());
  p.extra = next_extra(r, current_size, config_.avg_person_byte_size);
}

// AuctionGenerator.nextAuction (not in extended-bid mode), up to config_.draws.auction.
void NexmarkGenerator::make_auction(std::int64_t n, std::int64_t id, EpochPosition pos, std::int64_t timestamp,
                                    NexmarkAuction& a) const {
  const AuctionDraws draws = config_.draws.auction;
  if (draws != AuctionDraws::kAll) a = NexmarkAuction{};
  a.id = last_auction(pos) + GeneratorConfig::kFirstAuctionId;
  a.date_time = timestamp;
  if (draws == AuctionDraws::kNone) return;
  JavaRandom r(id);
  std::int64_t seller;
  if (r.next_int(hot_sellers_) > 0)  // the first person of the last 100
    seller = (last_person(pos) / kHotSellerRatio) * kHotSellerRatio;
  else
    seller = next_person(pos, r);
  a.seller = seller + GeneratorConfig::kFirstPersonId;
  if (draws == AuctionDraws::kSeller) return;
  a.category = GeneratorConfig::kFirstCategoryId + r.next_int(kNumCategories);
  if (draws == AuctionDraws::kCategory) return;
  a.initial_bid = next_price(r);
  if (draws == AuctionDraws::kInitialBid) return;
  // nextAuctionLengthMs: on average until numInFlightAuctions more auctions exist.
  std::int64_t future_auction =
      config_.timestamp_for_event(config_.adjusted_event_number(n) + auction_horizon_events_);
  std::int64_t horizon_ms = future_auction - timestamp;
  a.expires = timestamp + 1 + next_long(r, std::max<std::int64_t>(horizon_ms * 2, 1));
  if (draws == AuctionDraws::kExpires) return;
  next_string(r, 20, ' ', a.item_name);
  if (draws == AuctionDraws::kItemName) return;
  next_string(r, 100, ' ', a.description);
  if (draws == AuctionDraws::kDescription) return;
  a.reserve = a.initial_bid + next_price(r);
  if (draws == AuctionDraws::kReserve) return;
  int current_size = 8 + a.item_name.size + a.description.size + 8 + 8 + 8 + 8 + 8;
  a.extra = next_extra(r, current_size, config_.avg_auction_byte_size);
}

// BidGenerator.nextBid (with channel and url), up to config_.draws.bid.
void NexmarkGenerator::make_bid(std::int64_t id, EpochPosition pos, std::int64_t timestamp, NexmarkBid& b) const {
  const BidDraws draws = config_.draws.bid;
  if (draws != BidDraws::kAll) b = NexmarkBid{};
  b.date_time = timestamp;
  if (draws == BidDraws::kNone) return;
  JavaRandom r(id);
  std::int64_t auction;
  if (r.next_int(hot_auctions_) > 0)  // the first auction of the last 100
    auction = (last_auction(pos) / kHotAuctionRatio) * kHotAuctionRatio;
  else
    auction = next_auction(pos, r);
  b.auction = auction + GeneratorConfig::kFirstAuctionId;
  if (draws == BidDraws::kAuction) return;
  std::int64_t bidder;
  if (r.next_int(hot_bidders_) > 0)  // the second person of the last 100
    bidder = (last_person(pos) / kHotBidderRatio) * kHotBidderRatio + 1;
  else
    bidder = next_person(pos, r);
  b.bidder = bidder + GeneratorConfig::kFirstPersonId;
  if (draws == BidDraws::kBidder) return;
  b.price = next_price(r);
  if (draws == BidDraws::kPrice) return;
  if (config_.bid_channel_url) {
    const ChannelInfo* channel;
    if (r.next_int(kHotChannelsRatio) > 0)
      channel = &hot_channel(r.next_int(kHotChannelCount));
    else
      channel = &numbered_channel(r.next_int(kChannelCount));
    b.channel = channel->name;
    b.url = channel->url;
  } else {
    b.channel = {};
    b.url = {};
  }
  if (draws == BidDraws::kChannel) return;
  // nextExtra(random, 8 + 8 + 8 + 8, avgBidByteSize), its division precomputed.
  if (!bid_extra_) {
    b.extra = {};
  } else {
    int size = bid_extra_min_ + (bid_extra_spread_used_ ? r.next_int(bid_extra_spread_) : 0);
    b.extra = NexmarkExtra{r.state(), static_cast<std::uint32_t>(size)};
  }
}

}  // namespace clink::nexmark
