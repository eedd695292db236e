#pragma once
// The `window` param of sql_window_assign and sql_window_aggregate, and the window
// columns Flink's window TVFs add (window_start, window_end, window_time).
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "clink/windows/window_assigners.hpp"

namespace clink::sql {

class SqlOpParams;

struct SqlWindowSpec {
  enum class Kind { kTumble, kHop, kCumulate, kSession };
  Kind kind = Kind::kTumble;
  std::size_t time_column = 0;
  std::int64_t size_ms = 0;    // tumble, hop, cumulate (the max size)
  std::int64_t slide_ms = 0;   // hop
  std::int64_t step_ms = 0;    // cumulate
  std::int64_t offset_ms = 0;  // tumble, hop, cumulate
  std::int64_t gap_ms = 0;     // session
  bool ltz = false;            // the time column is TIMESTAMP_LTZ: window_time is TIMESTAMP_LTZ(3)
  // The time column is a processing-time attribute: the engine's processing-time
  // assigners place rows by the operator's clock and processing-time timers fire windows
  // (aligned in UTC; the planner allows no other session zone).
  bool proctime = false;
  // The rows carry their window (cascaded window aggregation): the time column is its
  // window_end, and a row belongs to the one window of this spec that ends there.
  bool attached = false;
  // Over a TIMESTAMP_LTZ column windows are aligned in the session time zone, as Flink's
  // (window_start / window_end are that zone's wall-clock times); set by the factory.
  TimeZonePtr zone = TimeZone::utc();

  // {"kind": ..., "time_column": i, "size_ms", "slide_ms", "step_ms", "offset_ms", "gap_ms"}
  static SqlWindowSpec parse(const nlohmann::json& window, const Schema& input, const SqlOpParams& p);
  std::unique_ptr<WindowAssigner> assigner() const;
  std::string describe() const;

  // The time (ms) a row is assigned to windows by: its TIMESTAMP value, or its
  // TIMESTAMP_LTZ instant as wall-clock time in `zone`.
  std::int64_t assign_time(std::int64_t micros) const;
  // A watermark (a UTC instant) on the assigning time line (kept monotonic by the caller).
  EventTime shift_watermark(EventTime wm) const;
  // The instant (ms) of a window's window_time (its end - 1 ms).
  EventTime window_time_ms(const TimeWindow& w) const;
  // Appends window_start, window_end, window_time for `w` to columns c, c+1, c+2.
  void append_window(ColumnBatch& out, std::size_t c, const TimeWindow& w) const;
};

// window_start TIMESTAMP(3) NOT NULL, window_end TIMESTAMP(3) NOT NULL, window_time
// TIMESTAMP(3) NOT NULL or TIMESTAMP_LTZ(3) NOT NULL (over a TIMESTAMP_LTZ time column), as
// Flink types them.
void append_window_fields(std::vector<RowField>& fields, bool ltz);

// The event time (ms) of a TIMESTAMP / TIMESTAMP_LTZ value (microseconds), floored.
inline std::int64_t micros_to_millis(std::int64_t us) { return us >= 0 ? us / 1000 : -((-us + 999) / 1000); }


}  // namespace clink::sql
