// libFuzzer target: one message through a record format's decoder (docs/fuzzing.md).
// The first byte picks the format (json, csv, debezium-json, canal-json, maxwell-json,
// avro, raw); the rest is the message, decoded into a batch of most SQL types. A
// malformed message must be rejected with a reason and leave the batch as it was; a
// decoded row must print and encode again.
#include <algorithm>
#include <array>
#include <initializer_list>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "clink/core/error.hpp"
#include "clink/formats/record_format.hpp"
#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "fuzz_support.hpp"

namespace {

using namespace clink::sql;

constexpr std::array<const char*, 7> kFormats = {"json", "csv", "debezium-json", "canal-json", "maxwell-json",
                                                  "avro", "raw"};

SchemaPtr wide_schema() {
  std::vector<RowField> fields;
  auto add = [&](const char* name, const char* type) { fields.push_back({name, parse_logical_type(type)}); };
  add("b", "BOOLEAN");
  add("i", "INT");
  add("l", "BIGINT");
  add("s", "SMALLINT");
  add("d", "DOUBLE");
  add("f", "FLOAT");
  add("m", "DECIMAL(10, 2)");
  add("str", "STRING");
  add("dt", "DATE");
  add("ts", "TIMESTAMP(3)");
  add("ltz", "TIMESTAMP_LTZ(3)");
  add("arr", "ARRAY<INT>");
  add("mp", "MAP<STRING, BIGINT>");
  add("r", "ROW<x INT, y STRING>");
  add("by", "BYTES");
  return make_schema(std::move(fields));
}

// The wide schema without the fields a format cannot hold.
SchemaPtr wide_schema_without(std::initializer_list<std::string_view> names) {
  const SchemaPtr wide = wide_schema();
  std::vector<RowField> fields;
  for (const auto& f : wide->fields())
    if (std::find(names.begin(), names.end(), f.name) == names.end()) fields.push_back(f);
  return make_schema(std::move(fields));
}

struct Format {
  SchemaPtr schema;
  std::unique_ptr<RecordDecoder> decoder;
  std::unique_ptr<RecordEncoder> encoder;
};

Format& format(std::size_t i) {
  static std::vector<Format> formats = [] {
    std::vector<Format> all;
    for (const char* name : kFormats) {
      const std::string_view format = name;
      // raw holds exactly one field; csv no MAP; avro (as Flink's) no TIMESTAMP_LTZ.
      SchemaPtr schema = format == "raw"    ? make_schema({{"v", parse_logical_type("STRING")}})
                         : format == "csv"  ? wide_schema_without({"mp"})
                         : format == "avro" ? wide_schema_without({"ltz"})
                                            : wide_schema();
      all.push_back({schema, make_record_decoder(name, schema, {}), make_record_encoder(name, schema, {})});
    }
    return all;
  }();
  return formats[i];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return -1;
  Format& f = format(data[0] % kFormats.size());
  const std::string_view message(reinterpret_cast<const char*>(data + 1), size - 1);
  ColumnBatch batch(f.schema);
  std::vector<Column*> columns;
  for (auto& c : batch.columns()) columns.push_back(&c);
  std::vector<RowKind> kinds;
  std::string reason;
  int n = 0;
  try {
    n = f.decoder->decode(message, columns, kinds, reason);
  } catch (const std::exception& e) {
    clink::fuzz::finding("decode threw instead of returning -1 with a reason", e.what());
  }
  if (n < 0) {
    if (reason.empty()) clink::fuzz::finding("a rejected message without a reason", message);
    for (auto* c : columns)
      if (c->size() != 0) clink::fuzz::finding("a rejected message changed the columns", reason);
    if (!kinds.empty()) clink::fuzz::finding("a rejected message added row kinds", reason);
    return 0;
  }
  if (static_cast<std::size_t>(n) != kinds.size()) clink::fuzz::finding("decode's count differs from its row kinds", message);
  for (RowKind k : kinds) batch.commit_rows(1, k);
  batch.validate();
  std::vector<const Column*> in;
  for (std::size_t i = 0; i < batch.num_columns(); ++i) in.push_back(&batch.column(i));
  for (std::size_t r = 0; r < batch.size(); ++r) {
    format_row(batch, r, *TimeZone::utc());
    std::string out;
    try {
      f.encoder->encode(in, r, batch.row_kind(r), out);
    } catch (const clink::ClinkError&) {
      // a value the format cannot write (the planner keeps such rows away)
    } catch (const std::exception& e) {
      clink::fuzz::finding("encode threw an exception that is not a ClinkError", e.what());
    }
  }
  return 0;
}
