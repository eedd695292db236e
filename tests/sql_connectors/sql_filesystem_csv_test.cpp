// The filesystem source's csv records spanning lines (RFC 4180 quoted line breaks): read
// whole, "\r\n" kept inside a field, split positions ("<lines> <path>") only ever at a
// record boundary so a restore resumes after the last whole record, and malformed records
// failing with their line and column or going to the dead letters.
#include <chrono>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../support/checkpoint_support.hpp"
#include "clink/core/error.hpp"
#include "sql_job_support.hpp"
#include "sql_reader_harness.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

FilesystemSourceConfig csv_config(const fs::path& path, CsvFormatOptions options = {}) {
  FilesystemSourceConfig c;
  c.path = path.string();
  c.format = RowFormat::kCsv;
  c.table_schema = schema_of({{"id", "INT"}, {"text", "STRING"}});
  c.projected = {0, 1};
  c.csv = std::move(options);
  c.read_buffer_bytes = 16;  // records and lines cross the reader's buffer refills
  return c;
}

// Records: 1 on lines 1-2, 2 on line 3, 3 on lines 4-6 ("\r\n" inside), 4 on line 7.
const std::string kMultiLine = "1,\"a\nb\"\n2,c\n3,\"x\r\n\r\n\"\"y\"\"\"\n4,d\n";

TEST(SqlFilesystemCsv, QuotedFieldsSpanLinesAndKeepTheirLineBreaks) {
  TempDir dir;
  write_file(dir.path / "in.csv", kMultiLine);
  ReaderHarness h(csv_config(dir.path / "in.csv"));
  h.drain(1000);
  EXPECT_THAT(h.rows, ElementsAre("+I[1, a\nb]", "+I[2, c]", "+I[3, x\r\n\r\n\"y\"]", "+I[4, d]"));
}

// A poll ends after whole records only: every snapshot is a record boundary, and a reader
// restored from it continues with exactly the next record.
TEST(SqlFilesystemCsv, SplitPositionsAreRecordBoundariesAndRestoreResumesAfterThem) {
  TempDir dir;
  const std::string file = (dir.path / "in.csv").string();
  write_file(file, kMultiLine);
  ReaderHarness h(csv_config(file));
  std::vector<std::vector<std::string>> snapshots;
  while (h.poll(1)) snapshots.push_back(h.reader().snapshot_splits());
  EXPECT_THAT(h.rows, ElementsAre("+I[1, a\nb]", "+I[2, c]", "+I[3, x\r\n\r\n\"y\"]", "+I[4, d]"));
  ASSERT_EQ(snapshots.size(), 4u);
  EXPECT_EQ(snapshots[0], std::vector<std::string>{"2@0.0 " + file});
  EXPECT_EQ(snapshots[1], std::vector<std::string>{"3@0.0 " + file});
  EXPECT_EQ(snapshots[2], std::vector<std::string>{"6@0.0 " + file});
  EXPECT_EQ(snapshots[3], std::vector<std::string>{"7@0.0 " + file});

  const std::vector<std::vector<std::string>> rest = {
      {"+I[2, c]", "+I[3, x\r\n\r\n\"y\"]", "+I[4, d]"}, {"+I[3, x\r\n\r\n\"y\"]", "+I[4, d]"}, {"+I[4, d]"}, {}};
  for (std::size_t i = 0; i < snapshots.size(); ++i) {
    ReaderHarness restored(csv_config(file));
    restored.reader().restore_splits(snapshots[i]);
    restored.drain(1);
    EXPECT_EQ(restored.rows, rest[i]) << "restored from " << snapshots[i][0];
  }
}

// A record open at the end of its file ends there: the next file starts a new record.
TEST(SqlFilesystemCsv, AnUnterminatedQuoteAtTheEndOfAFileFailsWithItsLineAndColumn) {
  TempDir dir;
  write_file(dir.path / "in/a.csv", "1,x\n2,\"open\nstill open");
  write_file(dir.path / "in/b.csv", "3,y\n");
  try {
    ReaderHarness h(csv_config(dir.path / "in"));
    h.drain(1000);
    FAIL() << "the reader should fail";
  } catch (const ClinkError& e) {
    EXPECT_STREQ(e.what(), ("file " + (dir.path / "in/a.csv").string() +
                            " line 2, column 3: unterminated quoted field 2").c_str());
  }
  auto options = CsvFormatOptions::from({{"csv.ignore-parse-errors", "true"}});
  ReaderHarness ignoring(csv_config(dir.path / "in", options));
  ignoring.drain(1);
  EXPECT_THAT(ignoring.rows, ElementsAre("+I[1, x]", "+I[3, y]"));
  EXPECT_EQ(ignoring.metrics().dead_letters_by_reason(), (std::map<std::string, std::int64_t>{{"ignored-parse-error", 1}}));
}

// An unterminated quote early in a large file does not swallow the rest of it into one
// record: the record is decoded again only after lines with a quote (linear, not
// quadratic), and one still open after 20 MB (Jackson's default maximum string length)
// fails at its opening quote; with errors ignored, reading goes on after it.
TEST(SqlFilesystemCsv, AnUnterminatedQuoteInALargeFileIsBoundedAndLinear) {
  TempDir dir;
  std::string text = "1,x\n2,\"open\n";
  for (int i = 0; i < 2'100'000; ++i) text += "0123456789\n";  // 23 MB of quote-free lines
  text += "3,y\n";
  write_file(dir.path / "in.csv", text);
  auto config = csv_config(dir.path / "in.csv");
  config.read_buffer_bytes = 1 << 16;
  const auto start = std::chrono::steady_clock::now();
  try {
    ReaderHarness h(config);
    h.drain(1000);
    FAIL() << "the reader should fail";
  } catch (const ClinkError& e) {
    EXPECT_STREQ(e.what(), ("file " + (dir.path / "in.csv").string() +
                            " line 2, column 3: unterminated quoted field 2 (the record is still open after "
                            "20000000 bytes)").c_str());
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

// The column of an error inside a multi-line record is counted from its own line.
TEST(SqlFilesystemCsv, MalformedRecordsGoToTheDeadLettersWithLineAndColumn) {
  TempDir dir;
  const std::string file = (dir.path / "in.csv").string();
  write_file(file, "1,\"a\nb\"\n\"line\ntwo\",x\n2,\"q\"z\n3,ok,extra\n4,fine\n");
  auto config = csv_config(file);
  config.dead_letter_wired = true;
  ReaderHarness h(config);
  h.drain(1);  // one record per poll: rows and dead letters in file order
  EXPECT_THAT(h.rows,
              ElementsAre("+I[1, a\nb]",
                          "DL[parse-error: field 1 (id): 'line\ntwo' is not a valid INT, src, file " + file +
                              " line 3, column 1, \"line\ntwo\",x]",
                          "DL[parse-error: unexpected character 'z' after the quoted field 2, src, file " + file +
                              " line 5, column 6, 2,\"q\"z]",
                          "DL[parse-error: row length mismatch: 2 fields expected but was 3, src, file " + file +
                              " line 6, column 6, 3,ok,extra]",
                          "+I[4, fine]"));
}

}  // namespace
}  // namespace clink::test
