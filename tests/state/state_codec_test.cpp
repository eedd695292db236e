#include "clink/state/state_codec.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "clink/state/state_ttl.hpp"

namespace clink::test {
namespace {

TEST(StateCodec, VarintRoundTripsAndIsLeb128) {
  for (std::uint64_t v : std::vector<std::uint64_t>{0, 1, 127, 128, 300, 16383, 16384, (std::uint64_t{1} << 35) + 7,
                                                   std::numeric_limits<std::uint64_t>::max()}) {
    std::string s;
    put_varint(v, s);
    std::string_view in(s);
    EXPECT_EQ(get_varint(in), v);
    EXPECT_TRUE(in.empty());
  }
  std::string s;
  put_varint(300, s);
  EXPECT_EQ(s, std::string("\xac\x02"));
  s.clear();
  put_varint(std::numeric_limits<std::uint64_t>::max(), s);
  EXPECT_EQ(s.size(), 10u);
}

TEST(StateCodec, TruncatedVarintThrows) {
  std::string s;
  put_varint(1u << 20, s);
  std::string_view in(s.data(), s.size() - 1);
  EXPECT_THROW(get_varint(in), ClinkError);
  std::string_view empty;
  EXPECT_THROW(get_varint(empty), ClinkError);
  std::string eleven(11, '\x80');
  std::string_view too_long(eleven);
  EXPECT_THROW(get_varint(too_long), ClinkError);
}

TEST(StateCodec, SignedIntegersAreZigZagSmall) {
  EXPECT_EQ(encode_state<std::int64_t>(0).size(), 1u);
  EXPECT_EQ(encode_state<std::int64_t>(-1).size(), 1u);
  EXPECT_EQ(encode_state<std::int64_t>(63).size(), 1u);
  EXPECT_EQ(encode_state<std::int64_t>(-64).size(), 1u);
  EXPECT_EQ(encode_state<std::int64_t>(64).size(), 2u);
  for (std::int64_t v : {std::int64_t{0}, std::int64_t{-5}, std::int64_t{123456789},
                         std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()})
    EXPECT_EQ(decode_state<std::int64_t>(encode_state(v)), v);
}

TEST(StateCodec, CompositeValuesRoundTrip) {
  using T = std::tuple<std::int64_t, std::string, double, std::vector<std::int32_t>>;
  T v{-42, "hello", 2.5, {1, -2, 3}};
  EXPECT_EQ(decode_state<T>(encode_state(v)), v);
  std::pair<std::string, std::uint32_t> p{"", 7};
  EXPECT_EQ((decode_state<std::pair<std::string, std::uint32_t>>(encode_state(p))), p);
  EXPECT_THROW(decode_state<std::string>(std::string("\x05" "ab")), ClinkError);
}

// Found by fuzz_checkpoint: a damaged element count (here 2^60) reserved that many
// elements up front, an allocation far beyond any memory, before the input ran out.
TEST(StateCodec, ADamagedVectorCountFailsAsTruncatedWithoutReservingIt) {
  std::string s;
  put_varint(std::uint64_t{1} << 60, s);
  s += "\x02" "ab";
  EXPECT_THROW(decode_state<std::vector<std::string>>(s), ClinkError);
}

TEST(StateTtl, TimestampPrefixAndExpiry) {
  std::string s;
  put_ttl_timestamp(0x0102030405060708, s);
  EXPECT_EQ(s, std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8));
  std::string_view in(s);
  EXPECT_EQ(get_ttl_timestamp(in), 0x0102030405060708);
  EXPECT_FALSE(ttl_expired(100, 50, 149));
  EXPECT_TRUE(ttl_expired(100, 50, 150));
  EXPECT_FALSE(ttl_expired(std::numeric_limits<std::int64_t>::max() - 1, 50, 0));  // no overflow
}

TEST(StateTtl, ListFilterDropsOnlyExpiredElements) {
  auto element = [](std::int64_t ts, std::string_view payload) {
    std::string e;
    put_ttl_timestamp(ts, e);
    put_varint(payload.size(), e);
    e.append(payload);
    return e;
  };
  std::string list = element(0, "a") + element(50, "bb") + element(10, "c");
  std::string out;
  EXPECT_FALSE(ttl_filter_list(list, 100, 99, out));  // nothing expired: untouched
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(ttl_filter_list(list, 100, 110, out));
  EXPECT_EQ(out, element(50, "bb"));
  out.clear();
  EXPECT_TRUE(ttl_filter_list(list, 100, 200, out));
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace clink::test
