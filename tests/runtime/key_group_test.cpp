#include "clink/runtime/key_group.hpp"

#include <gtest/gtest.h>

#include <set>

#include "clink/core/event_time.hpp"

namespace clink::test {
namespace {

// These literals pin the key encoding and hash: changing either breaks every
// checkpoint and every cross-process exchange, so a failure here is never "update
// the expected value".
TEST(KeyGroup, HashOfEncodedKeysIsStable) {
  EXPECT_EQ(key_hash(encode_key<std::int64_t>(0)), 0xb7aa1c28d234f8d6ULL);
  EXPECT_EQ(key_hash(encode_key<std::int64_t>(42)), 0xf016f1b51cfb68ccULL);
  EXPECT_EQ(key_hash(encode_key<std::int64_t>(-1)), 0xf832fc1d899fe591ULL);
  EXPECT_EQ(key_hash(encode_key<std::string>("hello")), 0x4a4d14eeb3998572ULL);
  EXPECT_EQ(key_hash(""), 0x2d06800538d394c2ULL);  // XXH3-64 of the empty input
}

TEST(KeyGroup, KeyGroupsOfKnownKeys) {
  EXPECT_EQ(key_group_for_hash(key_hash(encode_key<std::int64_t>(42)), 128), 76);
  EXPECT_EQ(key_group_for_hash(key_hash(encode_key<std::string>("hello")), 128), 114);
}

TEST(KeyGroup, IntegerEncodingIsFixedWidthAndOrderPreserving) {
  EXPECT_EQ(encode_key<std::int64_t>(0), std::string("\x80\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(encode_key<std::int64_t>(-1), std::string("\x7f\xff\xff\xff\xff\xff\xff\xff", 8));
  EXPECT_EQ(encode_key<std::int32_t>(1), std::string("\x80\0\0\x01", 4));
  EXPECT_LT(encode_key<std::int64_t>(-5), encode_key<std::int64_t>(3));
  EXPECT_LT(encode_key<std::int64_t>(3), encode_key<std::int64_t>(300));
  for (std::int64_t v : {std::int64_t{0}, std::int64_t{-7}, kMinEventTime, kMaxEventTime})
    EXPECT_EQ(decode_key<std::int64_t>(encode_key(v)), v);
}

TEST(KeyGroup, CompositeKeysRoundTrip) {
  std::pair<std::string, std::int64_t> k{"user-1", -3};
  std::string bytes = encode_key(k);
  EXPECT_EQ(bytes.size(), 4u + 6u + 8u);
  EXPECT_EQ(decode_key<decltype(k)>(bytes), k);
}

TEST(KeyGroup, RangesPartitionAllGroupsAndMatchAssignment) {
  for (int p : {1, 2, 3, 7, 128}) {
    int next = 0;
    for (int s = 0; s < p; ++s) {
      KeyGroupRange r = key_group_range_for_subtask(128, p, s);
      EXPECT_EQ(r.first, next) << "p=" << p << " s=" << s;
      for (int kg = r.first; kg <= r.last; ++kg) EXPECT_EQ(subtask_for_key_group(kg, 128, p), s);
      next = r.last + 1;
    }
    EXPECT_EQ(next, 128);
  }
  EXPECT_EQ(key_group_range_for_subtask(128, 2, 0), (KeyGroupRange{0, 63}));
  EXPECT_EQ(key_group_range_for_subtask(128, 2, 1), (KeyGroupRange{64, 127}));
}

}  // namespace
}  // namespace clink::test
