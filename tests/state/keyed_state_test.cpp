// The typed states over both backends: exact values, namespaces, TTL.
#include "clink/state/keyed_state.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "state_test_util.hpp"

namespace clink::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

class KeyedStateTest : public ::testing::TestWithParam<std::string> {
 protected:
  KeyedStateTest() {
    maker.kind = GetParam();
    backend = maker.make({0, kDefaultMaxParallelism - 1});
  }
  void key(std::int64_t k) { backend->set_current_key(encode_key(k)); }
  void now(std::int64_t t) { maker.clock.now = t; }
  std::size_t stored_entries(const std::string& name, StateKind kind, std::int64_t ttl = 0) {
    auto id = backend->register_state(name, kind, ttl);
    std::size_t n = 0;
    for (int kg = 0; kg < kDefaultMaxParallelism; ++kg)
      backend->for_each_entry(id, kg, [&](std::string_view, std::string_view, std::string_view) { ++n; });
    return n;
  }
  BackendMaker maker;
  std::unique_ptr<KeyedStateBackend> backend;
};

TEST_P(KeyedStateTest, ValueStatePerKey) {
  KeyedStateStore store(*backend);
  auto& count = store.get_state(ValueStateDescriptor<std::int64_t>{"count"});
  auto& name = store.get_state(ValueStateDescriptor<std::string>{"name"});
  key(1);
  EXPECT_EQ(count.value(), std::nullopt);
  count.update(count.value().value_or(0) + 1);
  count.update(count.value().value_or(0) + 1);
  name.update("one");
  key(2);
  EXPECT_EQ(count.value(), std::nullopt);
  count.update(-7);
  key(1);
  EXPECT_EQ(count.value(), 2);
  EXPECT_EQ(name.value(), "one");
  count.clear();
  EXPECT_EQ(count.value(), std::nullopt);
  key(2);
  EXPECT_EQ(count.value(), -7);
}

TEST_P(KeyedStateTest, StoreReturnsTheSameObjectAndChecksTypes) {
  KeyedStateStore store(*backend);
  auto& a = store.get_state(ValueStateDescriptor<std::int64_t>{"a"});
  auto& again = KeyedStateStore(*backend).get_state(ValueStateDescriptor<std::int64_t>{"a"});
  EXPECT_EQ(&a, &again);
  try {
    store.get_state(ValueStateDescriptor<std::string>{"a"});
    FAIL();
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'a' is already registered with another type"));
  }
  EXPECT_THROW(store.get_list_state(ListStateDescriptor<std::int64_t>{"a"}), ClinkError);
}

TEST_P(KeyedStateTest, ListStateAppendsInOrder) {
  KeyedStateStore store(*backend);
  auto& list = store.get_list_state(ListStateDescriptor<std::string>{"list"});
  key(1);
  EXPECT_TRUE(list.get().empty());
  list.add("a");
  list.add("");
  list.add_all({"b", "c"});
  EXPECT_EQ(list.get(), (std::vector<std::string>{"a", "", "b", "c"}));
  key(2);
  list.add("x");
  key(1);
  list.update({"z", "y"});
  EXPECT_EQ(list.get(), (std::vector<std::string>{"z", "y"}));
  list.update({});
  EXPECT_TRUE(list.get().empty());
  EXPECT_EQ(stored_entries("list", StateKind::kList), 1u);  // only key 2's list
  key(2);
  EXPECT_EQ(list.get(), (std::vector<std::string>{"x"}));
  list.clear();
  EXPECT_TRUE(list.get().empty());
}

TEST_P(KeyedStateTest, MapStateInKeyOrder) {
  KeyedStateStore store(*backend);
  auto& m = store.get_map_state(MapStateDescriptor<std::int64_t, std::string>{"m"});
  key(1);
  EXPECT_TRUE(m.is_empty());
  for (std::int64_t k : {10, -5, 3, 0}) m.put(k, "v" + std::to_string(k));
  EXPECT_FALSE(m.is_empty());
  EXPECT_EQ(m.get(3), "v3");
  EXPECT_EQ(m.get(4), std::nullopt);
  EXPECT_TRUE(m.contains(-5));
  EXPECT_FALSE(m.contains(11));
  EXPECT_THAT(m.entries(), ElementsAre(Pair(-5, "v-5"), Pair(0, "v0"), Pair(3, "v3"), Pair(10, "v10")));
  EXPECT_EQ(m.keys(), (std::vector<std::int64_t>{-5, 0, 3, 10}));
  m.remove(0);
  m.put(3, "three");
  EXPECT_EQ(m.values(), (std::vector<std::string>{"v-5", "three", "v10"}));
  std::vector<std::int64_t> first_two;
  m.for_each([&](const std::int64_t& k, const std::string&) {
    first_two.push_back(k);
    return first_two.size() < 2;
  });
  EXPECT_EQ(first_two, (std::vector<std::int64_t>{-5, 3}));
  key(2);
  EXPECT_TRUE(m.is_empty());
  key(1);
  m.clear();
  EXPECT_TRUE(m.is_empty());
}

TEST_P(KeyedStateTest, MapStateWithStringKeys) {
  KeyedStateStore store(*backend);
  auto& m = store.get_map_state(MapStateDescriptor<std::string, std::int64_t>{"words"});
  key(1);
  for (const char* w : {"pear", "apple", "fig", "a"}) m.put(w, static_cast<std::int64_t>(std::string(w).size()));
  // KeyCodec<std::string> is length-prefixed: shorter keys first, then bytewise.
  EXPECT_EQ(m.keys(), (std::vector<std::string>{"a", "fig", "pear", "apple"}));
  EXPECT_EQ(m.get("apple"), 5);
}

TEST_P(KeyedStateTest, ReducingAndAggregatingState) {
  KeyedStateStore store(*backend);
  auto& sum = store.get_reducing_state(
      ReducingStateDescriptor<std::int64_t>{"sum", [](const std::int64_t& a, const std::int64_t& b) { return a + b; }});
  using Acc = std::pair<std::int64_t, std::int64_t>;  // sum, count
  auto& avg = store.get_aggregating_state(AggregatingStateDescriptor<std::int64_t, Acc, double>{
      "avg", [] { return Acc{0, 0}; }, [](const std::int64_t& v, Acc a) { return Acc{a.first + v, a.second + 1}; },
      [](const Acc& a) { return static_cast<double>(a.first) / static_cast<double>(a.second); }});
  key(1);
  EXPECT_EQ(sum.get(), std::nullopt);
  EXPECT_EQ(avg.get(), std::nullopt);
  for (std::int64_t v : {1, 2, 3, 10}) {
    sum.add(v);
    avg.add(v);
  }
  EXPECT_EQ(sum.get(), 16);
  EXPECT_EQ(avg.get(), 4.0);
  key(2);
  sum.add(5);
  EXPECT_EQ(sum.get(), 5);
  key(1);
  sum.clear();
  avg.clear();
  EXPECT_EQ(sum.get(), std::nullopt);
  EXPECT_EQ(avg.get(), std::nullopt);
}

TEST_P(KeyedStateTest, StatesFollowTheBackendsNamespace) {
  KeyedStateStore store(*backend);
  auto& count = store.get_state(ValueStateDescriptor<std::int64_t>{"count"});
  key(1);
  backend->set_current_namespace("w1");
  count.update(1);
  backend->set_current_namespace("w2");
  count.update(2);
  backend->set_current_namespace("w1");
  EXPECT_EQ(count.value(), 1);
  backend->set_current_namespace("");
  EXPECT_EQ(count.value(), std::nullopt);
}

TEST_P(KeyedStateTest, TypedStateSurvivesSnapshotAndRestore) {
  TempDir ckpt;
  {
    KeyedStateStore store(*backend);
    auto& count = store.get_state(ValueStateDescriptor<std::int64_t>{"count"});
    auto& m = store.get_map_state(MapStateDescriptor<std::int64_t, std::string>{"m"});
    for (std::int64_t k = 0; k < 50; ++k) {
      key(k);
      count.update(k * k);
      m.put(-k, "x");
      m.put(k, "y");
    }
  }
  auto h = backend->snapshot(1, ckpt.path / "chk-1");
  backend = maker.make({0, 127});
  backend->restore({h});
  KeyedStateStore store(*backend);
  auto& count = store.get_state(ValueStateDescriptor<std::int64_t>{"count"});
  auto& m = store.get_map_state(MapStateDescriptor<std::int64_t, std::string>{"m"});
  key(7);
  EXPECT_EQ(count.value(), 49);
  EXPECT_THAT(m.entries(), ElementsAre(Pair(-7, "x"), Pair(7, "y")));
  key(0);
  EXPECT_THAT(m.entries(), ElementsAre(Pair(0, "y")));
}

// ---- TTL ----

TEST_P(KeyedStateTest, TtlValueExpiresAfterLastWrite) {
  KeyedStateStore store(*backend);
  auto& v = store.get_state(ValueStateDescriptor<std::int64_t>{"v", StateTtlConfig{100}});
  key(1);
  now(1000);
  v.update(5);
  now(1050);
  EXPECT_EQ(v.value(), 5);  // reads do not refresh (OnCreateAndWrite)
  now(1099);
  EXPECT_EQ(v.value(), 5);
  now(1100);
  EXPECT_EQ(v.value(), std::nullopt);
  EXPECT_EQ(stored_entries("v", StateKind::kValue, 100), 0u);  // removed when read
  v.update(6);
  now(1150);
  v.update(7);  // a write refreshes
  now(1249);
  EXPECT_EQ(v.value(), 7);
}

TEST_P(KeyedStateTest, TtlOnReadAndWriteRefreshesOnRead) {
  KeyedStateStore store(*backend);
  auto& v = store.get_state(ValueStateDescriptor<std::string>{
      "v", StateTtlConfig{100, TtlUpdateType::kOnReadAndWrite}});
  key(1);
  now(0);
  v.update("x");
  now(90);
  EXPECT_EQ(v.value(), "x");
  now(189);
  EXPECT_EQ(v.value(), "x");
  now(289);
  EXPECT_EQ(v.value(), std::nullopt);
}

TEST_P(KeyedStateTest, TtlReturnExpiredIfNotCleanedUp) {
  KeyedStateStore store(*backend);
  auto& v = store.get_state(ValueStateDescriptor<std::int64_t>{
      "v", StateTtlConfig{100, TtlUpdateType::kOnCreateAndWrite, TtlStateVisibility::kReturnExpiredIfNotCleanedUp}});
  key(1);
  now(0);
  v.update(42);
  now(500);
  EXPECT_EQ(v.value(), 42);            // expired, still stored: returned once
  EXPECT_EQ(v.value(), std::nullopt);  // and cleaned up by that read
}

TEST_P(KeyedStateTest, TtlListExpiresPerElement) {
  KeyedStateStore store(*backend);
  auto& l = store.get_list_state(ListStateDescriptor<std::int64_t>{"l", StateTtlConfig{100}});
  key(1);
  now(0);
  l.add(1);
  now(50);
  l.add_all({2, 3});
  now(99);
  EXPECT_EQ(l.get(), (std::vector<std::int64_t>{1, 2, 3}));
  now(120);
  EXPECT_EQ(l.get(), (std::vector<std::int64_t>{2, 3}));
  l.add(4);
  now(160);
  EXPECT_EQ(l.get(), (std::vector<std::int64_t>{4}));
  now(220);
  EXPECT_TRUE(l.get().empty());
  EXPECT_EQ(stored_entries("l", StateKind::kList, 100), 0u);
}

TEST_P(KeyedStateTest, TtlMapExpiresPerEntry) {
  KeyedStateStore store(*backend);
  auto& m = store.get_map_state(MapStateDescriptor<std::string, std::int64_t>{"m", StateTtlConfig{100}});
  key(1);
  now(0);
  m.put("a", 1);
  now(60);
  m.put("b", 2);
  now(120);
  EXPECT_EQ(m.get("a"), std::nullopt);
  EXPECT_FALSE(m.contains("a"));
  EXPECT_EQ(m.get("b"), 2);
  m.put("c", 3);
  EXPECT_THAT(m.entries(), ElementsAre(Pair("b", 2), Pair("c", 3)));
  now(170);
  EXPECT_THAT(m.entries(), ElementsAre(Pair("c", 3)));
  EXPECT_EQ(stored_entries("m", StateKind::kMap, 100), 1u);  // "b" removed by the scan
  now(300);
  EXPECT_TRUE(m.is_empty());
}

TEST_P(KeyedStateTest, TtlReducingStartsOverAfterExpiry) {
  KeyedStateStore store(*backend);
  auto& sum = store.get_reducing_state(ReducingStateDescriptor<std::int64_t>{
      "sum", [](const std::int64_t& a, const std::int64_t& b) { return a + b; }, StateTtlConfig{100}});
  key(1);
  now(0);
  sum.add(5);
  sum.add(6);
  now(99);
  EXPECT_EQ(sum.get(), 11);
  now(150);
  sum.add(1);  // the expired 11 does not feed the reduction
  EXPECT_EQ(sum.get(), 1);
}

TEST_P(KeyedStateTest, TtlValuesSurviveRestoreWithTheirTimestamps) {
  TempDir ckpt;
  {
    KeyedStateStore store(*backend);
    auto& v = store.get_state(ValueStateDescriptor<std::int64_t>{"v", StateTtlConfig{100}});
    now(0);
    key(1);
    v.update(1);
    now(60);
    key(2);
    v.update(2);
  }
  auto h = backend->snapshot(1, ckpt.path / "chk-1");
  backend = maker.make({0, 127});
  backend->restore({h});
  KeyedStateStore store(*backend);
  auto& v = store.get_state(ValueStateDescriptor<std::int64_t>{"v", StateTtlConfig{100}});
  now(130);
  key(1);
  EXPECT_EQ(v.value(), std::nullopt);
  key(2);
  EXPECT_EQ(v.value(), 2);
}

INSTANTIATE_TEST_SUITE_P(Backends, KeyedStateTest, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace clink::test
