#include "clink/formats/json_row_format.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "clink/core/error.hpp"
#include "clink/formats/json_codec.hpp"
#include "clink/formats/json_escape.hpp"
#include "clink/sql/common/decimal.hpp"
#include "json_value_reader.hpp"

namespace clink::sql {

using namespace json_detail;

namespace {

bool parse_bool_option(const std::string& key, const std::string& value) {
  if (value == "true" || value == "TRUE" || value == "True") return true;
  if (value == "false" || value == "FALSE" || value == "False") return false;
  throw ClinkError("option '" + key + "' must be true or false, got '" + value + "'");
}

bool fail(std::string& reason, std::string message) {
  reason = std::move(message);
  return false;
}

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

JsonFormatOptions JsonFormatOptions::from(const std::map<std::string, std::string>& options, std::string_view format) {
  JsonFormatOptions o;
  const std::string prefix = std::string(format) + ".";
  for (const auto& [key, value] : options) {
    if (!key.starts_with(prefix)) continue;
    const std::string_view name = std::string_view(key).substr(prefix.size());
    if (name == "fail-on-missing-field" && format == "json") o.fail_on_missing_field = parse_bool_option(key, value);
    else if (name == "ignore-parse-errors") o.ignore_parse_errors = parse_bool_option(key, value);
    else if (name == "encode.decimal-as-plain-number") o.encode_decimal_as_plain_number = parse_bool_option(key, value);
    else if (name == "encode.ignore-null-fields") o.encode_ignore_null_fields = parse_bool_option(key, value);
    else if (name == "map-null-key.literal") o.map_null_key_literal = value;
    else if (name == "timestamp-format.standard") {
      if (value == "SQL") o.timestamp_standard = TimestampStandard::kSql;
      else if (value == "ISO-8601") o.timestamp_standard = TimestampStandard::kIso8601;
      else throw ClinkError("option '" + key + "' must be SQL or ISO-8601, got '" + value + "'");
    } else if (name == "map-null-key.mode") {
      if (value == "FAIL") o.map_null_key_mode = MapNullKeyMode::kFail;
      else if (value == "DROP") o.map_null_key_mode = MapNullKeyMode::kDrop;
      else if (value == "LITERAL") o.map_null_key_mode = MapNullKeyMode::kLiteral;
      else throw ClinkError("option '" + key + "' must be FAIL, DROP or LITERAL, got '" + value + "'");
    } else {
      std::string known;
      for (const auto& k : keys()) {
        if (format != "json" && k == "json.fail-on-missing-field") continue;
        known += (known.empty() ? "" : ", ") + std::string(format) + k.substr(4);
      }
      throw ClinkError("unknown option '" + key + "' of format " + std::string(format) + " (known: " + known + ")");
    }
  }
  if (o.fail_on_missing_field && o.ignore_parse_errors)
    throw ClinkError("options 'json.fail-on-missing-field' and 'json.ignore-parse-errors' cannot both be true");
  return o;
}

const std::vector<std::string>& JsonFormatOptions::keys() {
  static const std::vector<std::string> k = {"json.fail-on-missing-field",       "json.ignore-parse-errors",
                                             "json.timestamp-format.standard",   "json.map-null-key.mode",
                                             "json.map-null-key.literal",        "json.encode.decimal-as-plain-number",
                                             "json.encode.ignore-null-fields"};
  return k;
}

// ---- decoding -------------------------------------------------------------------------

namespace json_detail {

std::string describe(simdjson::error_code e) {
  switch (e) {
    case simdjson::EMPTY: return "empty line";
    case simdjson::TRAILING_CONTENT: return "unexpected content after the JSON object";
    case simdjson::UTF8_ERROR: return "invalid UTF-8";
    case simdjson::INCORRECT_TYPE: return "unexpected JSON type";
    default: return std::string("invalid JSON (") + simdjson::error_message(e) + ")";
  }
}

namespace {

void mark_raw_comparable(const std::vector<std::string>& names, std::vector<std::uint8_t>& out) {
  out.clear();
  for (const auto& n : names)
    out.push_back(n.size() < simdjson::SIMDJSON_PADDING && n.find_first_of("\"\\") == std::string::npos);
}

}  // namespace

TypePlan::TypePlan(const LogicalType& t) {
  switch (t.kind()) {
    case TypeKind::kArray: children.emplace_back(t.element_type()); break;
    case TypeKind::kMap:
      children.emplace_back(t.key_type());
      children.emplace_back(t.value_type());
      break;
    case TypeKind::kRow:
      for (const auto& f : t.fields()) {
        names.push_back(f.name);
        children.emplace_back(f.type);
      }
      seen.resize(names.size());
      mark_raw_comparable(names, raw_comparable);
      break;
    default: break;
  }
}

TypePlan::TypePlan(const Schema& s) {
  for (const auto& f : s.fields()) {
    names.push_back(f.name);
    children.emplace_back(f.type);
  }
  seen.resize(names.size());
  mark_raw_comparable(names, raw_comparable);
}

JsonValueReader::JsonValueReader(const Schema& schema, const JsonFormatOptions& options)
    : plan_(schema), opts_(options) {}

simdjson::error_code JsonValueReader::iterate(std::string_view text, std::size_t readable, od::document& doc) {
  // A UTF-8 byte order mark before the document is skipped, as Jackson's byte-source
  // bootstrapper does (a file saved "with BOM" broke its first line).
  if (text.starts_with("\xEF\xBB\xBF")) {
    text.remove_prefix(3);
    readable -= 3;
  }
  const char* data = text.data();
  if (readable < text.size() + simdjson::SIMDJSON_PADDING) {
    if (padded_.size() < text.size() + simdjson::SIMDJSON_PADDING) padded_.resize(text.size() + simdjson::SIMDJSON_PADDING);
    if (!text.empty()) std::memcpy(padded_.data(), text.data(), text.size());
    data = padded_.data();
    readable = padded_.size();
  }
  return parser_.iterate(data, text.size(), readable).get(doc);
}

namespace {

// A string's text straight from the input when it holds no escape (the common case): no
// copy through simdjson's string buffer. The value is not consumed (iteration skips it).
// False: it has escapes, unescape it (get_string).
bool raw_string(od::value& v, std::string_view& out) {
  // The token runs from the opening quote to the next structural character: the closing
  // quote is its last character but whitespace.
  std::string_view token = trim_right(v.raw_json_token());
  if (token.size() < 2 || token.back() != '"') return false;
  const char* p = token.data() + 1;
  const std::size_t n = token.size() - 2;
  if (std::memchr(p, '\\', n) != nullptr) return false;
  out = std::string_view(p, n);
  return true;
}

bool read_string(od::value& v, std::string_view& out, std::string& reason) {
  if (raw_string(v, out)) return true;
  if (auto e = v.get_string().get(out)) return fail(reason, describe(e));
  return true;
}

// A key's text when it holds no escape: the bytes up to its closing quote, compared in
// place rather than unescaped into simdjson's string buffer first.
bool plain_key(od::raw_json_string raw, std::string_view& out) {
  const char* p = raw.raw();
  const char* c = p;
  while (*c != '"' && *c != '\\') ++c;  // a key always ends with a quote in the input
  if (*c == '\\') return false;
  out = std::string_view(p, static_cast<std::size_t>(c - p));
  return true;
}

}  // namespace

simdjson::error_code field_key(od::field& f, std::string_view& out) {
  if (plain_key(f.key(), out)) return simdjson::SUCCESS;
  return f.unescaped_key().get(out);
}

bool JsonValueReader::value_error(const Column& col, std::string_view text, std::string& reason) {
  std::string shown(text.substr(0, 64));
  return fail(reason, "'" + shown + (text.size() > 64 ? "...'" : "'") + " is not a valid " + col.type().to_string());
}

// Integers as Jackson: a JSON integer in range, a floating number truncated when in
// range (canConvertToInt/asInt), or a string parsed as Integer.parseInt.
bool JsonValueReader::decode_integer(od::value& v, od::json_type jt, Column& col, std::string& reason) {
  if (jt == od::json_type::number) {
    std::int64_t lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
    switch (col.type().kind()) {
      case TypeKind::kTinyInt: lo = -128, hi = 127; break;
      case TypeKind::kSmallInt: lo = -32768, hi = 32767; break;
      case TypeKind::kInt:
      case TypeKind::kIntervalYearMonth: lo = INT32_MIN, hi = INT32_MAX; break;
      default: break;
    }
    std::int64_t x = 0;
    if (v.get_int64().get(x) != simdjson::SUCCESS) {
      std::string_view raw = v.raw_json_token();
      // An integer beyond int64 is out of range, never rounded through a double into it.
      od::number_type nt;
      if (v.get_number_type().get(nt) == simdjson::SUCCESS && nt != od::number_type::floating_point_number)
        return value_error(col, trim_right(raw), reason);
      // A floating number in range truncates; 2^63 is the first double beyond int64 (the
      // double nearest INT64_MAX is 2^63 itself, so `<= hi` would let it through).
      constexpr double kTwo63 = 9223372036854775808.0;
      double d = 0;
      if (v.get_double().get(d) || !(d >= static_cast<double>(lo) && d <= static_cast<double>(hi)) ||
          !(d >= -kTwo63 && d < kTwo63))
        return value_error(col, trim_right(raw), reason);
      x = static_cast<std::int64_t>(d);
    }
    if (x < lo || x > hi) return value_error(col, std::to_string(x), reason);
    switch (col.type().kind()) {
      case TypeKind::kTinyInt: col.append<std::int8_t>(static_cast<std::int8_t>(x)); break;
      case TypeKind::kSmallInt: col.append<std::int16_t>(static_cast<std::int16_t>(x)); break;
      case TypeKind::kInt:
      case TypeKind::kIntervalYearMonth: col.append<std::int32_t>(static_cast<std::int32_t>(x)); break;
      default: col.append<std::int64_t>(x); break;
    }
    return true;
  }
  return decode_as_text(v, jt, col, reason);
}

// The value's text (a string unescaped, anything else its JSON), parsed for the type.
bool JsonValueReader::decode_as_text(od::value& v, od::json_type jt, Column& col, std::string& reason) {
  std::string_view text;
  if (jt == od::json_type::string) {
    if (!read_string(v, text, reason)) return false;
  } else if (jt == od::json_type::object || jt == od::json_type::array) {
    return fail(reason, std::string("a JSON ") + (jt == od::json_type::object ? "object" : "array") +
                            " is not a valid " + col.type().to_string());
  } else {
    text = trim_right(v.raw_json_token());
  }
  return append_text_value(col, text, opts_.timestamp_standard, reason);
}

bool JsonValueReader::decode_value(od::value& v, Column& col, TypePlan& plan, std::string& reason) {
  od::json_type jt;
  if (auto e = v.type().get(jt)) return fail(reason, describe(e));
  if (jt == od::json_type::null) {
    bool is_null = false;
    if (auto e = v.is_null().get(is_null)) return fail(reason, describe(e));
    col.append_null();
    return true;
  }
  switch (col.type().kind()) {
    case TypeKind::kBoolean:
      if (jt == od::json_type::boolean) {
        bool b = false;
        if (auto e = v.get_bool().get(b)) return fail(reason, describe(e));
        col.append<std::uint8_t>(b ? 1 : 0);
        return true;
      }
      return decode_as_text(v, jt, col, reason);
    case TypeKind::kTinyInt:
    case TypeKind::kSmallInt:
    case TypeKind::kInt:
    case TypeKind::kBigInt:
    case TypeKind::kIntervalYearMonth:
    case TypeKind::kIntervalDayTime: return decode_integer(v, jt, col, reason);
    case TypeKind::kFloat:
    case TypeKind::kDouble:
      if (jt == od::json_type::number) {
        double d = 0;
        if (auto e = v.get_double().get(d)) return fail(reason, describe(e));
        if (col.type().kind() == TypeKind::kFloat) col.append<float>(static_cast<float>(d));
        else col.append<double>(d);
        return true;
      }
      return decode_as_text(v, jt, col, reason);
    case TypeKind::kDecimal: {
      if (jt != od::json_type::number) return decode_as_text(v, jt, col, reason);
      std::string_view raw = v.raw_json_token();  // exact: from the number's text, never through a double
      // Not consumed: the object iteration skips it. Decimal128::parse validates it.
      return append_text_value(col, trim_right(raw), opts_.timestamp_standard, reason);
    }
    case TypeKind::kChar:
    case TypeKind::kVarChar: {
      std::string_view s;
      simdjson::error_code e = simdjson::SUCCESS;
      if (jt == od::json_type::string) {
        if (!read_string(v, s, reason)) return false;
      } else if (jt == od::json_type::object) {
        od::object o;
        e = v.get_object().get(o);
        if (!e) e = o.raw_json().get(s);
      } else if (jt == od::json_type::array) {
        od::array a;
        e = v.get_array().get(a);
        if (!e) e = a.raw_json().get(s);
      } else {
        s = trim_right(v.raw_json_token());
      }
      if (e) return fail(reason, describe(e));
      col.append_string(s);
      return true;
    }
    case TypeKind::kArray: {
      od::array arr;
      if (v.get_array().get(arr) != simdjson::SUCCESS) return fail(reason, "expected a JSON array for " + col.type().to_string());
      Column& elems = col.child(0);
      for (auto item : arr) {
        if (auto e = item.error()) return fail(reason, describe(e));
        if (!decode_value(item.value_unsafe(), elems, plan.children[0], reason)) return false;
      }
      finish_nested_value(col);
      return true;
    }
    case TypeKind::kMap: {
      od::object obj;
      if (v.get_object().get(obj) != simdjson::SUCCESS) return fail(reason, "expected a JSON object for " + col.type().to_string());
      for (auto item : obj) {
        if (auto e = item.error()) return fail(reason, describe(e));
        od::field& f = item.value_unsafe();
        std::string_view key;
        if (!plain_key(f.key(), key))
          if (auto e = f.unescaped_key().get(key)) return fail(reason, describe(e));
        if (!append_text_value(col.child(0), key, opts_.timestamp_standard, reason)) return false;
        if (!decode_value(f.value(), col.child(1), plan.children[1], reason)) return false;
      }
      finish_nested_value(col);
      return true;
    }
    case TypeKind::kRow: {
      od::object obj;
      if (v.get_object().get(obj) != simdjson::SUCCESS) return fail(reason, "expected a JSON object for " + col.type().to_string());
      auto& children = col.children();
      if (!decode_object(obj, [&](std::size_t i) -> Column& { return children[i]; }, plan, reason)) return false;
      finish_nested_value(col);
      return true;
    }
    default: return decode_as_text(v, jt, col, reason);
  }
}

// The fields of `obj` into the columns col_at(i) (one per plan field); missing ones NULL
// or an error.
template <class ColAt>
bool JsonValueReader::decode_object(od::object& obj, ColAt&& col_at, TypePlan& plan, std::string& reason) {
  std::fill(plan.seen.begin(), plan.seen.end(), 0);
  std::size_t hint = 0;
  for (auto item : obj) {
    // The field used in place: copying simdjson's iterator structs stalled on store
    // forwarding (a third of the decoder's time).
    if (auto e = item.error()) return fail(reason, describe(e));
    od::field& f = item.value_unsafe();
    std::size_t i = hint;
    if (!plan.key_is(f.key().raw(), hint)) {
      std::string_view key;
      if (!plain_key(f.key(), key))
        if (auto e = f.unescaped_key().get(key)) return fail(reason, describe(e));
      i = plan.find(key, hint);
      if (i == plan.names.size()) continue;  // not a column: on-demand skips its value
    }
    hint = i + 1;
    Column& col = col_at(i);
    if (plan.seen[i]) truncate_column(col, col.size() - 1);  // repeated field: the last value wins
    plan.seen[i] = 1;
    const std::size_t before = col.size();
    if (!decode_value(f.value(), col, plan.children[i], reason)) {
      if (opts_.ignore_parse_errors) {  // Flink's nullable converter: the field becomes NULL
        truncate_column(col, before);
        col.append_null();
        continue;
      }
      reason = "field \"" + plan.names[i] + "\": " + reason;
      return false;
    }
  }
  for (std::size_t i = 0; i < plan.names.size(); ++i) {
    if (plan.seen[i]) continue;
    if (opts_.fail_on_missing_field) return fail(reason, "missing field \"" + plan.names[i] + "\"");
    col_at(i).append_null();
  }
  return true;
}

bool JsonValueReader::decode_row(od::object& obj, Column* const* cols, std::string& reason) {
  return decode_object(obj, [cols](std::size_t i) -> Column& { return *cols[i]; }, plan_, reason);
}

}  // namespace json_detail

struct JsonRowDecoder::Impl {
  JsonValueReader reader;
  od::document doc;
  std::vector<std::size_t> start_sizes;
  std::vector<Column*> pointers;  // scratch: the vector<Column> overload's columns

  Impl(const Schema& schema, const JsonFormatOptions& o) : reader(schema, o) {}

  bool decode(std::string_view text, std::size_t readable, std::span<Column* const> cols, std::string& reason) {
    if (auto e = reader.iterate(text, readable, doc)) return fail(reason, describe(e));
    od::object obj;
    if (auto e = doc.get_object().get(obj))
      return fail(reason, e == simdjson::INCORRECT_TYPE ? "expected a JSON object" : describe(e));
    start_sizes.resize(cols.size());
    for (std::size_t i = 0; i < cols.size(); ++i) start_sizes[i] = cols[i]->size();
    bool ok = reader.decode_row(obj, cols.data(), reason);
    if (ok) {
      const char* loc = nullptr;
      if (doc.current_location().get(loc) == simdjson::SUCCESS) ok = fail(reason, describe(simdjson::TRAILING_CONTENT));
    }
    if (!ok)
      for (std::size_t i = 0; i < cols.size(); ++i) truncate_column(*cols[i], start_sizes[i]);
    return ok;
  }
};

JsonRowDecoder::JsonRowDecoder(SchemaPtr schema, JsonFormatOptions options)
    : options_(std::move(options)), impl_(std::make_unique<Impl>(*schema, options_)) {}
JsonRowDecoder::~JsonRowDecoder() = default;

bool JsonRowDecoder::decode(std::string_view text, std::size_t readable, std::vector<Column>& columns,
                            std::string& reason) {
  auto& p = impl_->pointers;
  p.clear();
  for (auto& c : columns) p.push_back(&c);
  return impl_->decode(text, readable, p, reason);
}

bool JsonRowDecoder::decode(std::string_view text, std::size_t readable, std::span<Column* const> columns,
                            std::string& reason) {
  return impl_->decode(text, readable, columns, reason);
}

// ---- encoding -------------------------------------------------------------------------

JsonRowEncoder::JsonRowEncoder(SchemaPtr schema, JsonFormatOptions options)
    : schema_(std::move(schema)), options_(std::move(options)) {
  for (const auto& f : schema_->fields()) {
    std::string k;
    append_json_string(f.name, k);
    k += ':';
    keys_.push_back(std::move(k));
  }
}

void JsonRowEncoder::encode(const ColumnBatch& batch, std::size_t row, std::string& out) const {
  thread_local std::vector<const Column*> cols;
  cols.clear();
  for (std::size_t i = 0; i < batch.num_columns(); ++i) cols.push_back(&batch.column(i));
  encode_fields(keys_, cols.data(), cols.size(), row, out);
}

void JsonRowEncoder::encode(const Column* const* columns, std::size_t row, std::string& out) const {
  encode_fields(keys_, columns, keys_.size(), row, out);
}

void JsonRowEncoder::encode_fields(const std::vector<std::string>& keys, const Column* const* cols, std::size_t n,
                                   std::size_t row, std::string& out) const {
  out += '{';
  bool first = true;
  for (std::size_t i = 0; i < n; ++i) {
    if (options_.encode_ignore_null_fields && cols[i]->is_null(row)) continue;
    if (!first) out += ',';
    first = false;
    out += keys[i];
    encode_value(*cols[i], row, out);
  }
  out += '}';
}

void JsonRowEncoder::encode_value(const Column& col, std::size_t row, std::string& out) const {
  if (col.is_null(row)) {
    out += "null";
    return;
  }
  const LogicalType& t = col.type();
  switch (t.kind()) {
    case TypeKind::kNull: out += "null"; return;
    case TypeKind::kFloat:
    case TypeKind::kDouble: {
      double d = t.kind() == TypeKind::kFloat ? col.values<float>()[row] : col.values<double>()[row];
      if (std::isfinite(d)) {
        append_text_of(col, row, options_.timestamp_standard, out);
      } else {  // Jackson quotes non-numeric numbers
        out += '"';
        append_text_of(col, row, options_.timestamp_standard, out);
        out += '"';
      }
      return;
    }
    case TypeKind::kBoolean:
    case TypeKind::kTinyInt:
    case TypeKind::kSmallInt:
    case TypeKind::kInt:
    case TypeKind::kBigInt:
    case TypeKind::kIntervalYearMonth:
    case TypeKind::kIntervalDayTime: append_text_of(col, row, options_.timestamp_standard, out); return;
    case TypeKind::kDecimal:
      if (options_.encode_decimal_as_plain_number) Decimal128::append_string(col.values<Int128>()[row], t.scale(), out);
      else append_java_big_decimal(col.values<Int128>()[row], t.scale(), out);
      return;
    case TypeKind::kChar:
    case TypeKind::kVarChar: append_json_string(col.string_at(row), out); return;
    case TypeKind::kArray: {
      auto [b, e] = col.list_range(row);
      out += '[';
      for (auto i = b; i < e; ++i) {
        if (i != b) out += ',';
        encode_value(col.child(0), i, out);
      }
      out += ']';
      return;
    }
    case TypeKind::kMap: {
      auto [b, e] = col.list_range(row);
      out += '{';
      bool first = true;
      thread_local std::string key;
      for (auto i = b; i < e; ++i) {
        key.clear();
        if (col.child(0).is_null(i)) {
          switch (options_.map_null_key_mode) {
            case JsonFormatOptions::MapNullKeyMode::kFail:
              throw ClinkError("json format: cannot write a MAP with a NULL key (json.map-null-key.mode is FAIL)");
            case JsonFormatOptions::MapNullKeyMode::kDrop: continue;
            case JsonFormatOptions::MapNullKeyMode::kLiteral: key = options_.map_null_key_literal; break;
          }
        } else {
          append_text_of(col.child(0), i, options_.timestamp_standard, key);
        }
        if (!first) out += ',';
        first = false;
        append_json_string(key, out);
        out += ':';
        encode_value(col.child(1), i, out);
      }
      out += '}';
      return;
    }
    case TypeKind::kRow: {
      std::vector<std::string> keys;
      for (const auto& f : t.fields()) {
        std::string k;
        append_json_string(f.name, k);
        k += ':';
        keys.push_back(std::move(k));
      }
      std::vector<const Column*> children;
      for (std::size_t i = 0; i < col.num_children(); ++i) children.push_back(&col.child(i));
      encode_fields(keys, children.data(), children.size(), row, out);
      return;
    }
    default:  // strings of temporal values and base64 bytes
      out += '"';
      append_text_of(col, row, options_.timestamp_standard, out);
      out += '"';
      return;
  }
}

}  // namespace clink::sql
