// LinearProbeMap (clink/core, the window engine's key table) against absl::flat_hash_map as the model: random inserts, finds and
// erases (backward-shift deletion keeps every remaining key findable), iteration, and
// keys that own memory.
#include "clink/core/linear_probe_map.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <absl/container/flat_hash_map.h>

namespace clink::test {
namespace {

// Every key hashes to one of a few positions: long runs, wrap-around, shifts.
struct CollidingHash {
  std::size_t operator()(std::int64_t k) const { return static_cast<std::size_t>(k % 5) << 60; }
};

template <class Map, class Model>
void expect_same(Map& m, const Model& model) {
  ASSERT_EQ(m.size(), model.size());
  std::size_t seen = 0;
  for (auto& [k, v] : m) {
    auto it = model.find(k);
    ASSERT_NE(it, model.end()) << k;
    ASSERT_EQ(v, it->second) << k;
    ++seen;
  }
  ASSERT_EQ(seen, model.size());
  std::vector<const void*> iterated, visited;  // for_each visits what iteration does, in slot order
  for (auto& e : m) iterated.push_back(&e);
  m.for_each([&](auto& e) {
    visited.push_back(&e);
    ASSERT_EQ(e.second, model.at(e.first));
  });
  ASSERT_EQ(visited, iterated);
  for (const auto& [k, v] : model) {
    auto it = m.find(k);
    ASSERT_NE(it, m.end()) << k;
    ASSERT_EQ(it->second, v);
  }
}

template <class Hash>
void random_operations(std::uint64_t seed, std::int64_t key_range) {
  LinearProbeMap<std::int64_t, std::int64_t, Hash> m;
  absl::flat_hash_map<std::int64_t, std::int64_t> model;
  std::uint64_t x = seed;
  for (int step = 0; step < 20000; ++step) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const auto key = static_cast<std::int64_t>(x % static_cast<std::uint64_t>(key_range)) - key_range / 2;
    switch (x >> 61) {
      case 0:
      case 1:
      case 2: {
        auto [it, created] = m.try_emplace(key);
        ASSERT_EQ(created, !model.contains(key));
        it->second += step;
        model[key] += step;
        break;
      }
      case 3:
      case 4:
        ASSERT_EQ(m.erase(key), model.erase(key)) << key;
        break;
      default: {
        auto it = m.find(key);
        ASSERT_EQ(it == m.end(), !model.contains(key)) << key;
        auto* e = m.find_entry(key);  // the iterator-free lookup agrees
        ASSERT_EQ(e == nullptr, it == m.end()) << key;
        if (it != m.end()) {
          ASSERT_EQ(it->second, model[key]);
          ASSERT_EQ(e, &*it);
          ASSERT_EQ(e->first, key);
        }
      }
    }
    if (step % 997 == 0) expect_same(m, model);
  }
  expect_same(m, model);
  for (const auto& [k, v] : std::vector<std::pair<std::int64_t, std::int64_t>>(model.begin(), model.end()))
    ASSERT_EQ(m.erase(k), 1u);
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.begin(), m.end());
}

TEST(LinearProbeMap, MatchesAHashMapUnderRandomInsertsFindsAndErases) {
  random_operations<absl::Hash<std::int64_t>>(88172645463325252ull, 3000);
}

TEST(LinearProbeMap, MatchesAHashMapWhenKeysCollide) { random_operations<CollidingHash>(12345, 400); }

TEST(LinearProbeMap, KeysAndValuesThatOwnMemory) {
  LinearProbeMap<std::string, std::vector<int>> m;
  for (int i = 0; i < 1000; ++i) m[std::string(40, static_cast<char>('a' + i % 26)) + std::to_string(i)].push_back(i);
  for (int i = 0; i < 1000; i += 2) ASSERT_EQ(m.erase(std::string(40, static_cast<char>('a' + i % 26)) + std::to_string(i)), 1u);
  ASSERT_EQ(m.size(), 500u);
  for (int i = 1; i < 1000; i += 2) {
    auto it = m.find(std::string(40, static_cast<char>('a' + i % 26)) + std::to_string(i));
    ASSERT_NE(it, m.end());
    EXPECT_EQ(it->second, std::vector<int>{i});
  }
  m.clear();
  EXPECT_TRUE(m.empty());
  m["x"].push_back(1);
  EXPECT_EQ(m.size(), 1u);
}

TEST(LinearProbeMap, FindingAKeyNeverMovesEntries) {
  // The window engine keeps pointers from finds across a batch, redoing them only after
  // an insertion: a try_emplace of a present key must not rehash.
  LinearProbeMap<std::int64_t, int> m;
  for (std::int64_t k = 0; k < 12; ++k) m[k] = static_cast<int>(k);  // 12 of 16: the next insert grows
  int* p = &m.find(5)->second;
  for (std::int64_t k = 0; k < 12; ++k) EXPECT_FALSE(m.try_emplace(k).second);
  EXPECT_EQ(p, &m.find(5)->second);
  EXPECT_EQ(m.capacity(), 16u);
  EXPECT_TRUE(m.try_emplace(12).second);
  EXPECT_EQ(m.capacity(), 32u);
  EXPECT_EQ(m.find(5)->second, 5);
}

}  // namespace
}  // namespace clink::test
