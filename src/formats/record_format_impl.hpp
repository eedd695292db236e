#pragma once
// Internal to the formats library: the per-format factories behind make_record_decoder /
// make_record_encoder (record_format.cpp holds the registry), and helpers they share.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "clink/formats/record_format.hpp"

namespace clink::sql::record_format_detail {

// Throws ClinkError for an option of `format` (a key with its prefix) not in `keys`.
void check_keys(std::string_view format, const FormatOptions& options, const std::vector<std::string>& keys);
// A true/false option, as Flink's boolean ConfigOption; `fallback` when absent.
bool bool_option(const FormatOptions& options, const std::string& key, bool fallback);

const std::vector<std::string>& raw_keys();
std::unique_ptr<RecordDecoder> make_raw_decoder(SchemaPtr fields, const FormatOptions& options);
std::unique_ptr<RecordEncoder> make_raw_encoder(SchemaPtr fields, const FormatOptions& options);

// debezium-json, canal-json, maxwell-json.
const std::vector<std::string>& changelog_json_keys(std::string_view format);
std::unique_ptr<RecordDecoder> make_changelog_json_decoder(std::string_view format, SchemaPtr fields,
                                                           const FormatOptions& options);
std::unique_ptr<RecordEncoder> make_changelog_json_encoder(std::string_view format, SchemaPtr fields,
                                                           const FormatOptions& options);

const std::vector<std::string>& avro_keys();
std::unique_ptr<RecordDecoder> make_avro_decoder(SchemaPtr fields, const FormatOptions& options);
std::unique_ptr<RecordEncoder> make_avro_encoder(SchemaPtr fields, const FormatOptions& options);

}  // namespace clink::sql::record_format_detail
