#pragma once
// Internal to the formats library: the one JSON-value-to-column conversion (simdjson
// on-demand), shared by the `json` format (JsonRowDecoder) and the changelog formats
// (debezium-json, canal-json, maxwell-json), which decode their "before"/"after"/"data"
// objects with it. Not a public header: it exposes simdjson.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "clink/formats/json_row_format.hpp"
#include "clink/sql/common/column.hpp"
#include "clink/sql/common/types.hpp"

namespace clink::sql::json_detail {

namespace od = simdjson::ondemand;

// A readable message for a simdjson error.
std::string describe(simdjson::error_code e);

// A field's key: its bytes in place when it holds no escape (the common case), else
// unescaped into the parser's string buffer (valid until the next key).
simdjson::error_code field_key(od::field& f, std::string_view& out);

// How to decode one type: for ROW the fields by name, for ARRAY the element, for MAP
// the value. Built once per decoder.
struct TypePlan {
  std::vector<std::string> names;
  std::vector<TypePlan> children;
  std::vector<std::uint8_t> seen;  // ROW: scratch, fields seen in the current object
  std::vector<std::uint8_t> raw_comparable;  // ROW: names key_is can compare in place

  explicit TypePlan(const LogicalType& t);
  explicit TypePlan(const Schema& s);
  // Whether the key whose raw bytes (after the opening quote, in a padded document)
  // start at `raw` is the field at `hint`, compared in place: a name without quote or
  // backslash (shorter than simdjson's padding, so the compare stays in readable bytes)
  // is the key exactly when the raw key starts with it and closes right after.
  bool key_is(const char* raw, std::size_t hint) const {
    if (hint >= names.size() || !raw_comparable[hint]) return false;
    const std::string& n = names[hint];
    return std::memcmp(raw, n.data(), n.size()) == 0 && raw[n.size()] == '"';
  }
  // The field named `key`, trying `hint` first (fields usually come in schema order).
  std::size_t find(std::string_view key, std::size_t hint) const {
    if (hint < names.size() && names[hint] == key) return hint;
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == key) return i;
    return names.size();
  }
};

// Converts JSON objects into rows of a schema's columns, as Flink's
// JsonToRowDataConverters. Owns the simdjson parser and the padded copy of a message.
class JsonValueReader {
 public:
  JsonValueReader(const Schema& schema, const JsonFormatOptions& options);

  // Starts parsing `text` into `doc`. `readable`: bytes readable from text.data(); with
  // less than the text plus simdjson's padding the text is copied into a reused padded
  // buffer first (no allocation once it has grown).
  simdjson::error_code iterate(std::string_view text, std::size_t readable, od::document& doc);

  // Appends one row to `cols` (one per schema field) from the fields of `obj`; a field
  // missing is NULL (or an error under fail-on-missing-field). On failure sets `reason`
  // ("field \"price\": ...") and may leave partial values: the caller truncates.
  bool decode_row(od::object& obj, Column* const* cols, std::string& reason);
  // Which schema fields the last decode_row found in its object (1 = present, even as null).
  const std::vector<std::uint8_t>& seen() const { return plan_.seen; }

  const JsonFormatOptions& options() const { return opts_; }

 private:
  template <class ColAt>
  bool decode_object(od::object& obj, ColAt&& col_at, TypePlan& plan, std::string& reason);
  bool decode_value(od::value& v, Column& col, TypePlan& plan, std::string& reason);
  bool decode_integer(od::value& v, od::json_type jt, Column& col, std::string& reason);
  bool decode_as_text(od::value& v, od::json_type jt, Column& col, std::string& reason);
  bool value_error(const Column& col, std::string_view text, std::string& reason);
  // A value that is well-formed JSON but not of its column's type (not a syntax error).
  bool type_error(std::string& reason, std::string message);
  // Under ignore-parse-errors, a value that failed by its type becomes NULL (Flink's
  // converters null the field, the array element or the map value and go on); `before`:
  // the column's size before the value. False: the failure stands (a syntax error fails
  // the whole row, which is then skipped).
  bool null_on_type_error(Column& col, std::size_t before);

  od::parser parser_;
  std::string padded_;
  TypePlan plan_;
  const JsonFormatOptions& opts_;
  bool type_failed_ = false;  // the last failure was a type_error
};

}  // namespace clink::sql::json_detail
