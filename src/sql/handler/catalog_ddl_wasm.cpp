// CREATE [TEMPORARY] FUNCTION f[(params) RETURNS t] AS '<module>' [, '<export>'] LANGUAGE WASM
// and CREATE AGGREGATE f(types) (language = 'wasm', module = ..., result_type = ...).
// The module's bytes are read here (capped at 32 MiB), validated against the signature
// and kept in the catalog's FunctionDef (persisted as functions/<name>.json), so neither
// a later session nor a cluster worker needs the file again.
#include "catalog_ddl_wasm.hpp"

#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "clink/core/log.hpp"
#include "clink/sql/binder/binder.hpp"
#include "clink/sql/function/wasm_udf.hpp"

namespace clink::sql {
namespace {

[[noreturn]] void fail(SourcePosition pos, const std::string& message) { throw TranslationError(pos, message); }

// The catalog form: language WASM, class_name = the name (the binder then calls the
// registered function by name instead of inlining a SQL body), the declaration as JSON.
FunctionDef to_function_def(const WasmUdfDecl& d, bool temporary, const std::vector<std::string>& param_names) {
  FunctionDef f;
  f.name = d.name;
  f.temporary = temporary;
  f.language = "WASM";
  f.class_name = d.name;
  for (std::size_t i = 0; i < d.params.size(); ++i)
    f.params.push_back({i < param_names.size() ? param_names[i] : fmt::format("arg{}", i + 1), d.params[i]});
  f.return_type = d.result;
  f.body_sql = wasm_udf_to_json(d).dump();
  return f;
}

}  // namespace

void create_wasm_function(Catalog& catalog, const FunctionRegistry& registry, const ast::CreateFunction& stmt,
                          const std::string& name, SourcePosition pos) {
  const bool aggregate = stmt.language == kWasmAggregateLanguage;
  const char* what = aggregate ? "CREATE AGGREGATE" : "CREATE FUNCTION";
  if (!wasm_udfs_built())
    fail(pos, fmt::format("{} {}: this clink was built without WebAssembly UDFs (configure with -DCLINK_WITH_WASM=ON)",
                          what, name));
  if (stmt.definitions.empty() || stmt.definitions.size() > 2)
    fail(stmt.definitions_pos, fmt::format("{} {}: LANGUAGE WASM takes AS '<module path>' [, '<export name>']", what, name));
  if (stmt.has_params != stmt.returns.has_value())
    fail(pos, fmt::format("{} {}: declare both the parameters and RETURNS, or neither (then the types come from the "
                          "module's export)", what, name));
  bool builtin = (registry.has_scalar(name) || registry.has_aggregate(name)) && !is_wasm_udf_name(name);
  if (builtin) fail(pos, fmt::format("{} {}: a built-in function has this name", what, name));
  if (catalog.function(name)) {
    if (stmt.if_not_exists) return;
    if (!stmt.or_replace) fail(pos, fmt::format("function `{}` already exists", name));
  }
  WasmUdfDecl d;
  d.name = name;
  d.aggregate = aggregate;
  d.typed = stmt.has_params;
  std::vector<std::string> param_names;
  std::set<std::string> seen;
  for (const auto& p : stmt.params) {
    if (!p.name.empty() && !seen.insert(p.name).second)
      fail(p.pos, fmt::format("{} {}: duplicate parameter `{}`", what, name, p.name));
    param_names.push_back(p.name.empty() ? fmt::format("arg{}", param_names.size() + 1) : p.name);
    d.params.push_back(to_logical_type(p.type));
  }
  if (stmt.returns) d.result = to_logical_type(*stmt.returns);
  if (stmt.definitions.size() == 2) d.export_name = stmt.definitions[1];
  try {
    d.module = read_wasm_module_file(stmt.definitions[0]);
    d = register_wasm_udf(std::move(d));
  } catch (const ClinkError& e) {
    fail(stmt.definitions_pos, fmt::format("{} {}: {}", what, name, e.what()));
  }
  if (aggregate && !d.aggregate)
    fail(pos, fmt::format("{} {}: the module's `{}` is a scalar function (an aggregate exports {}_init, "
                          "{}_accumulate, {}_result)", what, name, d.export_name, d.export_name, d.export_name,
                          d.export_name));
  catalog.add_function(to_function_def(d, stmt.temporary, param_names), true);
}

void register_catalog_wasm_functions(const Catalog& catalog) {
  for (const auto& name : catalog.function_names()) {
    const FunctionDef* f = catalog.function(name);
    if (!f || f->language != "WASM" || wasm_udf_registered(f->name)) continue;
    try {
      register_spec_wasm_udfs(nlohmann::json::array({nlohmann::json::parse(f->body_sql)}));  // skips a known one
    } catch (const std::exception& e) {
      log::warn("the catalog's wasm function {} is not available here: {}", f->name, e.what());
    }
  }
}

void drop_wasm_function(const FunctionDef& def) { unregister_wasm_udf(def.name); }

}  // namespace clink::sql
