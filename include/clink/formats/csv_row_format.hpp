#pragma once
// Flink's `csv` format for SQL tables, columnar: one line per row, fields by position
// (RFC 4180 quoting, Flink's csv.* options), each field parsed straight into its column
// as Flink's CsvToRowDataConverters does; and rows written back as CSV lines.
//
// Semantics kept from Flink: a field that does not parse fails the row, or with
// `csv.ignore-parse-errors` becomes NULL (a row of the wrong length is then padded or
// cut instead of failing); `csv.null-literal` reads as NULL; ARRAY and ROW fields are
// split by `csv.array-element-delimiter`; MAP is not supported (as Flink). A quoted
// field may span lines (RFC 4180, as Jackson's CSV parser): decode() then asks for the
// record's next line (kIncomplete) and is called again with the lines joined.
#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "clink/sql/common/column.hpp"
#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/common/types.hpp"

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

  enum class Result { kRow, kSkipped, kError, kIncomplete };
  // Appends one row to `columns` (one per projected field) from `record` (a line, or
  // lines joined by their line breaks); kSkipped for a blank line or a comment; kError
  // sets `reason` ("field 2 (price): 'x' is not a valid DOUBLE") and error_offset(), and
  // leaves the columns as they were. kIncomplete: a quoted field is still open at the
  // end of `record` (its line break is part of the field); the caller appends the next
  // line, or at the end of the file reports `reason` ("unterminated quoted field 2") at
  // error_offset() (the opening quote).
  Result decode(std::string_view record, std::vector<Column>& columns, std::string& reason);
  // The same into chosen columns (one per projected field; e.g. columns of a larger batch).
  Result decode(std::string_view record, std::span<Column* const> columns, std::string& reason);
  // Where in the record the last error was found: the byte offset of the field that does
  // not parse, of the first extra field, of the character after a closing quote, or the
  // record's end when fields are missing.
  std::size_t error_offset() const { return error_offset_; }

  const CsvFormatOptions& options() const { return options_; }

 private:
  Result decode_record(std::string_view record, std::span<Column* const> columns, std::string& reason);
  Result split(std::string_view line, std::string& reason);
  bool parse_field(std::size_t field, std::string_view text, Column& col, std::string& reason, bool nested = false);

  SchemaPtr schema_;
  std::vector<std::size_t> projected_;
  CsvFormatOptions options_;
  // Scratch: the current line's fields (views into the line or into unquoted_).
  std::vector<std::string_view> fields_;
  struct Span {
    bool owned;               // in unquoted_, else in the record
    std::size_t begin, end;   // the field's text
    std::size_t offset;       // where the field starts in the record
  };
  std::vector<Span> spans_;
  std::size_t error_offset_ = 0;
  std::string unquoted_;
  std::vector<std::pair<std::size_t, std::size_t>> unquoted_ranges_;  // field -> range in unquoted_
  std::vector<std::size_t> start_sizes_;
  std::vector<Column*> pointers_;  // scratch: the vector<Column> overload's columns
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
