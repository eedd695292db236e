// The failure injector (ExecutionOptions::failures) inside jobs: each trigger makes the
// operator subtask it selects fail as an ordinary task failure - the restart strategy
// restarts the job from its latest checkpoint - and the exactly-once output of the
// self-checking sequence job (checkpoint_support.hpp; checker at parallelism 2, sink 1)
// equals the failure-free run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "clink/connectors/exactly_once_collect_sink.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/failure_injector.hpp"
#include "../support/checkpoint_support.hpp"

namespace clink::test {
namespace {

using ::testing::HasSubstr;
using Out = SequenceOut;

std::vector<Out> expected_output(std::int64_t n) {
  std::vector<Out> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back({i % kSequenceKeys, i, i / kSequenceKeys + 1});
  std::sort(v.begin(), v.end());
  return v;
}

class FailureInjection : public BackendTest {
 protected:
  // Runs the checked sequence 0..n-1 (checker and sink at parallelism 2) with `specs`
  // injected, to its end.
  JobHandle run(std::int64_t n, const std::vector<std::string>& specs, std::shared_ptr<FailureInjector>& injector) {
    StreamExecutionEnvironment env;
    checked_sequence(env, n, 8000, std::make_shared<Injector>()).set_parallelism(2).sink_to(sink_, "Sink");
    auto options = checkpointing(dir_.path);
    injector = FailureInjector::parse(specs);
    options.failures = injector;
    auto handle = execute_async(env.graph(), options);
    handle.wait();
    return handle;
  }
  TempDir dir_;
  std::shared_ptr<ExactlyOnceCollectSink<Out>> sink_ = std::make_shared<ExactlyOnceCollectSink<Out>>();
};
INSTANTIATE_TEST_SUITE_P(Backends, FailureInjection, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

TEST_P(FailureInjection, AfterRecordsFailsTheSelectedSubtaskInEachAttemptUpToTimes) {
  std::shared_ptr<FailureInjector> injector;
  auto handle = run(4000, {"operator=checker,subtask=1,after-records=200,times=3"}, injector);
  EXPECT_EQ(handle.status(), JobStatus::kFinished);
  EXPECT_EQ(injector->injected(), 3);
  EXPECT_EQ(handle.checkpoint_counts().restarts, 3);
  ASSERT_EQ(handle.restart_causes().size(), 3u);
  for (const auto& cause : handle.restart_causes())
    EXPECT_THAT(cause, HasSubstr("Checker (2/2) failed: injected failure [operator=checker,subtask=1,"
                                 "after-records=200,times=3]: "));
  EXPECT_EQ(sorted(sink_->values()), expected_output(4000));
}

TEST_P(FailureInjection, AfterCheckpointFailsOnceItCompletedAndTheRestartRestoresIt) {
  std::shared_ptr<FailureInjector> injector;
  auto handle = run(4000, {"operator=Sink,subtask=0,after-checkpoint=2"}, injector);
  EXPECT_EQ(handle.status(), JobStatus::kFinished);
  EXPECT_EQ(injector->injected(), 1);
  ASSERT_EQ(handle.restart_causes().size(), 1u);
  EXPECT_THAT(handle.restart_causes()[0],
              HasSubstr("Sink (1/1) failed: injected failure [operator=Sink,subtask=0,after-checkpoint=2]: "
                        "checkpoint 2 completed at "));
  EXPECT_GE(handle.checkpoint_counts().last_restored_id, 2);
  EXPECT_EQ(sorted(sink_->values()), expected_output(4000));
}

TEST_P(FailureInjection, DuringCheckpointFailsTheSnapshotSoTheCheckpointFails) {
  std::shared_ptr<FailureInjector> injector;
  auto handle = run(4000, {"operator=checker,subtask=0,during-checkpoint=2"}, injector);
  EXPECT_EQ(handle.status(), JobStatus::kFinished);
  EXPECT_EQ(injector->injected(), 1);
  ASSERT_EQ(handle.restart_causes().size(), 1u);
  EXPECT_THAT(handle.restart_causes()[0],
              HasSubstr("Checker (1/2) failed in checkpoint 2: injected failure [operator=checker,subtask=0,"
                        "during-checkpoint=2]: while snapshotting checkpoint 2 at checker#0"));
  auto history = handle.checkpoint_history();
  auto second = std::find_if(history.begin(), history.end(), [](const CheckpointStats& s) { return s.id == 2; });
  ASSERT_NE(second, history.end());
  EXPECT_EQ(second->status, CheckpointStats::Status::kFailed);
  EXPECT_EQ(sorted(sink_->values()), expected_output(4000));
}

TEST_P(FailureInjection, SeededRandomFailuresOfTheSourceAreRecoveredFrom) {
  std::shared_ptr<FailureInjector> injector;
  // The source emits small batches at 8000 rows/s: about one failure per 1500 rows.
  auto handle = run(6000, {"operator=numbers,probability=0.0007,seed=11,times=4"}, injector);
  EXPECT_EQ(handle.status(), JobStatus::kFinished);
  EXPECT_GE(injector->injected(), 1);
  EXPECT_EQ(handle.checkpoint_counts().restarts, injector->injected());
  for (const auto& cause : handle.restart_causes())
    EXPECT_THAT(cause, HasSubstr("Numbers (1/1) failed: injected failure [operator=numbers,probability=0.0007,seed=11,"
                                 "times=4]: "));
  EXPECT_EQ(sorted(sink_->values()), expected_output(6000));
}

TEST_P(FailureInjection, WithoutRestartsAnInjectedFailureFailsTheJob) {
  StreamExecutionEnvironment env;
  checked_sequence(env, 1000, 0, std::make_shared<Injector>()).set_parallelism(1).sink_to(sink_, "Sink");
  auto options = checkpointing(dir_.path);
  options.restart = RestartStrategy::none();
  options.failures = FailureInjector::parse({"operator=checker,after-records=100"});
  auto handle = execute_async(env.graph(), options);
  EXPECT_THROW(handle.wait(), JobFailedError);
  EXPECT_THAT(handle.error(),
              HasSubstr("Checker (1/1) failed: injected failure [operator=checker,after-records=100]: "));
  EXPECT_TRUE(sink_->values().empty());
}

}  // namespace
}  // namespace clink::test
