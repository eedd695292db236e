// CompactValueStore (the memory backend's value- and list-state layout): values in place,
// appends in linked segments, garbage and compaction, rewrites, and what a list value of
// join rows costs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../../src/state/compact_value_store.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "clink/state/state_codec.hpp"
#include "state_test_util.hpp"

namespace clink::test {
namespace {

using state_internal::CompactValueStore;

std::map<std::string, std::string> everything(const CompactValueStore& store) {
  std::map<std::string, std::string> out;
  store.for_each([&](std::string_view k, std::string_view v) { out.emplace(k, v); });
  return out;
}

TEST(CompactValueStore, PutsInPlaceWithinTheCapacityAndElsewhereBeyondIt) {
  CompactValueStore store;
  std::string scratch;
  EXPECT_TRUE(store.put("k", "1234"));
  EXPECT_EQ(store.live_bytes(), 8u + 4u);  // header and bytes; the inline key costs nothing
  const char* before = store.get("k", scratch)->data();
  EXPECT_FALSE(store.put("k", "56"));  // shorter: where it was
  EXPECT_EQ(store.get("k", scratch)->data(), before);
  EXPECT_EQ(*store.get("k", scratch), "56");
  EXPECT_FALSE(store.put("k", "abcd"));  // back to the capacity: still there
  EXPECT_EQ(store.get("k", scratch)->data(), before);
  EXPECT_EQ(store.garbage_bytes(), 0u);
  EXPECT_FALSE(store.put("k", "abcdef"));  // past it: a new blob, the old one garbage
  EXPECT_NE(store.get("k", scratch)->data(), before);
  EXPECT_EQ(*store.get("k", scratch), "abcdef");
  EXPECT_EQ(store.garbage_bytes(), 12u);
  EXPECT_EQ(store.live_bytes(), 14u);
  EXPECT_FALSE(store.get("other", scratch).has_value());
  EXPECT_TRUE(store.put("empty", ""));
  EXPECT_EQ(*store.get("empty", scratch), "");
}

TEST(CompactValueStore, AppendsFillTheRoomThenLinkSegmentsWithoutMovingOrGarbage) {
  CompactValueStore store;
  std::string scratch;
  EXPECT_TRUE(store.put("k", "abcd"));
  EXPECT_FALSE(store.put("k", "ab"));  // capacity 4, size 2
  EXPECT_FALSE(store.append("k", "cdef"));  // "cd" into the room, "ef" into a second segment
  EXPECT_EQ(*store.get("k", scratch), "abcdef");
  EXPECT_EQ(store.garbage_bytes(), 0u);
  // 10 000 appends of 10 bytes: nothing copied, no garbage; segments of up to 4 KiB.
  std::string expected = "abcdef";
  for (int i = 0; i < 10000; ++i) {
    const std::string piece = std::to_string(1000000000 + i);
    EXPECT_FALSE(store.append("k", piece));
    expected += piece;
  }
  EXPECT_EQ(*store.get("k", scratch), expected);
  EXPECT_EQ(store.garbage_bytes(), 0u);
  EXPECT_LT(store.live_bytes(), expected.size() + 4096 + 16 * 40);
  // A put over a value in segments makes it one blob again; the segments become garbage,
  // which outweighs the live bytes here: the store compacts.
  EXPECT_FALSE(store.put("k", "x"));
  EXPECT_EQ(*store.get("k", scratch), "x");
  EXPECT_EQ(store.garbage_bytes(), 0u);
  EXPECT_EQ(store.live_bytes(), 8u + 1u);
  // Appends to a fresh key, read back through for_each and a rewrite that keeps it.
  EXPECT_TRUE(store.append("l", "1"));
  EXPECT_FALSE(store.append("l", "23"));
  EXPECT_FALSE(store.append("l", "456"));
  EXPECT_EQ(*store.get("l", scratch), "123456");
  std::map<std::string, std::string> seen;
  store.for_each([&](std::string_view k, std::string_view v) { seen.emplace(k, v); });
  EXPECT_EQ(seen, (std::map<std::string, std::string>{{"k", "x"}, {"l", "123456"}}));
  store.rewrite([](std::string_view, std::string_view v) -> std::optional<std::string_view> { return v; });
  EXPECT_EQ(*store.get("l", scratch), "123456");
}

TEST(CompactValueStore, ErasesAndCompactsKeepingEveryLiveValue) {
  CompactValueStore store;
  const std::string long_key(40, 'L');  // a key kept in the arena, not in the slot
  std::map<std::string, std::string> expected;
  for (int k = 0; k < 5000; ++k) {
    const std::string key = (k % 2 ? long_key : std::string("k")) + std::to_string(k);
    const std::string value(100, static_cast<char>('a' + k % 26));
    store.put(key, value);
    expected[key] = value;
  }
  std::size_t max_garbage = 0;
  for (int k = 0; k < 5000; ++k) {
    if (k % 10 == 0) continue;
    const std::string key = (k % 2 ? long_key : std::string("k")) + std::to_string(k);
    EXPECT_TRUE(store.erase(key));
    expected.erase(key);
    max_garbage = std::max(max_garbage, store.garbage_bytes());
  }
  EXPECT_FALSE(store.erase("absent"));
  EXPECT_GT(max_garbage, 0u);
  EXPECT_LT(store.garbage_bytes(), max_garbage);  // compacted at some point
  EXPECT_EQ(store.size(), 500u);
  EXPECT_EQ(everything(store), expected);
}

TEST(CompactValueStore, RewriteDropsReplacesOrKeepsEachValue) {
  CompactValueStore store;
  for (int k = 0; k < 300; ++k) store.put("k" + std::to_string(k), std::string(20, 'v'));
  std::string scratch;
  store.rewrite([&](std::string_view key, std::string_view value) -> std::optional<std::string_view> {
    const int k = std::stoi(std::string(key.substr(1)));
    if (k % 3 == 0) return std::nullopt;  // dropped
    if (k % 3 == 1) return value;         // kept
    scratch.assign(k % 2 ? 5 : 50, 'r');  // replaced: shorter in place, longer elsewhere
    return scratch;
  });
  EXPECT_EQ(store.size(), 200u);
  for (int k = 0; k < 300; ++k) {
    auto v = store.get("k" + std::to_string(k), scratch);
    if (k % 3 == 0) EXPECT_FALSE(v.has_value()) << k;
    else if (k % 3 == 1) EXPECT_EQ(*v, std::string(20, 'v')) << k;
    else EXPECT_EQ(*v, std::string(k % 2 ? 5 : 50, 'r')) << k;
  }
}

// A join's insert-only side keeps each key's rows as a list value: a row costs its bytes,
// an 8-byte header and its share of the index (a 24-byte slot at the load of 128 key
// groups' hash maps) and of the arena's last chunks: ~69 B here, with no heap block of
// its own.
TEST(CompactValueStore, AListedJoinRowCostsLittleMoreThanItsBytes) {
  BackendMaker maker;
  maker.kind = "memory";
  constexpr int kRows = 200000;
  const std::size_t before = heap_in_use();
  std::size_t payload = 0;
  {
    auto b = maker.make({0, kDefaultMaxParallelism - 1});
    auto list = b->register_state("join-left-rows", StateKind::kList);
    std::string row;
    for (int i = 0; i < kRows; ++i) {
      b->set_current_key(encode_key<std::int64_t>(i));
      row.assign(100, 'x');
      std::memcpy(row.data(), &i, sizeof i);
      b->append(list, row);
      payload += row.size();
    }
    const std::size_t after = heap_in_use();
    const double overhead = (static_cast<double>(after - before) - static_cast<double>(payload)) / kRows;
    RecordProperty("overhead_bytes_per_row", std::to_string(overhead));
    std::printf("listed join row: %zu B payload, %.1f B overhead a row\n", payload / kRows, overhead);
    EXPECT_LT(overhead, 80.0);
  }
  EXPECT_LT(heap_in_use(), before + 1024 * 1024);  // all released with the backend
}

}  // namespace
}  // namespace clink::test
