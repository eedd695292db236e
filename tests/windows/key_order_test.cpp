// window_detail::sort_by_key_bytes: the order a sliced firing emits its results in,
// checked against std::sort with KeyBytesLess for the key widths and ranges the radix
// path handles (digits over just the differing bits) and the comparison fallback.
#include "clink/windows/window_operator_detail.hpp"

#include "clink/sql/ops/row_key.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace clink::test {
namespace {

template <class K>
void expect_sorted_like_std(std::vector<K> keys) {
  std::vector<std::pair<K, std::uint32_t>> v, scratch;
  for (std::size_t i = 0; i < keys.size(); ++i) v.emplace_back(keys[i], static_cast<std::uint32_t>(i));
  auto expected = v;
  window_detail::KeyBytesLess<K> less;
  std::stable_sort(expected.begin(), expected.end(), [&](const auto& a, const auto& b) { return less(a.first, b.first); });
  window_detail::sort_by_key_bytes(v, scratch);
  ASSERT_EQ(v, expected);  // keys in order, equal keys in input order (the radix sort is stable)
}

std::uint64_t next(std::uint64_t& x) {
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return x;
}

TEST(KeyOrder, SmallNonNegativeKeysTakeTheRadixPath) {
  std::uint64_t x = 42;
  std::vector<std::int64_t> keys;
  for (int i = 0; i < 100'000; ++i) keys.push_back(static_cast<std::int64_t>(next(x) % 100'000));
  expect_sorted_like_std(keys);
}

TEST(KeyOrder, NegativeAndExtremeKeysInSignedOrder) {
  std::uint64_t x = 7;
  std::vector<std::int64_t> keys = {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(), -1, 0, 1};
  for (int i = 0; i < 5'000; ++i) keys.push_back(static_cast<std::int64_t>(next(x)));  // all 64 bits differ
  for (int i = 0; i < 5'000; ++i) keys.push_back(static_cast<std::int64_t>(next(x) % 2'000) - 1'000);
  expect_sorted_like_std(keys);
}

TEST(KeyOrder, KeysDifferingOnlyInHighOrMiddleBits) {
  std::vector<std::int64_t> high, middle;
  for (std::int64_t i = 0; i < 3'000; ++i) {
    high.push_back(((i * 7919) % 3'000) << 40);              // low 40 bits all zero
    middle.push_back((((i * 104729) % 3'000) << 20) | 0x5);  // a shared low pattern
  }
  expect_sorted_like_std(high);
  expect_sorted_like_std(middle);
}

TEST(KeyOrder, NarrowKeysAndManyDuplicates) {
  std::uint64_t x = 3;
  std::vector<std::int8_t> narrow;
  std::vector<std::uint32_t> dup;
  for (int i = 0; i < 4'000; ++i) {
    narrow.push_back(static_cast<std::int8_t>(next(x)));
    dup.push_back(static_cast<std::uint32_t>(next(x) % 5) * 1'000'000u);
  }
  expect_sorted_like_std(narrow);
  expect_sorted_like_std(dup);
  expect_sorted_like_std(std::vector<std::int64_t>(1'000, -5));  // all equal: left as is
}

TEST(KeyOrder, Int64KeysOfTheSqlWindowAggregateInKeyByteOrder) {
  // Radix path (no NULL): signed order; with a NULL ("\0" sorts first): comparisons.
  std::uint64_t x = 11;
  std::vector<sql::Int64Key> keys = {{std::numeric_limits<std::int64_t>::min()}, {std::numeric_limits<std::int64_t>::max()},
                                     {-1}, {0}, {1}};
  for (int i = 0; i < 3'000; ++i) keys.push_back({static_cast<std::int64_t>(next(x) % 5'000) - 2'500});
  for (int i = 0; i < 1'000; ++i) keys.push_back({static_cast<std::int64_t>(next(x))});
  expect_sorted_like_std(keys);
  std::vector<sql::Int64Key> distinct = {{0, true}};  // (the comparison sort is not stable)
  for (std::int64_t i = 0; i < 2'000; ++i) distinct.push_back({(i * 7919) % 2'000 - 1'000});
  expect_sorted_like_std(distinct);
}

TEST(KeyOrder, StringKeysByLengthThenBytes) {
  std::vector<std::pair<std::string, int>> v = {{"b", 0}, {"aa", 1}, {"a", 2}, {"", 3}, {"ab", 4}};
  std::vector<std::pair<std::string, int>> scratch;
  window_detail::sort_by_key_bytes(v, scratch);
  std::vector<std::string> keys;
  for (const auto& e : v) keys.push_back(e.first);
  EXPECT_EQ(keys, (std::vector<std::string>{"", "a", "b", "aa", "ab"}));
}

}  // namespace
}  // namespace clink::test
