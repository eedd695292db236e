// Reads right after writes, on both backends. The RocksDB backend keeps writes pending
// (PendingWrites) until a snapshot, close or a few MB; every read must see them over the
// database's entries, and a snapshot must hold every write made before it. Each test
// commits a first state with a snapshot, then writes and reads without one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clink/state/keyed_state.hpp"
#include "clink/state/state_codec.hpp"
#include "state_test_util.hpp"

namespace clink::test {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

class PendingWritesTest : public ::testing::TestWithParam<std::string> {
 protected:
  PendingWritesTest() { maker.kind = GetParam(); }
  std::unique_ptr<KeyedStateBackend> make_full() { return maker.make({0, kDefaultMaxParallelism - 1}); }
  // Snapshot (the RocksDB backend commits its pending writes), restore into a new backend.
  std::unique_ptr<KeyedStateBackend> snapshot_and_restore(KeyedStateBackend& b, std::int64_t id) {
    auto h = b.snapshot(id, ckpt.path / ("chk-" + std::to_string(id)));
    auto r = make_full();
    r->restore({h});
    return r;
  }
  BackendMaker maker;
  TempDir ckpt;
};


TEST_P(PendingWritesTest, ValueReadsSeeEveryWriteSinceTheSnapshot) {
  auto b = make_full();
  auto id = b->register_state("v", StateKind::kValue);
  for (std::int64_t k = 0; k < 3; ++k) {
    b->set_current_key(key(k));
    b->put(id, "committed" + std::to_string(k));
  }
  b->snapshot(1, ckpt.path / "chk-1");
  b->set_current_key(key(0));
  b->put(id, "x");
  EXPECT_EQ(get(*b, id), "x");
  b->put(id, "y");  // overwritten twice in one batch
  EXPECT_EQ(get(*b, id), "y");
  b->set_current_key(key(1));
  b->remove(id);
  EXPECT_EQ(get(*b, id), "<absent>");
  b->set_current_key(key(2));
  b->remove(id);
  b->put(id, "back");  // removed, then written again
  EXPECT_EQ(get(*b, id), "back");
  b->set_current_key(key(3));
  b->put(id, "new");
  b->remove(id);  // a new key written and removed before any commit
  EXPECT_EQ(get(*b, id), "<absent>");
  b->set_current_namespace("ns");  // another namespace of key 3: its own row
  EXPECT_EQ(get(*b, id), "<absent>");

  auto r = snapshot_and_restore(*b, 2);
  auto rid = r->register_state("v", StateKind::kValue);
  std::vector<std::string> restored;
  for (std::int64_t k = 0; k < 4; ++k) {
    r->set_current_key(key(k));
    restored.push_back(get(*r, rid));
  }
  EXPECT_THAT(restored, ElementsAre("y", "<absent>", "back", "<absent>"));
}

TEST_P(PendingWritesTest, ListAppendsConcatenateOntoTheCommittedValue) {
  auto b = make_full();
  auto id = b->register_state("l", StateKind::kList);
  b->set_current_key(key(1));
  b->append(id, "a");
  b->set_current_key(key(2));
  b->append(id, "p");
  b->snapshot(1, ckpt.path / "chk-1");
  b->set_current_key(key(1));
  b->append(id, "b");
  b->append(id, "c");
  EXPECT_EQ(get(*b, id), "abc");  // database value + two pending appends
  b->set_current_key(key(2));
  b->remove(id);
  b->append(id, "q");
  EXPECT_EQ(get(*b, id), "q");  // the removal hides the committed "p"
  b->set_current_key(key(3));
  b->append(id, "z");
  EXPECT_EQ(get(*b, id), "z");  // appends to nothing
  b->put(id, "put");
  b->append(id, "+1");
  EXPECT_EQ(get(*b, id), "put+1");

  auto r = snapshot_and_restore(*b, 2);
  auto rid = r->register_state("l", StateKind::kList);
  std::vector<std::string> restored;
  for (std::int64_t k = 1; k <= 3; ++k) {
    r->set_current_key(key(k));
    restored.push_back(get(*r, rid));
  }
  EXPECT_THAT(restored, ElementsAre("abc", "q", "put+1"));
}

TEST_P(PendingWritesTest, MapScansMergeCommittedAndPendingEntriesInUserKeyOrder) {
  auto b = make_full();
  auto id = b->register_state("m", StateKind::kMap);
  b->set_current_key(key(7));
  for (const char* k : {"a", "c", "e", "g"}) b->map_put(id, k, std::string("old-") + k);
  b->set_current_key(key(8));  // a neighbouring key's entries must not leak in
  b->map_put(id, "b", "other key");
  b->snapshot(1, ckpt.path / "chk-1");

  b->set_current_key(key(7));
  b->map_put(id, "b", "new-b");   // between committed entries
  b->map_put(id, "c", "new-c");   // replaces a committed entry
  b->map_put(id, "c", "newer-c");
  b->map_remove(id, "e");         // hides a committed entry
  b->map_put(id, "f", "gone");
  b->map_remove(id, "f");         // pending only, then removed
  b->map_remove(id, "x");         // removing an absent entry
  b->map_put(id, "h", "new-h");   // after every committed entry
  b->map_put(id, "0", "first");   // before every committed entry
  EXPECT_THAT(map_entries(*b, id), ElementsAre(Pair("0", "first"), Pair("a", "old-a"), Pair("b", "new-b"),
                                               Pair("c", "newer-c"), Pair("g", "old-g"), Pair("h", "new-h")));
  EXPECT_EQ(map_get(*b, id, "c"), "newer-c");
  EXPECT_EQ(map_get(*b, id, "e"), "<absent>");
  EXPECT_EQ(map_get(*b, id, "f"), "<absent>");
  EXPECT_EQ(map_get(*b, id, "g"), "old-g");
  // A scan stops where the callback says, pending entries included.
  std::vector<std::string> seen;
  b->map_for_each(id, [&](std::string_view k, std::string_view) {
    seen.emplace_back(k);
    return k != "b";
  });
  EXPECT_THAT(seen, ElementsAre("0", "a", "b"));
  b->set_current_key(key(8));
  EXPECT_THAT(map_entries(*b, id), ElementsAre(Pair("b", "other key")));

  auto r = snapshot_and_restore(*b, 2);
  auto rid = r->register_state("m", StateKind::kMap);
  r->set_current_key(key(7));
  EXPECT_THAT(map_entries(*r, rid), ElementsAre(Pair("0", "first"), Pair("a", "old-a"), Pair("b", "new-b"),
                                                Pair("c", "newer-c"), Pair("g", "old-g"), Pair("h", "new-h")));
}

TEST_P(PendingWritesTest, MapClearRemovesCommittedAndPendingEntries) {
  auto b = make_full();
  auto id = b->register_state("m", StateKind::kMap);
  b->set_current_key(key(1));
  b->map_put(id, "a", "1");
  b->map_put(id, "b", "2");
  b->snapshot(1, ckpt.path / "chk-1");
  b->map_put(id, "c", "3");
  b->map_put(id, "a", "1'");
  b->map_clear(id);
  EXPECT_THAT(map_entries(*b, id), IsEmpty());
  EXPECT_EQ(map_get(*b, id, "a"), "<absent>");
  EXPECT_EQ(map_get(*b, id, "c"), "<absent>");
  b->map_put(id, "d", "4");  // the map lives on after a clear
  EXPECT_THAT(map_entries(*b, id), ElementsAre(Pair("d", "4")));

  auto r = snapshot_and_restore(*b, 2);
  auto rid = r->register_state("m", StateKind::kMap);
  r->set_current_key(key(1));
  EXPECT_THAT(map_entries(*r, rid), ElementsAre(Pair("d", "4")));
}

// The callback may write other states, enough to make the RocksDB backend commit (4 MB)
// in the middle of the scan: the scan goes on over what it saw when it began.
TEST_P(PendingWritesTest, AScanSurvivesWritesAndACommitInItsCallback) {
  auto b = make_full();
  auto m = b->register_state("m", StateKind::kMap);
  auto v = b->register_state("v", StateKind::kValue);
  b->set_current_key(key(1));
  b->map_put(m, "a", "committed");
  b->snapshot(1, ckpt.path / "chk-1");
  b->map_put(m, "b", "pending");
  b->map_put(m, "c", "pending too");
  const std::string big(std::size_t{1} << 20, 'x');
  std::vector<std::pair<std::string, std::string>> seen;
  std::int64_t n = 0;
  b->map_for_each(m, [&](std::string_view k, std::string_view val) {
    seen.emplace_back(k, val);
    for (int i = 0; i < 3; ++i) {
      b->set_current_key(key(100 + n++));
      b->put(v, big);
    }
    b->set_current_key(key(1));
    return true;
  });
  EXPECT_THAT(seen, ElementsAre(Pair("a", "committed"), Pair("b", "pending"), Pair("c", "pending too")));
  b->set_current_key(key(108));
  EXPECT_EQ(get(*b, v), big);
  b->set_current_key(key(1));
  EXPECT_EQ(map_entries(*b, m).size(), 3u);
}

// Many keys between snapshots (the index grows several times), each read back at once
// and again at the end; then the restored state.
TEST_P(PendingWritesTest, ManyInterleavedWritesAndReads) {
  auto b = make_full();
  auto v = b->register_state("v", StateKind::kValue);
  auto m = b->register_state("m", StateKind::kMap);
  const std::int64_t n = 20000;
  for (std::int64_t k = 0; k < n; ++k) {
    b->set_current_key(key(k));
    b->put(v, std::to_string(k));
    b->map_put(m, "t", std::to_string(k * 2));
    ASSERT_EQ(get(*b, v), std::to_string(k));
    if (k % 3 == 0) b->remove(v);
  }
  std::int64_t present = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    b->set_current_key(key(k));
    std::string out;
    if (b->get(v, out)) {
      ++present;
      ASSERT_EQ(out, std::to_string(k));
    }
    ASSERT_EQ(map_get(*b, m, "t"), std::to_string(k * 2));
  }
  EXPECT_EQ(present, n - (n + 2) / 3);
  auto r = snapshot_and_restore(*b, 1);
  auto rv = r->register_state("v", StateKind::kValue);
  present = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    r->set_current_key(key(k));
    std::string out;
    if (r->get(rv, out)) ++present;
  }
  EXPECT_EQ(present, n - (n + 2) / 3);
}

INSTANTIATE_TEST_SUITE_P(Backends, PendingWritesTest, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace clink::test
