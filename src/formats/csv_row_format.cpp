#include "clink/formats/csv_row_format.hpp"

#include <simdjson.h>

#include "clink/core/error.hpp"
#include "clink/core/utf8.hpp"
#include "clink/formats/sql_text_values.hpp"
#include "clink/sql/common/decimal.hpp"

namespace clink::sql {

namespace {

bool parse_bool_option(const std::string& key, const std::string& value) {
  if (value == "true" || value == "TRUE" || value == "True") return true;
  if (value == "false" || value == "FALSE" || value == "False") return false;
  throw ClinkError("option '" + key + "' must be true or false, got '" + value + "'");
}

// A single character; Flink also accepts the escaped forms "\t" and "\\u0001"-style unicode.
char single_char_option(const std::string& key, const std::string& value) {
  if (value.size() == 1) return value[0];
  if (value == "\\t") return '\t';
  if (value.size() == 6 && value.starts_with("\\u")) {
    unsigned v = 0;
    for (char c : value.substr(2)) {
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
      else throw ClinkError("option '" + key + "' must be a single character, got '" + value + "'");
    }
    if (v < 128) return static_cast<char>(v);
  }
  throw ClinkError("option '" + key + "' must be a single character, got '" + value + "'");
}

bool scalar(const LogicalType& t) { return !t.is_nested(); }

}  // namespace

CsvFormatOptions CsvFormatOptions::from(const std::map<std::string, std::string>& options) {
  CsvFormatOptions o;
  for (const auto& [key, value] : options) {
    if (!key.starts_with("csv.")) continue;
    if (key == "csv.field-delimiter") o.field_delimiter = single_char_option(key, value);
    else if (key == "csv.disable-quote-character") o.disable_quote_character = parse_bool_option(key, value);
    else if (key == "csv.quote-character") o.quote_character = single_char_option(key, value);
    else if (key == "csv.allow-comments") o.allow_comments = parse_bool_option(key, value);
    else if (key == "csv.ignore-parse-errors") o.ignore_parse_errors = parse_bool_option(key, value);
    else if (key == "csv.array-element-delimiter") {
      if (value.empty()) throw ClinkError("option 'csv.array-element-delimiter' must not be empty");
      o.array_element_delimiter = value;
    } else if (key == "csv.escape-character") o.escape_character = single_char_option(key, value);
    else if (key == "csv.null-literal") o.null_literal = value;
    else if (key == "csv.write-bigdecimal-in-scientific-notation")
      o.write_bigdecimal_in_scientific_notation = parse_bool_option(key, value);
    else {
      std::string known;
      for (const auto& k : keys()) known += (known.empty() ? "" : ", ") + k;
      throw ClinkError("unknown option '" + key + "' of format csv (known: " + known + ")");
    }
  }
  if (options.count("csv.quote-character") && o.disable_quote_character)
    throw ClinkError("option 'csv.quote-character' cannot be set when 'csv.disable-quote-character' is true");
  return o;
}

const std::vector<std::string>& CsvFormatOptions::keys() {
  static const std::vector<std::string> k = {
      "csv.field-delimiter",  "csv.disable-quote-character", "csv.quote-character",
      "csv.allow-comments",   "csv.ignore-parse-errors",     "csv.array-element-delimiter",
      "csv.escape-character", "csv.null-literal",            "csv.write-bigdecimal-in-scientific-notation"};
  return k;
}

// ---- decoding -------------------------------------------------------------------------

CsvRowDecoder::CsvRowDecoder(SchemaPtr table_schema, std::vector<std::size_t> projected, CsvFormatOptions options)
    : schema_(std::move(table_schema)), projected_(std::move(projected)), options_(std::move(options)) {
  for (std::size_t i : projected_) {
    if (i >= schema_->size())
      throw ClinkError("csv format: projected field " + std::to_string(i) + " is not a field of " + schema_->to_string());
    const LogicalType& t = schema_->type(i);
    bool ok = scalar(t);
    if (t.is(TypeKind::kArray)) ok = scalar(t.element_type());
    if (t.is(TypeKind::kRow)) {
      ok = true;
      for (const auto& f : t.fields()) ok = ok && scalar(f.type);
    }
    if (!ok)
      throw ClinkError("csv format does not support the type " + t.to_string() + " of field `" + schema_->name(i) + "`");
  }
}

// Splits `line` into fields_: quoted fields unquoted (a doubled quote is one quote),
// escaped characters taken literally.
CsvRowDecoder::Result CsvRowDecoder::split(std::string_view line, std::string& reason) {
  auto& spans = spans_;
  spans.clear();
  unquoted_.clear();
  const char delim = options_.field_delimiter;
  const bool quoting = !options_.disable_quote_character;
  const char quote = options_.quote_character;
  const int escape = options_.escape_character ? static_cast<unsigned char>(*options_.escape_character) : -1;
  std::size_t i = 0, n = line.size();
  for (;;) {
    const std::size_t field_start = i;
    if (quoting && i < n && line[i] == quote) {
      std::size_t begin = unquoted_.size();
      ++i;
      bool closed = false;
      while (i < n) {
        char c = line[i];
        if (static_cast<unsigned char>(c) == escape && i + 1 < n) {
          unquoted_ += line[i + 1];
          i += 2;
        } else if (c == quote) {
          if (i + 1 < n && line[i + 1] == quote) {
            unquoted_ += quote;
            i += 2;
          } else {
            ++i;
            closed = true;
            break;
          }
        } else {
          unquoted_ += c;
          ++i;
        }
      }
      if (!closed) {
        reason = "unterminated quoted field " + std::to_string(spans.size() + 1);
        error_offset_ = field_start;
        return Result::kIncomplete;
      }
      if (i < n && line[i] != delim) {
        reason = "unexpected character '" + std::string(1, line[i]) + "' after the quoted field " +
                 std::to_string(spans.size() + 1);
        error_offset_ = i;
        return Result::kError;
      }
      spans.push_back({true, begin, unquoted_.size(), field_start});
    } else if (escape >= 0) {
      std::size_t begin = unquoted_.size();
      while (i < n && line[i] != delim) {
        if (static_cast<unsigned char>(line[i]) == escape && i + 1 < n) ++i;
        unquoted_ += line[i++];
      }
      spans.push_back({true, begin, unquoted_.size(), field_start});
    } else {
      std::size_t begin = i;
      while (i < n && line[i] != delim) ++i;
      spans.push_back({false, begin, i, field_start});
    }
    if (i >= n) break;
    ++i;  // the delimiter; a trailing one starts an empty last field
  }
  fields_.clear();
  for (const auto& s : spans)
    fields_.push_back(s.owned ? std::string_view(unquoted_).substr(s.begin, s.end - s.begin)
                              : line.substr(s.begin, s.end - s.begin));
  return Result::kRow;
}

bool CsvRowDecoder::parse_field(std::size_t field, std::string_view text, Column& col, std::string& reason,
                                bool nested) {
  if ((options_.null_literal && text == *options_.null_literal) || (text.empty() && col.type().is(TypeKind::kRow))) {
    col.append_null();
    return true;
  }
  const LogicalType& t = col.type();
  bool ok = true;
  if (t.is(TypeKind::kArray) || t.is(TypeKind::kRow)) {
    const std::string& d = options_.array_element_delimiter;
    std::size_t count = 0;
    std::size_t expected = t.is(TypeKind::kRow) ? t.fields().size() : 0;
    for (std::size_t pos = 0; ok;) {
      std::size_t end = text.find(d, pos);
      std::string_view elem = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
      if (t.is(TypeKind::kArray)) {
        if (!text.empty()) ok = parse_field(field, elem, col.child(0), reason, true);
      } else if (count < expected) {
        ok = parse_field(field, elem, col.child(count), reason, true);
      }
      ++count;
      if (end == std::string_view::npos) break;
      pos = end + d.size();
    }
    if (ok && t.is(TypeKind::kRow)) {
      for (std::size_t k = count; k < expected; ++k) col.child(k).append_null();
      if (count != expected && !options_.ignore_parse_errors) {
        reason = "ROW field of " + std::to_string(expected) + " fields has " + std::to_string(count);
        ok = false;
      }
    }
    if (ok) finish_nested_value(col);
  } else {
    ok = append_text_value(col, text, TimestampStandard::kSql, reason);
  }
  if (!ok && options_.ignore_parse_errors) {  // as Flink's nullable converter: the field becomes NULL
    col.append_null();
    return true;
  }
  if (!ok && !nested) reason = "field " + std::to_string(field + 1) + " (" + schema_->name(field) + "): " + reason;
  return ok;
}

CsvRowDecoder::Result CsvRowDecoder::decode(std::string_view line, std::vector<Column>& columns, std::string& reason) {
  pointers_.clear();
  for (auto& c : columns) pointers_.push_back(&c);
  return decode(line, std::span<Column* const>(pointers_), reason);
}

CsvRowDecoder::Result CsvRowDecoder::decode(std::string_view line, std::span<Column* const> columns,
                                            std::string& reason) {
  // A UTF-8 byte order mark before the record is skipped, as Jackson's CSV bootstrapper
  // does (a file saved "with BOM" broke its first line); error offsets stay the record's.
  if (line.starts_with("\xEF\xBB\xBF")) {
    auto r = decode_record(line.substr(3), columns, reason);
    error_offset_ += 3;
    return r;
  }
  return decode_record(line, columns, reason);
}

CsvRowDecoder::Result CsvRowDecoder::decode_record(std::string_view line, std::span<Column* const> columns,
                                                   std::string& reason) {
  if (line.empty()) return Result::kSkipped;
  // Text is UTF-8 (Flink's CSV format decodes it with Jackson, which rejects malformed
  // bytes; clink's JSON reader does too): a record that is not is a parse error.
  if (!simdjson::validate_utf8(line.data(), line.size())) {
    error_offset_ = first_invalid_utf8(line);
    reason = "invalid UTF-8 at byte " + std::to_string(error_offset_ + 1) + " of the record";
    return Result::kError;
  }
  if (options_.allow_comments && line.front() == '#') return Result::kSkipped;
  if (auto r = split(line, reason); r != Result::kRow) return r;
  if (fields_.size() != schema_->size() && !options_.ignore_parse_errors) {
    reason = "row length mismatch: " + std::to_string(schema_->size()) + " fields expected but was " +
             std::to_string(fields_.size());
    error_offset_ = fields_.size() > schema_->size() ? spans_[schema_->size()].offset : line.size();
    return Result::kError;
  }
  start_sizes_.resize(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) start_sizes_[c] = columns[c]->size();
  for (std::size_t c = 0; c < projected_.size(); ++c) {
    std::size_t f = projected_[c];
    if (f >= fields_.size()) {
      columns[c]->append_null();  // short row under ignore-parse-errors
      continue;
    }
    // Nested children are truncated with their parent if a later field fails.
    if (!parse_field(f, fields_[f], *columns[c], reason)) {
      error_offset_ = spans_[f].offset;
      for (std::size_t k = 0; k < columns.size(); ++k) truncate_column(*columns[k], start_sizes_[k]);
      return Result::kError;
    }
  }
  return Result::kRow;
}

// ---- encoding -------------------------------------------------------------------------

CsvRowEncoder::CsvRowEncoder(SchemaPtr schema, CsvFormatOptions options)
    : schema_(std::move(schema)), options_(std::move(options)) {
  for (const auto& f : schema_->fields()) {
    bool ok = scalar(f.type) || (f.type.is(TypeKind::kArray) && scalar(f.type.element_type()));
    if (f.type.is(TypeKind::kRow)) {
      ok = true;
      for (const auto& g : f.type.fields()) ok = ok && scalar(g.type);
    }
    if (!ok) throw ClinkError("csv format does not support the type " + f.type.to_string() + " of field `" + f.name + "`");
  }
}

void CsvRowEncoder::append_field(std::string_view text, std::string& out) const {
  const char delim = options_.field_delimiter, quote = options_.quote_character;
  const int escape = options_.escape_character ? static_cast<unsigned char>(*options_.escape_character) : -1;
  bool needs_quotes = false;
  for (char c : text)
    if (c == delim || c == quote || c == '\n' || c == '\r' || static_cast<unsigned char>(c) == escape) needs_quotes = true;
  if (!options_.disable_quote_character && (needs_quotes || text.empty())) {
    out += quote;
    for (char c : text) {
      if (c == quote) out += quote;  // doubled
      out += c;
    }
    out += quote;
    return;
  }
  if (escape >= 0 && needs_quotes) {
    for (char c : text) {
      if (c == delim || static_cast<unsigned char>(c) == escape || c == '\n' || c == '\r') out += static_cast<char>(escape);
      out += c;
    }
    return;
  }
  out.append(text);
}

void CsvRowEncoder::encode(const ColumnBatch& batch, std::size_t row, std::string& out) const {
  thread_local std::vector<const Column*> cols;
  cols.clear();
  for (std::size_t i = 0; i < batch.num_columns(); ++i) cols.push_back(&batch.column(i));
  encode(cols.data(), row, out);
}

void CsvRowEncoder::encode(const Column* const* columns, std::size_t row, std::string& out) const {
  thread_local std::string text;
  auto scalar_text = [&](const Column& col, std::size_t r) {
    if (col.is_null(r)) {
      if (options_.null_literal) text += *options_.null_literal;
      return;
    }
    if (col.type().is(TypeKind::kDecimal) && !options_.write_bigdecimal_in_scientific_notation)
      Decimal128::append_string(col.values<Int128>()[r], col.type().scale(), text);
    else
      append_text_of(col, r, TimestampStandard::kSql, text);
  };
  for (std::size_t c = 0; c < schema_->size(); ++c) {
    if (c > 0) out += options_.field_delimiter;
    const Column& col = *columns[c];
    text.clear();
    if (col.is_null(row)) {
      // NULL is the null literal, or an empty field (unquoted, unlike an empty string).
      if (options_.null_literal) append_field(*options_.null_literal, out);
      continue;
    }
    if (col.type().is(TypeKind::kArray)) {
      auto [b, e] = col.list_range(row);
      for (auto i = b; i < e; ++i) {
        if (i != b) text += options_.array_element_delimiter;
        scalar_text(col.child(0), i);
      }
    } else if (col.type().is(TypeKind::kRow)) {
      for (std::size_t k = 0; k < col.num_children(); ++k) {
        if (k > 0) text += options_.array_element_delimiter;
        scalar_text(col.child(k), row);
      }
    } else {
      scalar_text(col, row);
    }
    append_field(text, out);
  }
}

}  // namespace clink::sql
