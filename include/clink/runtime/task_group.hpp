#pragma once
// The tasks of one attempt of a job, and where they run. One runtime, two deployments:
// embedded, a JobRun runs every task in a TaskGroup of its own process; in a cluster,
// the coordinator's JobRun drives a TaskDeployer that ships the job to workers, and
// each worker runs its share of the tasks in a TaskGroup whose events travel back.
//
// Tasks are numbered in plan order: the chains of plan_tasks(), each subtask in turn.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "clink/checkpoint/checkpoint_metadata.hpp"
#include "clink/core/owned_directory.hpp"
#include "clink/core/stream_element.hpp"
#include "clink/metrics/metric_registry.hpp"
#include "clink/runtime/channel_writer.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/runtime/input_gate.hpp"

namespace clink {

namespace detail {
class Task;
}

// A snapshot of every operator of a task at one checkpoint: (operator uid, state).
using TaskSnapshot = std::vector<std::pair<std::string, OperatorSubtaskState>>;

// What running tasks tell the checkpoint coordinator of their job.
class TaskEvents {
 public:
  virtual ~TaskEvents() = default;
  // `task` failed (kWholeJob: a failure of no one task, e.g. a deployment's): with
  // region failover only the task's pipelined region restarts.
  static constexpr std::size_t kWholeJob = static_cast<std::size_t>(-1);
  virtual void fail(std::size_t task, const std::string& message) = 0;
  // times: how long the task held back inputs waiting for all barriers, and its snapshot's
  // synchronous and asynchronous parts.
  virtual void acknowledge_checkpoint(std::size_t task, std::int64_t checkpoint_id, TaskSnapshot snapshot,
                                      const CheckpointTaskTimes& times) = 0;
  // A snapshot the task took part of and will never acknowledge (the checkpoint was
  // aborted, an operator failed, the task was cancelled): the new shared files it uploaded
  // are deleted. Where the coordinator is remote they stay until the job's shared/ ends.
  virtual void discard_snapshot(std::int64_t /*checkpoint_id*/, TaskSnapshot /*partial*/) {}
  // The task ran end_of_input() and now waits for its final checkpoint (FLIP-147): it
  // takes part in checkpoints through its mailbox, without barriers (its outputs ended).
  virtual void task_ended(std::size_t task) = 0;
  // The task exited after its work was done and committed (or it started finished):
  // checkpoints record its operators' subtasks as finished, with no state.
  virtual void task_finished(std::size_t task) = 0;
  // The task ran notify_checkpoint_complete(checkpoint_id) on all its operators.
  virtual void checkpoint_committed(std::size_t task, std::int64_t checkpoint_id) = 0;
  // Where the snapshot files of checkpoint (or savepoint) `checkpoint_id` go.
  virtual std::filesystem::path checkpoint_directory(std::int64_t checkpoint_id) const = 0;
  // False once the checkpoint was aborted (its files are being deleted).
  virtual bool checkpoint_pending(std::int64_t checkpoint_id) const = 0;
};

// The layout of a job's tasks.
// Where an attempt (or one region's redeployment) starts: the checkpoint or savepoint
// its tasks restore (none: a fresh start) and the highest checkpoint id the job issued
// before it. The two differ when a restart falls back past a damaged newest checkpoint:
// what the tasks number after their restore (a sink's transactions) must stay above
// every id the earlier attempts used, for those may have committed.
struct AttemptStart {
  std::optional<std::filesystem::path> restore;
  std::int64_t last_checkpoint_id = 0;
};

struct TaskLayout {
  struct Entry {
    std::size_t chain = 0;
    int subtask = 0;
    int parallelism = 1;
    bool source = false;  // the chain's head has no inputs
  };
  std::vector<std::vector<std::string>> chains;  // operator ids, head first
  std::vector<Entry> tasks;                      // by task index
  // Pipelined regions (Flink's failover regions): the connected components of the task
  // graph. A forward edge between equal parallelisms links subtask i to subtask i only
  // (pointwise); every other edge links all subtasks of both ends.
  std::vector<std::vector<std::size_t>> regions;  // task indices, ascending
  std::vector<std::size_t> region_of;             // by task index
  static TaskLayout of(const JobGraph& graph);
};

// Some (or all) tasks of one attempt, run on threads of this process.
class TaskGroup {
 public:
  struct Wiring {
    // Which tasks run here (empty: all of them).
    std::vector<std::size_t> local_tasks;
    // The sending end of channel `channel` of task `task`'s input gate, for a task that
    // runs elsewhere.
    std::function<std::unique_ptr<ChannelWriter>(std::size_t task, std::size_t channel)> remote_writer;
    // Called on a task's thread as it exits.
    std::function<void(std::size_t task)> exited;
  };
  // Builds the tasks, restoring from `start.restore` (a checkpoint or savepoint
  // directory); throws ClinkError on a bad graph or restore. `metrics` and `events`
  // outlive the group.
  TaskGroup(const JobGraph& graph, const ExecutionOptions& options, const AttemptStart& start, TaskEvents& events,
            MetricRegistry& metrics, Wiring wiring);
  ~TaskGroup();  // cancels, joins, and removes a working directory it made
  TaskGroup(const TaskGroup&) = delete;
  TaskGroup& operator=(const TaskGroup&) = delete;

  const TaskLayout& layout() const { return layout_; }
  bool is_local(std::size_t task) const;
  InputGate* gate(std::size_t task) const;  // null for sources and tasks elsewhere

  void start();
  // Every task stops (they leave quietly, as on a cancel).
  void cancel();
  bool cancelled() const;
  // Waits until every local task exited.
  void join();

  // Sources inject the barrier; tasks past their end of input snapshot at once.
  void trigger_checkpoint(std::size_t task, const CheckpointBarrier& barrier);
  void notify_checkpoint_complete(std::size_t task, std::int64_t checkpoint_id);
  // Sources poll again after a stop-with-savepoint failed (the job goes on).
  void resume_after_failed_stop(std::size_t task);
  // Stop with drain: the source emits MAX_WATERMARK, then the barrier (nothing between).
  void trigger_drained_checkpoint(std::size_t task, const CheckpointBarrier& barrier);

 private:
  class Control;
  TaskLayout layout_;
  ExecutionOptions options_;
  std::unique_ptr<Control> control_;
  std::vector<std::unique_ptr<detail::Task>> tasks_;  // by task index; null when elsewhere
  std::function<void(std::size_t)> exited_;
  std::vector<std::thread> threads_;
  std::filesystem::path own_working_dir_;
  OwnedDirectory own_working_lock_;  // marks it in use: a killed process's is swept
};

// Coordinator side of a cluster: runs each attempt's tasks somewhere else.
class TaskDeployer {
 public:
  virtual ~TaskDeployer() = default;
  // Starts attempt `attempt` of every task from `start`; throws when it cannot (no
  // slots, no workers).
  virtual void deploy(std::int64_t attempt, const AttemptStart& start) = 0;
  // Whether the attempt's tasks run (a cluster's attempt may still wait for slots):
  // checkpoints and savepoints start only then.
  virtual bool ready() const { return true; }
  // Blocks until every task of the current attempt exited (the tasks of a lost worker
  // count as exited: the deployer reports the loss through TaskEvents::fail first).
  virtual void wait_exited() = 0;
  virtual void cancel() = 0;
  // Before a checkpoint's barriers go out: where its files go (every task that will
  // snapshot for it must know).
  virtual void checkpoint_started(const CheckpointBarrier& barrier, const std::filesystem::path& dir) = 0;
  virtual void trigger_checkpoint(std::size_t task, const CheckpointBarrier& barrier) = 0;
  // Stop with drain (Flink's stop --drain): source `task` emits MAX_WATERMARK, so every
  // event-time window and timer downstream fires, then injects the savepoint's barrier.
  virtual void trigger_drained_checkpoint(std::size_t task, const CheckpointBarrier& barrier) = 0;
  virtual void notify_checkpoint_complete(std::size_t task, std::int64_t checkpoint_id) = 0;
  virtual void resume_after_failed_stop(std::size_t task) = 0;

  // Region failover: a deployer that can restart some tasks while the others run.
  // cancel_tasks() stops `tasks` (a pipelined region) and wait_exited() then also waits
  // for their redeployment by deploy_tasks() (or for cancel()).
  virtual bool deploys_regions() const { return false; }
  virtual void cancel_tasks(const std::vector<std::size_t>& /*tasks*/) {}
  virtual void wait_tasks_exited(const std::vector<std::size_t>& /*tasks*/) {}
  virtual void deploy_tasks(const std::vector<std::size_t>& /*tasks*/, const AttemptStart& /*start*/) {}
};

// Runs `graph` with its tasks deployed by the deployer `make_deployer` returns; that
// deployer reports its tasks' events to the TaskEvents it is given, and their metrics
// into the job's MetricRegistry. Checkpoints, savepoints and restarts are the embedded
// runtime's.
using DeployerFactory = std::function<std::unique_ptr<TaskDeployer>(TaskEvents&, MetricRegistry&)>;
JobHandle execute_deployed(const JobGraph& graph, ExecutionOptions options, const DeployerFactory& make_deployer);

}  // namespace clink
