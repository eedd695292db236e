#pragma once
// Internal to the executor: one task runs a chain of operators at one subtask index
// on its own thread.
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "clink/checkpoint/checkpoint_config.hpp"
#include "clink/checkpoint/checkpoint_metadata.hpp"
#include "clink/core/error.hpp"
#include "clink/core/log.hpp"
#include "clink/metrics/metric_registry.hpp"
#include "clink/runtime/channel_writer.hpp"
#include "clink/runtime/failure_injector.hpp"
#include "clink/runtime/input_gate.hpp"
#include "clink/runtime/job_graph.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/runtime/partitioner.hpp"
#include "clink/runtime/task_group.hpp"
#include "clink/state/keyed_state_backend.hpp"

namespace clink::detail {

// Where one output of an operator goes: the next operator of the chain, or channels.
class Target {
 public:
  virtual ~Target() = default;
  virtual void push(BatchPtr batch) = 0;
  virtual void push_watermark(Watermark wm) = 0;
  virtual void push_end() = 0;
  virtual void push_barrier(const CheckpointBarrier&) {}  // chained operators snapshot with their task
};

struct OperatorHost;

class HostOutput final : public Output {
 public:
  void emit(BatchPtr batch) override;
  void emit_watermark(Watermark wm) override;
  void emit_side(const std::string& tag, BatchPtr batch) override;
  void end_network_outputs();
  void barrier_network_outputs(const CheckpointBarrier& barrier);

  OperatorMetrics* metrics = nullptr;
  // A source's failure probe (it counts what the source emits); null: none.
  FailureProbe* source_probe = nullptr;
  std::vector<std::unique_ptr<Target>> main;
  std::map<std::string, std::vector<std::unique_ptr<Target>>> sides;

 private:
  static void fan_out(std::vector<std::unique_ptr<Target>>& targets, BatchPtr batch);
};

struct OperatorHost {
  const JobNode* node = nullptr;
  std::unique_ptr<StreamOperator> op;
  std::unique_ptr<RuntimeContext> ctx;
  HostOutput output;
  std::shared_ptr<OperatorMetrics> metrics;
  std::string display_name;  // "Map (1/2)"
  // Where an injected failure may hit this operator subtask (failure_injector.hpp);
  // null unless a rule selects it, so the per-batch cost is one predictable branch.
  std::unique_ptr<FailureProbe> probe;
};

// Thrown when an operator inside a chain fails, carrying the attributed message.
class OperatorFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs `fn` (a call into `host`'s operator) and attributes an exception it throws to
// that operator: "Map (1/2) failed: <what>". Failures already attributed further down
// the chain, and cancellation, pass through unchanged.
template <class Fn>
void attributed(const OperatorHost& host, Fn&& fn, const char* verb = "failed") {
  try {
    fn();
  } catch (const OperatorFailure&) {
    throw;
  } catch (const TaskCancelled&) {
    throw;
  } catch (const std::exception& e) {
    throw OperatorFailure(host.display_name + " " + verb + ": " + e.what());
  }
}

// Calls into a chained operator, attributing its failures.
class ChainedTarget final : public Target {
 public:
  explicit ChainedTarget(OperatorHost* next) : next_(next) {}
  void push(BatchPtr batch) override;
  void push_watermark(Watermark wm) override;
  void push_end() override {}

 private:
  OperatorHost* next_;
};

class NetworkTarget final : public Target {
 public:
  // writers[d]: the channel to downstream subtask d.
  NetworkTarget(std::unique_ptr<Partitioner> partitioner, std::vector<std::unique_ptr<ChannelWriter>> writers,
                TaskTimeMetrics* time)
      : partitioner_(std::move(partitioner)), writers_(std::move(writers)), scratch_(writers_.size()), time_(time) {}
  void push(BatchPtr batch) override;
  void push_watermark(Watermark wm) override;
  void push_end() override;
  void push_barrier(const CheckpointBarrier& barrier) override;

 private:
  std::unique_ptr<Partitioner> partitioner_;
  std::vector<std::unique_ptr<ChannelWriter>> writers_;
  std::vector<BatchPtr> scratch_;
  TaskTimeMetrics* time_;
};

// What a task sees of its job: the coordinator's events, and whether it is cancelled.
class JobControl : public TaskEvents {
 public:
  virtual bool cancelled() const = 0;
};

class Task {
 public:
  Task(std::size_t index, std::string name, JobControl& job, const ProcessingTimeClock& clock,
       const CheckpointConfig& checkpoints)
      : index_(index),
        name_(std::move(name)),
        job_(job),
        clock_(clock),
        checkpoints_(checkpoints),
        time_(std::make_shared<TaskTimeMetrics>()) {}

  ~Task() { join_async_snapshot(); }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;

  void run();  // the thread body: never throws

  // Called from other threads; run on the task thread between elements.
  void post(std::function<void()> action);
  // Source tasks: inject the barrier of a new checkpoint. Ended tasks: snapshot.
  // drain (stop --drain): a running source emits MAX_WATERMARK just before the barrier.
  void trigger_checkpoint(CheckpointBarrier barrier, bool drain = false);
  void notify_checkpoint_complete(std::int64_t checkpoint_id);
  // Source tasks: poll again after a stop-with-savepoint failed (the job goes on).
  void resume_after_failed_stop();

  std::vector<std::unique_ptr<OperatorHost>> chain;  // head first
  std::unique_ptr<InputGate> gate;                   // null for source tasks
  // Every operator of the chain finished in the restored checkpoint: nothing runs, the
  // outputs end at once (Flink's finished-on-restore task).
  bool finished_on_restore = false;
  // The savepoint it restores from (0: none, or a checkpoint). Opening its chain commits
  // what that savepoint pre-committed, which the task then reports as committed.
  std::int64_t restored_checkpoint = 0;
  log::Context log_context;  // its thread logs as this task of the job
  const std::string& name() const { return name_; }
  std::shared_ptr<TaskTimeMetrics> time_metrics() const { return time_; }

 private:
  void run_source();
  void run_inputs();
  void fire_processing_timers();
  std::chrono::steady_clock::time_point next_wakeup() const;
  void end_of_input();
  void await_final_checkpoint();
  void run_mailbox();
  // Snapshots every operator of the chain and forwards the barrier downstream: the
  // synchronous part. Keyed state that its backend writes asynchronously is written on
  // async_snapshot_, which acknowledges the checkpoint after it.
  void perform_checkpoint(const CheckpointBarrier& barrier, std::int64_t alignment_ns = 0);
  struct AsyncKeyedSnapshot {
    std::size_t entry;          // its operator's entry of the task's snapshot
    std::string operator_name;  // "GroupAggregate (1/2)", for a failure
    KeyedStateBackend::SnapshotWriter write;
  };
  void write_keyed_snapshots(std::int64_t id, TaskSnapshot snapshot, std::vector<AsyncKeyedSnapshot> keyed,
                             std::int64_t alignment_ns, std::int64_t sync_ms);
  void join_async_snapshot();
  // Gives up the keyed snapshots not written (yet), which a failed or aborted snapshot
  // of the task discards: a backend that wrote its snapshot in begin_snapshot (RocksDB's
  // new shared SSTs) hands over its handle, so the discard deletes its files.
  static void give_up(TaskSnapshot& snapshot, std::vector<AsyncKeyedSnapshot>& keyed);

  std::size_t index_;
  std::string name_;
  JobControl& job_;
  const ProcessingTimeClock& clock_;
  const CheckpointConfig& checkpoints_;
  std::mutex mailbox_mu_;
  std::condition_variable mailbox_cv_;
  std::vector<std::function<void()>> mailbox_;
  std::atomic<bool> mailbox_pending_{false};
  bool stopped_at_savepoint_ = false;  // source tasks: a stop-with-savepoint barrier passed (task thread only)
  // Task thread only: the last checkpoint this task snapshotted (a trigger can arrive
  // twice around the end of input), and the end of input and what completes after it.
  std::int64_t last_checkpoint_ = 0;
  bool ended_ = false;
  std::int64_t first_checkpoint_after_end_ = 0;  // 0: none yet
  bool final_checkpoint_completed_ = false;
  std::shared_ptr<TaskTimeMetrics> time_;
  std::thread async_snapshot_;  // the last checkpoint's asynchronous part (task thread only)
};

}  // namespace clink::detail
