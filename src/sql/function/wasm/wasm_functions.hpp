#pragma once
// Internal: the SQL side of the WebAssembly UDFs: the batched scalar kernel and the
// aggregate function over a compiled module (wasm_runtime.hpp), and the mapping of SQL
// types onto the wasm value types both validate against.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "clink/sql/function/aggregate.hpp"
#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/function/wasm_udf.hpp"
#include "wasm_runtime.hpp"

namespace clink::sql::wasm {

// How a SQL value crosses into the guest: one slot (numbers, BOOLEAN as i32) or, for
// STRING, a (ptr, len) pair of i32.
enum class Carrier : std::uint8_t { kI32, kI64, kF32, kF64, kBool, kString };
// Throws ClinkError naming the function when `t` has no wasm form.
Carrier carrier_of(const LogicalType& t, const std::string& udf);
// The wasm params a SQL argument list expands to.
void append_params(Carrier c, std::vector<ValType>& out);
// The wasm result type of a SQL result (STRING: i64, packed ptr << 32 | len).
ValType result_val(Carrier c);
// The SQL type inferred from one wasm type (Flink-style CREATE FUNCTION without a signature).
LogicalType inferred_type(ValType v);

// Reads argument `c` of row `r` into vals (1 or 2 slots), placing a string in guest memory.
// Returns the slots used; `put` records the (ptr, len) to free after the call.
std::size_t marshal_arg(Instance& inst, Carrier c, const Column& col, std::size_t r, RawVal* vals,
                        std::vector<std::pair<std::uint32_t, std::uint32_t>>& put);
// Appends the result in vals[0] to `out` (a fixed-width column written at row i when
// `fixed`, else appended), freeing a string result's guest buffer.
void write_result(Instance& inst, Carrier c, const RawVal& v, Column& out, std::size_t i, bool fixed);

ScalarKernel make_scalar_kernel(std::shared_ptr<WasmModule> module, const WasmUdfDecl& decl);
std::unique_ptr<AggregateFunction> make_aggregate(std::shared_ptr<WasmModule> module, const WasmUdfDecl& decl);

}  // namespace clink::sql::wasm
