#pragma once
// One interface for every SQL format that turns a whole message into rows and back: a
// Kafka record's key or value, one line of a file. Connectors pick a format by its
// 'format' / 'key.format' / 'value.format' name and never know which one it is.
//
// Formats: json, csv, raw, avro (plain Avro binary, the schema derived from the fields),
// and the changelog formats debezium-json, canal-json, maxwell-json, whose messages carry
// row kinds (one message can decode to no row, one, or an -U/+U pair).
#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "clink/sql/common/column.hpp"
#include "clink/sql/common/row_kind.hpp"
#include "clink/sql/common/types.hpp"

namespace clink::sql {

// A format's options with the format's own prefix kept ("json.ignore-parse-errors",
// "debezium-json.schema-include"): the connector has already removed its "key." /
// "value." prefix.
using FormatOptions = std::map<std::string, std::string>;

class RecordDecoder {
 public:
  virtual ~RecordDecoder() = default;
  // Appends the rows `message` holds to `columns` (one per field the decoder was made
  // for, in order; they may be columns of a larger batch) and each row's kind to `kinds`.
  // Returns the number of rows appended: 0 for a message without a row (a changelog
  // format's tombstone or schema-change message, a blank csv line), or -1 for a malformed
  // message, with `reason` set ("field \"price\": 'x' is not a valid DOUBLE") and the
  // columns and kinds left as they were. With the format's ignore-parse-errors set a
  // malformed message returns 0 and counts it in skipped() (raw and avro have no such
  // option, as Flink). An empty message is a message: raw decodes it to an empty string,
  // the changelog formats to no row (a tombstone), json/avro fail it. The text formats
  // copy the message into a reused padded buffer (simdjson): no allocation per message
  // once the decoder's scratch has grown.
  virtual int decode(std::string_view message, std::span<Column* const> columns, std::vector<RowKind>& kinds,
                     std::string& reason) = 0;
  // A null message (Kafka's null value, unlike an empty one): the rows it stands for. No
  // row for every format (a changelog format's tombstone; Flink's json, csv and avro
  // deserializers return no row for null) except raw, whose null message is a row with a
  // NULL field.
  virtual int decode_null(std::span<Column* const> columns, std::vector<RowKind>& kinds) {
    (void)columns;
    (void)kinds;
    return 0;
  }
  // Malformed messages skipped under ignore-parse-errors so far.
  std::size_t skipped() const { return skipped_; }

 protected:
  std::size_t skipped_ = 0;
};

class RecordEncoder {
 public:
  virtual ~RecordEncoder() = default;
  // Appends one message for row `row` of `columns` (one per field the encoder was made
  // for), of kind `kind`, to `out`; false when the format writes no message for that kind
  // (an insert-only format given -U / -D throws instead: the planner never lets that
  // happen). Throws ClinkError for a value the format cannot write.
  virtual bool encode(std::span<const Column* const> columns, std::size_t row, RowKind kind, std::string& out) = 0;
  // Whether row `row` is a null message rather than bytes (raw: a NULL value, which Flink
  // writes as Kafka's null value); encode() then appends nothing and returns true. A
  // connector without null messages (a file) writes the empty message.
  virtual bool is_null_message(std::span<const Column* const> columns, std::size_t row) const {
    (void)columns;
    (void)row;
    return false;
  }
};

// Whether `format` is known; whether its messages carry row kinds (debezium-json,
// canal-json, maxwell-json: a table in it is a changelog source, and a sink in it takes
// updates as retractions).
bool record_format_known(std::string_view format);
bool record_format_is_changelog(std::string_view format);
// The names, sorted, for messages: "avro, canal-json, csv, debezium-json, json, ...".
std::string record_format_names();
// The option keys `format` takes (with its prefix), to validate a table's WITH options.
const std::vector<std::string>& record_format_keys(std::string_view format);

// A decoder / encoder for messages holding `fields` (name and type each, in order).
// Throws ClinkError naming the format, option or field it rejects: an unknown format, a
// bad option value, a type the format cannot hold (raw: exactly one field).
std::unique_ptr<RecordDecoder> make_record_decoder(std::string_view format, SchemaPtr fields,
                                                   const FormatOptions& options);
std::unique_ptr<RecordEncoder> make_record_encoder(std::string_view format, SchemaPtr fields,
                                                   const FormatOptions& options);

}  // namespace clink::sql
