// Flink's changelog JSON formats: debezium-json, canal-json and maxwell-json
// (flink-formats/flink-json .../{debezium,canal,maxwell}). A message is an envelope whose
// row objects ("before"/"after", "data"/"old") are decoded by the json format's reader
// (json_value_reader.hpp) straight into the columns; the envelope is read in one ordered
// pass (its fields in any order), so no DOM is built and nothing is read twice but the
// row objects' bytes.
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

// The envelope's fields a flavor reads, recorded in one ordered pass over the message
// (no lookup by name, which rewinds: simdjson on-demand takes a rewound part as
// well-formed, undefined behaviour on a malformed message, found by fuzzing). An object
// or array is kept as its raw text and decoded after the pass as a document of its own
// (the reader's parser, straight from the padded message: no copy).
struct Slot {
  enum Kind : std::uint8_t { kMissing, kNull, kObject, kArray, kString, kOther };
  const char* name;
  std::string_view key;  // name, compared with the keys
  Kind kind = kMissing;
  std::string_view raw;  // kObject / kArray: the value's JSON text
  std::string text;      // kString: the unescaped string (reused: no allocation once grown)
};

enum SlotId : std::size_t { kBefore, kAfter, kOp, kPayload, kData, kOld, kType, kDatabase, kTable, kSlots };

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
    const char* names[kSlots] = {"before", "after", "op", "payload", "data", "old", "type", "database", "table"};
    for (std::size_t i = 0; i < kSlots; ++i) slots_[i].name = names[i], slots_[i].key = names[i];
    switch (flavor_) {
      case Flavor::kDebezium: read_ = {kBefore, kAfter, kOp, kPayload}; break;
      case Flavor::kCanal: read_ = {kData, kOld, kType, kDatabase, kTable}; break;
      case Flavor::kMaxwell: read_ = {kData, kOld, kType}; break;
    }
  }

  int decode(std::string_view message, std::span<Column* const> columns, std::vector<RowKind>& kinds,
             std::string& reason) override {
    if (message.empty()) return 0;  // a tombstone
    start_sizes_.resize(columns.size());
    for (std::size_t i = 0; i < columns.size(); ++i) start_sizes_[i] = columns[i]->size();
    const std::size_t start_kinds = kinds.size();
    bool ok = false;
    if (message.starts_with("\xEF\xBB\xBF")) message.remove_prefix(3);  // a BOM, as the json format
    if (padded_.size() < message.size() + simdjson::SIMDJSON_PADDING)
      padded_.resize(message.size() + simdjson::SIMDJSON_PADDING);
    std::memcpy(padded_.data(), message.data(), message.size());
    if (envelope(std::string_view(padded_.data(), message.size()), reason)) {
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
  // Bytes readable from `p`, a pointer into padded_.
  std::size_t readable_from(const char* p) const { return padded_.size() - static_cast<std::size_t>(p - padded_.data()); }

  // One pass over the object `text` (in padded_), to its end: the slots' fields recorded
  // (a repeated field: the last wins, as Jackson's tree), the others skipped.
  bool envelope(std::string_view text, std::string& reason) {
    for (auto& s : slots_) s.kind = Slot::kMissing;
    od::document doc;
    if (auto e = env_parser_.iterate(text.data(), text.size(), readable_from(text.data())).get(doc))
      return fail(reason, describe(e));
    od::object root;
    if (auto e = doc.get_object().get(root))
      return fail(reason, e == simdjson::INCORRECT_TYPE ? "expected a JSON object" : describe(e));
    for (auto item : root) {
      if (auto e = item.error()) return fail(reason, describe(e));
      od::field& f = item.value_unsafe();
      std::string_view key;
      if (auto e = field_key(f, key)) return fail(reason, describe(e));
      Slot* slot = nullptr;
      for (SlotId id : read_)
        if (key == slots_[id].key) slot = &slots_[id];
      if (slot == nullptr) continue;  // not read: on-demand skips its value
      od::value v = f.value();
      od::json_type jt;
      if (auto e = v.type().get(jt)) return fail(reason, describe(e));
      simdjson::error_code e = simdjson::SUCCESS;
      switch (jt) {
        case od::json_type::null: {
          bool is_null = false;
          e = v.is_null().get(is_null);
          slot->kind = Slot::kNull;
          break;
        }
        case od::json_type::object: {
          od::object o;
          e = v.get_object().get(o);
          if (!e) e = o.raw_json().get(slot->raw);
          slot->kind = Slot::kObject;
          break;
        }
        case od::json_type::array: {
          od::array a;
          e = v.get_array().get(a);
          if (!e) e = a.raw_json().get(slot->raw);
          slot->kind = Slot::kArray;
          break;
        }
        case od::json_type::string: {
          std::string_view s;
          e = v.get_string().get(s);
          slot->text.assign(s);
          slot->kind = Slot::kString;
          break;
        }
        default: slot->kind = Slot::kOther; break;
      }
      if (e) return fail(reason, describe(e));
    }
    const char* loc = nullptr;
    if (doc.current_location().get(loc) == simdjson::SUCCESS) return fail(reason, describe(simdjson::TRAILING_CONTENT));
    return true;
  }

  enum class Found { kObject, kNull, kError };

  // The object field `id`: kObject, kNull for JSON null or a missing field, kError (reason
  // set) for anything else.
  Found object_field(SlotId id, std::string& reason) {
    const Slot& s = slots_[id];
    if (s.kind == Slot::kMissing || s.kind == Slot::kNull) return Found::kNull;
    if (s.kind != Slot::kObject)
      return fail(reason, std::string("field \"") + s.name + "\": expected a JSON object"), Found::kError;
    return Found::kObject;
  }

  // A string field; false with reason when missing, null or not a string.
  bool string_field(SlotId id, std::string_view& out, std::string& reason) {
    const Slot& s = slots_[id];
    if (s.kind == Slot::kMissing) return fail(reason, std::string("missing \"") + s.name + "\" field");
    if (s.kind == Slot::kNull) return fail(reason, std::string("the \"") + s.name + "\" field is null");
    if (s.kind != Slot::kString) return fail(reason, std::string("the \"") + s.name + "\" field is not a string");
    out = s.text;
    return true;
  }

  // The object field `id` (kObject) decoded as one row of `cols`.
  bool row(SlotId id, Column* const* cols, std::string& reason) {
    const Slot& s = slots_[id];
    od::object obj;
    if (auto e = reader_.iterate(s.raw, readable_from(s.raw.data()), row_doc_)) return fail(reason, describe(e));
    if (auto e = row_doc_.get_object().get(obj)) return fail(reason, describe(e));
    if (reader_.decode_row(obj, cols, reason)) return true;
    reason = std::string("\"") + s.name + "\": " + reason;
    return false;
  }

  static std::string replica_identity(const char* kind) {
    return std::string("The \"before\" field of ") + kind +
           " message is null, if you are using Debezium Postgres Connector, please check the Postgres table has "
           "been set REPLICA IDENTITY to FULL level.";
  }

  bool debezium(std::span<Column* const> cols, std::vector<RowKind>& kinds, std::string& reason) {
    if (schema_include_) {
      Found f = object_field(kPayload, reason);
      if (f == Found::kError) return false;
      if (f == Found::kNull)
        return fail(reason, "missing \"payload\" field ('debezium-json.schema-include' is true: messages are "
                            "{\"schema\":..,\"payload\":..})");
      if (!envelope(slots_[kPayload].raw, reason)) return false;  // the payload's own fields
    }
    std::string_view op_text;
    if (!string_field(kOp, op_text, reason)) {
      if (!schema_include_ && slots_[kOp].kind == Slot::kMissing && slots_[kPayload].kind == Slot::kObject)
        reason += " (the message has a \"payload\": set 'debezium-json.schema-include' to true)";
      return false;
    }
    const char op = op_text.size() == 1 ? op_text[0] : '?';
    if (op != 'c' && op != 'r' && op != 'u' && op != 'd')
      return fail(reason, "Unknown \"op\" value \"" + std::string(op_text) + "\"");
    if (op == 'u' || op == 'd') {
      Found f = object_field(kBefore, reason);
      if (f == Found::kError) return false;
      if (f == Found::kNull) return fail(reason, replica_identity(op == 'u' ? "UPDATE" : "DELETE"));
      if (!row(kBefore, cols.data(), reason)) return false;
      kinds.push_back(op == 'u' ? RowKind::kUpdateBefore : RowKind::kDelete);
      if (op == 'd') return true;
    }
    Found f = object_field(kAfter, reason);
    if (f == Found::kError) return false;
    if (f == Found::kNull)
      return fail(reason, std::string("The \"after\" field of ") + (op == 'u' ? "UPDATE" : "INSERT") + " message is null");
    if (!row(kAfter, cols.data(), reason)) return false;
    kinds.push_back(op == 'u' ? RowKind::kUpdateAfter : RowKind::kInsert);
    return true;
  }

  bool matches(const std::optional<std::regex>& re, SlotId id, bool& keep, std::string& reason) {
    if (!re) return true;
    std::string_view v;
    if (!string_field(id, v, reason)) return false;
    keep = keep && std::regex_match(v.begin(), v.end(), *re);
    return true;
  }

  // The elements of the array field `id` (each an object) as rows of `cols`.
  bool rows(SlotId id, Column* const* cols, std::size_t& n, std::string& reason) {
    n = 0;
    const Slot& s = slots_[id];
    if (s.kind == Slot::kMissing) return fail(reason, std::string("missing \"") + s.name + "\" field");
    if (s.kind != Slot::kArray) return fail(reason, std::string("the \"") + s.name + "\" field is not a JSON array");
    od::array arr;
    if (auto e = reader_.iterate(s.raw, readable_from(s.raw.data()), row_doc_)) return fail(reason, describe(e));
    if (auto e = row_doc_.get_array().get(arr)) return fail(reason, describe(e));
    for (auto item : arr) {
      od::value ev;
      if (auto e = std::move(item).get(ev)) return fail(reason, describe(e));
      od::object o;
      if (ev.get_object().get(o)) return fail(reason, std::string("\"") + s.name + "\": expected JSON objects");
      if (!reader_.decode_row(o, cols, reason)) {
        reason = std::string("\"") + s.name + "\": " + reason;
        return false;
      }
      ++n;
    }
    return true;
  }

  bool canal(std::span<Column* const> cols, std::vector<RowKind>& kinds, std::string& reason) {
    bool keep = true;
    if (!matches(database_, kDatabase, keep, reason) || !matches(table_, kTable, keep, reason)) return false;
    if (!keep) return true;
    std::string_view type_text;
    if (!string_field(kType, type_text, reason)) return false;
    std::size_t n = 0;
    if (type_text == "INSERT" || type_text == "DELETE") {
      if (!rows(kData, cols.data(), n, reason)) return false;
      kinds.insert(kinds.end(), n, type_text == "INSERT" ? RowKind::kInsert : RowKind::kDelete);
      return true;
    }
    if (type_text == "UPDATE") {
      for (auto& c : data_) c.clear();
      for (auto& c : old_) c.clear();
      std::size_t n_old = 0;
      if (!rows(kData, data_ptrs_.data(), n, reason)) return false;
      if (!rows(kOld, old_ptrs_.data(), n_old, reason)) return false;
      if (n_old < n)
        return fail(reason, "the \"old\" field has " + std::to_string(n_old) + " rows for " + std::to_string(n) +
                                " rows of \"data\"");
      for (std::size_t i = 0; i < n; ++i) {
        // A field null or absent in "old" did not change: its value is data's.
        for (std::size_t f = 0; f < cols.size(); ++f) append_row(*cols[f], old_[f].is_null(i) ? data_[f] : old_[f], i);
        kinds.push_back(RowKind::kUpdateBefore);
        for (std::size_t f = 0; f < cols.size(); ++f) append_row(*cols[f], data_[f], i);
        kinds.push_back(RowKind::kUpdateAfter);
      }
      return true;
    }
    if (type_text == "CREATE") return true;  // a DDL message: "data" is null
    return fail(reason, "Unknown \"type\" value \"" + std::string(type_text) + "\"");
  }

  bool maxwell(std::span<Column* const> cols, std::vector<RowKind>& kinds, std::string& reason) {
    std::string_view type_text;
    if (!string_field(kType, type_text, reason)) return false;
    const bool insert = type_text == "insert", update = type_text == "update", del = type_text == "delete";
    if (!insert && !update && !del) return fail(reason, "Unknown \"type\" value \"" + std::string(type_text) + "\"");
    Found f = object_field(kData, reason);
    if (f == Found::kError) return false;
    if (f == Found::kNull) return fail(reason, "the \"data\" field is null");
    if (!update) {
      if (!row(kData, cols.data(), reason)) return false;
      kinds.push_back(insert ? RowKind::kInsert : RowKind::kDelete);
      return true;
    }
    for (auto& c : data_) c.clear();
    for (auto& c : old_) c.clear();
    if (!row(kData, data_ptrs_.data(), reason)) return false;
    f = object_field(kOld, reason);
    if (f == Found::kError) return false;
    if (f == Found::kNull) return fail(reason, "the \"old\" field of an update is null");
    if (!row(kOld, old_ptrs_.data(), reason)) return false;
    // A field present in "old" (even as null) changed; the others are data's.
    const auto& seen = reader_.seen();
    for (std::size_t c = 0; c < cols.size(); ++c) append_row(*cols[c], seen[c] ? old_[c] : data_[c], 0);
    kinds.push_back(RowKind::kUpdateBefore);
    for (std::size_t c = 0; c < cols.size(); ++c) append_row(*cols[c], data_[c], 0);
    kinds.push_back(RowKind::kUpdateAfter);
    return true;
  }

  // Row `i` of `src` appended to `out` (append_range would allocate its index list).
  static void append_row(Column& out, const Column& src, std::size_t i) {
    const auto idx = static_cast<std::uint32_t>(i);
    out.append_gather(src, &idx, 1);
  }

  std::string format_;
  Flavor flavor_;
  JsonFormatOptions opts_;  // before reader_, which keeps a reference
  JsonValueReader reader_;
  bool schema_include_ = false;
  std::optional<std::regex> database_, table_;
  std::string padded_;      // the message, padded for simdjson; the slots' raw spans point into it
  od::parser env_parser_;   // the envelope's pass (reader_'s parser decodes the rows)
  od::document row_doc_;
  Slot slots_[kSlots];
  std::vector<SlotId> read_;  // the slots this flavor reads
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
