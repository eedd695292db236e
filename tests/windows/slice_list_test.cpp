// SliceList: one key's panes as a ring, checked against a std::map model through
// appends, out-of-order inserts, drops and growth while the ring wraps around.
#include "clink/windows/slice_list.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace clink::test {
namespace {

using Panes = std::vector<std::pair<std::int64_t, std::string>>;

template <class L>
Panes range_of(const L& l, std::int64_t lo, std::int64_t hi) {
  Panes out;
  l.for_range(lo, hi, [&](std::int64_t i, const std::string& s) { out.emplace_back(i, s); });
  return out;
}

Panes model_range(const std::map<std::int64_t, std::string>& m, std::int64_t lo, std::int64_t hi) {
  Panes out;
  for (auto it = m.lower_bound(lo); it != m.end() && it->first < hi; ++it) out.emplace_back(it->first, it->second);
  return out;
}

TEST(SliceList, AppendsDropsAndWrapsAroundInIndexOrder) {
  SliceList<std::string> l;
  for (std::int64_t i = 0; i < 6; ++i) *l.get_or_create(i, [&] { return std::to_string(i); }).first += "!";
  l.drop_before(4);  // head moves to slot 4 of a ring of 8
  for (std::int64_t i = 6; i < 10; ++i) l.get_or_create(i, [&] { return std::to_string(i); });  // wraps
  EXPECT_EQ(range_of(l, -100, 100), (Panes{{4, "4!"}, {5, "5!"}, {6, "6"}, {7, "7"}, {8, "8"}, {9, "9"}}));
  EXPECT_EQ(l.size(), 6u);
  EXPECT_EQ(l.last_index(), 9);
  // Growth while wrapped keeps the order; a pane that exists is returned, not created.
  for (std::int64_t i = 10; i < 14; ++i) l.get_or_create(i, [&] { return std::to_string(i); });
  auto [s, created] = l.get_or_create(7, [] { return std::string("new"); });
  EXPECT_FALSE(created);
  EXPECT_EQ(*s, "7");
  EXPECT_EQ(range_of(l, 8, 11), (Panes{{8, "8"}, {9, "9"}, {10, "10"}}));
  EXPECT_TRUE(l.any_in(13, 20));
  EXPECT_FALSE(l.any_in(14, 20));
  EXPECT_FALSE(l.any_in(0, 4));
  l.drop_before(100);
  EXPECT_TRUE(l.empty());
  EXPECT_FALSE(l.any_in(-100, 100));
}

TEST(SliceList, OutOfOrderPanesAreInsertedInPlace) {
  SliceList<std::string> l;
  std::map<std::int64_t, std::string> model;
  // A deterministic mix of in-order, gap-filling and older panes, drops and re-adds.
  std::uint64_t x = 12345;
  for (int step = 0; step < 5000; ++step) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const std::int64_t newest = model.empty() ? 0 : model.rbegin()->first;
    const std::int64_t idx = newest - 20 + static_cast<std::int64_t>(x % 24);
    if (x % 7 == 0) {
      const std::int64_t cut = newest - 15;
      l.drop_before(cut);
      model.erase(model.begin(), model.lower_bound(cut));
      continue;
    }
    if (x % 11 == 0 && !model.empty()) {  // contiguous or with gaps: the next oldest index either way
      ASSERT_EQ(l.front_index(), model.begin()->first);
      ASSERT_EQ(l.front(), model.begin()->second);
      l.pop_front();
      model.erase(model.begin());
      ASSERT_EQ(l.size(), model.size());
      if (!model.empty()) {
        ASSERT_EQ(l.front_index(), model.begin()->first) << "step " << step;
      }
      continue;
    }
    auto [s, created] = l.get_or_create(idx, [&] { return std::to_string(idx); });
    ASSERT_EQ(created, !model.contains(idx)) << idx;
    *s += ".";
    model[idx] = *s;
    ASSERT_EQ(l.size(), model.size());
    const std::int64_t lo = idx - static_cast<std::int64_t>(x % 9), hi = idx + static_cast<std::int64_t>(x % 5);
    ASSERT_EQ(range_of(l, lo, hi), model_range(model, lo, hi)) << "step " << step;
    ASSERT_EQ(l.any_in(lo, hi), !model_range(model, lo, hi).empty());
  }
  Panes from;
  l.for_from(model.begin()->first + 3, [&](std::int64_t i, const std::string& s) { from.emplace_back(i, s); });
  EXPECT_EQ(from, model_range(model, model.begin()->first + 3, INT64_MAX));
}

}  // namespace
}  // namespace clink::test
