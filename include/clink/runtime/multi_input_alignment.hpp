#pragma once
#include <cstddef>
#include <optional>
#include <vector>

#include "clink/core/stream_element.hpp"
#include "clink/core/watermark.hpp"

namespace clink {

// Combines the watermarks of N inputs (channels of a union, the two sides of a
// connect) into one: the minimum over live inputs. Idle inputs do not hold the
// minimum back; an input returning from idle is clamped to what was already emitted,
// so the output never regresses; when every input has closed the output is max().
// If every live input is idle, one idle marker is forwarded.
//
// It also aligns checkpoint barriers (Chandy-Lamport): once an input delivered the
// barrier of checkpoint n, the caller blocks that input until every live input has
// delivered it; then the operator snapshots and the barrier goes on.
class MultiInputAlignment {
 public:
  explicit MultiInputAlignment(std::size_t inputs);

  // Each returns the watermark to forward downstream, if any.
  std::optional<Watermark> on_watermark(std::size_t input, Watermark wm);
  std::optional<Watermark> on_end_of_input(std::size_t input);

  // Returns the barrier once all live inputs delivered it. A barrier of a newer
  // checkpoint abandons the alignment in progress (that checkpoint was aborted).
  std::optional<CheckpointBarrier> on_barrier(std::size_t input, const CheckpointBarrier& barrier);
  // After on_end_of_input: a closed input no longer holds an alignment back.
  std::optional<CheckpointBarrier> completed_by_close();
  // Whether `input` already delivered the barrier being aligned (the caller blocks it).
  bool barrier_received(std::size_t input) const { return aligning_ && inputs_[input].barrier_received; }
  bool aligning() const { return aligning_; }
  std::int64_t aligning_checkpoint() const { return aligning_ ? barrier_.checkpoint_id : -1; }

  Watermark current() const { return emitted_; }
  // The last watermark channel `input` sent (lateness.hpp).
  EventTime input_watermark(std::size_t input) const { return inputs_[input].watermark; }
  std::size_t inputs() const { return inputs_.size(); }
  bool all_closed() const;

 private:
  struct Input {
    EventTime watermark = kMinEventTime;
    bool idle = false;
    bool closed = false;
    bool barrier_received = false;
  };
  std::optional<Watermark> recompute();
  std::optional<CheckpointBarrier> check_aligned();

  std::vector<Input> inputs_;
  Watermark emitted_ = Watermark::min();
  bool emitted_idle_ = false;
  bool aligning_ = false;
  CheckpointBarrier barrier_;
  std::int64_t last_completed_ = -1;
};

}  // namespace clink
