#pragma once
#include <cstdint>
#include <limits>

namespace clink {

// Event time: milliseconds since the Unix epoch (UTC).
using EventTime = std::int64_t;

inline constexpr EventTime kMinEventTime = std::numeric_limits<EventTime>::min();
inline constexpr EventTime kMaxEventTime = std::numeric_limits<EventTime>::max();
// A record that carries no event time (Flink uses Long.MIN_VALUE the same way).
inline constexpr EventTime kNoEventTime = kMinEventTime;

// Source partition of a record; kNoPartition when the source has none.
using PartitionId = std::int32_t;
inline constexpr PartitionId kNoPartition = -1;

}  // namespace clink
