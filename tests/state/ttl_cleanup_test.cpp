// State TTL bounds memory on the memory backend (issue 16, item 7): expired entries are
// reclaimed without their keys being read again (incremental cleanup, as Flink's heap
// backend does), so a unique-key workload with a TTL holds about its live entries, not
// every key it ever saw.
#include <gtest/gtest.h>

#include "clink/state/state_ttl.hpp"
#include "state_test_util.hpp"

namespace clink::test {
namespace {

// Entries stored (expired ones not cleaned up included) over every key group.
std::size_t stored_entries(KeyedStateBackend& b, StateId id) {
  std::size_t n = 0;
  for (int kg = b.key_groups().first; kg <= b.key_groups().last; ++kg)
    b.for_each_entry(id, kg, [&](std::string_view, std::string_view, std::string_view) { ++n; });
  return n;
}

// 100 000 unique keys, one per millisecond of processing time, each written once and
// never read again; with a 5 s TTL about 5 000 are live at any time.
std::size_t entries_after_unique_keys(std::int64_t ttl_ms, StateKind kind) {
  BackendMaker maker;
  maker.kind = "memory";
  auto b = maker.make({0, 127});
  StateId id = b->register_state("s", kind, ttl_ms);
  std::string value;
  for (int k = 0; k < 100000; ++k) {
    maker.clock.set(k);
    b->set_current_key("key-" + std::to_string(k));
    value.clear();
    if (ttl_ms > 0) put_ttl_timestamp(k, value);
    if (kind == StateKind::kList) {
      put_varint(1, value);
      value += "x";
      b->append(id, value);
    } else {
      value += "x";
      b->put(id, value);
    }
  }
  return stored_entries(*b, id);
}

TEST(MemoryBackendTtlCleanup, ExpiredEntriesAreReclaimedWithoutBeingRead) {
  EXPECT_EQ(entries_after_unique_keys(0, StateKind::kValue), 100000u);  // no TTL: all kept
  for (auto kind : {StateKind::kValue, StateKind::kList}) {
    const std::size_t n = entries_after_unique_keys(5000, kind);
    // Live: the last 5 000. Each key group's map sweeps once its additions reach its
    // size after the last sweep (at least 64): at most about twice the live entries
    // plus 64 per key group.
    EXPECT_GE(n, 5000u);
    EXPECT_LE(n, 2 * 5000u + 128 * 64u) << "kind " << static_cast<int>(kind);
  }
}

// What the cleanup removes was invisible anyway: live values read back unchanged.
TEST(MemoryBackendTtlCleanup, LiveEntriesSurviveTheSweeps) {
  BackendMaker maker;
  maker.kind = "memory";
  auto b = maker.make({0, 127});
  StateId id = b->register_state("s", StateKind::kValue, 1000);
  std::string value, out;
  for (int k = 0; k < 20000; ++k) {
    maker.clock.set(k);
    b->set_current_key("key-" + std::to_string(k));
    value.clear();
    put_ttl_timestamp(k, value);
    value += std::to_string(k);
    b->put(id, value);
  }
  for (int k = 19001; k < 20000; ++k) {
    b->set_current_key("key-" + std::to_string(k));
    ASSERT_TRUE(b->get(id, out)) << k;
    std::string_view rest(out);
    EXPECT_EQ(get_ttl_timestamp(rest), k);
    EXPECT_EQ(rest, std::to_string(k));
  }
}

}  // namespace
}  // namespace clink::test
