// Flink's print form (print connector, collect()) of single TIMESTAMP / TIMESTAMP_LTZ
// values, for tests that build expected rows: LocalDateTime.toString (seconds and the
// fraction only when non-zero) and Instant.toString (UTC, always seconds, 'Z').
#pragma once
#include <cstdint>
#include <string>

#include "clink/sql/common/column.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "clink/sql/common/value_format.hpp"

namespace clink::test {

inline std::string print_form(const sql::LogicalType& type, const sql::Value& v) {
  sql::Column c(type);
  c.append_value(v);
  std::string s;
  sql::append_print_cell(c, 0, *sql::TimeZone::utc(), s);
  return s;
}
// A TIMESTAMP(3) of `ms` milliseconds since 1970-01-01 00:00 (2020-04-15T08:05:00.123).
inline std::string print_timestamp_ms(std::int64_t ms) {
  return print_form(sql::LogicalType::timestamp(3), sql::Value(ms * 1000));
}
// A TIMESTAMP_LTZ(3) instant (2020-04-15T08:05:00.123Z).
inline std::string print_instant_ms(std::int64_t ms) {
  return print_form(sql::LogicalType::timestamp_ltz(3), sql::Value(ms * 1000));
}

}  // namespace clink::test
