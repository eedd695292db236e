// CompactMapStore (the memory backend's map-state layout) and what a stored join row costs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "../../src/state/compact_map_store.hpp"
#include "clink/core/error.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "clink/state/state_codec.hpp"
#include "state_test_util.hpp"

namespace clink::test {
namespace {

using state_internal::CompactMapStore;
using Entries = std::vector<std::pair<std::string, std::string>>;

Entries entries_of(CompactMapStore& store, std::string_view composite) {
  Entries out;
  if (auto* e = store.find(composite))
    e->for_each([&](const char* blob) {
      out.emplace_back(CompactMapStore::user_key(blob), CompactMapStore::value(blob));
      return true;
    });
  return out;
}

// Every key's entries, keys sorted (the index has no order).
std::vector<std::pair<std::string, Entries>> everything(CompactMapStore& store) {
  std::vector<std::pair<std::string, Entries>> out;
  store.for_each([&](std::string_view composite, const CompactMapStore::Entries&) {
    out.emplace_back(std::string(composite), Entries{});
  });
  std::sort(out.begin(), out.end());
  for (auto& [k, e] : out) e = entries_of(store, k);
  return out;
}

void remove_entry(CompactMapStore& store, std::string_view composite, std::string_view user_key) {
  auto* e = store.find(composite);
  ASSERT_NE(e, nullptr);
  auto at = store.locate(*e, user_key);
  ASSERT_NE(at.blob, nullptr);
  store.remove(composite, *e, at);
}

TEST(CompactMapStore, KeepsEachKeysEntriesInUserKeyOrderFromOneEntryToMany) {
  CompactMapStore store;
  auto& e = store.find_or_create("k");
  store.put(e, "m", "1");
  EXPECT_EQ(e.size(), 1u);  // inline
  EXPECT_EQ(entries_of(store, "k"), (Entries{{"m", "1"}}));
  store.put(e, "b", "2");  // second entry: a B-tree, still ordered
  store.put(e, "z", "3");
  store.put(e, std::string("a\0", 2), "4");  // bytewise order: "a" < "a\0" < "b"
  store.put(e, "a", "5");
  store.put(e, "\xff", "6");  // unsigned bytes sort last
  EXPECT_EQ(entries_of(store, "k"), (Entries{{"a", "5"},
                                              {std::string("a\0", 2), "4"},
                                              {"b", "2"},
                                              {"m", "1"},
                                              {"z", "3"},
                                              {"\xff", "6"}}));
  ASSERT_NE(store.get(e, "m"), nullptr);
  EXPECT_EQ(CompactMapStore::value(store.get(e, "m")), "1");
  EXPECT_EQ(store.get(e, "n"), nullptr);
  EXPECT_EQ(store.find("other"), nullptr);
}

// A B-tree orders by a 4-byte key prefix first: keys that share it, are shorter than it,
// end in zero bytes or hold bytes >= 0x80 still come out in bytewise order, found and
// rewritten (a new length: the slot keeps its prefix) through lookups by prefix and key.
TEST(CompactMapStore, KeysAroundThePrefixKeepBytewiseOrder) {
  CompactMapStore store;
  auto& e = store.find_or_create("k");
  const std::vector<std::string> sorted = {"",
                                           std::string("\0", 1),
                                           "abc",
                                           std::string("abc\0", 4),
                                           std::string("abc\0\0\0\0\0", 8),
                                           std::string("abc\0\0\0\0\0\0", 9),
                                           "abcdefgh",
                                           std::string("abcdefgh\0", 9),
                                           "abcdefgha",
                                           "abcdefgz",
                                           "abcdefh",
                                           "abc\x80",
                                           "\xff\xff\xff\xff\xff\xff\xff\xff",
                                           "\xff\xff\xff\xff\xff\xff\xff\xff\x01"};
  for (std::size_t i = sorted.size(); i-- > 0;) store.put(e, sorted[i], std::to_string(i));
  Entries want;
  for (std::size_t i = 0; i < sorted.size(); ++i) want.emplace_back(sorted[i], std::to_string(i));
  EXPECT_EQ(entries_of(store, "k"), want);
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    ASSERT_NE(store.get(e, sorted[i]), nullptr) << i;
    EXPECT_EQ(CompactMapStore::value(store.get(e, sorted[i])), std::to_string(i));
  }
  EXPECT_EQ(store.get(e, "abcdefg"), nullptr);
  EXPECT_EQ(store.get(e, std::string("abc\0\0", 5)), nullptr);
  store.put(e, "abcdefgha", "a longer value");
  want[8].second = "a longer value";
  EXPECT_EQ(entries_of(store, "k"), want);
  remove_entry(store, "k", "abcdefgh");
  want.erase(want.begin() + 6);
  EXPECT_EQ(entries_of(store, "k"), want);
}

TEST(CompactMapStore, RewritesValuesInPlaceOrAsNewBlobsAndCountsTheGarbage) {
  CompactMapStore store;
  auto& e = store.find_or_create("k");
  store.put(e, "a", "1234");
  const std::size_t live = store.live_bytes();
  EXPECT_EQ(live, 1u + 1u + 1u + 4u);  // varint lengths, key, value; the inline key costs nothing
  const char* before = store.get(e, "a");
  store.put(e, "a", "5678");  // same length: overwritten where it is
  EXPECT_EQ(store.get(e, "a"), before);
  EXPECT_EQ(store.garbage_bytes(), 0u);
  store.put(e, "a", "123456");  // another length: a new blob, the old one garbage
  EXPECT_NE(store.get(e, "a"), before);
  EXPECT_EQ(CompactMapStore::value(store.get(e, "a")), "123456");
  EXPECT_EQ(store.garbage_bytes(), live);
  EXPECT_EQ(store.live_bytes(), live + 2);
}

TEST(CompactMapStore, RemovingTheLastEntryDropsTheKey) {
  CompactMapStore store;
  auto& e = store.find_or_create("k");
  store.put(e, "a", "1");
  store.put(e, "b", "2");
  const auto generation = store.generation();
  remove_entry(store, "k", "a");
  EXPECT_EQ(store.generation(), generation);  // the key stays: its pointer too
  EXPECT_EQ(entries_of(store, "k"), (Entries{{"b", "2"}}));
  remove_entry(store, "k", "b");
  EXPECT_EQ(store.find("k"), nullptr);
  EXPECT_EQ(store.num_keys(), 0u);
  EXPECT_NE(store.generation(), generation);
  EXPECT_EQ(store.live_bytes(), 0u);
}

TEST(CompactMapStore, CompactionKeepsEveryLiveEntryAndReleasesTheGarbage) {
  CompactMapStore store;
  const std::string long_key(40, 'L');  // a key kept in the arena, not in the slot
  auto user_key = [](int i) { return encode_key<std::int64_t>(i); };
  for (int k = 0; k < 50; ++k) {
    const std::string composite = (k % 2 ? long_key : std::string("k")) + std::to_string(k);
    auto& e = store.find_or_create(composite);
    for (int i = 0; i < 200; ++i) store.put(e, user_key(i), std::string(100, static_cast<char>('a' + i % 26)));
  }
  const std::size_t full_arena = store.arena_bytes();
  // Remove all but every tenth entry: the garbage passes the live bytes, so the store
  // compacts (garbage back to zero at some point) and the arena shrinks.
  std::size_t max_garbage = 0;
  for (int k = 0; k < 50; ++k) {
    const std::string composite = (k % 2 ? long_key : std::string("k")) + std::to_string(k);
    for (int i = 0; i < 200; ++i)
      if (i % 10 != 0) remove_entry(store, composite, user_key(i));
    max_garbage = std::max(max_garbage, store.garbage_bytes());
  }
  EXPECT_GT(max_garbage, 0u);
  EXPECT_LT(store.garbage_bytes(), max_garbage);
  EXPECT_LT(store.arena_bytes(), full_arena / 2);
  // Exactly the survivors, in order, under their keys.
  auto all = everything(store);
  ASSERT_EQ(all.size(), 50u);
  for (const auto& [composite, entries] : all) {
    ASSERT_EQ(entries.size(), 20u) << composite;
    for (int j = 0; j < 20; ++j) {
      EXPECT_EQ(entries[static_cast<std::size_t>(j)].first, user_key(j * 10));
      EXPECT_EQ(entries[static_cast<std::size_t>(j)].second, std::string(100, static_cast<char>('a' + (j * 10) % 26)));
    }
  }
  EXPECT_NE(store.find(long_key + "1"), nullptr);
  EXPECT_NE(store.find("k0"), nullptr);
}

// An unordered store: the same entries through inline slots and a hash set, rewritten
// (in place and as new blobs), removed, compacted, and turned into B-trees and back.
TEST(CompactMapStore, UnorderedStoreHashesEntriesAndTurnsIntoAnOrderedOne) {
  CompactMapStore store(false);
  auto user_key = [](int i) { return encode_key<std::int64_t>(i); };
  auto sorted = [](Entries e) {
    std::sort(e.begin(), e.end());
    return e;
  };
  std::map<std::string, Entries> want;  // per composite key, in user-key order
  for (int k = 0; k < 20; ++k) {
    const std::string composite = "k" + std::to_string(k);
    auto& e = store.find_or_create(composite);
    const int n = k < 2 ? k + 1 : 1000;  // one and two entries stay inline
    for (int i = n; i-- > 0;) store.put(e, user_key(i), std::to_string(i));
    for (int i = 0; i < n; ++i) want[composite].emplace_back(user_key(i), std::to_string(i));
  }
  auto& e5 = *store.find("k5");
  EXPECT_EQ(CompactMapStore::value(store.get(e5, user_key(7))), "7");
  EXPECT_EQ(store.get(e5, user_key(1000)), nullptr);
  EXPECT_EQ(store.get(e5, "7"), nullptr);
  const char* before = store.get(e5, user_key(8));
  store.put(e5, user_key(8), "x");  // same length: in place
  EXPECT_EQ(store.get(e5, user_key(8)), before);
  store.put(e5, user_key(9), "a longer value");  // a new blob
  want["k5"][8].second = "x";
  want["k5"][9].second = "a longer value";
  EXPECT_EQ(sorted(entries_of(store, "k5")), want["k5"]);
  // Removing most entries compacts the store; the survivors stay hashed and found.
  const std::size_t full_arena = store.arena_bytes();
  for (auto& [composite, entries] : want) {
    Entries kept;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (entries.size() > 2 && i % 10 != 0) remove_entry(store, composite, entries[i].first);
      else kept.push_back(entries[i]);
    }
    entries = kept;
  }
  EXPECT_LT(store.arena_bytes(), full_arena / 2);
  for (const auto& [composite, entries] : want) {
    EXPECT_EQ(sorted(entries_of(store, composite)), entries) << composite;
    for (const auto& [k, v] : entries) EXPECT_EQ(CompactMapStore::value(store.get(*store.find(composite), k)), v);
  }
  // Ordered: B-trees in user-key order; unordered again: found the same.
  const auto generation = store.generation();
  store.set_ordered(true);
  EXPECT_NE(store.generation(), generation);
  for (const auto& [composite, entries] : want) EXPECT_EQ(entries_of(store, composite), entries) << composite;
  store.put(*store.find("k7"), user_key(5), "5");  // between the survivors 0 and 10
  want["k7"].insert(want["k7"].begin() + 1, {user_key(5), "5"});
  EXPECT_EQ(entries_of(store, "k7"), want["k7"]);
  store.set_ordered(false);
  store.put(*store.find("k7"), user_key(6), "6");
  want["k7"].insert(want["k7"].begin() + 2, {user_key(6), "6"});
  for (const auto& [composite, entries] : want) {
    EXPECT_EQ(sorted(entries_of(store, composite)), entries) << composite;
    for (const auto& [k, v] : entries) EXPECT_EQ(CompactMapStore::value(store.get(*store.find(composite), k)), v);
  }
  // A key whose entries all go drops out.
  for (const auto& [k, v] : want["k7"]) remove_entry(store, "k7", k);
  EXPECT_EQ(store.find("k7"), nullptr);
}

TEST(CompactMapStore, MemoryBackendRefusesChangesInsideItsOwnIteration) {
  BackendMaker maker;
  maker.kind = "memory";
  auto b = maker.make({0, kDefaultMaxParallelism - 1});
  auto m = b->register_state("rows", StateKind::kMap);
  b->set_current_key(encode_key<std::int64_t>(1));
  b->map_put(m, "a", "1");
  b->map_put(m, "b", "2");
  try {
    b->map_for_each(m, [&](std::string_view k, std::string_view) {
      b->map_remove(m, k);
      return true;
    });
    FAIL() << "expected an error";
  } catch (const ClinkError& e) {
    EXPECT_EQ(std::string(e.what()),
              "keyed state: map state 'rows' changed inside its own map_for_each (collect the changes and apply them "
              "after the scan)");
  }
  // The scan is over: changes are accepted again.
  b->map_remove(m, "a");
  std::string out;
  EXPECT_FALSE(b->map_get(m, "a", out));
  EXPECT_TRUE(b->map_get(m, "b", out));
}

// What one join row costs in the memory backend beyond its bytes: q7's shape (a BIGINT
// key, ~2 rows a key, 108-byte row encodings, 8-byte count/matches values). The old
// layout (std::map of std::string pairs in a hash map of strings) cost 177 B a row on
// top of the bytes for this shape; this one costs ~39 B.
TEST(CompactMapStore, AJoinRowCostsLittleMoreThanItsBytes) {
  BackendMaker maker;
  maker.kind = "memory";
  constexpr int kRows = 200000;
  const std::size_t before = heap_in_use();
  std::size_t payload = 0;
  {
    auto b = maker.make({0, kDefaultMaxParallelism - 1});
    auto m = b->register_state("join-left", StateKind::kMap);
    std::string row;
    const std::string value(8, '\1');
    for (int i = 0; i < kRows; ++i) {
      b->set_current_key(encode_key<std::int64_t>(i / 2));
      row.assign(108, 'x');
      std::memcpy(row.data(), &i, sizeof i);
      b->map_put(m, row, value);
      payload += row.size() + value.size();
    }
    const std::size_t after = heap_in_use();
    const double overhead = (static_cast<double>(after - before) - static_cast<double>(payload)) / kRows;
    RecordProperty("overhead_bytes_per_row", std::to_string(overhead));
    std::printf("join row: %zu B payload, %.1f B overhead a row\n", payload / kRows, overhead);
    EXPECT_LT(overhead, 64.0);
  }
  EXPECT_LT(heap_in_use(), before + 1024 * 1024);  // all released with the backend
}

// A B-tree takes its slots' prefixes after the bytes all its keys share: keys like
// COUNT(DISTINCT bigint)'s (a marker, a sign-flipped BIGINT: long runs of equal leading
// bytes) start sharing 15, and each key that shares fewer narrows them (the prefixes are
// recomputed); order and lookups agree with a std::map throughout, and lookups of keys
// that do not start with the shared bytes (shorter ones too) find nothing.
TEST(CompactMapStore, KeysSharingFewerLeadingBytesNarrowATreesSharedBytes) {
  CompactMapStore store;
  std::map<std::string, std::string> model;
  auto bigint_key = [](std::uint64_t v) {
    std::string k("\x01\x80", 2);
    for (int i = 7; i >= 0; --i) k.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    k.append(8, '\0');  // longer than the 15 shared bytes a tree keeps at most
    return k;
  };
  auto check = [&](const std::string& when) {
    EXPECT_EQ(entries_of(store, "k"), Entries(model.begin(), model.end())) << when;
    for (const auto& [key, value] : model) {
      const char* blob = store.get(*store.find("k"), key);
      ASSERT_NE(blob, nullptr) << when;
      EXPECT_EQ(CompactMapStore::value(blob), value) << when;
    }
  };
  auto put = [&](const std::string& k) {
    const std::string v = std::to_string(model.size());
    store.put(store.find_or_create("k"), k, v);
    model[k] = v;
    check("after putting a key of " + std::to_string(k.size()) + " bytes");
  };
  for (std::uint64_t v : {1000u, 1001u, 1002u, 1003u}) put(bigint_key(v));  // a tree sharing 15 bytes
  auto& e = *store.find("k");
  EXPECT_EQ(store.get(e, bigint_key(1000).substr(0, 9)), nullptr);  // shorter than the shared bytes
  EXPECT_EQ(store.get(e, std::string("\x01\x81", 2) + bigint_key(1000).substr(2)), nullptr);
  EXPECT_EQ(store.get(e, bigint_key(1004)), nullptr);
  for (std::uint64_t v : {999u, 1u << 8, 1u << 16, 65535u, 1u << 24, 0u, ~0u}) put(bigint_key(v));
  for (std::uint64_t v = 2000; v < 3000; v += 7) put(bigint_key(v));
  put(std::string("\x01", 1));  // a prefix of every other key: sorts first
  put("");
  put(std::string("\x00zz", 3));
  put(std::string("\x02", 1));
  remove_entry(store, "k", bigint_key(1u << 16));
  model.erase(bigint_key(1u << 16));
  check("after a removal");
}

// A large entry set against a std::map model: keys of 0 to 40 bytes sharing long prefixes,
// zero bytes and 0xff, values changing length (a new blob) or not (in place), removals,
// and the compactions these trigger; the order, every lookup and the sizes must agree
// throughout.
TEST(CompactMapStore, LargeSetsKeepUserKeyOrderAndLookupsThroughCompaction) {
  CompactMapStore store;
  std::map<std::string, std::string> model;
  std::mt19937_64 rng(7);
  auto random_key = [&] {
    static const std::string stems[] = {"", std::string(15, 'p'), std::string(14, 'p'), std::string("a\0", 2),
                                        std::string(20, '\xff'), std::string(16, '\0')};
    std::string k = stems[rng() % 6];
    const std::size_t extra = rng() % 12;
    for (std::size_t i = 0; i < extra; ++i) k.push_back(static_cast<char>("\0\1az\xff"[rng() % 5]));
    return k;
  };
  for (int step = 0; step < 60000; ++step) {
    const std::string k = random_key();
    const int op = static_cast<int>(rng() % 10);
    if (op < 7) {
      const std::string v(1 + rng() % (op < 5 ? 2 : 9), static_cast<char>('0' + rng() % 10));
      store.put(store.find_or_create("k"), k, v);
      model[k] = v;
    } else if (op < 9) {
      if (auto* e = store.find("k")) {
        auto at = store.locate(*e, k);
        EXPECT_EQ(at.blob != nullptr, model.count(k) == 1) << step;
        if (at.blob) store.remove("k", *e, at);
      }
      model.erase(k);
    } else {
      auto* e = store.find("k");
      const char* blob = e ? store.get(*e, k) : nullptr;
      ASSERT_EQ(blob != nullptr, model.count(k) == 1) << step;
      if (blob) {
        EXPECT_EQ(CompactMapStore::value(blob), model[k]) << step;
      }
    }
    if (step % 10000 == 9999) {
      const Entries want(model.begin(), model.end());
      EXPECT_EQ(entries_of(store, "k"), want) << step;
      for (const auto& [key, value] : model) {
        const char* blob = store.get(*store.find("k"), key);
        ASSERT_NE(blob, nullptr) << step;
        EXPECT_EQ(CompactMapStore::value(blob), value);
      }
    }
  }
  ASSERT_GT(model.size(), 200u);
  EXPECT_EQ(store.find("k")->size(), model.size());
}

}  // namespace
}  // namespace clink::test
