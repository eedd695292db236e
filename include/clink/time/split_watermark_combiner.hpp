#pragma once
// Watermarks per source split combined into the source's watermark (Flink's per-split
// watermarks, e.g. one per Kafka partition), for the typed sources' WatermarkStrategy
// (api/split_watermarks.hpp) and the SQL sources' pushed-down WATERMARK
// (connectors/sql/source_watermarks.hpp) alike. Each split's watermark is what its owner
// says (advance); the source emits the minimum over its splits, so one partition read
// ahead of another never makes the other's records late. Flink's rules:
//  - a split that has not produced a record yet holds the watermark back (at its start);
//  - with an idle timeout, a split without records for that long is left out of the
//    minimum (all splits idle: the source is idle) until its next record; the emitted
//    watermark never goes back, so a split that comes back behind it is clamped. When
//    every split goes idle in one poll, the watermark first advances to those of them
//    that had records: Flink's idleness timers start at the first check that saw no
//    record, so a split with records goes idle at least a check after one without, and
//    its watermark is emitted before the source is idle;
//  - emitted every interval_ms when it advanced (0: at every poll), never at or below
//    `floor` (the SQL WATERMARK assigner's 0; kMinEventTime for typed strategies).
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "clink/core/event_time.hpp"
#include "clink/core/watermark.hpp"

namespace clink {

class SplitWatermarkCombiner {
 public:
  SplitWatermarkCombiner(std::int64_t idle_timeout_ms, std::int64_t interval_ms, EventTime floor)
      : idle_timeout_ms_(idle_timeout_ms), interval_ms_(interval_ms), emitted_(floor) {}

  // The splits held now (new ones start holding the watermark back). Allocates nothing
  // while they stay the same.
  void set_splits(const std::vector<std::uint64_t>& splits, std::int64_t now_ms);
  // The split produced records now; its watermark is at least `watermark`.
  void advance(std::uint64_t split, EventTime watermark, std::int64_t now_ms) {
    Split& s = split_at(split);
    s.last_active_ms = now_ms;
    if (watermark > s.watermark) s.watermark = watermark;
    dirty_ = true;
  }
  // The watermark (or idle marker) to emit now, if any.
  std::optional<Watermark> poll(std::int64_t now_ms);

 private:
  struct Split {
    EventTime watermark = kMinEventTime;
    std::int64_t last_active_ms = 0;
    bool idle = false;  // at the last poll
  };
  Split& split_at(std::uint64_t split) {
    if (!cached_ || split != cached_key_) {
      cached_ = &splits_[split];  // a record of a split just given up is still counted
      cached_key_ = split;
    }
    return *cached_;
  }

  std::int64_t idle_timeout_ms_;
  std::int64_t interval_ms_;
  std::map<std::uint64_t, Split> splits_;
  Split* cached_ = nullptr;  // the entry of the last split advanced (map nodes are stable)
  std::uint64_t cached_key_ = 0;
  EventTime emitted_;
  bool idle_ = false;
  bool dirty_ = false;
  std::int64_t last_emit_ms_ = 0;
};

}  // namespace clink
