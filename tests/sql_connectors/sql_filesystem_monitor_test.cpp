// The filesystem source with source.monitor-interval (Flink's continuous file monitoring):
// new files are read at the next scan, each by one subtask, and across a restore (also at
// another parallelism) every file is read exactly once, on both state backends.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "../support/checkpoint_support.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/executor.hpp"
#include "sql_job_support.hpp"
#include "sql_reader_harness.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAreArray;
using Status = SqlSourceReader::Status;

// A file appears whole: written under a hidden name, then renamed in.
void publish(const fs::path& dir, const std::string& name, const std::string& content) {
  write_file(dir / ("." + name + ".tmp"), content);
  fs::rename(dir / ("." + name + ".tmp"), dir / name);
}

// JSON rows {"id": n, "name": "r<n>"} for n in [from, to).
std::string json_rows(int from, int to) {
  std::string s;
  for (int n = from; n < to; ++n) s += "{\"id\":" + std::to_string(n) + ",\"name\":\"r" + std::to_string(n) + "\"}\n";
  return s;
}
std::vector<std::string> printed_rows(int from, int to) {
  std::vector<std::string> v;
  for (int n = from; n < to; ++n) v.push_back("+I[" + std::to_string(n) + ", r" + std::to_string(n) + "]");
  return v;
}

FilesystemSourceConfig monitored(const fs::path& dir, std::int64_t interval_ms = 1000) {
  FilesystemSourceConfig c;
  c.path = dir.string();
  c.format = RowFormat::kJson;
  c.table_schema = schema_of({{"id", "BIGINT"}, {"name", "STRING"}});
  c.projected = {0, 1};
  c.monitor_interval_ms = interval_ms;
  return c;
}

TEST(SqlFilesystemMonitor, NewFilesAreReadAtTheNextScanAndTheSourceNeverEnds) {
  TempDir dir;
  publish(dir.path, "a.json", json_rows(0, 2));
  ManualClock clock;
  ReaderHarness h(monitored(dir.path), 0, 1, clock);
  EXPECT_EQ(h.poll_status(100), Status::kMore);  // the first poll scans and reads a
  EXPECT_EQ(h.poll_status(100), Status::kNothingAvailable);
  publish(dir.path, "b.json", json_rows(2, 4));
  clock.now = 999;
  EXPECT_EQ(h.poll_status(100), Status::kNothingAvailable);  // not scanned before the interval
  EXPECT_EQ(h.reader().wait_hint_ms(), 1);
  clock.now = 400;
  EXPECT_EQ(h.reader().wait_hint_ms(), 600);
  clock.now = 1000;
  EXPECT_EQ(h.poll_status(100), Status::kMore);
  EXPECT_EQ(h.poll_status(100), Status::kNothingAvailable);
  EXPECT_EQ(h.rows, printed_rows(0, 4));
}

// The files taken (shared, union) and the splits: a restored reader reads only what is new.
TEST(SqlFilesystemMonitor, ARestoredReaderReadsOnlyNewFilesAndUnfinishedSplits) {
  TempDir dir;
  publish(dir.path, "a.json", json_rows(0, 3));
  publish(dir.path, "b.json", json_rows(3, 6));
  ManualClock clock;
  ReaderHarness h(monitored(dir.path), 0, 1, clock);
  h.poll(4);  // a and one row of b
  EXPECT_EQ(h.rows, printed_rows(0, 4));
  auto splits = h.reader().snapshot_splits();
  auto shared = h.reader().snapshot_shared();
  const std::string a = (dir.path / "a.json").string(), b = (dir.path / "b.json").string();
  EXPECT_EQ(splits, (std::vector<std::string>{"1@0.0 " + b}));
  EXPECT_EQ(shared, (std::vector<std::string>{a, b}));

  publish(dir.path, "c.json", json_rows(6, 8));
  ReaderHarness r(monitored(dir.path), 0, 1, clock);
  r.reader().restore_shared(shared);
  r.reader().restore_splits(splits);
  while (r.poll_status(100) == Status::kMore) {
  }
  EXPECT_EQ(r.rows, printed_rows(4, 8));
  EXPECT_EQ(r.reader().snapshot_shared(), (std::vector<std::string>{a, b, (dir.path / "c.json").string()}));
}

// Two subtasks share the files without overlap; restored at three (splits dealt out, the
// taken files to every subtask) they read every further file exactly once.
TEST(SqlFilesystemMonitor, SubtasksSplitTheFilesAndRescaleWithoutLossOrDuplicates) {
  TempDir dir;
  for (int f = 0; f < 10; ++f) publish(dir.path, "f" + std::to_string(f) + ".json", json_rows(f * 10, f * 10 + 10));
  ManualClock clock;
  std::vector<std::string> all_rows;
  std::vector<std::string> splits, shared;
  for (int subtask = 0; subtask < 2; ++subtask) {
    ReaderHarness h(monitored(dir.path), subtask, 2, clock);
    h.poll(25);  // part of this subtask's files
    EXPECT_GT(h.rows.size(), 0u);
    all_rows.insert(all_rows.end(), h.rows.begin(), h.rows.end());
    for (auto& s : h.reader().snapshot_splits()) splits.push_back(s);
    for (auto& s : h.reader().snapshot_shared()) shared.push_back(s);
  }
  EXPECT_EQ(shared.size(), 10u);  // every file taken once
  for (int f = 10; f < 15; ++f) publish(dir.path, "f" + std::to_string(f) + ".json", json_rows(f * 10, f * 10 + 10));
  for (int subtask = 0; subtask < 3; ++subtask) {
    ReaderHarness h(monitored(dir.path), subtask, 3, clock);
    h.reader().restore_shared(shared);
    std::vector<std::string> mine;
    for (std::size_t i = static_cast<std::size_t>(subtask); i < splits.size(); i += 3) mine.push_back(splits[i]);
    h.reader().restore_splits(mine);
    while (h.poll_status(7) == Status::kMore) {
    }
    all_rows.insert(all_rows.end(), h.rows.begin(), h.rows.end());
  }
  EXPECT_THAT(all_rows, UnorderedElementsAreArray(printed_rows(0, 150)));
}

// ---- jobs ----

constexpr int kRowsPerFile = 400;

JobGraph monitor_job(const fs::path& in, const fs::path& out, int p, std::shared_ptr<FailOnce> fail) {
  json schema = schema_json({{"id", "BIGINT"}, {"name", "STRING"}});
  JobGraph g;
  g.add_node(registry_node("src", "sql_filesystem_source",
                           {{"path", in.string()}, {"format", "json"}, {"schema", schema},
                            {"source.monitor-interval", "20 ms"}},
                           p));
  g.add_node(failing_node("pass", std::move(fail), p));
  g.add_node(registry_node("sink", "sql_filesystem_sink", {{"path", out.string()}, {"format", "json"}, {"schema", schema}}, p));
  g.add_edge(forward("src", "pass"));
  g.add_edge(forward("pass", "sink"));
  return g;
}

std::vector<std::string> expected_json(int files) {
  std::vector<std::string> v;
  for (int n = 0; n < files * kRowsPerFile; ++n)
    v.push_back("{\"id\":" + std::to_string(n) + ",\"name\":\"r" + std::to_string(n) + "\"}");
  std::sort(v.begin(), v.end());
  return v;
}

// Waits until `n` rows are committed below `out` (or 30 s).
std::vector<std::string> await_committed(const fs::path& out, std::size_t n) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::vector<std::string> lines;
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(out)) lines = committed_lines(out);
    if (lines.size() >= n) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return lines;
}

void publish_files(const fs::path& in, int from, int to, int pause_ms) {
  for (int f = from; f < to; ++f) {
    publish(in, "f" + std::to_string(100 + f) + ".json", json_rows(f * kRowsPerFile, (f + 1) * kRowsPerFile));
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  }
}

class SqlFilesystemMonitorJob : public BackendTest {};

TEST_P(SqlFilesystemMonitorJob, FilesArrivingWhileTheJobRunsAreCommittedExactlyOnceAcrossAFailure) {
  TempDir dir;
  fs::create_directories(dir.path / "in");
  publish_files(dir.path / "in", 0, 4, 0);
  auto fail = std::make_shared<FailOnce>();
  fail->fail_at = 2500;  // per subtask, after some checkpoints
  fail->pause_ms = 5;
  auto handle = execute_async(monitor_job(dir.path / "in", dir.path / "out", 2, fail), checkpointing(dir.path / "ckpt", 30));
  publish_files(dir.path / "in", 4, 16, 30);
  auto got = await_committed(dir.path / "out", 16 * kRowsPerFile);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));  // a duplicate would commit by now
  got = committed_lines(dir.path / "out");
  handle.cancel();
  ASSERT_EQ(handle.restart_causes().size(), 1u);
  EXPECT_THAT(handle.restart_causes()[0], HasSubstr("injected failure"));
  EXPECT_EQ(got.size(), static_cast<std::size_t>(16 * kRowsPerFile));
  EXPECT_EQ(got, expected_json(16));
}

TEST_P(SqlFilesystemMonitorJob, RestoresAtAnotherParallelismWithFilesAddedWhileStopped) {
  TempDir dir;
  fs::create_directories(dir.path / "in");
  publish_files(dir.path / "in", 0, 6, 0);
  auto slow = std::make_shared<FailOnce>();
  slow->pause_ms = 10;
  {
    auto handle = execute_async(monitor_job(dir.path / "in", dir.path / "out", 2, slow), checkpointing(dir.path / "ckpt", 30));
    publish_files(dir.path / "in", 6, 8, 30);
    handle.stop_with_savepoint(dir.path / "sp");
  }
  auto partial = committed_lines(dir.path / "out");
  EXPECT_GT(partial.size(), 0u);
  publish_files(dir.path / "in", 8, 12, 0);
  auto options = checkpointing(dir.path / "ckpt2", 30);
  options.restore = RestoreSettings{dir.path / "sp"};
  auto handle = execute_async(monitor_job(dir.path / "in", dir.path / "out", 3, std::make_shared<FailOnce>()), options);
  publish_files(dir.path / "in", 12, 14, 30);
  await_committed(dir.path / "out", 14 * kRowsPerFile);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  auto got = committed_lines(dir.path / "out");
  handle.cancel();
  EXPECT_EQ(got.size(), static_cast<std::size_t>(14 * kRowsPerFile)) << "partial " << partial.size();
  EXPECT_EQ(got, expected_json(14));
}

INSTANTIATE_TEST_SUITE_P(Backends, SqlFilesystemMonitorJob, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

TEST(SqlFilesystemMonitor, AnIntervalMustBeAPositiveDuration) {
  OperatorSpecContext ctx{"op",
                          nlohmann::json{{"schema", schema_json({{"id", "BIGINT"}})},
                                         {"path", "/x"},
                                         {"format", "json"},
                                         {"source.monitor-interval", "soon"}},
                          {}};
  try {
    builtin_registry().get("sql_filesystem_source").make(ctx);
    FAIL();
  } catch (const ClinkError& e) {
    EXPECT_STREQ(e.what(), "op 'op' (sql_filesystem_source): option 'source.monitor-interval' must be a positive "
                           "duration ('10 s', '1 min'), got 'soon'");
  }
}

}  // namespace
}  // namespace clink::test
