#pragma once
#include <cstddef>
#include <optional>
#include <vector>

#include "clink/core/watermark.hpp"

namespace clink {

// Combines the watermarks of N inputs (channels of a union, the two sides of a
// connect) into one: the minimum over live inputs. Idle inputs do not hold the
// minimum back; an input returning from idle is clamped to what was already emitted,
// so the output never regresses; when every input has closed the output is max().
// If every live input is idle, one idle marker is forwarded.
class MultiInputAlignment {
 public:
  explicit MultiInputAlignment(std::size_t inputs);

  // Each returns the watermark to forward downstream, if any.
  std::optional<Watermark> on_watermark(std::size_t input, Watermark wm);
  std::optional<Watermark> on_end_of_input(std::size_t input);

  Watermark current() const { return emitted_; }
  std::size_t inputs() const { return inputs_.size(); }
  bool all_closed() const;

 private:
  struct Input {
    EventTime watermark = kMinEventTime;
    bool idle = false;
    bool closed = false;
  };
  std::optional<Watermark> recompute();

  std::vector<Input> inputs_;
  Watermark emitted_ = Watermark::min();
  bool emitted_idle_ = false;
};

}  // namespace clink
