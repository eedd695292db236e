// A failure after a stop's savepoint completed and before every sink committed it
// (found by the soak test): the restart must restore that savepoint, whose commits are
// under way, and the stop must end once they are done. Restoring an older checkpoint
// instead wrote committed output again, and the file sink deleted the savepoint's
// pre-committed files as leftovers of a failed attempt, so every resume from the
// savepoint failed ("cannot commit ... neither it nor its staging file exists").
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "clink/api/data_stream.hpp"
#include "clink/connectors/datagen.hpp"
#include "clink/connectors/file_sink.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/executor.hpp"

#include "../support/temp_dir.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;

// The next commit of a FlakyCommitSink fails (once) when set.
std::atomic<bool> fail_next_commit{false};

// The file sink, with a commit that fails when the test says so: a failure between a
// completed savepoint and its commit.
class FlakyCommitSink final : public TransactionalSink<std::int64_t> {
 public:
  explicit FlakyCommitSink(std::string path) : files_(std::move(path)) {}
  std::unique_ptr<TransactionalSinkWriter<std::int64_t>> create_writer(int subtask, int parallelism) const override {
    return std::make_unique<Writer>(files_.create_writer(subtask, parallelism));
  }
  std::string factory_name() const override { return "flaky_commit_file_sink"; }

 private:
  class Writer final : public TransactionalSinkWriter<std::int64_t> {
   public:
    explicit Writer(std::unique_ptr<TransactionalSinkWriter<std::int64_t>> files) : files_(std::move(files)) {}
    void open(RuntimeContext& ctx) override { files_->open(ctx); }
    void begin_transaction(std::int64_t id) override { files_->begin_transaction(id); }
    void write(const Batch<std::int64_t>& batch) override { files_->write(batch); }
    std::string pre_commit() override { return files_->pre_commit(); }
    void commit(const std::string& committable) override {
      if (fail_next_commit.exchange(false)) throw ClinkError("the commit failed (injected by the test)");
      files_->commit(committable);
    }
    void abort() override { files_->abort(); }
    void close() override { files_->close(); }

   private:
    std::unique_ptr<TransactionalSinkWriter<std::int64_t>> files_;
  };
  FileSink<std::int64_t> files_;
};

constexpr std::int64_t kRows = 20'000;

// 0 .. kRows-1 into part files under `out`, at `rate` rows per second (0: at once).
JobGraph numbers_job(const fs::path& out, int parallelism, double rate) {
  StreamExecutionEnvironment env;
  env.set_parallelism(parallelism);
  DatagenOptions opts;
  opts.rows_per_second = rate;
  env.from_source<std::int64_t>(DatagenSource<std::int64_t>::sequence(0, kRows - 1, opts), "Numbers")
      .uid("numbers")
      .sink_to(std::make_shared<FlakyCommitSink>(out.string() + "/"), "Files");
  return env.graph();
}

// The numbers in the visible (committed) files under `dir`, sorted.
std::vector<std::int64_t> committed_numbers(const fs::path& dir) {
  std::vector<std::int64_t> all;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().starts_with(".")) continue;
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) all.push_back(std::stoll(line));
  }
  std::sort(all.begin(), all.end());
  return all;
}

class StopSavepointFailover : public ::testing::TestWithParam<int> {};
// Parallelism 1: one region, the whole job restarts; 2: two regions, one restarts.
INSTANTIATE_TEST_SUITE_P(Parallelism, StopSavepointFailover, ::testing::Values(1, 2));

TEST_P(StopSavepointFailover, AFailedCommitOfTheStopSavepointRestoresItAndLosesNothingOnResume) {
  TempDir dir;
  const fs::path out = dir.path / "out", savepoint = dir.path / "sp";
  ExecutionOptions options;
  options.checkpoints.interval_ms = 3'600'000;  // no periodic checkpoint: the savepoint is the only one
  options.checkpoints.directory = dir.path / "chk";
  options.restart = RestartStrategy::fixed_delay(3, 0);
  fail_next_commit = false;
  auto handle = execute_async(numbers_job(out, GetParam(), 4000), options);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  fail_next_commit = true;
  const auto started = std::chrono::steady_clock::now();
  handle.stop_with_savepoint(savepoint, std::chrono::seconds(30));
  const auto stop_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  EXPECT_FALSE(fail_next_commit) << "no commit ran";
  ASSERT_EQ(handle.restart_causes().size(), 1u);
  EXPECT_NE(handle.restart_causes()[0].find("the commit failed (injected by the test)"), std::string::npos)
      << handle.restart_causes()[0];
  // The restart committed the savepoint's output itself (restored from it), so the stop
  // did not wait out its timeout for a commit that would never come.
  EXPECT_LT(stop_ms, 10'000);
  const auto at_stop = committed_numbers(out);
  ASSERT_FALSE(at_stop.empty());
  ASSERT_LT(at_stop.size(), static_cast<std::size_t>(kRows)) << "the job ended before the stop";
  for (std::size_t i = 1; i < at_stop.size(); ++i) ASSERT_NE(at_stop[i], at_stop[i - 1]) << "repeated";

  // Resuming from the savepoint commits the rest: every number exactly once.
  ExecutionOptions resume = options;
  resume.restore = RestoreSettings{savepoint};
  execute(numbers_job(out, GetParam(), 0), resume);
  const auto all = committed_numbers(out);
  ASSERT_EQ(all.size(), static_cast<std::size_t>(kRows));
  for (std::int64_t i = 0; i < kRows; ++i) ASSERT_EQ(all[i], i);
}

}  // namespace
}  // namespace clink::test
