#pragma once
// Bound expressions in job specs (docs/sql-runtime-contract.md, "Expressions"):
//   {"col": 3}                                  input column 3 (its type from the schema)
//   {"lit": <value>, "type": T}                 JSON null / boolean / number / string;
//                                               DECIMAL, DATE, TIME, TIMESTAMP[_LTZ] as
//                                               their CAST(... AS STRING) text (LTZ in UTC);
//                                               INTERVALs as the integer (ms / months);
//                                               BINARY / BYTES as hex text
//   {"call": "NAME", "args": [...]}             re-resolved through FunctionRegistry by name
//                                               and argument types when loaded
//   {"cast": e, "type": T, "try": false}
//   {"case": [when, then, ..., else?]}  {"and": [...]}  {"or": [...]}  {"coalesce": [...]}
//   {"in": [v, items...], "negated": false}
// Every node carries "type" when written; when present on load it must equal the type
// the loader derives (a planner and a runtime that disagree fail at load, not on data).
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "clink/sql/common/types.hpp"
#include "clink/sql/expression/expr.hpp"
#include "clink/sql/function/function_registry.hpp"

namespace clink::sql {

nlohmann::json expr_to_json(const Expr& e);
// Throws ClinkError naming the JSON path of the offending node ("/args/1: ...").
// Functions resolve in the process's registry: the built-ins plus the user functions
// registered here (C++ UDFs, the WebAssembly functions a spec's "udfs" brought).
ExprPtr expr_from_json(const nlohmann::json& j, const Schema& input,
                       const FunctionRegistry& registry = FunctionRegistry::process());

}  // namespace clink::sql
