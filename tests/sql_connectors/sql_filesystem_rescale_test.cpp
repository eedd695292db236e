// Issue 16, defect 1: rescaling a SQL event-time job over a directory of files made rows
// late. A reader restored with several old readers' splits read them one list after the
// other, so its watermark passed the timestamps of the lists it had not read yet. Each
// old reader's list is a lane now: a reader reads its lanes interleaved and bounds the
// watermark by the minimum over them (sql_filesystem_source.hpp). These jobs are planned
// from SQL, stopped with savepoints at one parallelism and resumed at another; every
// window must come out exactly as in a run without rescaling, and no row is dropped late.
#include <gtest/gtest.h>

#include <atomic>
#include <map>

#include "../support/checkpoint_support.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/handler/statement_runner.hpp"
#include "sql_job_support.hpp"
#include "sql_reader_harness.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

// kFiles files in time order, each kRowsPerFile rows 10 ms apart: file i holds
// [i * 20 s, (i + 1) * 20 s) of 2024-01-01. Read round-robin by file, every reader's
// own files are in time order, so no run without rescaling drops a row.
constexpr int kFiles = 24, kRowsPerFile = 2000, kKeys = 4;
constexpr std::int64_t kStepMs = 10;

std::string timestamp(std::int64_t ms) {
  const std::int64_t s = ms / 1000;
  char buf[48];
  std::snprintf(buf, sizeof buf, "2024-01-01 %02lld:%02lld:%02lld.%03lld", static_cast<long long>(s / 3600),
                static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60), static_cast<long long>(ms % 1000));
  return buf;
}

void write_inputs(const fs::path& dir) {
  for (int f = 0; f < kFiles; ++f) {
    std::string text;
    for (int j = 0; j < kRowsPerFile; ++j) {
      const std::int64_t n = std::int64_t{f} * kRowsPerFile + j;
      text += "{\"k\":" + std::to_string(n % kKeys) + ",\"v\":" + std::to_string(n) + ",\"ts\":\"" +
              timestamp(n * kStepMs) + "\"}\n";
    }
    char name[32];
    std::snprintf(name, sizeof name, "part-%02d.json", f);  // sorted by name = by time
    write_file(dir / name, text);
  }
}

// The windows' rows as the json sink writes them (whole seconds without a fraction),
// computed from the inputs' definition.
std::vector<std::string> expected_windows() {
  std::map<std::pair<std::int64_t, int>, std::pair<std::int64_t, std::int64_t>> windows;  // (start, k) -> (count, sum)
  for (std::int64_t n = 0; n < std::int64_t{kFiles} * kRowsPerFile; ++n) {
    auto& w = windows[{n * kStepMs / 10000 * 10000, static_cast<int>(n % kKeys)}];
    ++w.first;
    w.second += n;
  }
  std::vector<std::string> lines;
  for (const auto& [key, cs] : windows)
    lines.push_back("{\"k\":" + std::to_string(key.second) + ",\"ws\":\"" + timestamp(key.first).substr(0, 19) +
                    "\",\"c\":" + std::to_string(cs.first) + ",\"s\":" + std::to_string(cs.second) + "}");
  std::sort(lines.begin(), lines.end());
  return lines;
}

// Passes batches on after `pause_ms` each (so that a savepoint falls mid-input),
// counting the rows passed.
struct Throttle {
  std::atomic<std::int64_t> rows{0};
  int pause_ms = 10;
};
class ThrottleOp final : public StreamOperator {
 public:
  explicit ThrottleOp(std::shared_ptr<Throttle> t) : t_(std::move(t)) {}
  void process_batch(int, BatchPtr batch) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(t_->pause_ms));
    t_->rows.fetch_add(static_cast<std::int64_t>(batch->size()));
    output().emit(std::move(batch));
  }

 private:
  std::shared_ptr<Throttle> t_;
};

// Rows {"id": n} for n in [from, to), as the reader prints them.
std::string id_rows(int from, int to) {
  std::string s;
  for (int n = from; n < to; ++n) s += "{\"id\":" + std::to_string(n) + "}\n";
  return s;
}
std::vector<std::string> printed(int from, int to) {
  std::vector<std::string> v;
  for (int n = from; n < to; ++n) v.push_back("+I[" + std::to_string(n) + "]");
  return v;
}

// One reader restored with two old readers' splits (lanes "0.0" and "1.0") reads them in
// turn, a poll each, says which lane each row came from (its watermark split), holds a
// lane until it is read to its end, and checkpoints each lane as a lane of its own.
TEST(SqlFilesystemLanes, ARestoredReaderReadsEachOldReadersFilesAsALaneInTurn) {
  TempDir dir;
  for (int f = 0; f < 4; ++f) write_file(dir.path / ("f" + std::to_string(f) + ".json"), id_rows(f * 10, f * 10 + 6));
  auto file = [&](int f) { return (dir.path / ("f" + std::to_string(f) + ".json")).string(); };
  FilesystemSourceConfig c;
  c.path = dir.path.string();
  c.format = RowFormat::kJson;
  c.table_schema = schema_of({{"id", "BIGINT"}});
  c.projected = {0};
  ReaderHarness h(c);
  // Old reader 0 had read 2 lines of f0 (f2 next), old reader 1 one line of f1 (f3 next).
  h.reader().restore_splits({"2@0.0 " + file(0), "0@0.0 " + file(2), "1@1.0 " + file(1), "0@1.0 " + file(3)});
  EXPECT_EQ(h.reader().held_splits().size(), 2u);
  h.poll(5);  // lines 1-2 were consumed before: skipped (but examined)
  EXPECT_EQ(h.rows, printed(2, 5));
  EXPECT_EQ(h.reader().row_splits(), std::vector<std::uint64_t>(3, h.reader().held_splits()[0]));
  h.rows.clear();
  h.poll(4);
  EXPECT_EQ(h.rows, printed(11, 14));
  EXPECT_EQ(h.reader().row_splits(), std::vector<std::uint64_t>(3, h.reader().held_splits()[1]));
  EXPECT_EQ(h.reader().snapshot_splits(), (std::vector<std::string>{"5@0.0 " + file(0), "0@0.0 " + file(2),
                                                                     "4@0.1 " + file(1), "0@0.1 " + file(3)}));
  h.rows.clear();
  h.poll(4);  // lane 0: the last row of f0, 3 of f2
  EXPECT_EQ(h.rows, (std::vector<std::string>{"+I[5]", "+I[20]", "+I[21]", "+I[22]"}));
  h.rows.clear();
  h.poll(100);  // lane 1 to its end, and on to lane 0 in the same poll
  std::vector<std::string> rest = printed(14, 16);
  for (auto& r : printed(30, 36)) rest.push_back(r);
  for (auto& r : printed(23, 26)) rest.push_back(r);
  EXPECT_EQ(h.rows, rest);
  EXPECT_TRUE(h.reader().held_splits().empty());
  EXPECT_EQ(h.reader().snapshot_splits(), std::vector<std::string>{});
}

class SqlFilesystemRescale : public BackendTest {
 protected:
  void SetUp() override { write_inputs(dir_.path / "in"); }

  // The query planned at parallelism `p`, with the throttle right after the source.
  JobGraph job(int p, const std::shared_ptr<Throttle>& throttle) {
    Catalog catalog;
    StatementRunner runner(catalog);
    runner.run("SET 'parallelism.default' = '" + std::to_string(p) + "';"
               "CREATE TABLE events (k INT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
               "WITH ('connector' = 'filesystem', 'path' = '" + (dir_.path / "in").string() + "', 'format' = 'json');"
               "CREATE TABLE windows (k INT, ws TIMESTAMP(3), c BIGINT, s BIGINT) WITH ('connector' = 'filesystem', "
               "'path' = '" + (dir_.path / "out").string() + "', 'format' = 'json')");
    auto results = runner.run(
        "INSERT INTO windows SELECT k, window_start, COUNT(*), SUM(v) FROM TABLE(TUMBLE(TABLE events, "
        "DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY k, window_start, window_end");
    JobGraph g = from_spec(results.at(0).spec, builtin_registry());
    std::string source;
    for (const auto& n : g.nodes)
      if (n.factory == "sql_filesystem_source") source = n.id;
    JobNode pass;
    pass.id = pass.name = pass.uid = "throttle";
    pass.factory = "test_throttle";
    pass.out_type = kSqlRowType;
    pass.parallelism = p;
    pass.build = [throttle] { return std::make_unique<ThrottleOp>(throttle); };
    g.add_node(std::move(pass));
    for (auto& e : g.edges)
      if (e.from == source && e.side_output.empty()) {
        JobEdge next = e;
        next.from = "throttle";
        e.to = "throttle";
        g.add_edge(std::move(next));
        break;
      }
    return g;
  }

  // Runs at parallelism `p` (from `restore` if set) until `rows` more rows passed the
  // throttle, then stops with a savepoint; without `rows`, to the end. Expects no row
  // dropped as late.
  fs::path run(int p, const std::optional<fs::path>& restore, std::optional<std::int64_t> rows) {
    auto throttle = std::make_shared<Throttle>();
    auto options = checkpointing(dir_.path / ("ckpt-" + std::to_string(++runs_)), 1000);
    if (restore) options.restore = RestoreSettings{*restore};
    JobHandle h = execute_async(job(p, throttle), options);
    fs::path savepoint;
    if (rows) {
      while (throttle->rows.load() < *rows && !h.wait_for(std::chrono::milliseconds(2))) {
      }
      EXPECT_EQ(h.status(), JobStatus::kRunning) << "run " << runs_ << " at p = " << p << " ended before its savepoint";
      savepoint = h.stop_with_savepoint(dir_.path / ("sp-" + std::to_string(runs_)));
    } else {
      h.wait();
    }
    std::int64_t late = 0;
    for (const auto& m : h.metrics().snapshot()) late += m.late_records_dropped;
    EXPECT_EQ(late, 0) << "rows dropped as late in run " << runs_ << " at p = " << p;
    return savepoint;
  }

  std::vector<std::string> windows() { return committed_lines(dir_.path / "out"); }

  TempDir dir_;
  int runs_ = 0;
};

TEST_P(SqlFilesystemRescale, WithoutRescalingEveryWindowIsExact) {
  run(2, std::nullopt, std::nullopt);
  EXPECT_EQ(windows(), expected_windows());
}

// The reported case: savepoint at p = 2, resumed at p = 1.
TEST_P(SqlFilesystemRescale, ScaledDownFromTwoToOneNoRowIsLate) {
  auto sp = run(2, std::nullopt, 12000);
  EXPECT_LT(windows().size(), expected_windows().size());
  run(1, sp, std::nullopt);
  EXPECT_EQ(windows(), expected_windows());
}

// 1 -> 2 -> 4 -> 2: lanes split by the round-robin deal, then merged again. The last
// deal gives each reader files of different old readers, some later ones first (e.g. a
// reader at p = 2 read the files 6, 10, 3, 7, ... one after the other and dropped file
// 3's rows as late, as the other reader had passed them too).
TEST_P(SqlFilesystemRescale, ChainOfRescalesOneTwoFourTwoNoRowIsLate) {
  auto sp = run(1, std::nullopt, 3000);
  sp = run(2, sp, 6000);
  sp = run(4, sp, 8000);
  EXPECT_LT(windows().size(), expected_windows().size());
  run(2, sp, std::nullopt);
  EXPECT_EQ(windows(), expected_windows());
}

INSTANTIATE_TEST_SUITE_P(Backends, SqlFilesystemRescale, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace clink::test
