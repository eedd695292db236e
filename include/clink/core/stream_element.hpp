#pragma once
#include <cstdint>
#include <variant>

#include "clink/core/record.hpp"
#include "clink/core/watermark.hpp"

namespace clink {

// Chandy-Lamport barrier, injected by sources and aligned by MultiInputAlignment.
struct CheckpointBarrier {
  std::int64_t checkpoint_id = 0;
  std::int64_t timestamp_ms = 0;
  bool is_savepoint = false;
  // Stop-with-savepoint: sources emit nothing after this barrier (Flink's synchronous
  // savepoint), so no output past the savepoint can reach a sink and be committed.
  bool stops_sources = false;
  friend bool operator==(const CheckpointBarrier&, const CheckpointBarrier&) = default;
};

// The producing channel has no more elements.
struct EndOfInput {
  friend bool operator==(const EndOfInput&, const EndOfInput&) = default;
};

// What travels on an edge, in order: batches, with watermarks, barriers and
// end-of-input in-band between them.
using StreamElement = std::variant<BatchPtr, Watermark, CheckpointBarrier, EndOfInput>;

}  // namespace clink
