// Region failover (Flink's jobmanager.execution.failover-strategy: region): a failed
// task restarts with its pipelined region only, from the latest completed checkpoint;
// the other regions run on (their sources are never rewound) and the exactly-once
// output is the failure-free one. A job whose edges join everything is one region.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include "clink/api/data_stream.hpp"
#include "clink/checkpoint/checkpoint_metadata.hpp"
#include "clink/connectors/datagen.hpp"
#include "clink/connectors/exactly_once_collect_sink.hpp"
#include "clink/runtime/task_group.hpp"
#include "../support/checkpoint_support.hpp"

namespace clink::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Out = SequenceOut;

// How often each subtask of a source or a sink was opened (once per deployment).
struct Opens {
  std::mutex mu;
  std::map<int, int> by_subtask;
  void add(int subtask) {
    std::lock_guard lock(mu);
    ++by_subtask[subtask];
  }
  std::vector<int> counts(int parallelism) {
    std::lock_guard lock(mu);
    std::vector<int> v;
    for (int s = 0; s < parallelism; ++s) v.push_back(by_subtask[s]);
    return v;
  }
};

class CountingSource final : public Source<std::int64_t> {
 public:
  CountingSource(std::shared_ptr<const Source<std::int64_t>> inner, std::shared_ptr<Opens> opens)
      : inner_(std::move(inner)), opens_(std::move(opens)) {}
  std::unique_ptr<SourceReader<std::int64_t>> create_reader(int subtask, int parallelism) const override {
    opens_->add(subtask);
    return inner_->create_reader(subtask, parallelism);
  }
  std::string factory_name() const override { return inner_->factory_name(); }

 private:
  std::shared_ptr<const Source<std::int64_t>> inner_;
  std::shared_ptr<Opens> opens_;
};

class CountingSink final : public TransactionalSink<Out> {
 public:
  CountingSink(std::shared_ptr<ExactlyOnceCollectSink<Out>> inner, std::shared_ptr<Opens> opens)
      : inner_(std::move(inner)), opens_(std::move(opens)) {}
  std::unique_ptr<TransactionalSinkWriter<Out>> create_writer(int subtask, int parallelism) const override {
    opens_->add(subtask);
    return inner_->create_writer(subtask, parallelism);
  }
  std::string factory_name() const override { return "counting_collect"; }

 private:
  std::shared_ptr<ExactlyOnceCollectSink<Out>> inner_;
  std::shared_ptr<Opens> opens_;
};

std::vector<Out> expected_output(std::int64_t n) {
  std::vector<Out> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back({i % kSequenceKeys, i, i / kSequenceKeys + 1});
  std::sort(v.begin(), v.end());
  return v;
}

struct Job {
  std::shared_ptr<Opens> source_opens = std::make_shared<Opens>();
  std::shared_ptr<Opens> sink_opens = std::make_shared<Opens>();
  std::shared_ptr<ExactlyOnceCollectSink<Out>> collected = std::make_shared<ExactlyOnceCollectSink<Out>>();
  std::shared_ptr<Injector> injector = std::make_shared<Injector>();
};

// `parallelism` forward pipelines numbers -> injector -> to-out -> sink: subtask i reads
// rows i, i + p, ... The injector fails row `injector->at` (so subtask at % p).
void independent_pipelines(StreamExecutionEnvironment& env, Job& job, std::int64_t n, int parallelism, bool chained) {
  env.set_parallelism(parallelism);
  if (!chained) env.disable_operator_chaining();
  DatagenOptions opts;
  opts.rows_per_second = 2000;
  auto source = std::make_shared<CountingSource>(DatagenSource<std::int64_t>::sequence(0, n - 1, opts), job.source_opens);
  env.from_source<std::int64_t>(source, "Numbers")
      .uid("numbers")
      .map(failing_at(job.injector), "Injector")
      .uid("injector")
      .map([](std::int64_t v) { return Out{v % kSequenceKeys, v, v / kSequenceKeys + 1}; }, "ToOut")
      .uid("to-out")
      .sink_to(std::make_shared<CountingSink>(job.collected, job.sink_opens), "Sink");
}

class RegionFailover : public BackendTest {};
INSTANTIATE_TEST_SUITE_P(Backends, RegionFailover, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

TEST(RegionFailoverLayout, RegionsAreTheConnectedComponentsOfTheTaskGraph) {
  Job job;
  {
    StreamExecutionEnvironment env;
    independent_pipelines(env, job, 10, 4, /*chained=*/true);
    auto layout = TaskLayout::of(env.graph());
    ASSERT_EQ(layout.tasks.size(), 4u);
    EXPECT_EQ(layout.regions.size(), 4u);
  }
  {
    // Unchained, the forward edges are pointwise: subtask i feeds subtask i only.
    StreamExecutionEnvironment env;
    independent_pipelines(env, job, 10, 3, /*chained=*/false);
    auto layout = TaskLayout::of(env.graph());
    ASSERT_EQ(layout.tasks.size(), 12u);
    ASSERT_EQ(layout.regions.size(), 3u);
    for (const auto& region : layout.regions) {
      ASSERT_EQ(region.size(), 4u);
      for (std::size_t t : region) EXPECT_EQ(layout.tasks[t].subtask, layout.tasks[region.front()].subtask);
    }
  }
  {
    // A keyBy joins every subtask: one region.
    StreamExecutionEnvironment env;
    checked_sequence(env, 10, 0, std::make_shared<Injector>()).set_parallelism(2).sink_to(job.collected, "Sink");
    EXPECT_EQ(TaskLayout::of(env.graph()).regions.size(), 1u);
  }
}

TEST_P(RegionFailover, OnlyTheFailedRegionRestartsAndOutputIsExactlyOnce) {
  for (bool chained : {true, false}) {
    TempDir dir;
    Job job;
    const std::int64_t n = 2000;
    job.injector->at = 1001;  // subtask 1 of 4, about half way (after checkpoints)
    job.injector->failures_left = 1;
    StreamExecutionEnvironment env;
    independent_pipelines(env, job, n, 4, chained);
    auto handle = execute_async(env.graph(), checkpointing(dir.path));
    handle.wait();
    EXPECT_EQ(handle.status(), JobStatus::kFinished);
    EXPECT_EQ(handle.checkpoint_counts().restarts, 1);
    ASSERT_EQ(handle.restart_causes().size(), 1u);
    EXPECT_THAT(handle.restart_causes()[0], HasSubstr("injected failure at 1001"));
    // The other regions' sources were opened once: never rewound.
    EXPECT_THAT(job.source_opens->counts(4), ElementsAre(1, 2, 1, 1)) << "chained " << chained;
    EXPECT_THAT(job.sink_opens->counts(4), ElementsAre(1, 2, 1, 1)) << "chained " << chained;
    EXPECT_EQ(sorted(job.collected->values()), expected_output(n)) << "chained " << chained;
    EXPECT_GE(handle.checkpoint_counts().completed, 2);
  }
}

TEST_P(RegionFailover, TheRestartedRegionResumesFromTheLatestCheckpoint) {
  // The failure comes late: the restarted source must resume from its checkpointed
  // position (it is not re-read from the start: the sink commits each row once, and a
  // restart from scratch would have to re-open and replay rows before the checkpoint).
  TempDir dir;
  Job job;
  const std::int64_t n = 2000;
  job.injector->at = 1802;  // subtask 2, near its end
  job.injector->failures_left = 2;  // fails the first deployment and the region's restart
  StreamExecutionEnvironment env;
  independent_pipelines(env, job, n, 4, true);
  auto handle = execute_async(env.graph(), checkpointing(dir.path));
  handle.wait();
  EXPECT_EQ(handle.status(), JobStatus::kFinished);
  EXPECT_EQ(handle.checkpoint_counts().restarts, 2);  // each region failover counts
  EXPECT_THAT(job.source_opens->counts(4), ElementsAre(1, 1, 3, 1));
  EXPECT_EQ(sorted(job.collected->values()), expected_output(n));
}

TEST_P(RegionFailover, FullStrategyRestartsEveryTask) {
  TempDir dir;
  Job job;
  const std::int64_t n = 2000;
  job.injector->at = 1001;
  job.injector->failures_left = 1;
  StreamExecutionEnvironment env;
  independent_pipelines(env, job, n, 4, true);
  auto options = checkpointing(dir.path);
  options.failover = FailoverStrategy::kFull;
  auto handle = execute_async(env.graph(), options);
  handle.wait();
  EXPECT_EQ(handle.status(), JobStatus::kFinished);
  EXPECT_EQ(handle.checkpoint_counts().restarts, 1);
  EXPECT_THAT(job.source_opens->counts(4), ElementsAre(2, 2, 2, 2));
  EXPECT_EQ(sorted(job.collected->values()), expected_output(n));
}

TEST_P(RegionFailover, AKeyedJobIsOneRegionAndRestartsWhole) {
  TempDir dir;
  auto collected = std::make_shared<ExactlyOnceCollectSink<Out>>();
  auto opens = std::make_shared<Opens>();
  auto injector = std::make_shared<Injector>();
  injector->at = 1234;
  injector->failures_left = 1;
  StreamExecutionEnvironment env;
  checked_sequence(env, 2000, 4000, injector)
      .set_parallelism(2)
      .sink_to(std::make_shared<CountingSink>(collected, opens), "Sink");
  auto handle = execute_async(env.graph(), checkpointing(dir.path));
  handle.wait();
  EXPECT_EQ(handle.status(), JobStatus::kFinished);
  EXPECT_EQ(handle.checkpoint_counts().restarts, 1);
  EXPECT_THAT(opens->counts(1), ElementsAre(2));  // the sink (parallelism 1) restarted with the rest
  EXPECT_EQ(sorted(collected->values()), expected_output(2000));
}

TEST_P(RegionFailover, ARegionOutOfRestartsFailsTheJob) {
  TempDir dir;
  Job job;
  job.injector->at = 1001;
  job.injector->failures_left = 100;
  StreamExecutionEnvironment env;
  independent_pipelines(env, job, 2000, 4, true);
  auto options = checkpointing(dir.path);
  options.restart = RestartStrategy::fixed_delay(2, 10);
  auto handle = execute_async(env.graph(), options);
  EXPECT_THROW(handle.wait(), JobFailedError);
  EXPECT_THAT(handle.error(), HasSubstr("injected failure at 1001"));
  EXPECT_EQ(handle.checkpoint_counts().restarts, 2);
  EXPECT_THAT(job.source_opens->counts(4), ElementsAre(1, 3, 1, 1));
}

}  // namespace
}  // namespace clink::test
