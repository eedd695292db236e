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
  bool any_active = false;
  EventTime min = kMaxEventTime;
  bool any_open = false;
  for (const Input& in : inputs_) {
    if (!in.closed) any_open = true;
    if (in.idle) continue;
    any_active = true;
    min = std::min(min, in.watermark);
  }
  if (!any_active && any_open) {
    // Every live input is idle: forward one idle marker.
    if (emitted_idle_) return std::nullopt;
    emitted_idle_ = true;
    return Watermark::idle_marker(emitted_.timestamp);
  }
  if (min > emitted_.timestamp || (emitted_idle_ && min >= emitted_.timestamp)) {
    emitted_idle_ = false;
    emitted_ = Watermark::at(std::max(min, emitted_.timestamp));
    return emitted_;
  }
  if (emitted_idle_) {
    // Active again but behind what was emitted: announce activity without regressing.
    emitted_idle_ = false;
    return emitted_;
  }
  return std::nullopt;
}

}  // namespace clink
