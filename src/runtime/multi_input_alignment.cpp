#include "clink/runtime/multi_input_alignment.hpp"

#include <algorithm>

namespace clink {

MultiInputAlignment::MultiInputAlignment(std::size_t inputs) : inputs_(inputs) {}

bool MultiInputAlignment::all_closed() const {
  return std::all_of(inputs_.begin(), inputs_.end(), [](const Input& i) { return i.closed; });
}

std::optional<Watermark> MultiInputAlignment::on_watermark(std::size_t input, Watermark wm) {
  Input& in = inputs_[input];
  if (in.closed) return std::nullopt;
  if (wm.idle) {
    in.idle = true;
  } else {
    if (in.idle) {
      // Back from idle: never below what was already emitted, so the output cannot regress.
      in.idle = false;
      in.watermark = std::max(in.watermark, emitted_.timestamp);
    }
    in.watermark = std::max(in.watermark, wm.timestamp);  // a regressing input is ignored
  }
  return recompute();
}

std::optional<Watermark> MultiInputAlignment::on_end_of_input(std::size_t input) {
  Input& in = inputs_[input];
  if (in.closed) return std::nullopt;
  in.closed = true;
  in.idle = false;
  in.watermark = kMaxEventTime;
  return recompute();
}

std::optional<Watermark> MultiInputAlignment::recompute() {
  // max() is the end of event time: nothing can follow it, not even an idle marker.
  if (emitted_.is_max()) return std::nullopt;
  bool any_open = false;
  bool any_active = false;  // open and not idle
  EventTime min = kMaxEventTime;
  for (const Input& in : inputs_) {
    if (in.closed) continue;  // a closed input no longer holds anything back
    any_open = true;
    if (in.idle) continue;
    any_active = true;
    min = std::min(min, in.watermark);
  }
  if (any_open && !any_active) {
    // Every live input is idle: forward one idle marker.
    if (emitted_idle_) return std::nullopt;
    emitted_idle_ = true;
    return Watermark::idle_marker(emitted_.timestamp);
  }
  // All inputs closed leaves min at max(): the end of event time.
  if (min > emitted_.timestamp) {
    emitted_idle_ = false;
    emitted_ = Watermark::at(min);
    return emitted_;
  }
  if (emitted_idle_) {
    // Active again but not ahead of what was emitted: announce activity, no regression.
    emitted_idle_ = false;
    return emitted_;
  }
  return std::nullopt;
}

std::optional<CheckpointBarrier> MultiInputAlignment::on_barrier(std::size_t input, const CheckpointBarrier& barrier) {
  if (barrier.checkpoint_id <= last_completed_) return std::nullopt;  // stale
  if (!aligning_ || barrier.checkpoint_id > barrier_.checkpoint_id) {
    aligning_ = true;
    barrier_ = barrier;
    for (Input& in : inputs_) in.barrier_received = false;
  } else if (barrier.checkpoint_id < barrier_.checkpoint_id) {
    return std::nullopt;  // an older, abandoned checkpoint
  }
  inputs_[input].barrier_received = true;
  return check_aligned();
}

std::optional<CheckpointBarrier> MultiInputAlignment::completed_by_close() {
  return aligning_ ? check_aligned() : std::nullopt;
}

std::optional<CheckpointBarrier> MultiInputAlignment::check_aligned() {
  for (const Input& in : inputs_)
    if (!in.closed && !in.barrier_received) return std::nullopt;
  aligning_ = false;
  last_completed_ = barrier_.checkpoint_id;
  for (Input& in : inputs_) in.barrier_received = false;
  return barrier_;
}

}  // namespace clink
