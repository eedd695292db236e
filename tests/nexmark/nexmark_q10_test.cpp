// Nexmark q10 (every bid logged to a filesystem table PARTITIONED BY (dt, hm) with Flink's
// partition-commit and rolling options) on a small stream that crosses midnight: the
// partition directories, the rows in each (computed from the generator's bids), the
// success files of the partition commit, and part files rolled by size.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "../support/checkpoint_support.hpp"
#include "clink/connectors/sql/file_sink_policies.hpp"
#include "clink/core/error.hpp"
#include "nexmark_query_support.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct PartitionFiles {
  std::vector<std::string> rows;  // "auction,bidder,price" of every line, sorted
  int part_files = 0;
  bool success_file = false;
};

// partition directory (relative to `root`) -> what it holds
std::map<std::string, PartitionFiles> read_partitions(const fs::path& root) {
  std::map<std::string, PartitionFiles> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    std::string dir = fs::relative(e.path().parent_path(), root).string();
    std::string name = e.path().filename().string();
    auto& p = out[dir];
    if (name == "_SUCCESS") {
      p.success_file = true;
      continue;
    }
    EXPECT_EQ(name.rfind("part-0-", 0), 0u) << e.path();
    EXPECT_TRUE(name.ends_with(".csv")) << e.path();
    ++p.part_files;
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) {
      std::size_t third = line.find(',', line.find(',', line.find(',') + 1) + 1);
      p.rows.push_back(line.substr(0, third));
    }
  }
  for (auto& [dir, p] : out) std::sort(p.rows.begin(), p.rows.end());
  return out;
}

// The bids by partition directory: dt=<day>/hm=<HH%3Amm> (':' escaped as Flink does).
std::map<std::string, std::vector<std::string>> expected_partitions(const Sizing& s) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& b : bids_of(generator_events(s))) {
    std::string hm = replace_all(hm_of(b.date_time), ":", "%3A");
    out["dt=" + day_of(b.date_time) + "/hm=" + hm].push_back(fmt::format("{},{},{}", b.auction, b.bidder, b.price));
  }
  for (auto& [dir, rows] : out) std::sort(rows.begin(), rows.end());
  return out;
}

std::string q10_into(const fs::path& dir, const Sizing& s, const std::string& extra_options = "") {
  std::string sql = sized_script("q10", s);
  const std::string path = "'path' = 'file:///tmp/clink-nexmark/q10/bid/'";
  EXPECT_NE(sql.find(path), std::string::npos);
  return replace_all(sql, path, "'path' = 'file://" + (dir / "bid").string() + "/'" + extra_options);
}

TEST(NexmarkQ10, PartitionsByDayAndMinuteAndCommitsEveryPartitionAtTheEnd) {
  TempDir dir("nexmark-q10");
  Sizing s{.events = 3000, .base_time = kHalfSecondBeforeMidnight, .rate = 1000};
  auto expected = expected_partitions(s);
  ASSERT_EQ(expected.size(), 2u);
  ASSERT_TRUE(expected.count("dt=2020-09-13/hm=23%3A59"));
  ASSERT_TRUE(expected.count("dt=2020-09-14/hm=00%3A00"));
  run_script(q10_into(dir.path, s), "nexmark_q10");
  auto got = read_partitions(dir.path / "bid");
  ASSERT_EQ(got.size(), expected.size());
  for (const auto& [partition, rows] : expected) {
    SCOPED_TRACE(partition);
    ASSERT_TRUE(got.count(partition));
    EXPECT_EQ(got[partition].rows.size(), rows.size());
    EXPECT_EQ(got[partition].rows, rows);
    EXPECT_EQ(got[partition].part_files, 1);
    EXPECT_TRUE(got[partition].success_file);  // partition-time trigger: the final watermark commits all
  }
}

TEST(NexmarkQ10, PartFilesRollBySize) {
  TempDir dir("nexmark-q10-roll");
  Sizing s{.events = 3000, .base_time = kHalfSecondBeforeMidnight, .rate = 1000};
  auto expected = expected_partitions(s);
  run_script(q10_into(dir.path, s, ",\n  'sink.rolling-policy.file-size' = '8kb'"), "nexmark_q10");
  auto got = read_partitions(dir.path / "bid");
  ASSERT_EQ(got.size(), expected.size());
  for (const auto& [partition, rows] : expected) {
    SCOPED_TRACE(partition);
    EXPECT_EQ(got[partition].rows, rows);
    // A bid line is about 150 bytes: more than 8 kB in every partition, so several files.
    EXPECT_GT(got[partition].part_files, 1);
    EXPECT_TRUE(got[partition].success_file);
  }
}

TEST(NexmarkQ10, SinkOptionErrorsNameTheOption) {
  TempDir dir("nexmark-q10-errors");
  Sizing s{.events = 10, .base_time = kHalfSecondBeforeMidnight, .rate = 1000};
  auto error = [&](const std::string& sql) -> std::string {
    try {
      run_script(sql, "nexmark_q10");
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_THAT(error(replace_all(q10_into(dir.path, s), "'success-file'", "'metastore'")),
              HasSubstr("'sink.partition-commit.policy.kind': 'metastore' is not supported"));
  EXPECT_THAT(error(replace_all(q10_into(dir.path, s), "'partition-time'", "'event-time'")),
              HasSubstr("'sink.partition-commit.trigger' must be process-time or partition-time, got 'event-time'"));
  EXPECT_THAT(error(replace_all(q10_into(dir.path, s), "'1 min'", "'soon'")),
              HasSubstr("option 'sink.partition-commit.delay' is not a duration: 'soon'"));
  EXPECT_THAT(error(replace_all(q10_into(dir.path, s), "'file://", "'hdfs://")),
              HasSubstr("only local paths (or file:// URIs) are supported"));
}

TEST(FileSinkPolicies, PartitionTimeFromThePatternAndMemorySizes) {
  sql::PartitionCommitPolicy p;
  p.timestamp_pattern = "$dt $hm:00";
  EXPECT_EQ(p.partition_time({"dt", "hm"}, {"2020-09-13", "23:59"}), 1600041540000);
  p.timestamp_pattern = "";
  EXPECT_EQ(p.partition_time({"dt"}, {"2020-09-14"}), 1600041600000);
  p.zone = sql::TimeZone::of("+08:00");
  EXPECT_EQ(p.partition_time({"dt"}, {"2020-09-14 08:00:00"}), 1600041600000);
  EXPECT_THROW(p.partition_time({"dt"}, {"yesterday"}), ClinkError);
  EXPECT_EQ(sql::parse_memory_size("128MB"), std::int64_t{128} << 20);
  EXPECT_EQ(sql::parse_memory_size("8 kb"), 8192);
  EXPECT_EQ(sql::parse_memory_size("100"), 100);
  EXPECT_EQ(sql::parse_memory_size("lots"), std::nullopt);
}

}  // namespace
}  // namespace clink::test
