#pragma once
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <vector>
#include <string>

#include "clink/checkpoint/checkpoint_config.hpp"
#include "clink/metrics/metric_registry.hpp"
#include "clink/runtime/job_graph.hpp"
#include "clink/runtime/timer_service.hpp"

namespace clink {

enum class JobStatus { kCreated, kRunning, kFinished, kFailed, kCanceled };
const char* job_status_name(JobStatus s);


// How long a task's part of a checkpoint took, sent with its acknowledgement (Flink's
// per-subtask checkpoint statistics).
struct CheckpointTaskTimes {
  std::int64_t alignment_ns = 0;  // inputs held back for the barrier (first barrier to last)
  std::int64_t sync_ms = 0;       // the synchronous part: the task stopped at the barrier
  std::int64_t async_ms = 0;      // the asynchronous part: state written while the task went on
};

// One task's part in a completed checkpoint: the subtask of a chain (named by its head
// operator, as the REST API's vertices are), when its acknowledgement arrived and how
// long it held inputs back for the barrier (from the first barrier to the last), and
// its synchronous and asynchronous snapshot durations.
struct CheckpointTaskStats {
  std::string head;
  int subtask = 0;
  std::int64_t ack_ms = 0;  // after the trigger
  std::int64_t alignment_ns = 0;
  std::int64_t sync_ms = 0;
  std::int64_t async_ms = 0;
};

// One checkpoint of a job, as its handle reports it.
struct CheckpointStats {
  enum class Status { kCompleted, kFailed };
  std::int64_t id = 0;
  Status status = Status::kCompleted;
  std::int64_t duration_ms = 0;  // trigger to metadata written
  std::int64_t size_bytes = 0;   // bytes written into the checkpoint directory (not shared/)
  std::int64_t alignment_ms = 0;  // longest time a task held back inputs for this barrier
  std::vector<CheckpointTaskStats> tasks;  // of a completed checkpoint: every task's
  std::string path;
  std::string failure;  // why it failed
};

struct CheckpointCounts {
  std::int64_t completed = 0;
  std::int64_t failed = 0;
  std::int64_t last_completed_id = -1;
  std::int64_t restarts = 0;
  // The checkpoint (or savepoint) the current attempt restored from; -1: none.
  std::int64_t last_restored_id = -1;
  std::int64_t in_progress = 0;  // triggered, not yet completed or failed (at most one)
};

class JobRun;  // the running job's internals
class FailureInjector;  // clink/runtime/failure_injector.hpp

// A running or finished job.
class JobHandle {
 public:
  explicit JobHandle(std::shared_ptr<JobRun> run);
  // Blocks until the job ends; throws JobFailedError with the failing operator's
  // message if it failed.
  void wait();
  // Waits at most `timeout`; returns whether the job ended.
  bool wait_for(std::chrono::milliseconds timeout);
  void cancel();
  JobStatus status() const;
  std::string error() const;  // empty unless failed
  const MetricRegistry& metrics() const;
  std::vector<CheckpointStats> checkpoint_history() const;
  // Takes a savepoint (a self-contained checkpoint the user owns) into `dir`; blocks
  // until it completed; throws ClinkError if it failed.
  std::filesystem::path savepoint(const std::filesystem::path& dir,
                                  std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // A savepoint, then cancel: a later run restored from it continues with no gap
  // and no repeat. With `drain` (Flink's stop --drain) the sources first emit the final
  // watermark, so every event-time window and timer fires and its output is committed
  // with the savepoint: for a job that ends for good.
  std::filesystem::path stop_with_savepoint(const std::filesystem::path& dir,
                                            std::chrono::milliseconds timeout = std::chrono::seconds(60),
                                            bool drain = false);
  CheckpointCounts checkpoint_counts() const;
  // The failure that caused each restart, oldest first.
  std::vector<std::string> restart_causes() const;

 private:
  std::shared_ptr<JobRun> run_;
};

// Flink's jobmanager.execution.failover-strategy: which tasks restart when one fails.
enum class FailoverStrategy {
  kRegion,  // "region" (Flink's default): the failed task's pipelined region only
  kFull,    // "full": every task of the job
};

struct ExecutionOptions {
  const ProcessingTimeClock* clock = &SystemClock::instance();
  CheckpointConfig checkpoints;
  RestartStrategy restart;  // every failover counts, a region's as a whole job's (as Flink)
  FailoverStrategy failover = FailoverStrategy::kRegion;
  std::optional<RestoreSettings> restore;  // start from this checkpoint or savepoint
  // Called when a checkpoint (not a savepoint) completed, its metadata written, before
  // any task hears of it: a highly available coordinator stores the pointer here, so a
  // new leader never resumes from a checkpoint older than committed output. A throw
  // fails the checkpoint.
  std::function<void(std::int64_t checkpoint_id, const std::filesystem::path& dir)> on_checkpoint_completed;
  // Deterministic fault injection (docs/fault-injection.md; `clink run --inject-failure`):
  // chosen operator subtasks fail at chosen points, as ordinary task failures. Shared by
  // this struct's copies, so what the rules injected carries over restarts. Null: none.
  std::shared_ptr<FailureInjector> failures;
};


// Runs a JobGraph in this process: one thread per task (a chain of operators at one
// subtask index), bounded channels between tasks.
JobHandle execute_async(const JobGraph& graph, ExecutionOptions options = {});
// Runs to completion; throws JobFailedError if the job failed.
void execute(const JobGraph& graph, ExecutionOptions options = {});

// Tasks and chains, as the executor would build them (for explain and tests).
struct TaskPlan {
  std::vector<std::string> chain;  // operator ids, head first
  int parallelism = 1;
};
std::vector<TaskPlan> plan_tasks(const JobGraph& graph);

}  // namespace clink
