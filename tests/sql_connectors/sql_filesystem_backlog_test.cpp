// The filesystem sources' backlog metrics (FLIP-33): numBytesIn, the bytes of their files
// they read, and pendingBytes, the bytes of the files they were given that they have
// not: exact after every poll, across files, after a restore (the skipped lines count as
// read) and for a monitoring source (discovered files count as pending). The typed
// FileSource<T> reports the same.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../connectors/connector_test_util.hpp"
#include "clink/connectors/file_source.hpp"
#include "sql_job_support.hpp"
#include "sql_reader_harness.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

using Status = SqlSourceReader::Status;

// {"id":<n>} lines: "{"id":0}\n" is 9 bytes, "{"id":10}\n" 10.
std::string json_rows(int from, int to) {
  std::string s;
  for (int n = from; n < to; ++n) s += "{\"id\":" + std::to_string(n) + "}\n";
  return s;
}

FilesystemSourceConfig json_files(const fs::path& path, std::int64_t monitor_ms = 0) {
  FilesystemSourceConfig c;
  c.path = path.string();
  c.format = RowFormat::kJson;
  c.table_schema = schema_of({{"id", "BIGINT"}});
  c.projected = {0};
  c.monitor_interval_ms = monitor_ms;
  return c;
}

// (numBytesIn, pendingBytes) of the harness's source.
std::pair<std::int64_t, std::int64_t> backlog(OperatorMetrics& m) {
  return {m.bytes_in.load(), m.pending_bytes.load()};
}
using Bytes = std::pair<std::int64_t, std::int64_t>;

TEST(SqlFilesystemBacklog, BytesReadAndPendingAfterEveryPollAcrossFiles) {
  TempDir dir;
  write_file(dir.path / "a.json", json_rows(0, 3));    // 27 bytes
  write_file(dir.path / "b.json", json_rows(8, 12));   // 9 + 9 + 10 + 10 = 38 bytes
  write_file(dir.path / "c.json", "");                  // nothing
  ReaderHarness h(json_files(dir.path));
  EXPECT_EQ(backlog(h.metrics()), Bytes(0, 65)) << "known once opened";
  EXPECT_EQ(h.poll_status(2), Status::kMore);
  EXPECT_EQ(backlog(h.metrics()), Bytes(18, 47));
  EXPECT_EQ(h.poll_status(2), Status::kMore);  // the last line of a, the first of b
  EXPECT_EQ(backlog(h.metrics()), Bytes(36, 29));
  EXPECT_EQ(h.poll_status(100), Status::kEnd);
  EXPECT_EQ(backlog(h.metrics()), Bytes(65, 0));
  EXPECT_EQ(h.rows.size(), 7u);
}

TEST(SqlFilesystemBacklog, ARestoredReaderCountsTheLinesItSkipsAsRead) {
  TempDir dir;
  write_file(dir.path / "a.json", json_rows(0, 4));  // 36 bytes
  std::vector<std::string> splits;
  {
    ReaderHarness h(json_files(dir.path));
    h.poll(3);
    splits = h.reader().snapshot_splits();
    EXPECT_EQ(backlog(h.metrics()), Bytes(27, 9));
  }
  ReaderHarness restored(json_files(dir.path));
  restored.reader().restore_splits(splits);
  EXPECT_EQ(backlog(restored.metrics()), Bytes(0, 36)) << "the split's file, not read yet";
  EXPECT_EQ(restored.poll_status(100), Status::kEnd);
  EXPECT_EQ(restored.rows, (std::vector<std::string>{"+I[3]"}));
  EXPECT_EQ(backlog(restored.metrics()), Bytes(36, 0));
}

TEST(SqlFilesystemBacklog, AMonitoringSourceCountsDiscoveredFilesAsPending) {
  TempDir dir;
  write_file(dir.path / "a.json", json_rows(0, 2));  // 18 bytes
  ManualClock clock;
  ReaderHarness h(json_files(dir.path, 1000), 0, 1, clock);
  EXPECT_EQ(h.poll_status(100), Status::kMore);  // scans, reads a
  EXPECT_EQ(backlog(h.metrics()), Bytes(18, 0));
  write_file(dir.path / "b.json", json_rows(10, 13));  // 30 bytes
  write_file(dir.path / "c.json", json_rows(20, 21));  // 10 bytes
  clock.now = 1000;
  EXPECT_EQ(h.poll_status(1), Status::kMore);  // scans, starts b and c
  EXPECT_EQ(backlog(h.metrics()), Bytes(28, 30));
  EXPECT_EQ(h.poll_status(100), Status::kMore);
  EXPECT_EQ(backlog(h.metrics()), Bytes(58, 0));
  EXPECT_EQ(h.rows.size(), 6u);
}

TEST(FileSourceBacklog, TheTypedFileSourceReportsTheSame) {
  TempDir dir;
  write_file(dir.path / "a.txt", "one\ntwo\r\nthree");  // 14 bytes, the last line without a break
  TestContext tc;
  auto reader = FileSource<std::string>::text(dir.path.string())->create_reader(0, 1);
  reader->open(tc.ctx);
  EXPECT_EQ(backlog(*tc.metrics), Bytes(0, 14));
  Batch<std::string> b;
  EXPECT_EQ(reader->poll(b, 2), SourceOperator::PollStatus::kMore);
  EXPECT_EQ(backlog(*tc.metrics), Bytes(9, 5));
  EXPECT_EQ(reader->poll(b, 2), SourceOperator::PollStatus::kEnd);
  EXPECT_EQ(backlog(*tc.metrics), Bytes(14, 0));
}

}  // namespace
}  // namespace clink::test
