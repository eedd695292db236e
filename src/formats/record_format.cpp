// The registry of message formats, and the json and csv formats as record formats
// (adapters over JsonRowDecoder/JsonRowEncoder and CsvRowDecoder/CsvRowEncoder).
#include "clink/formats/record_format.hpp"

#include <algorithm>
#include <numeric>

#include "clink/core/error.hpp"
#include "clink/formats/csv_row_format.hpp"
#include "clink/formats/json_row_format.hpp"
#include "record_format_impl.hpp"

namespace clink::sql {

namespace record_format_detail {

void check_keys(std::string_view format, const FormatOptions& options, const std::vector<std::string>& keys) {
  const std::string prefix = std::string(format) + ".";
  for (const auto& [key, value] : options) {
    if (!key.starts_with(prefix) || std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    std::string known;
    for (const auto& k : keys) known += (known.empty() ? "" : ", ") + k;
    throw ClinkError("unknown option '" + key + "' of format " + std::string(format) + " (known: " + known + ")");
  }
}

bool bool_option(const FormatOptions& options, const std::string& key, bool fallback) {
  auto it = options.find(key);
  if (it == options.end()) return fallback;
  const std::string& v = it->second;
  if (v == "true" || v == "TRUE" || v == "True") return true;
  if (v == "false" || v == "FALSE" || v == "False") return false;
  throw ClinkError("option '" + key + "' must be true or false, got '" + v + "'");
}

}  // namespace record_format_detail

using namespace record_format_detail;

namespace {

// ---- json -----------------------------------------------------------------------------

class JsonRecordDecoder final : public RecordDecoder {
 public:
  JsonRecordDecoder(SchemaPtr fields, JsonFormatOptions options) : decoder_(std::move(fields), std::move(options)) {}
  int decode(std::string_view message, std::span<Column* const> columns, std::vector<RowKind>& kinds,
             std::string& reason) override {
    if (decoder_.decode(message, message.size(), columns, reason)) {
      kinds.push_back(RowKind::kInsert);
      return 1;
    }
    if (decoder_.options().ignore_parse_errors) {
      ++skipped_;
      return 0;
    }
    return -1;
  }

 private:
  JsonRowDecoder decoder_;
};

class JsonRecordEncoder final : public RecordEncoder {
 public:
  JsonRecordEncoder(SchemaPtr fields, JsonFormatOptions options) : encoder_(std::move(fields), std::move(options)) {}
  bool encode(std::span<const Column* const> columns, std::size_t row, RowKind kind, std::string& out) override {
    if (!is_accumulate(kind)) throw ClinkError("json format is insert-only: it cannot write a " +
                                               std::string(row_kind_short_string(kind)) + " row");
    encoder_.encode(columns.data(), row, out);
    return true;
  }

 private:
  JsonRowEncoder encoder_;
};

// ---- csv ------------------------------------------------------------------------------

class CsvRecordDecoder final : public RecordDecoder {
 public:
  CsvRecordDecoder(const SchemaPtr& fields, CsvFormatOptions options) : decoder_(fields, all(*fields), std::move(options)) {}
  int decode(std::string_view message, std::span<Column* const> columns, std::vector<RowKind>& kinds,
             std::string& reason) override {
    // One message is one record: a trailing line break is not part of it.
    if (message.ends_with('\n')) message.remove_suffix(1);
    if (message.ends_with('\r')) message.remove_suffix(1);
    auto r = decoder_.decode(message, columns, reason);
    switch (r) {
      case CsvRowDecoder::Result::kRow: kinds.push_back(RowKind::kInsert); return 1;
      case CsvRowDecoder::Result::kSkipped: return 0;
      case CsvRowDecoder::Result::kIncomplete:
      case CsvRowDecoder::Result::kError: break;
    }
    if (decoder_.options().ignore_parse_errors) {
      ++skipped_;
      return 0;
    }
    return -1;
  }

 private:
  static std::vector<std::size_t> all(const Schema& s) {
    std::vector<std::size_t> v(s.size());
    std::iota(v.begin(), v.end(), 0);
    return v;
  }
  CsvRowDecoder decoder_;
};

class CsvRecordEncoder final : public RecordEncoder {
 public:
  CsvRecordEncoder(SchemaPtr fields, CsvFormatOptions options) : encoder_(std::move(fields), std::move(options)) {}
  bool encode(std::span<const Column* const> columns, std::size_t row, RowKind kind, std::string& out) override {
    if (!is_accumulate(kind)) throw ClinkError("csv format is insert-only: it cannot write a " +
                                               std::string(row_kind_short_string(kind)) + " row");
    encoder_.encode(columns.data(), row, out);
    return true;
  }

 private:
  CsvRowEncoder encoder_;
};

// ---- the registry ---------------------------------------------------------------------

struct FormatEntry {
  std::string_view name;
  bool changelog;
};

// Sorted by name.
constexpr FormatEntry kFormats[] = {
    {"avro", false}, {"canal-json", true}, {"csv", false}, {"debezium-json", true},
    {"json", false}, {"maxwell-json", true}, {"raw", false},
};

const FormatEntry* find_format(std::string_view name) {
  for (const auto& f : kFormats)
    if (f.name == name) return &f;
  return nullptr;
}

const FormatEntry& require_format(std::string_view name) {
  if (const auto* f = find_format(name)) return *f;
  throw ClinkError("unknown format '" + std::string(name) + "' (known: " + record_format_names() + ")");
}

void check_fields(std::string_view format, const SchemaPtr& fields) {
  if (!fields || fields->size() == 0)
    throw ClinkError("format " + std::string(format) + " needs at least one field");
}

}  // namespace

bool record_format_known(std::string_view format) { return find_format(format) != nullptr; }

bool record_format_is_changelog(std::string_view format) {
  const auto* f = find_format(format);
  return f != nullptr && f->changelog;
}

std::string record_format_names() {
  std::string s;
  for (const auto& f : kFormats) s += (s.empty() ? "" : ", ") + std::string(f.name);
  return s;
}

const std::vector<std::string>& record_format_keys(std::string_view format) {
  const auto& f = require_format(format);
  if (f.name == "json") return JsonFormatOptions::keys();
  if (f.name == "csv") return CsvFormatOptions::keys();
  if (f.name == "raw") return raw_keys();
  if (f.name == "avro") return avro_keys();
  return changelog_json_keys(f.name);
}

std::unique_ptr<RecordDecoder> make_record_decoder(std::string_view format, SchemaPtr fields,
                                                   const FormatOptions& options) {
  const auto& f = require_format(format);
  check_fields(f.name, fields);
  if (f.name == "json") return std::make_unique<JsonRecordDecoder>(std::move(fields), JsonFormatOptions::from(options));
  if (f.name == "csv") return std::make_unique<CsvRecordDecoder>(fields, CsvFormatOptions::from(options));
  if (f.name == "raw") return make_raw_decoder(std::move(fields), options);
  if (f.name == "avro") return make_avro_decoder(std::move(fields), options);
  return make_changelog_json_decoder(f.name, std::move(fields), options);
}

std::unique_ptr<RecordEncoder> make_record_encoder(std::string_view format, SchemaPtr fields,
                                                   const FormatOptions& options) {
  const auto& f = require_format(format);
  check_fields(f.name, fields);
  if (f.name == "json") return std::make_unique<JsonRecordEncoder>(std::move(fields), JsonFormatOptions::from(options));
  if (f.name == "csv") return std::make_unique<CsvRecordEncoder>(std::move(fields), CsvFormatOptions::from(options));
  if (f.name == "raw") return make_raw_encoder(std::move(fields), options);
  if (f.name == "avro") return make_avro_encoder(std::move(fields), options);
  return make_changelog_json_encoder(f.name, std::move(fields), options);
}

}  // namespace clink::sql
