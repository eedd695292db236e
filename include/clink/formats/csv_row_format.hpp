#pragma once
// Flink's `csv` format for SQL tables, columnar: one line per row, fields by position
// (RFC 4180 quoting, Flink's csv.* options), each field parsed straight into its column
// as Flink's CsvToRowDataConverters does; and rows written back as CSV lines.
//
// Semantics kept from Flink: a field that does not parse fails the row, or with
// `csv.ignore-parse-errors` becomes NULL (a row of the wrong length is then padded or
// cut instead of failing); `csv.null-literal` reads as NULL; ARRAY and ROW fields are
// split by `csv.array-element-delimiter`; MAP is not supported (as Flink). A row is one
// line: a quoted field cannot span lines (reading is line-split for checkpointable
// positions), which fails as an unterminated quote.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clink/sql/column.hpp"
#include "clink/sql/column_batch.hpp"
#include "clink/sql/types.hpp"

namespace clink::sql {

struct CsvFormatOptions {
  char field_delimiter = ',';               // csv.field-delimiter
  bool disable_quote_character = false;     // csv.disable-quote-character
  char quote_character = '"';               // csv.quote-character
  bool allow_comments = false;              // csv.allow-comments: '#' lines are skipped
  bool ignore_parse_errors = false;         // csv.ignore-parse-errors
  std::string array_element_delimiter = ";";  // csv.array-element-delimiter
  std::optional<char> escape_character;     // csv.escape-character
  std::optional<std::string> null_literal;  // csv.null-literal
  bool write_bigdecimal_in_scientific_notation = true;  // csv.write-bigdecimal-in-scientific-notation

  // Reads the "csv.*" options (DDL spellings, string values); throws ClinkError naming
  // the option and the value. Keys without the "csv." prefix are ignored.
  static CsvFormatOptions from(const std::map<std::string, std::string>& options);
  static const std::vector<std::string>& keys();
};

class CsvRowDecoder {
 public:
  // Lines hold the fields of `table_schema` in order; the decoder fills the columns of
  // `projected` (indices into the table schema, in output order). Throws ClinkError for a
  // type the format cannot read (MAP, nested ARRAY/ROW inside ARRAY/ROW).
  CsvRowDecoder(SchemaPtr table_schema, std::vector<std::size_t> projected, CsvFormatOptions options);

  enum class Result { kRow, kSkipped, kError };
  // Appends one row to `columns` (one per projected field) from `line`; kSkipped for a
  // blank line or a comment; kError sets `reason` ("field 2 (price): 'x' is not a valid
  // DOUBLE") and leaves the columns as they were.
  Result decode(std::string_view line, std::vector<Column>& columns, std::string& reason);

  const CsvFormatOptions& options() const { return options_; }

 private:
  bool split(std::string_view line, std::string& reason);
  bool parse_field(std::size_t field, std::string_view text, Column& col, std::string& reason, bool nested = false);

  SchemaPtr schema_;
  std::vector<std::size_t> projected_;
  CsvFormatOptions options_;
  // Scratch: the current line's fields (views into the line or into unquoted_).
  std::vector<std::string_view> fields_;
  std::string unquoted_;
  std::vector<std::pair<std::size_t, std::size_t>> unquoted_ranges_;  // field -> range in unquoted_
  std::vector<std::size_t> start_sizes_;
};

class CsvRowEncoder {
 public:
  CsvRowEncoder(SchemaPtr schema, CsvFormatOptions options);
  // Appends row `row` of `batch` as one CSV line, without the newline.
  void encode(const ColumnBatch& batch, std::size_t row, std::string& out) const;
  // The same over chosen columns (one per schema field, in order).
  void encode(const Column* const* columns, std::size_t row, std::string& out) const;

 private:
  void append_field(std::string_view text, std::string& out) const;
  SchemaPtr schema_;
  CsvFormatOptions options_;
};

}  // namespace clink::sql
