// The shared backend suite: every test runs on the memory and the RocksDB backend.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/state/keyed_state.hpp"
#include "clink/state/state_codec.hpp"
#include "clink/state/unordered_map_state.hpp"
#include "state_test_util.hpp"

namespace clink::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

class BackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  BackendTest() { maker.kind = GetParam(); }
  std::unique_ptr<KeyedStateBackend> make_full() { return maker.make({0, kDefaultMaxParallelism - 1}); }
  BackendMaker maker;
};


TEST_P(BackendTest, ValuePutGetRemove) {
  auto b = make_full();
  auto id = b->register_state("v", StateKind::kValue);
  b->set_current_key(key(1));
  EXPECT_EQ(get(*b, id), "<absent>");
  b->put(id, "one");
  b->set_current_key(key(2));
  EXPECT_EQ(get(*b, id), "<absent>");
  b->put(id, "two");
  b->put(id, "TWO");
  b->set_current_key(key(1));
  EXPECT_EQ(get(*b, id), "one");
  b->remove(id);
  EXPECT_EQ(get(*b, id), "<absent>");
  b->set_current_key(key(2));
  EXPECT_EQ(get(*b, id), "TWO");
  b->remove(id);
  b->remove(id);  // removing an absent entry is fine
  EXPECT_EQ(get(*b, id), "<absent>");
}

TEST_P(BackendTest, NamespacesAndStatesAreSeparate) {
  auto b = make_full();
  auto a = b->register_state("a", StateKind::kValue);
  auto c = b->register_state("c", StateKind::kValue);
  b->set_current_key(key(7));
  b->set_current_namespace("w1");
  b->put(a, "a-w1");
  b->set_current_namespace("w2");
  b->put(a, "a-w2");
  b->put(c, "c-w2");
  b->set_current_namespace("");
  EXPECT_EQ(get(*b, a), "<absent>");
  b->set_current_namespace("w1");
  EXPECT_EQ(get(*b, a), "a-w1");
  EXPECT_EQ(get(*b, c), "<absent>");
  b->set_current_namespace("w2");
  EXPECT_EQ(get(*b, a), "a-w2");
  EXPECT_EQ(get(*b, c), "c-w2");
}

TEST_P(BackendTest, KeysThatArePrefixesOfEachOtherDoNotMix) {
  auto b = make_full();
  auto v = b->register_state("v", StateKind::kValue);
  auto m = b->register_state("m", StateKind::kMap);
  // Key "a" + namespace "b" vs key "ab" + namespace "": same concatenation.
  b->set_current_key("a", 5);
  b->set_current_namespace("b");
  b->put(v, "1");
  b->map_put(m, "x", "1");
  b->set_current_key("ab", 5);
  b->set_current_namespace("");
  EXPECT_EQ(get(*b, v), "<absent>");
  EXPECT_TRUE(map_entries(*b, m).empty());
  b->map_put(m, "y", "2");
  b->set_current_key("a", 5);
  b->set_current_namespace("b");
  EXPECT_THAT(map_entries(*b, m), ElementsAre(Pair("x", "1")));
}

TEST_P(BackendTest, AppendConcatenates) {
  auto b = make_full();
  auto id = b->register_state("l", StateKind::kList);
  b->set_current_key(key(3));
  b->append(id, "ab");
  b->append(id, "cd");
  EXPECT_EQ(get(*b, id), "abcd");
  b->put(id, "X");
  b->append(id, "Y");
  EXPECT_EQ(get(*b, id), "XY");
  b->remove(id);
  b->append(id, "Z");
  EXPECT_EQ(get(*b, id), "Z");
}

// map_update: one read-modify-write per call; `false` removes (or leaves absent), and
// removing a key's last entry leaves nothing behind for that key.
TEST_P(BackendTest, MapUpdateReadsModifiesAndRemoves) {
  auto b = make_full();
  auto m = b->register_state("m", StateKind::kMap);
  auto bump = [&](std::string_view uk) {
    b->map_update(m, uk, [](bool present, std::string_view current, std::string& next) {
      next = std::to_string(present ? std::stoi(std::string(current)) + 1 : 1);
      return true;
    });
  };
  auto drop_one = [&](std::string_view uk) {
    b->map_update(m, uk, [](bool present, std::string_view current, std::string& next) {
      if (!present || current == "1") return false;
      next = std::to_string(std::stoi(std::string(current)) - 1);
      return true;
    });
  };
  b->set_current_key(key(1));
  bump("b");
  bump("a");
  bump("b");
  bump("b");
  bump("c");
  EXPECT_THAT(map_entries(*b, m), ElementsAre(Pair("a", "1"), Pair("b", "3"), Pair("c", "1")));
  drop_one("b");
  drop_one("a");
  drop_one("zzz");  // absent: stays absent
  EXPECT_THAT(map_entries(*b, m), ElementsAre(Pair("b", "2"), Pair("c", "1")));
  b->map_update(m, "c", [](bool present, std::string_view current, std::string& next) {
    EXPECT_TRUE(present);
    EXPECT_EQ(current, "1");
    next = "a longer value than before";  // another length
    return true;
  });
  EXPECT_THAT(map_entries(*b, m), ElementsAre(Pair("b", "2"), Pair("c", "a longer value than before")));
  drop_one("b");
  drop_one("b");
  b->map_update(m, "c", [](bool, std::string_view, std::string&) { return false; });
  EXPECT_TRUE(map_entries(*b, m).empty());
  EXPECT_THAT(dump(*b, {{"m", m}}), ::testing::IsEmpty());
}

TEST_P(BackendTest, MapEntriesIterateInUserKeyOrder) {
  auto b = make_full();
  auto m = b->register_state("m", StateKind::kMap);
  b->set_current_key(key(1));
  for (std::int64_t uk : {5, -3, 100, 0, -100, 42}) b->map_put(m, encode_key(uk), std::to_string(uk));
  b->set_current_key(key(2));
  b->map_put(m, encode_key<std::int64_t>(7), "other key");
  b->set_current_key(key(1));
  std::vector<std::int64_t> order;
  b->map_for_each(m, [&](std::string_view k, std::string_view v) {
    order.push_back(decode_key<std::int64_t>(k));
    EXPECT_EQ(v, std::to_string(order.back()));
    return true;
  });
  EXPECT_EQ(order, (std::vector<std::int64_t>{-100, -3, 0, 5, 42, 100}));

  std::string out;
  EXPECT_TRUE(b->map_get(m, encode_key<std::int64_t>(42), out));
  EXPECT_EQ(out, "42");
  EXPECT_FALSE(b->map_get(m, encode_key<std::int64_t>(7), out));
  b->map_put(m, encode_key<std::int64_t>(42), "forty-two");
  b->map_remove(m, encode_key<std::int64_t>(-3));
  b->map_remove(m, encode_key<std::int64_t>(12345));  // absent
  int seen = 0;
  b->map_for_each(m, [&](std::string_view, std::string_view) { return ++seen < 2; });  // stops early
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(map_entries(*b, m).size(), 5u);
  EXPECT_TRUE(b->map_get(m, encode_key<std::int64_t>(42), out));
  EXPECT_EQ(out, "forty-two");
  b->map_clear(m);
  EXPECT_TRUE(map_entries(*b, m).empty());
  b->set_current_key(key(2));
  EXPECT_THAT(map_entries(*b, m), ElementsAre(Pair(encode_key<std::int64_t>(7), "other key")));
}

TEST_P(BackendTest, RegisteringIsIdempotentAndKindsAreChecked) {
  auto b = make_full();
  auto a = b->register_state("a", StateKind::kValue);
  auto l = b->register_state("l", StateKind::kList);
  EXPECT_EQ(b->register_state("a", StateKind::kValue).index, a.index);
  EXPECT_NE(a.index, l.index);
  try {
    b->register_state("a", StateKind::kMap);
    FAIL();
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'a' is a value state, not a map state"));
  }
}

TEST_P(BackendTest, KeysOutsideTheKeyGroupRangeAreRejected) {
  auto b = maker.make({0, 9});
  auto id = b->register_state("v", StateKind::kValue);
  b->set_current_key("k", 10);
  EXPECT_THROW(b->put(id, "x"), ClinkError);
  b->set_current_key("k", 9);
  b->put(id, "x");
  EXPECT_EQ(get(*b, id), "x");
}

TEST_P(BackendTest, ForEachEntryVisitsExactlyTheKeysOfOneKeyGroup) {
  auto b = make_full();
  auto v = b->register_state("v", StateKind::kValue);
  auto m = b->register_state("m", StateKind::kMap);
  std::map<int, std::set<std::int64_t>> expected;
  for (std::int64_t k = 0; k < 1000; ++k) {
    b->set_current_key(key(k));
    b->set_current_namespace(k % 2 ? "odd" : "");
    b->put(v, std::to_string(k));
    b->map_put(m, "u1", "x");
    b->map_put(m, "u2", "y");
    expected[b->current_key_group()].insert(k);
  }
  std::size_t total = 0;
  for (int kg = 0; kg < kDefaultMaxParallelism; ++kg) {
    std::set<std::int64_t> got;
    b->for_each_entry(v, kg, [&](std::string_view k, std::string_view ns, std::string_view value) {
      std::int64_t key = decode_key<std::int64_t>(k);
      EXPECT_EQ(value, std::to_string(key));
      EXPECT_EQ(ns, key % 2 ? "odd" : "");
      EXPECT_TRUE(got.insert(key).second);
    });
    EXPECT_EQ(got, expected[kg]) << "key group " << kg;
    total += got.size();
    std::size_t n_map = 0;
    b->for_each_entry(m, kg, [&](std::string_view k, std::string_view, std::string_view value) {
      EXPECT_TRUE(expected[kg].count(decode_key<std::int64_t>(k)));
      std::string ukv;  // lp(user key) lp(value)
      ukv.push_back(2);
      ukv += n_map % 2 ? "u2" : "u1";
      ukv.push_back(1);
      ukv += n_map % 2 ? "y" : "x";
      EXPECT_EQ(value, ukv);
      ++n_map;
    });
    EXPECT_EQ(n_map, 2 * expected[kg].size());
  }
  EXPECT_EQ(total, 1000u);
}

// Fills every kind of state for the backend's keys of [0, n); returns the state ids by name.
std::vector<std::pair<std::string, StateId>> fill(KeyedStateBackend& b, std::int64_t n, std::string_view tag = "") {
  std::vector<std::pair<std::string, StateId>> ids{{"value", b.register_state("value", StateKind::kValue)},
                                                   {"list", b.register_state("list", StateKind::kList)},
                                                   {"map", b.register_state("map", StateKind::kMap)},
                                                   {"agg", b.register_state("agg", StateKind::kAggregating)}};
  for (std::int64_t k = 0; k < n; ++k) {
    b.set_current_key(key(k));
    if (!b.key_groups().contains(b.current_key_group())) continue;  // another subtask's key
    b.set_current_namespace("");
    b.put(ids[0].second, std::string(tag) + std::to_string(k));
    b.append(ids[1].second, "a");
    b.append(ids[1].second, std::to_string(k));
    b.map_put(ids[2].second, "m" + std::to_string(k % 3), std::to_string(k));
    b.map_put(ids[2].second, "z", "");
    b.set_current_namespace("window-" + std::to_string(k % 4));
    b.put(ids[3].second, encode_state<std::int64_t>(k * 10));
  }
  return ids;
}

std::vector<std::pair<std::string, StateId>> ids_of(KeyedStateBackend& b) {
  return {{"value", b.register_state("value", StateKind::kValue)},
          {"list", b.register_state("list", StateKind::kList)},
          {"map", b.register_state("map", StateKind::kMap)},
          {"agg", b.register_state("agg", StateKind::kAggregating)}};
}

TEST_P(BackendTest, SnapshotThenRestoreGivesExactlyTheSameState) {
  TempDir ckpt;
  auto b = make_full();
  auto ids = fill(*b, 500);
  Dump before = dump(*b, ids);
  ASSERT_EQ(before.size(), 2500u);  // per key: value, list, 2 map entries, agg
  auto handle = b->snapshot(1, ckpt.path / "chk-1");
  EXPECT_EQ(handle.key_groups, (KeyGroupRange{0, 127}));
  b.reset();

  auto r = make_full();
  r->restore({handle});
  auto rids = ids_of(*r);
  EXPECT_EQ(dump(*r, rids), before);
  r->set_current_key(key(17));
  EXPECT_EQ(get(*r, rids[0].second), "17");
  EXPECT_EQ(get(*r, rids[1].second), "a17");
  EXPECT_THAT(map_entries(*r, rids[2].second), ElementsAre(Pair("m2", "17"), Pair("z", "")));
  r->set_current_namespace("window-1");
  EXPECT_EQ(decode_state<std::int64_t>(get(*r, rids[3].second)), 170);
  // The restored backend keeps working and snapshots again.
  r->set_current_namespace("");
  r->append(rids[1].second, "b");
  EXPECT_EQ(get(*r, rids[1].second), "a17b");
  auto h2 = r->snapshot(2, ckpt.path / "chk-2");
  auto r2 = make_full();
  r2->restore({h2});
  r2->set_current_key(key(17));
  EXPECT_EQ(get(*r2, r2->register_state("list", StateKind::kList)), "a17b");
}

TEST_P(BackendTest, SnapshotIsNotAffectedByLaterWrites) {
  TempDir ckpt;
  auto b = make_full();
  auto ids = fill(*b, 200);
  Dump at_snapshot = dump(*b, ids);
  auto handle = b->snapshot(1, ckpt.path / "chk-1");
  for (std::int64_t k = 0; k < 200; k += 2) {
    b->set_current_key(key(k));
    b->put(ids[0].second, "changed");
    b->remove(ids[1].second);
    b->map_clear(ids[2].second);
  }
  b->set_current_key(key(1000));
  b->put(ids[0].second, "new key");
  auto r = make_full();
  r->restore({handle});
  EXPECT_EQ(dump(*r, ids_of(*r)), at_snapshot);
}

// 1 -> 2 -> 4 -> 2 subtasks: every key restored exactly once, by the subtask owning it.
TEST_P(BackendTest, RestoreAtOtherParallelismsRedistributesKeyGroups) {
  TempDir ckpt;
  const std::int64_t n = 1000;
  auto one = maker.make_subtask(1, 0);
  Dump all = dump(*one, fill(*one, n));
  std::vector<KeyedStateHandle> handles{one->snapshot(1, ckpt.path / "chk-1")};
  one.reset();

  std::int64_t checkpoint = 1;
  for (int parallelism : {2, 4, 2}) {
    ++checkpoint;
    std::vector<KeyedStateHandle> next;
    Dump merged;
    for (int s = 0; s < parallelism; ++s) {
      auto b = maker.make_subtask(parallelism, s);
      b->restore(handles);  // all handles: each backend filters its key groups
      Dump d = dump(*b, ids_of(*b));
      for (const auto& e : d) {
        int kg = std::get<1>(e);
        EXPECT_TRUE(b->key_groups().contains(kg));
        EXPECT_EQ(kg, key_group_for_hash(key_hash(std::get<2>(e)), kDefaultMaxParallelism));
      }
      EXPECT_GT(d.size(), 0u);
      merged.insert(merged.end(), d.begin(), d.end());
      next.push_back(b->snapshot(checkpoint, ckpt.path / ("chk-" + std::to_string(checkpoint))));
    }
    std::sort(merged.begin(), merged.end());
    EXPECT_EQ(merged, all) << "at parallelism " << parallelism;  // nothing lost, nothing twice
    handles = std::move(next);
  }
}

TEST_P(BackendTest, RestoreIgnoresHandlesOfOtherKeyGroups) {
  TempDir ckpt;
  auto left = maker.make_subtask(2, 0);
  EXPECT_GT(dump(*left, fill(*left, 300)).size(), 300u);
  auto h = left->snapshot(1, ckpt.path / "chk-1");
  auto right = maker.make_subtask(2, 1);
  right->restore({h});
  EXPECT_TRUE(dump(*right, ids_of(*right)).empty());
}

TEST_P(BackendTest, RestoringTtlStateWithoutTtlIsAnError) {
  TempDir ckpt;
  auto b = make_full();
  auto id = b->register_state("t", StateKind::kValue, 1000);
  b->set_current_key(key(1));
  std::string v;
  put_ttl_timestamp(0, v);
  v += "x";
  b->put(id, v);
  auto h = b->snapshot(1, ckpt.path / "chk-1");
  auto r = make_full();
  r->restore({h});
  EXPECT_THROW(r->register_state("t", StateKind::kValue, 0), ClinkError);
  EXPECT_NO_THROW(r->register_state("t", StateKind::kValue, 5000));  // another TTL is fine
}

TEST_P(BackendTest, SnapshotsDropExpiredTtlEntries) {
  TempDir ckpt;
  auto b = make_full();
  auto v = b->register_state("v", StateKind::kValue, 100);
  auto l = b->register_state("l", StateKind::kList, 100);
  auto m = b->register_state("m", StateKind::kMap, 100);
  auto stamped = [](std::int64_t ts, std::string_view s) {
    std::string out;
    put_ttl_timestamp(ts, out);
    out.append(s);
    return out;
  };
  auto element = [](std::int64_t ts, std::string_view s) {
    std::string out;
    put_ttl_timestamp(ts, out);
    put_varint(s.size(), out);
    out.append(s);
    return out;
  };
  b->set_current_key(key(1));
  b->put(v, stamped(0, "old"));
  b->append(l, element(0, "e-old"));
  b->append(l, element(80, "e-new"));
  b->map_put(m, "a", stamped(0, "old"));
  b->map_put(m, "b", stamped(90, "new"));
  b->set_current_key(key(2));
  b->put(v, stamped(50, "new"));
  b->append(l, element(10, "gone"));
  maker.clock.now = 120;  // expired: timestamps <= 20
  // Savepoints are full snapshots on every backend; memory checkpoints are too.
  auto h = b->savepoint(1, ckpt.path / "sp-1");
  auto r = make_full();
  r->restore({h});
  auto rv = r->register_state("v", StateKind::kValue, 100);
  auto rl = r->register_state("l", StateKind::kList, 100);
  auto rm = r->register_state("m", StateKind::kMap, 100);
  r->set_current_key(key(1));
  EXPECT_EQ(get(*r, rv), "<absent>");
  EXPECT_EQ(get(*r, rl), element(80, "e-new"));
  EXPECT_THAT(map_entries(*r, rm), ElementsAre(Pair("b", stamped(90, "new"))));
  r->set_current_key(key(2));
  EXPECT_EQ(get(*r, rv), stamped(50, "new"));
  EXPECT_EQ(get(*r, rl), "<absent>");
}

TEST_P(BackendTest, SavepointsRestoreIntoEitherBackend) {
  TempDir ckpt;
  auto b = make_full();
  Dump all = dump(*b, fill(*b, 300));
  auto sp = b->savepoint(5, ckpt.path / "sp-5");
  EXPECT_EQ(sp.description->at("format"), "clink-keyed-full-v1");
  auto cp = b->snapshot(6, ckpt.path / "chk-6");
  for (std::string kind : {"memory", "rocksdb"}) {
    for (const auto* h : {&sp, &cp}) {
      BackendMaker other;
      other.kind = kind;
      auto half = other.make_subtask(2, 1);
      half->restore({*h});
      Dump got = dump(*half, ids_of(*half));
      Dump expected;
      for (const auto& e : all)
        if (half->key_groups().contains(std::get<1>(e))) expected.push_back(e);
      EXPECT_EQ(got, expected) << GetParam() << " -> " << kind;
    }
  }
}

// An unordered map state (the memory backend hashes it, RocksDB keeps it ordered):
// put/get/update/remove/clear over keys with many entries, then snapshots restored into
// the ordered flavour and back, registered before or after the restore.
TEST_P(BackendTest, UnorderedMapStateRestoresIntoEitherFlavour) {
  using Map = std::map<std::string, std::string>;
  auto sorted = [](std::vector<std::pair<std::string, std::string>> e) {
    std::sort(e.begin(), e.end());
    return e;
  };
  auto entries_of = [](const Map& m) { return std::vector<std::pair<std::string, std::string>>(m.begin(), m.end()); };
  TempDir ckpt;
  auto b = make_full();
  auto u = register_unordered_map_state(*b, "u");
  EXPECT_EQ(register_unordered_map_state(*b, "u").index, u.index);
  std::map<std::int64_t, Map> want;  // per key
  for (std::int64_t k = 1; k <= 4; ++k) {
    b->set_current_key(key(k));
    for (std::int64_t i = 0; i < 2000; ++i) {
      b->map_put(u, key(i * 7919 % 2000), std::to_string(i * k));
      want[k][key(i * 7919 % 2000)] = std::to_string(i * k);
    }
  }
  b->set_current_key(key(2));
  for (std::int64_t i = 0; i < 2000; i += 3) {
    b->map_remove(u, key(i));
    want[2].erase(key(i));
  }
  b->map_put(u, key(1), "a longer value than before");
  want[2][key(1)] = "a longer value than before";
  b->map_update(u, key(4), [](bool present, std::string_view current, std::string& next) {
    next = std::string(current) + (present ? "+" : "?");
    return true;
  });
  want[2][key(4)] += "+";
  b->map_update(u, key(5), [](bool, std::string_view, std::string&) { return false; });
  want[2].erase(key(5));
  EXPECT_EQ(map_get(*b, u, key(3)), "<absent>");
  EXPECT_EQ(map_get(*b, u, key(4)), want[2][key(4)]);
  b->set_current_key(key(3));
  b->map_clear(u);
  want.erase(3);
  EXPECT_EQ(map_get(*b, u, key(7)), "<absent>");
  EXPECT_TRUE(map_entries(*b, u).empty());
  auto check = [&](KeyedStateBackend& r, StateId id, bool ordered) {
    for (std::int64_t k = 1; k <= 4; ++k) {
      r.set_current_key(key(k));
      const Map& m = want[k];
      auto got = map_entries(r, id);
      if (!ordered) got = sorted(got);
      EXPECT_EQ(got, entries_of(m)) << k;
      for (std::int64_t i = 0; i < 2000; i += 37) {
        auto it = m.find(key(i));
        EXPECT_EQ(map_get(r, id, key(i)), it == m.end() ? "<absent>" : it->second) << k << " " << i;
      }
    }
  };
  check(*b, u, false);
  auto h1 = b->snapshot(1, ckpt.path / "chk-1");
  Dump all = dump(*b, {{"u", u}});
  ASSERT_EQ(all.size(), want[1].size() + want[2].size() + want[4].size());

  // Into the ordered flavour: every key's entries in user-key order.
  auto o = make_full();
  o->restore({h1});
  auto ou = o->register_state("u", StateKind::kMap);
  check(*o, ou, true);
  EXPECT_EQ(dump(*o, {{"u", ou}}), all);
  o->set_current_key(key(1));
  o->map_put(ou, key(2000), "new");
  want[1][key(2000)] = "new";
  auto h2 = o->snapshot(2, ckpt.path / "chk-2");

  // And back: registered after the restore (the restored state turns unordered) ...
  auto a = make_full();
  a->restore({h2});
  auto au = register_unordered_map_state(*a, "u");
  check(*a, au, false);
  // ... or before it.
  auto c = make_full();
  auto cu = register_unordered_map_state(*c, "u");
  c->restore({h2});
  check(*c, cu, false);
  EXPECT_EQ(dump(*c, {{"u", cu}}), dump(*a, {{"u", au}}));
  // Registered as ordered again: in order.
  auto co = c->register_state("u", StateKind::kMap);
  EXPECT_EQ(co.index, cu.index);
  check(*c, co, true);
}

TEST_P(BackendTest, UnknownBackendKindIsAnError) {
  BackendMaker m;
  m.kind = "tape";
  try {
    m.make({0, 127});
    FAIL();
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown state backend 'tape'"));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, BackendTest, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace clink::test
