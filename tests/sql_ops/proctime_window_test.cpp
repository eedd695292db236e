// Processing-time windows in SQL: a PROCTIME() attribute in TUMBLE / HOP / CUMULATE /
// SESSION (window TVFs and legacy GROUP BY TUMBLE(...)) plans to sql_window_aggregate with
// "proctime": true, which runs the one window engine's processing-time assigners and
// timers. Checked with an injected clock: assignment by the clock (not the rows' times),
// firing once the clock passes a window's end - 1, watermarks firing nothing, no firing at
// the end of the input (as Flink's streaming mode), and a savepoint restore of open windows
// and their timers on the memory and RocksDB backends.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "clink/core/error.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "clink/sql/handler/statement_runner.hpp"
#include "sql_ops_test_support.hpp"

#include "../support/checkpoint_support.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

SchemaPtr pt_schema() {
  return sql::make_schema({{"pt", LogicalType::timestamp_ltz(3)}, {"k", LogicalType::string()}, {"v", LogicalType::bigint()}});
}
// Rows whose pt values are far from the clock: assignment must not read them.
ColumnBatch rows(std::initializer_list<std::pair<const char*, std::int64_t>> kv) {
  std::vector<Row> out;
  for (const auto& [k, v] : kv) out.push_back(Row{{Value(std::int64_t{999'000'000}), Value(k), Value(v)}, RowKind::kInsert, 5});
  return batch(pt_schema(), out);
}

json window_params(json window) {
  window["time_column"] = 0;
  window["proctime"] = true;
  return {{"input_schemas", json::array({schema_json(pt_schema())})},
          {"schema", schema_json(sql::make_schema({{"k", LogicalType::string()},
                                                   {"window_start", LogicalType::timestamp(3).not_null()},
                                                   {"window_end", LogicalType::timestamp(3).not_null()},
                                                   {"window_time", LogicalType::timestamp_ltz(3).not_null()},
                                                   {"s", LogicalType::bigint()}}))},
          {"window", window},
          {"keys", {1}},
          {"aggregates", json::array({{{"function", "SUM"}, {"args", {2}}}})}};
}

// A window row as the print form writes it: start and end are TIMESTAMP(3) (LocalDateTime,
// seconds and fraction only when non-zero), the proctime window_time TIMESTAMP_LTZ(3) (an Instant).
std::string local_time(const char* ss_mmm) {
  std::string s(ss_mmm);  // "SS.mmm"
  if (s == "00.000") return "1970-01-01T00:00";
  return "1970-01-01T00:00:" + (s.substr(3) == "000" ? s.substr(0, 2) : s);
}
std::string w(const char* k, const char* start, const char* end, const char* time, std::int64_t s) {
  return std::string("+I[") + k + ", " + local_time(start) + ", " + local_time(end) + ", 1970-01-01T00:00:" + time + "Z, " +
         std::to_string(s) + "]";
}

TEST(SqlProctimeWindow, TumbleAssignsByTheClockAndFiresOnProcessingTimeOnly) {
  ManualClock clock;
  OpHarness h("sql_window_aggregate", window_params({{"kind", "tumble"}, {"size_ms", 1000}}), 1, clock);
  clock.now = 100;
  h.push(rows({{"a", 1}, {"b", 2}}));
  clock.now = 999;
  h.push(rows({{"a", 4}}));      // the last millisecond of [0, 1000)
  h.watermark(kMaxEventTime - 1);  // event time fires nothing
  h.processing_time(998);
  EXPECT_THAT(h.lines, ElementsAre("WM " + std::to_string(kMaxEventTime - 1)));
  h.processing_time(999);
  clock.now = 2500;
  h.push(rows({{"a", 8}}));
  h.processing_time(2999);
  clock.now = 3100;
  h.push(rows({{"b", 16}}));  // [3000, 4000) is open at the end of the input
  h.finish();
  EXPECT_THAT(h.lines, ElementsAre("WM " + std::to_string(kMaxEventTime - 1), w("a", "00.000", "01.000", "00.999", 5),
                                   w("b", "00.000", "01.000", "00.999", 2), w("a", "02.000", "03.000", "02.999", 8),
                                   "WM " + std::to_string(kMaxEventTime)));
}

TEST(SqlProctimeWindow, HopCumulateAndSessionOnTheClock) {
  ManualClock clock;
  OpHarness hop("sql_window_aggregate", window_params({{"kind", "hop"}, {"size_ms", 2000}, {"slide_ms", 1000}}), 1, clock);
  OpHarness cum("sql_window_aggregate", window_params({{"kind", "cumulate"}, {"size_ms", 2000}, {"step_ms", 1000}}), 1, clock);
  OpHarness ses("sql_window_aggregate", window_params({{"kind", "session"}, {"gap_ms", 1000}}), 1, clock);
  for (auto* h : {&hop, &cum, &ses}) {
    clock.now = 500;
    h->push(rows({{"a", 1}}));
    clock.now = 1200;
    h->push(rows({{"a", 2}}));
    h->processing_time(5000);
  }
  EXPECT_THAT(hop.lines, ElementsAre("+I[a, 1969-12-31T23:59:59, 1970-01-01T00:00:01, 1970-01-01T00:00:00.999Z, 1]",
                                     w("a", "00.000", "02.000", "01.999", 3), w("a", "01.000", "03.000", "02.999", 2)));
  EXPECT_THAT(cum.lines, ElementsAre(w("a", "00.000", "01.000", "00.999", 1), w("a", "00.000", "02.000", "01.999", 3)));
  EXPECT_THAT(ses.lines, ElementsAre(w("a", "00.500", "02.200", "02.199", 3)));
}

// ---- planning ----

std::vector<json> window_params_of(const std::string& sql) {
  sql::Catalog catalog;
  sql::StatementRunner runner(catalog);
  std::vector<json> out;
  runner.on_job([&](const json& spec, const sql::ast::Statement&) {
    for (const auto& op : spec["ops"])
      if (op["type"] == "sql_window_aggregate") out.push_back(op["params"]["window"]);
  });
  runner.run(sql);
  return out;
}

const char* kTable =
    "CREATE TABLE t (k INT, v BIGINT, pt AS PROCTIME()) WITH ('connector' = 'datagen', 'number-of-rows' = '1');\n"
    "CREATE TABLE s (k INT, c BIGINT, ws TIMESTAMP(3), wt TIMESTAMP_LTZ(3)) WITH ('connector' = 'blackhole');\n";

TEST(SqlProctimeWindow, PlansTvfsAndLegacyGroupWindowsOverProctimeAttributes) {
  auto tvf = window_params_of(std::string(kTable) +
                              "INSERT INTO s SELECT k, COUNT(*), window_start, window_time FROM TABLE(HOP(TABLE t, "
                              "DESCRIPTOR(pt), INTERVAL '1' SECOND, INTERVAL '2' SECOND)) GROUP BY k, window_start, "
                              "window_end, window_time;");
  ASSERT_EQ(tvf.size(), 1u);
  EXPECT_EQ(tvf[0]["kind"], "hop");
  EXPECT_EQ(tvf[0]["proctime"], true);
  EXPECT_EQ(tvf[0]["size_ms"], 2000);
  EXPECT_EQ(tvf[0]["slide_ms"], 1000);
  auto legacy = window_params_of(std::string(kTable) +
                                 "INSERT INTO s SELECT k, COUNT(*), TUMBLE_START(pt, INTERVAL '1' SECOND), "
                                 "TUMBLE_PROCTIME(pt, INTERVAL '1' SECOND) FROM t GROUP BY k, TUMBLE(pt, INTERVAL '1' SECOND);");
  ASSERT_EQ(legacy.size(), 1u);
  EXPECT_EQ(legacy[0]["proctime"], true);
  EXPECT_EQ(legacy[0]["kind"], "tumble");
  // A view's PROCTIME() column, as Nexmark's q12 declares it, is a proctime attribute too.
  auto view = window_params_of(std::string(kTable) +
                               "CREATE VIEW b AS SELECT k, v, PROCTIME() AS p FROM t WHERE v > 0;\n"
                               "INSERT INTO s SELECT k, COUNT(*), window_start, window_time FROM TABLE(TUMBLE(TABLE b, "
                               "DESCRIPTOR(p), INTERVAL '10' SECOND)) GROUP BY k, window_start, window_end, window_time;");
  ASSERT_EQ(view.size(), 1u);
  EXPECT_EQ(view[0]["proctime"], true);
}

std::string error_of(const std::string& sql) {
  try {
    window_params_of(sql);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(SqlProctimeWindow, ErrorsNameTheProblemAndItsPosition) {
  EXPECT_THAT(error_of(std::string(kTable) + "SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(pt), INTERVAL '1' SECOND));"),
              HasSubstr("a processing-time window TVF is only supported under a window aggregate"));
  const std::string rowtime =
      "INSERT INTO s SELECT k, COUNT(*), TUMBLE_START(pt, INTERVAL '1' SECOND), TUMBLE_ROWTIME(pt, INTERVAL '1' "
      "SECOND) FROM t GROUP BY k, TUMBLE(pt, INTERVAL '1' SECOND);";
  EXPECT_THAT(error_of(std::string(kTable) + rowtime),
              HasSubstr("line 3, column " + std::to_string(rowtime.find("TUMBLE_ROWTIME") + 1) +
                        ": TUMBLE_ROWTIME needs an event-time window"));
  EXPECT_THAT(error_of(std::string(kTable) + "SET 'table.local-time-zone' = '+08:00';\n" +
                       "INSERT INTO s SELECT k, COUNT(*), window_start, window_time FROM TABLE(TUMBLE(TABLE t, "
                       "DESCRIPTOR(pt), INTERVAL '1' SECOND)) GROUP BY k, window_start, window_end, window_time;"),
              HasSubstr("processing-time windows are aligned in UTC"));
  EXPECT_THAT(error_of(std::string(kTable) + "INSERT INTO s SELECT k, COUNT(*), window_start, window_time FROM "
                                             "TABLE(TUMBLE(TABLE t, DESCRIPTOR(v), INTERVAL '1' SECOND)) GROUP BY k, "
                                             "window_start, window_end, window_time;"),
              HasSubstr("must be TIMESTAMP(3) or TIMESTAMP_LTZ(3)"));
}

// ---- durability: open windows and their timers through a savepoint ----

// The sink, recording the watermark it saw: a watermark behind a step's rows tells the test
// that the window operator (behind a hash edge, in its own task) processed them, so the
// test moves the clock only between steps.
class WatermarkProbe final : public StreamOperator {
 public:
  WatermarkProbe(std::unique_ptr<StreamOperator> inner, std::shared_ptr<std::atomic<EventTime>> seen)
      : inner_(std::move(inner)), seen_(std::move(seen)) {}
  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    inner_->open(ctx);
  }
  void process_batch(int i, BatchPtr b) override { inner_->process_batch(i, std::move(b)); }
  void process_watermark(Watermark wm) override {
    inner_->process_watermark(wm);
    seen_->store(wm.timestamp);
  }
  void finish() override { inner_->finish(); }
  void snapshot_state(std::int64_t id) override { inner_->snapshot_state(id); }
  void notify_checkpoint_complete(std::int64_t id) override { inner_->notify_checkpoint_complete(id); }
  void close() override { inner_->close(); }

 private:
  std::unique_ptr<StreamOperator> inner_;
  std::shared_ptr<std::atomic<EventTime>> seen_;
};

ColumnBatch spread(std::int64_t v) {
  std::vector<Row> out;
  for (const char* k : {"a", "b", "c"}) out.push_back(Row{{Value(std::int64_t{0}), Value(k), Value(v)}, RowKind::kInsert, 1});
  return batch(pt_schema(), out);
}

class SqlProctimeRestore : public BackendTest {
 protected:
  // source -hash(k)-> window aggregate (TUMBLE 1 s over the clock) -> exactly-once sink
  JobGraph graph() {
    json params = window_params({{"kind", "tumble"}, {"size_ms", 1000}});
    json src = {{"id", "src"}, {"type", "sql_test_source"}, {"params", {{"script", name_}, {"schema", schema_json(pt_schema())}}}};
    json agg = {{"id", "agg"}, {"type", "sql_window_aggregate"}, {"params", params},
                {"inputs", json::array({{{"from", "src"}, {"partitioning", "hash"}, {"key", "sql_columns:1"}}})}};
    json sink = {{"id", "sink"}, {"type", "sql_test_sink"}, {"params", {{"script", name_}}},
                 {"inputs", json::array({{{"from", "agg"}}})}};
    JobGraph g = from_spec({{"name", "proctime"}, {"config", {{"parallelism", 1}}}, {"ops", json::array({src, agg, sink})}},
                           test_registry());
    auto build = g.node("sink").build;
    g.node("sink").build = [build, seen = seen_] { return std::make_unique<WatermarkProbe>(build(), seen); };
    return g;
  }
  // Step i (rows, then watermark i) goes through at clock `now`.
  void release(std::size_t step, std::int64_t now, JobHandle& h) {
    clock_.now = now;
    script_->pause_at = step + 1;
    while (seen_->load() < static_cast<EventTime>(step) && !h.wait_for(std::chrono::milliseconds(1))) {
    }
  }
  ExecutionOptions options(const fs::path& dir) {
    auto o = checkpointing(dir, 0);
    o.clock = &clock_;
    return o;
  }
  void fresh() {
    script_ = std::make_shared<Script>();
    for (std::int64_t v : {1, 2, 4, 8, 16}) script_->steps.push_back({spread(v), static_cast<EventTime>(script_->steps.size())});
    script_->pause_at = 0;
    put_script(name_, script_);
    seen_->store(kMinEventTime);
  }

  std::string name_ = std::string("proctime_restore_") + GetParam();
  ManualClock clock_;
  std::shared_ptr<Script> script_;
  std::shared_ptr<std::atomic<EventTime>> seen_ = std::make_shared<std::atomic<EventTime>>(kMinEventTime);
};
INSTANTIATE_TEST_SUITE_P(Backends, SqlProctimeRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

// Steps at 100, 900 ([0, 1000): 1 + 2), 1500, 1800 ([1000, 2000): 4 + 8, fired when the
// clock is at 2500, before the last step), 2500 ([2000, 3000): 16, open at the end of the
// input: not fired).
TEST_P(SqlProctimeRestore, OpenWindowsAndTimersSurviveAStopWithSavepoint) {
  const std::vector<std::int64_t> clock_at = {100, 900, 1500, 1800, 2500};
  std::vector<std::string> first, expected;
  for (const char* k : {"a", "b", "c"}) {
    first.push_back(w(k, "00.000", "01.000", "00.999", 3));
    expected.push_back(w(k, "00.000", "01.000", "00.999", 3));
    expected.push_back(w(k, "01.000", "02.000", "01.999", 12));
  }
  expected = sorted(expected);
  {  // failure-free
    TempDir dir;
    fresh();
    auto h = execute_async(graph(), options(dir.path));
    for (std::size_t i = 0; i < clock_at.size(); ++i) release(i, clock_at[i], h);
    h.wait();
    ASSERT_EQ(h.status(), JobStatus::kFinished) << h.error();
    EXPECT_EQ(sorted(script_->sink->values()), expected);
  }
  // Stopped after step 2: [1000, 2000) holds 4 and its timer at 1999 is pending.
  TempDir dir;
  fresh();
  fs::path savepoint;
  {
    auto h = execute_async(graph(), options(dir.path));
    for (std::size_t i = 0; i < 3; ++i) release(i, clock_at[i], h);
    ASSERT_EQ(h.status(), JobStatus::kRunning) << h.error();
    savepoint = h.stop_with_savepoint(dir.path / "sp");
  }
  EXPECT_EQ(sorted(script_->sink->values()), sorted(first));
  auto o = options(dir.path);
  o.restore = RestoreSettings{savepoint};
  auto h = execute_async(graph(), o);
  for (std::size_t i = 3; i < clock_at.size(); ++i) release(i, clock_at[i], h);
  h.wait();
  ASSERT_EQ(h.status(), JobStatus::kFinished) << h.error();
  EXPECT_EQ(sorted(script_->sink->values()), expected);
}

}  // namespace
}  // namespace clink::test
