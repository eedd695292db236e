#pragma once
// Flink's `json` format for SQL tables, columnar: one JSON object per line decoded
// straight into a batch's columns (simdjson on-demand, one pass, no DOM per record),
// and rows encoded back to JSON objects.
//
// Decoding follows Flink's JsonToRowDataConverters: fields are matched by name (the
// object's other fields are skipped; a repeated field's last value wins), a missing
// field is NULL (or an error with `json.fail-on-missing-field`), JSON null is NULL,
// numbers and strings convert as Jackson's asInt/asText do (so "12" reads as INT 12 and
// a JSON object read as STRING keeps its JSON text), DECIMAL is exact from the number's
// text, TIMESTAMP and TIMESTAMP_LTZ follow `json.timestamp-format.standard`, BYTES are
// base64, ARRAY/MAP/ROW nest.
#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "clink/formats/sql_text_values.hpp"
#include "clink/sql/common/column.hpp"
#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/common/types.hpp"

namespace clink::sql {

struct JsonFormatOptions {
  enum class MapNullKeyMode { kFail, kDrop, kLiteral };

  bool fail_on_missing_field = false;   // json.fail-on-missing-field
  bool ignore_parse_errors = false;     // json.ignore-parse-errors: a value of the wrong type is NULL, a malformed row skipped
  TimestampStandard timestamp_standard = TimestampStandard::kSql;  // json.timestamp-format.standard
  MapNullKeyMode map_null_key_mode = MapNullKeyMode::kFail;         // json.map-null-key.mode
  std::string map_null_key_literal = "null";                        // json.map-null-key.literal
  bool encode_decimal_as_plain_number = false;  // json.encode.decimal-as-plain-number
  bool encode_ignore_null_fields = false;       // json.encode.ignore-null-fields

  // Reads the "json.*" options (DDL spellings and values, as strings); throws ClinkError
  // naming the option and the value it rejects, and for both of fail-on-missing-field
  // and ignore-parse-errors set (as Flink). Keys without the "json." prefix are ignored.
  // `format`: another prefix for the same options, as the changelog formats spell them
  // ("debezium-json.ignore-parse-errors"; those have no fail-on-missing-field).
  static JsonFormatOptions from(const std::map<std::string, std::string>& options, std::string_view format = "json");
  // The option keys this format knows, with their "json." prefix.
  static const std::vector<std::string>& keys();
};

class JsonRowDecoder {
 public:
  // Fills columns of `schema` (the projected fields, by name) from each object.
  JsonRowDecoder(SchemaPtr schema, JsonFormatOptions options);
  ~JsonRowDecoder();
  JsonRowDecoder(const JsonRowDecoder&) = delete;
  JsonRowDecoder& operator=(const JsonRowDecoder&) = delete;

  // Appends one row to `columns` (one per schema field) from the JSON object `text`.
  // `readable`: bytes readable from text.data(); with kJsonPadding (json_codec.hpp)
  // beyond the text it is parsed in place, else copied first. On malformed input
  // returns false, sets `reason` ("field \"price\": 'x' is not a valid DOUBLE") and
  // leaves the columns as they were.
  bool decode(std::string_view text, std::size_t readable, std::vector<Column>& columns, std::string& reason);
  // The same into chosen columns (one per schema field; e.g. columns of a larger batch).
  bool decode(std::string_view text, std::size_t readable, std::span<Column* const> columns, std::string& reason);

  const JsonFormatOptions& options() const { return options_; }

 private:
  struct Impl;
  JsonFormatOptions options_;
  std::unique_ptr<Impl> impl_;
};

class JsonRowEncoder {
 public:
  JsonRowEncoder(SchemaPtr schema, JsonFormatOptions options);
  // Appends row `row` of `batch` as one JSON object (no newline). Throws ClinkError for
  // a NULL map key with json.map-null-key.mode FAIL, as Flink.
  void encode(const ColumnBatch& batch, std::size_t row, std::string& out) const;
  // The same over chosen columns (one per schema field, in order).
  void encode(const Column* const* columns, std::size_t row, std::string& out) const;

 private:
  void encode_value(const Column& col, std::size_t row, std::string& out) const;
  void encode_fields(const std::vector<std::string>& keys, const Column* const* cols, std::size_t n, std::size_t row,
                     std::string& out) const;
  SchemaPtr schema_;
  JsonFormatOptions options_;
  std::vector<std::string> keys_;  // "\"name\":" per field
};

}  // namespace clink::sql
