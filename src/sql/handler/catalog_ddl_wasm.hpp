#pragma once
// Internal: the WebAssembly arm of CREATE FUNCTION / CREATE AGGREGATE (catalog_ddl.cpp
// hands LANGUAGE WASM here) and the re-registration of persisted wasm functions.
#include <string>

#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/parser/ast.hpp"

namespace clink::sql {

// The parser's language for CREATE AGGREGATE ... (language = 'wasm', ...): not a word a
// user can write after LANGUAGE.
inline constexpr const char* kWasmAggregateLanguage = "WASM AGGREGATE";

void create_wasm_function(Catalog& catalog, const FunctionRegistry& registry, const ast::CreateFunction& stmt,
                          const std::string& name, SourcePosition pos);
// Registers every wasm function of `catalog` this process does not have (a catalog
// directory loaded by a new session); one that fails to load is left out with a warning.
void register_catalog_wasm_functions(const Catalog& catalog);
// DROP FUNCTION of a wasm function.
void drop_wasm_function(const FunctionDef& def);

}  // namespace clink::sql
