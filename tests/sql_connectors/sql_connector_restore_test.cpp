// Checkpoint and restore of the SQL connectors in real jobs, on both state backends:
// the filesystem source continues each file exactly after its last row (also at another
// parallelism), datagen continues its rows, and the filesystem sink commits every row
// exactly once across a failure (no duplicate, no loss, no in-progress file left).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "../support/checkpoint_support.hpp"
#include "clink/checkpoint/checkpoint_metadata.hpp"
#include "clink/connectors/sql/sql_sinks.hpp"
#include "clink/runtime/executor.hpp"
#include "sql_job_support.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

using ::testing::HasSubstr;

constexpr int kFiles = 16, kLinesPerFile = 2500;

json row_schema() { return schema_json({{"id", "BIGINT"}, {"name", "STRING"}}); }

// kFiles files of JSON rows {"id": n, "name": "r<n>"}, n = 0 .. kFiles * kLinesPerFile - 1.
void write_inputs(const fs::path& dir) {
  for (int f = 0; f < kFiles; ++f) {
    std::string text;
    for (int i = 0; i < kLinesPerFile; ++i) {
      int n = f * kLinesPerFile + i;
      text += "{\"id\":" + std::to_string(n) + ",\"name\":\"r" + std::to_string(n) + "\"}\n";
    }
    write_file(dir / ("f" + std::to_string(100 + f) + ".json"), text);
  }
}

// The same rows as csv records of three lines each: n,"r<n>\n-\n-" (a quoted field holding
// two line breaks), so most poll and checkpoint boundaries would fall inside a record if
// the reader let them.
void write_multi_line_csv_inputs(const fs::path& dir) {
  for (int f = 0; f < kFiles; ++f) {
    std::string text;
    for (int i = 0; i < kLinesPerFile; ++i) {
      int n = f * kLinesPerFile + i;
      text += std::to_string(n) + ",\"r" + std::to_string(n) + "\n-\n-\"\n";
    }
    write_file(dir / ("f" + std::to_string(100 + f) + ".csv"), text);
  }
}

// The sink's lines for rows 0..n-1, sorted; `suffix` follows the name.
std::vector<std::string> expected_lines(int n, const std::string& suffix = "") {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i)
    v.push_back("{\"id\":" + std::to_string(i) + ",\"name\":\"r" + std::to_string(i) + suffix + "\"}");
  std::sort(v.begin(), v.end());
  return v;
}

// Rows of `want` not committed exactly once, for the failure message.
std::string duplicates_and_losses(const std::vector<std::string>& got, const std::vector<std::string>& want) {
  std::map<std::string, int> count;
  for (const auto& l : got) ++count[l];
  std::string diff;
  for (const auto& l : want)
    if (count[l] != 1 && diff.size() < 400) diff += l + " x" + std::to_string(count[l]) + "; ";
  return diff;
}

bool has_in_progress_files(const fs::path& dir) {
  for (const auto& name : listing(dir))
    if (name.find(".inprogress") != std::string::npos) return true;
  return false;
}

// filesystem source (json, or csv) -> pass-through (throttled, maybe failing) -> json
// filesystem sink, all at `p`.
JobGraph file_job(const fs::path& in, const fs::path& out, int p, std::shared_ptr<FailOnce> fail,
                  const std::string& format = "json") {
  JobGraph g;
  g.add_node(registry_node("src", "sql_filesystem_source",
                           {{"path", in.string()}, {"format", format}, {"schema", row_schema()}}, p));
  g.add_node(failing_node("pass", std::move(fail), p));
  g.add_node(registry_node("sink", "sql_filesystem_sink",
                           {{"path", out.string()}, {"format", "json"}, {"schema", row_schema()}}, p));
  g.add_edge(forward("src", "pass"));
  g.add_edge(forward("pass", "sink"));
  return g;
}

class SqlConnectorRestore : public BackendTest {};

TEST_P(SqlConnectorRestore, FileSourceToFileSinkIsExactlyOnceAcrossAFailure) {
  TempDir dir;
  write_inputs(dir.path / "in");
  auto fail = std::make_shared<FailOnce>();
  fail->fail_at = 12000;  // per subtask: after several checkpoints, before the end
  fail->pause_ms = 15;
  auto handle = execute_async(file_job(dir.path / "in", dir.path / "out", 2, fail), checkpointing(dir.path / "ckpt", 30));
  handle.wait();
  auto causes = handle.restart_causes();
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_THAT(causes[0], HasSubstr("injected failure"));
  EXPECT_GT(handle.checkpoint_counts().completed, 0);
  EXPECT_EQ(committed_lines(dir.path / "out"), expected_lines(kFiles * kLinesPerFile));
  EXPECT_FALSE(has_in_progress_files(dir.path / "out"));
}

TEST_P(SqlConnectorRestore, FileSourceRestoresAtAnotherParallelismFromASavepoint) {
  TempDir dir;
  write_inputs(dir.path / "in");
  auto slow = std::make_shared<FailOnce>();
  slow->pause_ms = 15;
  {
    auto handle = execute_async(file_job(dir.path / "in", dir.path / "out", 2, slow), checkpointing(dir.path / "ckpt", 30));
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    handle.stop_with_savepoint(dir.path / "sp");
  }
  auto partial = committed_lines(dir.path / "out");
  EXPECT_GT(partial.size(), 0u);
  EXPECT_LT(partial.size(), static_cast<std::size_t>(kFiles * kLinesPerFile));
  auto options = checkpointing(dir.path / "ckpt2", 30);
  options.restore = RestoreSettings{dir.path / "sp"};
  execute_async(file_job(dir.path / "in", dir.path / "out", 3, std::make_shared<FailOnce>()), options).wait();
  auto got = committed_lines(dir.path / "out");
  auto want = expected_lines(kFiles * kLinesPerFile);
  std::map<std::string, int> count;
  for (const auto& l : got) ++count[l];
  std::string diff;
  for (const auto& l : want)
    if (count[l] != 1 && diff.size() < 400) diff += l + " x" + std::to_string(count[l]) + "; ";
  EXPECT_EQ(got.size(), want.size()) << "partial " << partial.size() << ": " << diff;
  EXPECT_EQ(got, want);
  EXPECT_FALSE(has_in_progress_files(dir.path / "out"));
}

TEST_P(SqlConnectorRestore, CsvRecordsSpanningLinesAreExactlyOnceAcrossAFailure) {
  TempDir dir;
  write_multi_line_csv_inputs(dir.path / "in");
  auto fail = std::make_shared<FailOnce>();
  fail->fail_at = 12000;
  fail->pause_ms = 15;
  auto handle =
      execute_async(file_job(dir.path / "in", dir.path / "out", 2, fail, "csv"), checkpointing(dir.path / "ckpt", 30));
  handle.wait();
  ASSERT_EQ(handle.restart_causes().size(), 1u);
  EXPECT_THAT(handle.restart_causes()[0], HasSubstr("injected failure"));
  EXPECT_GT(handle.checkpoint_counts().completed, 0);
  auto got = committed_lines(dir.path / "out");
  auto want = expected_lines(kFiles * kLinesPerFile, "\\n-\\n-");
  EXPECT_EQ(got.size(), want.size()) << duplicates_and_losses(got, want);
  EXPECT_EQ(got, want);
  EXPECT_FALSE(has_in_progress_files(dir.path / "out"));
}

TEST_P(SqlConnectorRestore, CsvRecordsSpanningLinesRestoreAtAnotherParallelism) {
  TempDir dir;
  write_multi_line_csv_inputs(dir.path / "in");
  auto slow = std::make_shared<FailOnce>();
  slow->pause_ms = 15;
  {
    auto handle = execute_async(file_job(dir.path / "in", dir.path / "out", 2, slow, "csv"),
                                checkpointing(dir.path / "ckpt", 30));
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    handle.stop_with_savepoint(dir.path / "sp");
  }
  auto partial = committed_lines(dir.path / "out");
  EXPECT_GT(partial.size(), 0u);
  EXPECT_LT(partial.size(), static_cast<std::size_t>(kFiles * kLinesPerFile));
  auto options = checkpointing(dir.path / "ckpt2", 30);
  options.restore = RestoreSettings{dir.path / "sp"};
  execute_async(file_job(dir.path / "in", dir.path / "out", 3, std::make_shared<FailOnce>(), "csv"), options).wait();
  auto got = committed_lines(dir.path / "out");
  auto want = expected_lines(kFiles * kLinesPerFile, "\\n-\\n-");
  EXPECT_EQ(got.size(), want.size()) << "partial " << partial.size() << ": " << duplicates_and_losses(got, want);
  EXPECT_EQ(got, want);
}

// Found by the SQL test matrix: the collect sink applied rows as they came, so the rows
// replayed after a restore appeared twice. With checkpointing it commits per checkpoint.
TEST_P(SqlConnectorRestore, CollectSinkIsExactlyOnceAcrossAFailure) {
  TempDir dir;
  write_inputs(dir.path / "in");
  auto fail = std::make_shared<FailOnce>();
  fail->fail_at = 12000;  // per subtask: after several checkpoints, before the end
  fail->pause_ms = 15;
  SqlCollectResults::drop("collect-restore");
  JobGraph g;
  g.add_node(registry_node("src", "sql_filesystem_source",
                           {{"path", (dir.path / "in").string()}, {"format", "json"}, {"schema", row_schema()}}, 2));
  g.add_node(failing_node("pass", fail, 2));
  g.add_node(registry_node("sink", "sql_collect_sink", {{"name", "collect-restore"}, {"schema", row_schema()}}, 2));
  g.add_edge(forward("src", "pass"));
  g.add_edge(forward("pass", "sink"));
  auto handle = execute_async(g, checkpointing(dir.path / "ckpt", 30));
  handle.wait();
  ASSERT_EQ(handle.restart_causes().size(), 1u);
  EXPECT_THAT(handle.restart_causes()[0], HasSubstr("injected failure"));
  auto got = SqlCollectResults::get("collect-restore")->changelog();
  SqlCollectResults::drop("collect-restore");
  std::sort(got.begin(), got.end());
  std::vector<std::string> want;
  for (int i = 0; i < kFiles * kLinesPerFile; ++i) want.push_back("+I[" + std::to_string(i) + ", r" + std::to_string(i) + "]");
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got.size(), want.size()) << duplicates_and_losses(got, want);
  EXPECT_EQ(got, want);
}

// datagen (sequence id, rate limited) -> failing pass-through -> csv sink.
JobGraph datagen_job(const fs::path& out, std::int64_t n, std::shared_ptr<FailOnce> fail) {
  json schema = schema_json({{"id", "BIGINT"}, {"tag", "STRING"}});
  JobGraph g;
  g.add_node(registry_node("gen", "sql_datagen_source",
                           {{"schema", schema}, {"rows-per-second", "20000"}, {"fields.id.kind", "sequence"},
                            {"fields.id.start", "1"}, {"fields.id.end", std::to_string(n)}, {"fields.tag.length", "4"}},
                           2));
  g.add_node(failing_node("pass", std::move(fail), 2));
  g.add_node(registry_node("sink", "sql_filesystem_sink",
                           {{"path", out.string()}, {"format", "csv"}, {"schema", schema}}, 2));
  g.add_edge(forward("gen", "pass"));
  g.add_edge(forward("pass", "sink"));
  return g;
}

TEST_P(SqlConnectorRestore, DatagenContinuesExactlyAfterAFailure) {
  TempDir dir;
  const std::int64_t n = 8000;
  auto fail = std::make_shared<FailOnce>();
  fail->fail_at = 2000;
  auto handle = execute_async(datagen_job(dir.path / "out", n, fail), checkpointing(dir.path / "ckpt", 30));
  handle.wait();
  ASSERT_EQ(handle.restart_causes().size(), 1u);
  auto lines = committed_lines(dir.path / "out");
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(n));
  // Each id once; a row's random tag depends only on the row, so the replayed rows after
  // the restore are the very rows the failed attempt produced.
  std::vector<std::int64_t> ids;
  for (const auto& l : lines) {
    ids.push_back(std::stoll(l.substr(0, l.find(','))));
    EXPECT_EQ(l.size() - l.find(',') - 1, 4u) << l;
  }
  std::sort(ids.begin(), ids.end());
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(ids[static_cast<std::size_t>(i)], i + 1);
  EXPECT_FALSE(has_in_progress_files(dir.path / "out"));
}

INSTANTIATE_TEST_SUITE_P(Backends, SqlConnectorRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace clink::test
