// FLIP-27-style source splits: a reader's checkpointed state is a list of splits, each
// an item of an even-split list, so a restore at another parallelism deals them over
// the new readers. Driven here by hand: poll part, snapshot, redistribute, restore.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "clink/api/collection_source.hpp"
#include "clink/checkpoint/operator_state.hpp"
#include "clink/connectors/datagen.hpp"
#include "clink/connectors/file_source.hpp"
#include "connector_test_util.hpp"

namespace clink::test {
namespace {

// Opens `p` readers of `source`; each polls `polls` batches of `batch`, appending what
// it read to `out`, then snapshots its splits into its own operator state store.
template <class T>
std::vector<OperatorStateStore> run_and_snapshot(const Source<T>& source, int p, int polls, std::size_t batch,
                                                 std::vector<T>& out,
                                                 const std::vector<OperatorStateStore>* restore_from = nullptr) {
  std::vector<OperatorStateStore> stores(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) {
    TestContext tc(s, p);
    auto reader = source.create_reader(s, p);
    reader->open(tc.ctx);
    if (restore_from)
      reader->restore_splits(OperatorStateStore::redistribute(*restore_from, s, p).list("source-splits"));
    for (int i = 0; i < polls; ++i) {
      Batch<T> b;
      if (reader->poll(b, batch) == SourceOperator::PollStatus::kEnd) i = polls;
      for (auto& r : b.records) out.push_back(r.value);
    }
    auto splits = reader->snapshot_splits();
    EXPECT_TRUE(splits.has_value());
    stores[static_cast<std::size_t>(s)].list("source-splits") = *splits;
    reader->close();
  }
  return stores;
}

template <class T>
std::vector<T> sorted(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(SourceSplits, DatagenSplitsAreDealtOverAnyParallelism) {
  auto source = DatagenSource<std::int64_t>::sequence(0, 9999);
  std::vector<std::int64_t> got;
  // 1 -> 3 -> 2 -> 4 -> 1 readers, each part reading a little of what it has.
  auto st = run_and_snapshot(*source, 1, 2, 100, got);
  EXPECT_EQ(st[0].list("source-splits"), (std::vector<std::string>{"200 1 9999"}));
  st = run_and_snapshot(*source, 3, 1, 70, got, &st);
  EXPECT_EQ(st[1].list("source-splits"), (std::vector<std::string>{}));  // one split for three readers
  st = run_and_snapshot(*source, 2, 3, 50, got, &st);
  st = run_and_snapshot(*source, 4, 2, 33, got, &st);
  st = run_and_snapshot(*source, 1, 1000, 1024, got, &st);
  EXPECT_TRUE(st[0].list("source-splits").empty()) << "finished splits are left out";
  std::vector<std::int64_t> all(10000);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(sorted(got), all);
}

TEST(SourceSplits, ARestoredDatagenReaderReadsItsSplitsInRowOrder) {
  auto source = DatagenSource<std::int64_t>::sequence(0, 999);
  std::vector<std::int64_t> got;
  auto st = run_and_snapshot(*source, 3, 1, 10, got);  // rows 0..29 read, three splits
  ASSERT_EQ(st.size(), 3u);
  got.clear();
  run_and_snapshot(*source, 1, 1000, 64, got, &st);
  std::vector<std::int64_t> rest(970);
  std::iota(rest.begin(), rest.end(), 30);
  EXPECT_EQ(got, rest);  // interleaved: 30, 31, 32, ... not split after split
}

TEST(SourceSplits, RandomDatagenRowsDependOnlyOnSeedAndRow) {
  auto source = DatagenSource<std::int64_t>::random(5000, 42);
  auto reference = sorted(read_all(*source, 0, 1));
  std::vector<std::int64_t> got;
  auto st = run_and_snapshot(*source, 2, 3, 100, got);
  st = run_and_snapshot(*source, 5, 2, 100, got, &st);
  run_and_snapshot(*source, 3, 1000, 1024, got, &st);
  EXPECT_EQ(sorted(got), reference);
}

TEST(SourceSplits, AReaderRestoredWithNoSplitsEndsAtOnce) {
  auto source = DatagenSource<std::int64_t>::sequence(0, 99);
  TestContext tc(1, 2);
  auto reader = source->create_reader(1, 2);
  reader->open(tc.ctx);
  reader->restore_splits({});
  Batch<std::int64_t> b;
  EXPECT_EQ(reader->poll(b, 10), SourceOperator::PollStatus::kEnd);
  EXPECT_TRUE(b.records.empty());
  EXPECT_EQ(reader->snapshot_splits(), std::vector<std::string>{});
}

TEST(SourceSplits, FileSplitsAreFilesWithTheirConsumedLines) {
  TempDir dir;
  std::vector<std::string> expected;
  for (int f = 0; f < 5; ++f) {
    std::string content;
    for (int i = 0; i < 37 + f * 11; ++i) {
      std::string line = "f" + std::to_string(f) + "-" + std::to_string(i);
      content += line + "\n";
      expected.push_back(line);
    }
    dir.write("in/part-" + std::to_string(f) + ".txt", content);
  }
  auto source = FileSource<std::string>::text(dir.file("in"));
  std::vector<std::string> got;
  auto st = run_and_snapshot(*source, 2, 2, 20, got);  // subtask 0: files 0, 2, 4; 1: files 1, 3
  // Subtask 0 read all 37 lines of file 0 (left out: finished) and 3 of file 2.
  EXPECT_EQ(st[0].list("source-splits"),
            (std::vector<std::string>{"3@0.0 " + dir.file("in/part-2.txt"), "0@0.0 " + dir.file("in/part-4.txt")}));
  st = run_and_snapshot(*source, 1, 3, 25, got, &st);
  st = run_and_snapshot(*source, 3, 1, 30, got, &st);
  st = run_and_snapshot(*source, 2, 1000, 1024, got, &st);
  EXPECT_TRUE(st[0].list("source-splits").size() <= 1u);
  EXPECT_EQ(sorted(got), sorted(expected));
}

TEST(SourceSplits, CollectionSourceHasOneSplit) {
  auto source = CollectionSource<int>::of({1, 2, 3, 4, 5});
  std::vector<int> got;
  auto st = run_and_snapshot(*source, 1, 1, 2, got);
  EXPECT_EQ(st[0].list("source-splits"), (std::vector<std::string>{"2"}));
  run_and_snapshot(*source, 1, 10, 2, got, &st);
  EXPECT_EQ(got, (std::vector<int>{1, 2, 3, 4, 5}));
}

}  // namespace
}  // namespace clink::test
