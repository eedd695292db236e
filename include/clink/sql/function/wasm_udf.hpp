#pragma once
// User-defined functions in WebAssembly (CREATE FUNCTION ... LANGUAGE WASM, CREATE
// AGGREGATE; docs/udf-wasm.md). A declaration is compiled and validated once (its
// exports' signatures against the SQL types), then registered in
// FunctionRegistry::process() under its name, where the binder and the SQL operators find
// it like any C++ UDF. Wasmtime stays behind src/sql/function/wasm.
//
// Value model: BIGINT/INT/DOUBLE/FLOAT/BOOLEAN <-> i64/i32/f64/f32/i32; STRING arguments
// are (i32 ptr, i32 len) pairs in guest memory placed through the module's alloc(i32) ->
// i32, a STRING result is one i64 (ptr << 32 | len); `memory` must be exported; an
// exported dealloc(i32, i32) is called for every buffer. NULL in, NULL out. Every call
// runs under a fuel budget; a module with imports is rejected.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "clink/sql/common/types.hpp"

namespace clink::sql {

inline constexpr std::size_t kWasmModuleLimit = std::size_t{32} << 20;  // 32 MiB
inline constexpr std::uint64_t kWasmDefaultFuel = 100'000'000;          // per call

struct WasmUdfDecl {
  std::string name;               // the SQL name (as created)
  bool aggregate = false;         // exports <p>_init/_accumulate/_result (+ _retract, _merge)
  bool typed = false;             // params / result were declared (else inferred from the exports)
  std::vector<LogicalType> params;
  LogicalType result;
  std::string export_name;        // scalar: the function export; aggregate: the prefix <p>
  std::string module;             // the module's bytes (binary WebAssembly or WAT text)
};

// True when this build has Wasmtime (CMake option CLINK_WITH_WASM).
bool wasm_udfs_built();
// Reads a module file; throws ClinkError when it is missing or above kWasmModuleLimit.
std::string read_wasm_module_file(const std::string& path);
// Compiles and validates `decl` (kind and types from the exports when not declared), then
// registers it (replacing a wasm function of that name). Returns the completed
// declaration. Throws ClinkError naming the function and the problem.
WasmUdfDecl register_wasm_udf(WasmUdfDecl decl, std::uint64_t fuel = kWasmDefaultFuel);
// DROP FUNCTION: later calls fail to resolve; running jobs keep their compiled module.
void unregister_wasm_udf(std::string_view name);
// True when `name` is registered here now.
bool wasm_udf_registered(std::string_view name);
// True when `name` is (or was: its FunctionRegistry entry stays) a wasm function here.
bool is_wasm_udf_name(std::string_view name);

// The JSON form (catalog files, the JobGraphSpec's "udfs"): the module as base64.
nlohmann::json wasm_udf_to_json(const WasmUdfDecl& decl);
WasmUdfDecl wasm_udf_from_json(const nlohmann::json& j);
// The declarations of the registered wasm functions a spec's ops call (a "call" or
// "function" naming one, anywhere in the ops), as the spec's "udfs" array.
nlohmann::json wasm_udfs_for_spec(const nlohmann::json& spec);
// Registers each declaration of a spec's "udfs" array not registered here already with
// the same bytes (a worker deploying a job; the client's files are not needed).
void register_spec_wasm_udfs(const nlohmann::json& udfs);

}  // namespace clink::sql
