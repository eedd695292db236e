#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "clink/core/record.hpp"
#include "clink/core/watermark.hpp"
#include "clink/runtime/runtime_context.hpp"
#include "clink/runtime/timer_service.hpp"

namespace clink {

// Where an operator sends what it produces. Chained operators receive the batch
// directly (no queue, no copy); network outputs partition it onto channels.
class Output {
 public:
  virtual ~Output() = default;
  virtual void emit(BatchPtr batch) = 0;
  virtual void emit_watermark(Watermark wm) = 0;
  // Side output by tag name; dropped when nothing consumes the tag.
  virtual void emit_side(const std::string& tag, BatchPtr batch) = 0;
};

// The runtime's view of an operator. All calls for one operator instance happen on
// one thread, in stream order.
class StreamOperator {
 public:
  virtual ~StreamOperator() = default;

  // Number of logical inputs: 0 for sources, 2 for connect().
  virtual int num_inputs() const { return 1; }

  virtual void open(RuntimeContext& ctx) { ctx_ = &ctx; }
  // A batch arrived on `input`. The operator owns it and may reuse it for its output.
  virtual void process_batch(int input, BatchPtr batch) = 0;
  // The combined watermark of all inputs advanced (or went idle). The default fires
  // due event-time timers through on_event_time_timer, then forwards the watermark.
  virtual void process_watermark(Watermark wm);
  virtual void on_event_time_timer(const Timer&) {}
  virtual void on_processing_time_timer(const Timer&) {}
  // Fires due processing-time timers; called by the task when the clock passes one.
  virtual void process_processing_time(std::int64_t now);
  // All inputs ended: emit whatever is buffered. Called in topological order.
  virtual void finish() {}
  // A checkpoint barrier reached this operator: bring the keyed backend and
  // ctx().operator_state() up to date (flush caches, pre-commit a transaction). The
  // runtime then snapshots them, with the timers. Restored state is in place before open().
  virtual void snapshot_state(std::int64_t /*checkpoint_id*/) {}
  // Every task acknowledged the checkpoint and its metadata is written (commit here).
  virtual void notify_checkpoint_complete(std::int64_t /*checkpoint_id*/) {}
  // Always called last, after success, failure or cancel: release resources.
  virtual void close() {}

 protected:
  RuntimeContext& ctx() { return *ctx_; }
  Output& output() { return ctx_->output(); }

 private:
  RuntimeContext* ctx_ = nullptr;
};

// A source: polled by its task until it reports the end of its input.
class SourceOperator : public StreamOperator {
 public:
  enum class PollStatus { kMore, kNothingAvailable, kEnd };
  int num_inputs() const override { return 0; }
  void process_batch(int, BatchPtr) override;
  // Emit at most one batch through output(). kNothingAvailable makes the task wait
  // (up to wait_hint_ms) before polling again.
  virtual PollStatus poll_next() = 0;
  virtual std::int64_t wait_hint_ms() const { return 1; }
};

}  // namespace clink
