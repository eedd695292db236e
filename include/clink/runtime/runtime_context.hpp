#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "clink/checkpoint/operator_state.hpp"
#include "clink/core/output_tag.hpp"
#include "clink/core/record.hpp"
#include "clink/metrics/metric_registry.hpp"
#include "clink/runtime/key_group.hpp"
#include "clink/runtime/timer_service.hpp"

namespace clink {

class Output;
class KeyedStateBackend;

// What an operator instance knows about where it runs.
class RuntimeContext {
 public:
  RuntimeContext(std::string operator_id, std::string operator_name, int subtask, int parallelism,
                 int max_parallelism, Output* output, std::shared_ptr<OperatorMetrics> metrics,
                 const ProcessingTimeClock& clock);
  ~RuntimeContext();

  const std::string& operator_id() const { return operator_id_; }
  const std::string& operator_name() const { return operator_name_; }
  int subtask_index() const { return subtask_; }
  int parallelism() const { return parallelism_; }
  int max_parallelism() const { return max_parallelism_; }
  KeyGroupRange key_groups() const { return key_group_range_for_subtask(max_parallelism_, parallelism_, subtask_); }
  // "name (2/4)", as Flink names subtasks in messages.
  std::string task_name() const;

  TimerService& timer_service() { return timers_; }
  OperatorMetrics& metrics() { return *metrics_; }
  Output& output() { return *output_; }
  // An operator that runs another operator inside it (the SQL window aggregate runs
  // the window engine) points the inner one's emissions at an adapting Output.
  void set_output(Output* output) { output_ = output; }

  // Keyed state of this subtask's key groups; null for non-keyed operators.
  KeyedStateBackend* keyed_state_backend() const { return keyed_backend_.get(); }
  void set_keyed_state_backend(std::unique_ptr<KeyedStateBackend> backend);
  // The keyed backend, created first when absent: a job's keyed operator always gets the
  // executor's (configured, restored); an operator run without an executor (operator
  // tests, benchmarks) keeps its state in a memory backend of its own, never checkpointed.
  KeyedStateBackend* keyed_state_backend_or_private();
  // Non-keyed state (source positions, pending commits); restored before open().
  OperatorStateStore& operator_state() { return operator_state_; }
  void set_operator_state(OperatorStateStore s) { operator_state_ = std::move(s); }
  // Whether this run restored from a checkpoint or savepoint, and its id (0: none).
  bool is_restored() const { return restored_; }
  void set_restored(bool r) { restored_ = r; }
  std::int64_t restored_checkpoint_id() const { return restored_checkpoint_id_; }
  void set_restored_checkpoint_id(std::int64_t id) { restored_checkpoint_id_ = id; }
  // The highest checkpoint id the job issued before this attempt started (0: none).
  // This attempt's checkpoints are numbered above it, also when it restored an older
  // one (a restart falling back past a damaged newest checkpoint): what an operator
  // numbers after checkpoints (a sink's transactions) starts above it, never reusing an
  // id an earlier attempt may have committed.
  std::int64_t last_checkpoint_id() const { return last_checkpoint_id_; }
  void set_last_checkpoint_id(std::int64_t id) { last_checkpoint_id_ = id; }
  // Whether the job takes periodic checkpoints. With them, what an operator leaves
  // pending at its end of input (a transactional sink's last transaction) is committed
  // by the final checkpoint that covers it; without, the end of input commits it.
  bool checkpointing_enabled() const { return checkpointing_; }
  void set_checkpointing_enabled(bool on) { checkpointing_ = on; }

  // Flink's mailbox: runs `action` on this operator's task thread between elements (and
  // wakes the task to do so). An operator's helper thread (an asynchronous lookup) hands
  // its results back through it; call from any thread. False when the operator runs
  // without a task (an operator test drives it by hand): the caller then polls.
  using Mailbox = std::function<void(std::function<void()>)>;
  bool post_to_task(std::function<void()> action) const {
    if (!mailbox_) return false;
    mailbox_(std::move(action));
    return true;
  }
  void set_task_mailbox(Mailbox mailbox) { mailbox_ = std::move(mailbox); }
  // Whether the job is being cancelled (a failure elsewhere, a stop): an operator that
  // blocks its task waiting for a helper thread gives up then (throws TaskCancelled).
  bool cancelled() const { return cancelled_ && cancelled_(); }
  void set_cancelled_check(std::function<bool()> check) { cancelled_ = std::move(check); }

 private:
  std::string operator_id_;
  std::string operator_name_;
  int subtask_;
  int parallelism_;
  int max_parallelism_;
  Output* output_;
  std::shared_ptr<OperatorMetrics> metrics_;
  TimerService timers_;
  std::unique_ptr<KeyedStateBackend> keyed_backend_;
  OperatorStateStore operator_state_;
  bool restored_ = false;
  std::int64_t restored_checkpoint_id_ = 0;
  std::int64_t last_checkpoint_id_ = 0;
  bool checkpointing_ = false;
  Mailbox mailbox_;
  std::function<bool()> cancelled_;
};

}  // namespace clink
