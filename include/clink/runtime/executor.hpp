#pragma once
#include <chrono>
#include <memory>
#include <string>

#include "clink/metrics/metric_registry.hpp"
#include "clink/runtime/job_graph.hpp"
#include "clink/runtime/timer_service.hpp"

namespace clink {

enum class JobStatus { kCreated, kRunning, kFinished, kFailed, kCanceled };
const char* job_status_name(JobStatus s);

class JobRun;  // the running job's internals

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

 private:
  std::shared_ptr<JobRun> run_;
};

struct ExecutionOptions {
  const ProcessingTimeClock* clock = &SystemClock::instance();
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
