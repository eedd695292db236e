#pragma once
// The processing-time clock of the tests: it stands still until the test moves it
// (processing-time timers, state TTL, idleness). Any thread may read or move it.
#include <atomic>
#include <cstdint>

#include "clink/runtime/timer_service.hpp"

namespace clink::test {

class ManualClock final : public ProcessingTimeClock {
 public:
  explicit ManualClock(std::int64_t start = 0) : now(start) {}
  std::int64_t now_ms() const override { return now.load(); }
  void set(std::int64_t t) { now.store(t); }
  void advance(std::int64_t d) { now.fetch_add(d); }

  std::atomic<std::int64_t> now;  // ms; `clock.now = t` and `clock.now += d` move it too
};

}  // namespace clink::test
