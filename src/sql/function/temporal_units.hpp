// Shared by the temporal function groups (private to src/sql): time units as SQL names
// them, reading any temporal cell as a wall-clock value, and per-call prepared state.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "clink/sql/common/temporal.hpp"
#include "clink/sql/function/function_registry.hpp"

namespace clink::sql::temporal_fn {

enum class TimeUnit {
  kMillennium, kCentury, kDecade, kYear, kIsoYear, kQuarter, kMonth, kWeek, kDay, kDoy, kDow, kIsoDow,
  kHour, kMinute, kSecond, kMillisecond, kMicrosecond, kNanosecond, kEpoch,
};

// The unit a constant STRING argument names ("YEAR", "day", "SQL_TSI_DAY"); throws
// SqlTypeError naming the function when absent or unknown.
TimeUnit unit_argument(std::string_view fn, std::span<const std::optional<Value>> constants, std::size_t index);
const char* unit_name(TimeUnit u);

// A temporal cell as wall-clock microseconds: DATE at midnight, TIMESTAMP as is,
// TIMESTAMP_LTZ in the session zone, TIME as the time of 1970-01-01.
inline std::int64_t wall_micros(TypeKind kind, const Column& c, std::size_t row, const SessionContext& s) {
  switch (kind) {
    case TypeKind::kDate: return std::int64_t{c.values<std::int32_t>()[row]} * kMicrosPerDay;
    case TypeKind::kTime: return std::int64_t{c.values<std::int32_t>()[row]} * kMicrosPerMilli;
    case TypeKind::kTimestampLtz: return s.time_zone->utc_micros_to_local(c.values<std::int64_t>()[row]);
    default: return c.values<std::int64_t>()[row];
  }
}

// Reads the clock the non-deterministic functions see: the operator's fixed `now` when
// set, else the system clock (epoch microseconds).
std::int64_t now_micros(const SessionContext& s);

}  // namespace clink::sql::temporal_fn
