#pragma once
// The JSON bodies of Flink's SQL gateway (flink-sql-gateway's ResultInfo and
// LogicalTypeJsonSerializer shapes, as Flink 2.3 answers them): column types, rows in
// rowFormat JSON or PLAIN_TEXT, and the result pages.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "clink/cluster/gateway/sql_gateway.hpp"
#include "clink/sql/common/types.hpp"

namespace clink::cluster::gateway {

using json = nlohmann::ordered_json;  // Flink's field order

enum class RowFormat { kJson, kPlainText };

// {"type":"INTEGER","nullable":true}, {"type":"VARCHAR","nullable":true,"length":N}, ...
json logical_type_json(const sql::LogicalType& type);
// [{"name":..,"logicalType":..,"comment":null}, ...]; a type clink cannot parse is an error.
json columns_json(const std::vector<ResultColumn>& columns);
// {"kind":"INSERT","fields":[...]}: PLAIN_TEXT fields are clink's printed cells; JSON
// fields are typed (numbers, booleans, ISO timestamps) as Flink's RowDataToJsonConverters.
json row_json(const ResultRow& row, const std::vector<sql::LogicalType>& types, RowFormat format);
const char* row_kind_name(sql::RowKind kind);
const char* row_format_name(RowFormat format);

}  // namespace clink::cluster::gateway
