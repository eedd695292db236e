#pragma once
// Watermark alignment across sources (Flink's withWatermarkAlignment): the assigners of
// one group publish their watermarks, and one that runs more than max_drift ahead of
// the group's slowest member waits (at most max_wait per batch) before taking more
// input. Waiting in the assigner back-pressures its source through the chain or
// channel, so a fast source cannot flood state with records far ahead of the others.
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "clink/core/event_time.hpp"

namespace clink {

struct WatermarkAlignment {
  std::string group;  // empty: not aligned
  std::int64_t max_drift_ms = 0;
  std::int64_t max_wait_ms = 1000;
  bool enabled() const { return !group.empty(); }
};

class AlignmentGroup {
 public:
  int join();
  // A finished or closed member no longer holds the others back.
  void leave(int member);
  // Idle members are left out of the minimum, like idle inputs of MultiInputAlignment.
  void publish(int member, EventTime watermark, bool idle);
  // The minimum over active members; kMaxEventTime when there are none.
  EventTime min_watermark() const;
  // Waits while `watermark` > min + max_drift (a member without a watermark yet counts
  // as INT64_MIN, so the others wait for it), at most max_wait_ms. Returns the
  // milliseconds waited.
  std::int64_t wait_until_aligned(EventTime watermark, std::int64_t max_drift_ms, std::int64_t max_wait_ms);

 private:
  struct Member {
    EventTime watermark = kMinEventTime;
    bool idle = false;
  };
  EventTime min_locked() const;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::map<int, Member> members_;
  int next_id_ = 0;
};

// Process-wide groups by name (jobs in one process share a group name only on purpose).
class AlignmentGroupRegistry {
 public:
  static AlignmentGroup& group(const std::string& name);
};

}  // namespace clink
