// The filesystem sink's partition commit (success files) and rolling policy, driven
// through its transactional writer as the two-phase-commit operator drives it: a partition
// is committed only once a checkpoint made its files visible and its trigger holds
// (partition-time: the watermark of that checkpoint passed the partition's time + delay;
// process-time: the clock passed its creation + delay), the waiting partitions survive a
// restore, and the end of the input commits them all.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>

#include "../support/checkpoint_support.hpp"
#include "../support/manual_clock.hpp"
#include "clink/connectors/sql/sql_filesystem_sink.hpp"
#include "clink/runtime/runtime_context.hpp"
#include "sql_job_support.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

namespace fs = std::filesystem;

struct DiscardOutput final : Output {
  void emit(BatchPtr) override {}
  void emit_watermark(Watermark) override {}
  void emit_side(const std::string&, BatchPtr) override {}
};

SchemaPtr dt_schema() { return make_schema({{"dt", LogicalType::string()}, {"v", LogicalType::bigint()}}); }

ColumnBatch rows(std::initializer_list<std::pair<const char*, std::int64_t>> r) {
  ColumnBatch b(dt_schema());
  for (const auto& [dt, v] : r) b.append_row({Value(dt), Value(v)}, RowKind::kInsert, kNoEventTime);
  return b;
}

constexpr std::int64_t kJan1 = 1577836800000;  // 2020-01-01 00:00 UTC
constexpr std::int64_t kDay = 86400000;

class PartitionCommit : public ::testing::Test {
 protected:
  FilesystemSinkConfig config(PartitionCommitPolicy::Trigger trigger, std::int64_t delay_ms) {
    FilesystemSinkConfig c;
    c.path = dir_.path.string();
    c.format = RowFormat::kCsv;
    c.schema = dt_schema();
    c.partition_by = {0};
    c.commit.success_file = true;
    c.commit.trigger = trigger;
    c.commit.delay_ms = delay_ms;
    return c;
  }
  std::unique_ptr<TransactionalSinkWriter<ColumnBatch>> writer(const FilesystemSqlSink& sink, OperatorStateStore state = {}) {
    ctx_ = std::make_unique<RuntimeContext>("sink", "sink", 0, 1, 128, &out_, std::make_shared<OperatorMetrics>(), clock_);
    ctx_->set_operator_state(std::move(state));
    auto w = sink.create_writer(0, 1);
    w->open(*ctx_);
    return w;
  }
  bool committed(const std::string& dt) const { return fs::exists(dir_.path / ("dt=" + dt) / "_SUCCESS"); }

  TempDir dir_;
  ManualClock clock_;
  DiscardOutput out_;
  std::unique_ptr<RuntimeContext> ctx_;
};

TEST_F(PartitionCommit, PartitionTimeCommitsOnceTheCheckpointsWatermarkPassedThePartition) {
  FilesystemSqlSink sink(config(PartitionCommitPolicy::Trigger::kPartitionTime, 0));
  auto w = writer(sink);
  w->begin_transaction(1);
  w->write(rows({{"2020-01-01", 1}, {"2020-01-02", 2}}));
  w->on_watermark(kJan1 + kDay / 2);
  std::string c1 = w->pre_commit();
  w->begin_transaction(2);
  w->on_watermark(kJan1 + 3 * kDay);  // after the barrier: not this checkpoint's watermark
  EXPECT_FALSE(committed("2020-01-01"));
  w->commit(c1);
  EXPECT_TRUE(committed("2020-01-01"));
  EXPECT_FALSE(committed("2020-01-02"));
  EXPECT_TRUE(fs::exists(dir_.path / "dt=2020-01-02" / "part-0-0.csv"));  // visible, not yet committed
  std::string c2 = w->pre_commit();  // no rows; its watermark is past 2020-01-02
  w->commit(c2);
  EXPECT_TRUE(committed("2020-01-02"));
}

TEST_F(PartitionCommit, ProcessTimeWaitsForTheDelayAndWaitingPartitionsSurviveARestore) {
  FilesystemSqlSink sink(config(PartitionCommitPolicy::Trigger::kProcessTime, 60000));
  OperatorStateStore snapshot;
  std::string c1;
  {
    clock_.now = 1000;
    auto w = writer(sink);
    w->begin_transaction(1);
    w->write(rows({{"2020-01-01", 1}}));
    c1 = w->pre_commit();
    snapshot = ctx_->operator_state();  // the checkpoint of c1
    clock_.now = 30000;
    w->commit(c1);
    EXPECT_FALSE(committed("2020-01-01"));  // created at 1000: due at 61000
    w->close();
  }
  // Restored from that checkpoint (whose committable is committed again, as the operator
  // does): the partition still counts from its creation at 1000, not from the restore.
  auto w = writer(sink, snapshot);
  w->commit(c1);
  EXPECT_FALSE(committed("2020-01-01"));
  w->begin_transaction(2);
  clock_.now = 61000;
  w->commit(w->pre_commit());
  EXPECT_TRUE(committed("2020-01-01"));
}

TEST_F(PartitionCommit, TheEndOfTheInputCommitsEveryWrittenPartition) {
  FilesystemSqlSink sink(config(PartitionCommitPolicy::Trigger::kProcessTime, 3'600'000));
  auto w = writer(sink);
  w->begin_transaction(1);
  w->write(rows({{"2020-01-01", 1}, {"2020-01-05", 2}}));
  w->end_of_input();
  w->commit(w->pre_commit());
  EXPECT_TRUE(committed("2020-01-01"));
  EXPECT_TRUE(committed("2020-01-05"));
}

TEST_F(PartitionCommit, RollsByRolloverAndInactivityIntervalOnWrites) {
  auto c = config(PartitionCommitPolicy::Trigger::kProcessTime, 0);
  c.commit.success_file = false;
  c.rolling.rollover_interval_ms = 10000;
  c.rolling.inactivity_interval_ms = 3000;
  c.rolling.check_interval_ms = 1000;
  FilesystemSqlSink sink(c);
  auto w = writer(sink);
  w->begin_transaction(1);
  clock_.now = 100'000;
  w->write(rows({{"a", 1}, {"b", 1}}));
  clock_.now = 102'000;
  w->write(rows({{"a", 2}}));  // b idle 2 s: stays open
  clock_.now = 104'500;
  w->write(rows({{"a", 3}}));  // b idle 4.5 s: rolled
  clock_.now = 111'000;
  w->write(rows({{"a", 4}, {"b", 2}}));  // a open 11 s: rolled before this row
  w->commit(w->pre_commit());
  auto files = [&](const char* p) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_.path / p)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(files("dt=a"), (std::vector<std::string>{"part-0-0-1.csv", "part-0-0.csv"}));
  EXPECT_EQ(files("dt=b"), (std::vector<std::string>{"part-0-0-1.csv", "part-0-0.csv"}));
  EXPECT_EQ(slurp(dir_.path / "dt=a" / "part-0-0.csv"), "1\n2\n3\n");
  EXPECT_EQ(slurp(dir_.path / "dt=a" / "part-0-0-1.csv"), "4\n");
  EXPECT_EQ(slurp(dir_.path / "dt=b" / "part-0-0-1.csv"), "2\n");
}

}  // namespace
}  // namespace clink::test
