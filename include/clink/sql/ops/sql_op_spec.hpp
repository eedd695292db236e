#pragma once
// Reading the params of the SQL operator factories (docs/sql-runtime-contract.md).
// Every error names the factory, the op id and the param; unknown params are errors.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "clink/runtime/operator_registry.hpp"
#include "clink/sql/types.hpp"

namespace clink::sql {

// The record type name of ColumnBatch in specs.
inline constexpr const char* kSqlRowType = "sql_row";
// The side output SQL ops send rejected rows to, and its fixed schema
// (reason STRING, origin STRING, position STRING, payload STRING).
inline constexpr const char* kDeadLetterTag = "dead-letter";
const SchemaPtr& dead_letter_schema();

// [{"name": n, "type": T}, ...] <-> Schema (types through parse_logical_type).
SchemaPtr schema_from_json(const nlohmann::json& fields, const std::string& where);
nlohmann::json schema_to_json(const Schema& schema);

class SqlOpParams {
 public:
  SqlOpParams(const OperatorSpecContext& ctx, std::string factory, std::vector<std::string> known);

  const std::string& where() const { return where_; }
  const nlohmann::json& params() const { return params_; }
  bool has(const std::string& name) const { return params_.contains(name) && !params_.at(name).is_null(); }
  const nlohmann::json& require(const std::string& name) const;
  std::int64_t get_int(const std::string& name, std::int64_t fallback, std::int64_t min = INT64_MIN) const;
  std::int64_t require_int(const std::string& name, std::int64_t min = INT64_MIN) const;
  bool get_bool(const std::string& name, bool fallback) const;
  std::string get_string(const std::string& name, const std::string& fallback) const;
  // A column index into `schema` (from a JSON integer); `what` names it in errors.
  std::size_t column(const nlohmann::json& v, const Schema& schema, const std::string& what) const;
  std::vector<std::size_t> columns(const std::string& name, const Schema& schema) const;

  // "schema": the op's output schema.
  SchemaPtr output_schema() const;
  // "input_schemas"[i], checked against what each upstream op feeding input i declares.
  SchemaPtr input_schema(std::size_t i) const;

  [[noreturn]] void fail(const std::string& message) const;

 private:
  const OperatorSpecContext& ctx_;
  std::string factory_;
  std::string where_;
  nlohmann::json params_;
};

// Fails unless `actual` equals `expected` (field names and types), naming both.
void check_schema_equal(const Schema& expected, const Schema& actual, const std::string& what);

// Registers the SQL operator factories and the `sql_columns:<i>[,<j>...]` key family.
void register_sql_operators(OperatorRegistry& registry);

}  // namespace clink::sql
