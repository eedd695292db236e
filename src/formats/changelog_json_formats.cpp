// Flink's changelog JSON formats: debezium-json, canal-json and maxwell-json
// (flink-formats/flink-json .../{debezium,canal,maxwell}). A message is an envelope whose
// row objects ("before"/"after", "data"/"old") are decoded by the json format's reader
// (json_value_reader.hpp) straight into the columns; the envelope's fields are looked up
// by name in any order (simdjson on-demand's unordered lookup), so no DOM is built.
//
//   debezium-json  {"before":{..},"after":{..},"op":"c|r|u|d"} (or inside "payload" with
//                  debezium-json.schema-include): c/r -> +I after; u -> -U before, +U
//                  after; d -> -D before.
//   canal-json     {"data":[{..}],"old":[{..}],"type":"INSERT|UPDATE|DELETE|CREATE",
//                  "database":..,"table":..}: INSERT -> +I each; UPDATE -> per element -U
//                  (old's non-null values over data's), +U data; DELETE -> -D each;
//                  CREATE -> no row; canal-json.database.include / table.include filter.
//   maxwell-json   {"type":"insert|update|delete","data":{..},"old":{..}}: insert -> +I;
//                  update -> -U (data with the fields present in old replaced), +U data;
//                  delete -> -D.
// An empty message (a tombstone) has no row. Any other type/op, or a malformed message,
// fails it (skipped with <format>.ignore-parse-errors), as Flink.
//
// Encoding as Flink's *JsonSerializationSchema: +I/+U as an insert, -U/-D as a delete:
//   debezium {"before":null,"after":{..},"op":"c"} / {"before":{..},"after":null,"op":"d"}
//   canal    {"data":[{..}],"type":"INSERT"} / {"data":[{..}],"type":"DELETE"}
//   maxwell  {"data":{..},"type":"insert"} / {"data":{..},"type":"delete"}
#include <cstring>
#include <optional>
#include <regex>

#include "clink/core/error.hpp"
#include "clink/formats/json_row_format.hpp"
#include "clink/formats/sql_text_values.hpp"
#include "json_value_reader.hpp"
#include "record_format_impl.hpp"

namespace clink::sql::record_format_detail {

using namespace json_detail;

namespace {

enum class Flavor { kDebezium, kCanal, kMaxwell };

Flavor flavor_of(std::string_view format) {
  if (format == "debezium-json") return Flavor::kDebezium;
  if (format == "canal-json") return Flavor::kCanal;
  return Flavor::kMaxwell;
}

// The format-specific keys, taken out before the shared json options are read.
bool own_key(std::string_view format, std::string_view key) {
  return key == std::string(format) + ".schema-include" || key == std::string(format) + ".database.include" ||
         key == std::string(format) + ".table.include";
}

JsonFormatOptions json_options(std::string_view format, const FormatOptions& options) {
  check_keys(format, options, changelog_json_keys(format));
  FormatOptions shared;
  for (const auto& [k, v] : options)
    if (!own_key(format, k)) shared.emplace(k, v);
  return JsonFormatOptions::from(shared, format);
}

std::optional<std::regex> regex_option(const FormatOptions& options, const std::string& key) {
  auto it = options.find(key);
  if (it == options.end()) return std::nullopt;
  try {
    return std::regex(it->second, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw ClinkError("option '" + key + "' is not a valid regular expression: '" + it->second + "'");
  }
}

bool fail(std::string& reason, std::string message) {
  reason = std::move(message);
  return false;
}

std::vector<Column> columns_of(const Schema& s) {
  std::vector<Column> cols;
  for (const auto& f : s.fields()) cols.emplace_back(f.type);
  return cols;
}

class ChangelogJsonDecoder final : public RecordDecoder {
 public:
  ChangelogJsonDecoder(std::string_view format, const SchemaPtr& fields, const FormatOptions& options)
      : format_(format),
        flavor_(flavor_of(format)),
        opts_(json_options(format, options)),
        reader_(*fields, opts_),
        data_(columns_of(*fields)),
        old_(columns_of(*fields)) {
    schema_include_ = bool_option(options, format_ + ".schema-include", false);
    database_ = regex_option(options, format_ + ".database.include");
    table_ = regex_option(options, format_ + ".table.include");
    for (auto& c : data_) data_ptrs_.push_back(&c);
    for (auto& c : old_) old_ptrs_.push_back(&c);
  }

  int decode(std::string_view message, std::span<Column* const> columns, std::vector<RowKind>& kinds,
             std::string& reason) override {
    if (message.empty()) return 0;  // a tombstone
    start_sizes_.resize(columns.size());
    for (std::size_t i = 0; i < columns.size(); ++i) start_sizes_[i] = columns[i]->size();
    const std::size_t start_kinds = kinds.size();
    bool ok = false;
    if (auto e = reader_.iterate(message, message.size(), doc_)) {
      reason = describe(e);
    } else if (auto e1 = validate(message)) {
      reason = describe(e1);
    } else if (auto e2 = doc_.get_object().get(root_)) {
      reason = e2 == simdjson::INCORRECT_TYPE ? "expected a JSON object" : describe(e2);
    } else {
      switch (flavor_) {
        case Flavor::kDebezium: ok = debezium(columns, kinds, reason); break;
        case Flavor::kCanal: ok = canal(columns, kinds, reason); break;
        case Flavor::kMaxwell: ok = maxwell(columns, kinds, reason); break;
      }
    }
    if (ok) return static_cast<int>(kinds.size() - start_kinds);
    for (std::size_t i = 0; i < columns.size(); ++i) truncate_column(*columns[i], start_sizes_[i]);
    kinds.resize(start_kinds);
    if (opts_.ignore_parse_errors) {
      ++skipped_;
      return 0;
    }
    return -1;
  }

 private:
  enum class Found { kObject, kNull, kError };

  // The lookups below find fields in any order, which rewinds the document, and
  // simdjson's on-demand API takes a rewound part as well-formed (undefined behaviour
  // otherwise: found by fuzzing, a crash of the task on a malformed message). So the
  // message is validated in full first, by simdjson's DOM parser.
  simdjson::error_code validate(std::string_view message) {
    if (message.starts_with("\xEF\xBB\xBF")) message.remove_prefix(3);  // as reader_.iterate
    if (padded_.size() < message.size() + simdjson::SIMDJSON_PADDING)
      padded_.resize(message.size() + simdjson::SIMDJSON_PADDING);
    std::memcpy(padded_.data(), message.data(), message.size());
    return validator_.parse(padded_.data(), message.size(), false).error();
  }

  // The field `name` of `obj`, in any order: an object in `out`, kNull for JSON null or a
  // missing field, kError (reason set) for anything else.
  Found object_field(od::object& obj, const char* name, od::object& out, std::string& reason) {
    od::value v;
    auto e = obj.find_field_unordered(name).get(v);
    if (e == simdjson::NO_SUCH_FIELD) return Found::kNull;
    if (e) return fail(reason, describe(e)), Found::kError;
    od::json_type jt;
    if (auto e2 = v.type().get(jt)) return fail(reason, describe(e2)), Found::kError;
    if (jt == od::json_type::null) return Found::kNull;
    if (v.get_object().get(out))
      return fail(reason, std::string("field \"") + name + "\": expected a JSON object"), Found::kError;
    return Found::kObject;
  }

  // A string field; false with reason when missing (then `missing` is set), null or not
  // a string.
  bool string_field(od::object& obj, const char* name, std::string_view& out, std::string& reason,
                    bool* missing = nullptr) {
    od::value v;
    auto e = obj.find_field_unordered(name).get(v);
    if (e == simdjson::NO_SUCH_FIELD) {
      if (missing) *missing = true;
      return fail(reason, std::string("missing \"") + name + "\" field");
    }
    if (e) return fail(reason, describe(e));
    od::json_type jt;
    if (auto e2 = v.type().get(jt)) return fail(reason, describe(e2));
    if (jt == od::json_type::null) return fail(reason, std::string("the \"") + name + "\" field is null");
    if (jt != od::json_type::string) return fail(reason, std::string("the \"") + name + "\" field is not a string");
    if (auto e3 = v.get_string().get(out)) return fail(reason, describe(e3));
    return true;
  }

  bool row(od::object& obj, const char* where, Column* const* cols, std::string& reason) {
    if (reader_.decode_row(obj, cols, reason)) return true;
    reason = std::string("\"") + where + "\": " + reason;
    return false;
  }

  static std::string replica_identity(const char* kind) {
    return std::string("The \"before\" field of ") + kind +
           " message is null, if you are using Debezium Postgres Connector, please check the Postgres table has "
           "been set REPLICA IDENTITY to FULL level.";
  }

  bool debezium(std::span<Column* const> cols, std::vector<RowKind>& kinds, std::string& reason) {
    od::object env = root_;
    if (schema_include_) {
      od::object payload;
      Found f = object_field(root_, "payload", payload, reason);
      if (f == Found::kError) return false;
      if (f == Found::kNull)
        return fail(reason, "missing \"payload\" field ('debezium-json.schema-include' is true: messages are "
                            "{\"schema\":..,\"payload\":..})");
      env = payload;
    }
    std::string_view op_text;
    bool op_missing = false;
    if (!string_field(env, "op", op_text, reason, &op_missing)) {
      // Only when the message was read to its end: after a malformed one the iterator
      // is spent, and a search in it reads through a null parser (found by fuzzing).
      if (!schema_include_ && op_missing) {
        od::object payload;
        std::string ignored;
        if (object_field(root_, "payload", payload, ignored) == Found::kObject)
          reason += " (the message has a \"payload\": set 'debezium-json.schema-include' to true)";
      }
      return false;
    }
    const char op = op_text.size() == 1 ? op_text[0] : '?';
    if (op != 'c' && op != 'r' && op != 'u' && op != 'd')
      return fail(reason, "Unknown \"op\" value \"" + std::string(op_text) + "\"");
    od::object obj;
    if (op == 'u' || op == 'd') {
      Found f = object_field(env, "before", obj, reason);
      if (f == Found::kError) return false;
      if (f == Found::kNull) return fail(reason, replica_identity(op == 'u' ? "UPDATE" : "DELETE"));
      if (!row(obj, "before", cols.data(), reason)) return false;
      kinds.push_back(op == 'u' ? RowKind::kUpdateBefore : RowKind::kDelete);
      if (op == 'd') return true;
    }
    Found f = object_field(env, "after", obj, reason);
    if (f == Found::kError) return false;
    if (f == Found::kNull)
      return fail(reason, std::string("The \"after\" field of ") + (op == 'u' ? "UPDATE" : "INSERT") + " message is null");
    if (!row(obj, "after", cols.data(), reason)) return false;
    kinds.push_back(op == 'u' ? RowKind::kUpdateAfter : RowKind::kInsert);
    return true;
  }

  bool matches(const std::optional<std::regex>& re, const char* name, bool& keep, std::string& reason) {
    if (!re) return true;
    std::string_view v;
    if (!string_field(root_, name, v, reason)) return false;
    keep = keep && std::regex_match(v.begin(), v.end(), *re);
    return true;
  }

  // The elements of the array field `name` (each an object) as rows of `cols`.
  bool rows(od::object& obj, const char* name, Column* const* cols, std::size_t& n, std::string& reason) {
    n = 0;
    od::value v;
    auto e = obj.find_field_unordered(name).get(v);
    if (e == simdjson::NO_SUCH_FIELD) return fail(reason, std::string("missing \"") + name + "\" field");
    if (e) return fail(reason, describe(e));
    od::array arr;
    if (v.get_array().get(arr)) return fail(reason, std::string("the \"") + name + "\" field is not a JSON array");
    for (auto item : arr) {
      od::value ev;
      if (auto e2 = std::move(item).get(ev)) return fail(reason, describe(e2));
      od::object o;
      if (ev.get_object().get(o)) return fail(reason, std::string("\"") + name + "\": expected JSON objects");
      if (!row(o, name, cols, reason)) return false;
      ++n;
    }
    return true;
  }

  bool canal(std::span<Column* const> cols, std::vector<RowKind>& kinds, std::string& reason) {
    bool keep = true;
    if (!matches(database_, "database", keep, reason) || !matches(table_, "table", keep, reason)) return false;
    if (!keep) return true;
    std::string_view type_text;
    if (!string_field(root_, "type", type_text, reason)) return false;
    std::size_t n = 0;
    if (type_text == "INSERT" || type_text == "DELETE") {
      if (!rows(root_, "data", cols.data(), n, reason)) return false;
      kinds.insert(kinds.end(), n, type_text == "INSERT" ? RowKind::kInsert : RowKind::kDelete);
      return true;
    }
    if (type_text == "UPDATE") {
      for (auto& c : data_) c.clear();
      for (auto& c : old_) c.clear();
      std::size_t n_old = 0;
      if (!rows(root_, "data", data_ptrs_.data(), n, reason)) return false;
      if (!rows(root_, "old", old_ptrs_.data(), n_old, reason)) return false;
      if (n_old < n)
        return fail(reason, "the \"old\" field has " + std::to_string(n_old) + " rows for " + std::to_string(n) +
                                " rows of \"data\"");
      for (std::size_t i = 0; i < n; ++i) {
        // A field null or absent in "old" did not change: its value is data's.
        for (std::size_t f = 0; f < cols.size(); ++f)
          cols[f]->append_range(old_[f].is_null(i) ? data_[f] : old_[f], i, i + 1);
        kinds.push_back(RowKind::kUpdateBefore);
        for (std::size_t f = 0; f < cols.size(); ++f) cols[f]->append_range(data_[f], i, i + 1);
        kinds.push_back(RowKind::kUpdateAfter);
      }
      return true;
    }
    if (type_text == "CREATE") return true;  // a DDL message: "data" is null
    return fail(reason, "Unknown \"type\" value \"" + std::string(type_text) + "\"");
  }

  bool maxwell(std::span<Column* const> cols, std::vector<RowKind>& kinds, std::string& reason) {
    std::string_view type_text;
    if (!string_field(root_, "type", type_text, reason)) return false;
    const bool insert = type_text == "insert", update = type_text == "update", del = type_text == "delete";
    if (!insert && !update && !del) return fail(reason, "Unknown \"type\" value \"" + std::string(type_text) + "\"");
    od::object obj;
    Found f = object_field(root_, "data", obj, reason);
    if (f == Found::kError) return false;
    if (f == Found::kNull) return fail(reason, "the \"data\" field is null");
    if (!update) {
      if (!row(obj, "data", cols.data(), reason)) return false;
      kinds.push_back(insert ? RowKind::kInsert : RowKind::kDelete);
      return true;
    }
    for (auto& c : data_) c.clear();
    for (auto& c : old_) c.clear();
    if (!row(obj, "data", data_ptrs_.data(), reason)) return false;
    f = object_field(root_, "old", obj, reason);
    if (f == Found::kError) return false;
    if (f == Found::kNull) return fail(reason, "the \"old\" field of an update is null");
    if (!row(obj, "old", old_ptrs_.data(), reason)) return false;
    // A field present in "old" (even as null) changed; the others are data's.
    const auto& seen = reader_.seen();
    for (std::size_t c = 0; c < cols.size(); ++c) cols[c]->append_range(seen[c] ? old_[c] : data_[c], 0, 1);
    kinds.push_back(RowKind::kUpdateBefore);
    for (std::size_t c = 0; c < cols.size(); ++c) cols[c]->append_range(data_[c], 0, 1);
    kinds.push_back(RowKind::kUpdateAfter);
    return true;
  }

  std::string format_;
  Flavor flavor_;
  JsonFormatOptions opts_;  // before reader_, which keeps a reference
  JsonValueReader reader_;
  bool schema_include_ = false;
  std::optional<std::regex> database_, table_;
  std::string padded_;
  simdjson::dom::parser validator_;
  od::document doc_;
  od::object root_;
  std::vector<Column> data_, old_;  // scratch: an update's new and old rows
  std::vector<Column*> data_ptrs_, old_ptrs_;
  std::vector<std::size_t> start_sizes_;
};

class ChangelogJsonEncoder final : public RecordEncoder {
 public:
  ChangelogJsonEncoder(std::string_view format, SchemaPtr fields, const FormatOptions& options)
      : flavor_(flavor_of(format)), opts_(json_options(format, options)), row_(std::move(fields), opts_) {
    if (flavor_ == Flavor::kDebezium && bool_option(options, "debezium-json.schema-include", false))
      throw ClinkError(
          "Debezium JSON serialization doesn't support 'debezium-json.schema-include' option been set to true.");
  }

  bool encode(std::span<const Column* const> columns, std::size_t row, RowKind kind, std::string& out) override {
    const bool insert = is_accumulate(kind);
    const bool skip_nulls = opts_.encode_ignore_null_fields;
    switch (flavor_) {
      case Flavor::kDebezium:
        if (insert) {
          out += skip_nulls ? "{\"after\":" : "{\"before\":null,\"after\":";
          row_.encode(columns.data(), row, out);
          out += ",\"op\":\"c\"}";
        } else {
          out += "{\"before\":";
          row_.encode(columns.data(), row, out);
          out += skip_nulls ? ",\"op\":\"d\"}" : ",\"after\":null,\"op\":\"d\"}";
        }
        return true;
      case Flavor::kCanal:
        out += "{\"data\":[";
        row_.encode(columns.data(), row, out);
        out += insert ? "],\"type\":\"INSERT\"}" : "],\"type\":\"DELETE\"}";
        return true;
      case Flavor::kMaxwell:
        out += "{\"data\":";
        row_.encode(columns.data(), row, out);
        out += insert ? ",\"type\":\"insert\"}" : ",\"type\":\"delete\"}";
        return true;
    }
    return true;
  }

 private:
  Flavor flavor_;
  JsonFormatOptions opts_;
  JsonRowEncoder row_;
};

}  // namespace

const std::vector<std::string>& changelog_json_keys(std::string_view format) {
  auto keys = [](std::string p, std::vector<std::string> own) {
    std::vector<std::string> k;
    for (auto& o : own) k.push_back(p + "." + o);
    for (const char* s : {"ignore-parse-errors", "timestamp-format.standard", "map-null-key.mode",
                          "map-null-key.literal", "encode.decimal-as-plain-number", "encode.ignore-null-fields"})
      k.push_back(p + "." + s);
    return k;
  };
  static const std::vector<std::string> debezium = keys("debezium-json", {"schema-include"});
  static const std::vector<std::string> canal = keys("canal-json", {"database.include", "table.include"});
  static const std::vector<std::string> maxwell = keys("maxwell-json", {});
  switch (flavor_of(format)) {
    case Flavor::kDebezium: return debezium;
    case Flavor::kCanal: return canal;
    case Flavor::kMaxwell: return maxwell;
  }
  return maxwell;
}

std::unique_ptr<RecordDecoder> make_changelog_json_decoder(std::string_view format, SchemaPtr fields,
                                                           const FormatOptions& options) {
  return std::make_unique<ChangelogJsonDecoder>(format, fields, options);
}

std::unique_ptr<RecordEncoder> make_changelog_json_encoder(std::string_view format, SchemaPtr fields,
                                                           const FormatOptions& options) {
  return std::make_unique<ChangelogJsonEncoder>(format, std::move(fields), options);
}

}  // namespace clink::sql::record_format_detail
