#pragma once
// Reading the params of the SQL operator factories (docs/sql-runtime-contract.md).
// Every error names the factory, the op id and the param; unknown params are errors.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "clink/core/output_tag.hpp"
#include "clink/runtime/op_params.hpp"
#include "clink/sql/common/types.hpp"

namespace clink::sql {

// The record type name of ColumnBatch in specs.
inline constexpr const char* kSqlRowType = "sql_row";
// The schema of the rows SQL ops send to the dead-letter side output (kDeadLetterTag)
// (reason STRING, origin STRING, position STRING, payload STRING).
const SchemaPtr& dead_letter_schema();

// [{"name": n, "type": T}, ...] <-> Schema (types through parse_logical_type).
SchemaPtr schema_from_json(const nlohmann::json& fields, const std::string& where);
nlohmann::json schema_to_json(const Schema& schema);

// The schema of the rows an upstream op sends on `up`'s edge: the dead-letter schema on
// that side output, else its "schema" restricted to its "projected" columns when it has
// them (a source's output is its table schema projected). Throws ClinkError naming the op.
SchemaPtr upstream_output_schema(const UpstreamSpec& up);

// The params of a SQL operator factory: OpParams plus the SQL contract's "schema",
// "input_schemas" and "session", column indices, and inputs that carry sql_row.
class SqlOpParams : public OpParams {
 public:
  SqlOpParams(const OperatorSpecContext& ctx, std::string factory, std::vector<std::string> known);

  // A column index into `schema` (from a JSON integer); `what` names it in errors.
  std::size_t column(const nlohmann::json& v, const Schema& schema, const std::string& what) const;
  std::vector<std::size_t> columns(const std::string& name, const Schema& schema) const;

  // "schema": the op's output schema.
  SchemaPtr output_schema() const;
  // "input_schemas"[i], checked against what each upstream op feeding input i declares.
  SchemaPtr input_schema(std::size_t i) const;
};

// Fails unless `actual` equals `expected` (field names and types), naming both.
void check_schema_equal(const Schema& expected, const Schema& actual, const std::string& what);


}  // namespace clink::sql
