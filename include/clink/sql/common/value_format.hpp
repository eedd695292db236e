#pragma once
#include <cstddef>
#include <string>

#include "clink/sql/common/column.hpp"

namespace clink::sql {

class TimeZone;

// CAST(value AS STRING) as Flink 1.15+ writes it (CastRuleProvider, non-legacy):
//   BOOLEAN TRUE/FALSE; FLOAT/DOUBLE as Java's Float/Double.toString (1.0, 1.0E10, 1.0E-4,
//   NaN, Infinity); DECIMAL plain with its scale (1.20); DATE 2020-04-15; TIME(p) and
//   TIMESTAMP(p) with p fractional digits; TIMESTAMP_LTZ in `zone`; BYTES decoded as
//   UTF-8; ARRAY [1, 2]; MAP {a=1, b=2}; ROW (1, abc); NULL inside nested values "NULL".
// `printing` selects the print-sink variant (BYTES as x'0a1b'), as Flink's printing context.
void append_cell_string(const Column& col, std::size_t row, const TimeZone& zone, bool printing, std::string& out);

// A non-NULL cell as Flink's print connector writes it (src/sql/common/value_print.cpp): the
// toString of the value's Java conversion class, as Row.toString prints a row. BOOLEAN
// true/false; TIMESTAMP a LocalDateTime (2024-01-01T10:00, seconds and fraction only when
// non-zero); TIMESTAMP_LTZ an Instant in UTC (2024-01-01T10:00:00Z); TIME a LocalTime;
// DATE a LocalDate; DECIMAL BigDecimal.toString; BYTES a byte[] ([1, -2]); intervals a
// Period (P1Y2M) / Duration (PT1H30M); ARRAY [1, null]; ROW +I[1, x]; MAP a HashMap
// ({k=1}, entries in its bucket order); numbers and strings as CAST prints them.
void append_print_cell(const Column& col, std::size_t row, const TimeZone& zone, std::string& out);

// Java's Double.toString / Float.toString: shortest round-trip digits, plain notation for
// 1e-3 <= |v| < 1e7, otherwise d.dddE[-]n.
void append_java_double(double v, std::string& out);
void append_java_float(float v, std::string& out);

// DAY-TIME intervals as Flink prints them: +1 02:03:04.005 (days, then time, 3 digits);
// YEAR-MONTH: +1-02.
void append_interval_day_time(std::int64_t millis, std::string& out);
void append_interval_year_month(std::int32_t months, std::string& out);

}  // namespace clink::sql
