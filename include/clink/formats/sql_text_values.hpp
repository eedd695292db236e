#pragma once
// The scalar text conversions shared by the columnar `json` and `csv` formats: a
// field's text parsed straight into a column (as Flink's JsonToRowDataConverters and
// CsvToRowDataConverters parse a node's text), the text forms both writers emit, base64
// for BYTES, and the column surgery a decoder needs to undo a half-decoded row.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "clink/sql/common/column.hpp"

namespace clink::sql {

// Flink's `json.timestamp-format.standard`: 'SQL' writes "2020-04-15 08:05:00.5",
// 'ISO-8601' "2020-04-15T08:05:00.5"; TIMESTAMP_LTZ adds a trailing 'Z' (UTC).
enum class TimestampStandard { kSql, kIso8601 };

// Parses `text` as a value of the column's (scalar) type and appends it. Java's
// parsing rules: integers as Integer.parseInt (sign, digits, surrounding whitespace
// trimmed), BOOLEAN as Boolean.parseBoolean (anything but "true", any case, is false),
// DECIMAL exact from the text, rounded HALF_UP to the scale and NULL when it overflows
// the precision (DecimalData.fromBigDecimal), DATE yyyy-MM-dd, TIME HH:mm:ss[.f]
// truncated to the type's precision, TIMESTAMP date then ' ' (SQL) or 'T' (ISO-8601)
// then time, TIMESTAMP_LTZ the same with a trailing 'Z', BINARY/VARBINARY base64.
// Returns false and sets `reason` ("'abc' is not a valid INT") when the text is not a
// value of the type; nothing is appended then.
bool append_text_value(Column& col, std::string_view text, TimestampStandard standard, std::string& reason);

// Appends the value at `row` of `col` (not NULL, scalar) as the text both writers put
// in a field: numbers as Java prints them, DECIMAL as BigDecimal.toString, temporal
// values in `standard` with the fraction's trailing zeros dropped (java.time's
// ISO_LOCAL_TIME), BYTES base64, strings as they are.
void append_text_of(const Column& col, std::size_t row, TimestampStandard standard, std::string& out);

// Java's BigDecimal.toString of unscaled * 10^-scale (plain unless the exponent is
// below -6, then "1E-7").
void append_java_big_decimal(Int128 unscaled, int scale, std::string& out);

bool base64_decode(std::string_view in, std::string& out);
void base64_encode(std::string_view in, std::string& out);

// Drops rows [rows, size) of `col` (children included): undoes a partly decoded row.
void truncate_column(Column& col, std::size_t rows);
// Ends an ARRAY/MAP row whose elements were appended to its children, or a ROW whose
// fields were appended to its children: records the offset and marks the row valid.
void finish_nested_value(Column& col);

}  // namespace clink::sql
