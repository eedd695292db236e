// WebAssembly UDF declarations (wasm_udf.hpp): validation of a module's exports against
// the declared SQL signature, the process's table of registered wasm functions (what the
// FunctionRegistry entries forward to, so CREATE OR REPLACE and DROP take effect without
// editing the registry), and the JSON form the catalog and the JobGraphSpec carry.
#include "clink/sql/function/wasm_udf.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "wasm_functions.hpp"

namespace clink::sql {
namespace {

using wasm::Carrier;
using wasm::FuncSig;
using wasm::ValType;
using wasm::WasmModule;

struct Entry {
  WasmUdfDecl decl;
  std::shared_ptr<WasmModule> module;
  ScalarKernel kernel;  // scalar functions
};

struct Table {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const Entry>, std::less<>> entries;  // key: upper-case name
  std::set<std::string, std::less<>> in_registry;  // names with a forwarding FunctionRegistry entry
};

Table& table() {
  static Table t;
  return t;
}

std::shared_ptr<const Entry> lookup(std::string_view upper) {
  Table& t = table();
  std::lock_guard lock(t.mu);
  auto it = t.entries.find(upper);
  return it == t.entries.end() ? nullptr : it->second;
}

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string to_base64(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < in.size(); i += 3) {
    std::uint32_t n = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) n |= static_cast<unsigned char>(in[i + 1]) << 8;
    if (i + 2 < in.size()) n |= static_cast<unsigned char>(in[i + 2]);
    out += kB64[(n >> 18) & 63];
    out += kB64[(n >> 12) & 63];
    out += i + 1 < in.size() ? kB64[(n >> 6) & 63] : '=';
    out += i + 2 < in.size() ? kB64[n & 63] : '=';
  }
  return out;
}

std::string from_base64(std::string_view in) {
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    const char* p = std::strchr(kB64, c);
    if (c == '\0' || p == nullptr) throw ClinkError("wasm function: the module's base64 is corrupt");
    acc = (acc << 6) | static_cast<std::uint32_t>(p - kB64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

std::string exports_hint(const std::string& name) {
  return fmt::format("`{0}` (a scalar function) or `{0}_init`, `{0}_accumulate`, `{0}_result` (an aggregate)", name);
}

// Checks export `fn` has exactly `want`; the message names both signatures.
void expect_sig(const WasmModule& m, const std::string& udf, const std::string& fn, const FuncSig& want,
                const std::string& why) {
  std::optional<FuncSig> got = m.func(fn);
  if (!got) throw ClinkError(fmt::format("wasm function {}: the module exports no function `{}` ({})", udf, fn, why));
  if (got->params != want.params || got->results != want.results)
    throw ClinkError(fmt::format("wasm function {}: the export `{}` is {} but {} needs {}", udf, fn, got->text(), why,
                                 want.text()));
}

void check_string_abi(const WasmModule& m, const std::string& udf, const char* why) {
  if (!m.exports_memory())
    throw ClinkError(fmt::format("wasm function {}: the module must export its memory as `memory` ({})", udf, why));
  expect_sig(m, udf, "alloc", FuncSig{{ValType::kI32}, {ValType::kI32}}, why);
  if (m.func("dealloc"))
    expect_sig(m, udf, "dealloc", FuncSig{{ValType::kI32, ValType::kI32}, {}}, "the optional dealloc");
}

std::string sql_signature(const WasmUdfDecl& d) {
  std::string s = "(";
  for (std::size_t i = 0; i < d.params.size(); ++i) s += (i ? ", " : "") + d.params[i].to_string();
  return s + ") RETURNS " + d.result.to_string();
}

void validate_scalar(const WasmModule& m, WasmUdfDecl& d) {
  FuncSig got = *m.func(d.export_name);
  if (!d.typed) {
    if (got.results.size() != 1)
      throw ClinkError(fmt::format("wasm function {}: the export `{}` is {}; a scalar function returns one value",
                                   d.name, d.export_name, got.text()));
    for (ValType v : got.params)
      if (v == ValType::kOther)
        throw ClinkError(fmt::format("wasm function {}: the export `{}` is {}: only i32, i64, f32, f64 map to SQL types",
                                     d.name, d.export_name, got.text()));
    if (got.results[0] == ValType::kOther)
      throw ClinkError(fmt::format("wasm function {}: the export `{}` is {}: only i32, i64, f32, f64 map to SQL types",
                                   d.name, d.export_name, got.text()));
    for (ValType v : got.params) d.params.push_back(wasm::inferred_type(v));
    d.result = wasm::inferred_type(got.results[0]);
    return;
  }
  std::vector<ValType> want;
  bool strings = false;
  for (const auto& t : d.params) {
    Carrier c = wasm::carrier_of(t, d.name);
    strings = strings || c == Carrier::kString;
    wasm::append_params(c, want);
  }
  Carrier r = wasm::carrier_of(d.result, d.name);
  strings = strings || r == Carrier::kString;
  expect_sig(m, d.name, d.export_name, FuncSig{want, {wasm::result_val(r)}}, "the declared " + sql_signature(d));
  if (strings) check_string_abi(m, d.name, "STRING values travel through guest memory");
}

void validate_aggregate(const WasmModule& m, WasmUdfDecl& d) {
  const std::string& p = d.export_name;
  check_string_abi(m, d.name, "an aggregate's accumulator travels through guest memory");
  expect_sig(m, d.name, p + "_init", FuncSig{{}, {ValType::kI64}}, "an aggregate's initial accumulator");
  if (!d.typed) {
    std::optional<FuncSig> acc = m.func(p + "_accumulate");
    std::optional<FuncSig> res = m.func(p + "_result");
    if (!acc || !res)
      throw ClinkError(fmt::format("wasm function {}: an aggregate module exports `{}_accumulate` and `{}_result`",
                                   d.name, p, p));
    if (acc->params.size() < 2 || res->results.size() != 1 || res->results[0] == ValType::kOther)
      throw ClinkError(fmt::format("wasm function {}: `{}_accumulate` is {} and `{}_result` is {}: declare the "
                                   "signature (CREATE FUNCTION {}(...) RETURNS ...)",
                                   d.name, p, acc->text(), p, res->text(), d.name));
    for (std::size_t i = 2; i < acc->params.size(); ++i) {
      if (acc->params[i] == ValType::kOther)
        throw ClinkError(fmt::format("wasm function {}: `{}_accumulate` is {}", d.name, p, acc->text()));
      d.params.push_back(wasm::inferred_type(acc->params[i]));
    }
    d.result = wasm::inferred_type(res->results[0]);
  }
  std::vector<ValType> acc_params = {ValType::kI32, ValType::kI32};
  for (const auto& t : d.params) wasm::append_params(wasm::carrier_of(t, d.name), acc_params);
  const std::string sig = "the declared " + sql_signature(d);
  expect_sig(m, d.name, p + "_accumulate", FuncSig{acc_params, {ValType::kI64}}, sig);
  if (m.func(p + "_retract")) expect_sig(m, d.name, p + "_retract", FuncSig{acc_params, {ValType::kI64}}, sig);
  if (m.func(p + "_merge"))
    expect_sig(m, d.name, p + "_merge", FuncSig{{ValType::kI32, ValType::kI32, ValType::kI32, ValType::kI32},
                                                 {ValType::kI64}}, "merging two accumulators");
  expect_sig(m, d.name, p + "_result",
             FuncSig{{ValType::kI32, ValType::kI32}, {wasm::result_val(wasm::carrier_of(d.result, d.name))}}, sig);
}

bool castable_to(std::span<const LogicalType> args, const std::vector<LogicalType>& params) {
  if (args.size() != params.size()) return false;
  for (std::size_t i = 0; i < args.size(); ++i)
    if (!supports_implicit_cast(args[i], params[i])) return false;
  return true;
}

// The FunctionRegistry entry of `name`: added once, it forwards to the table's current
// declaration (so a replaced or dropped function needs no registry edit).
void ensure_in_registry(const std::string& upper, const WasmUdfDecl& d) {
  {
    Table& t = table();
    std::lock_guard lock(t.mu);
    if (!t.in_registry.insert((d.aggregate ? "A:" : "S:") + upper).second) return;
  }
  FunctionRegistry& r = FunctionRegistry::process();
  std::string signature = upper + sql_signature(d);
  if (!d.aggregate) {
    r.add_scalar(upper, signature, [upper](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
      std::shared_ptr<const Entry> e = lookup(upper);
      if (!e || e->decl.aggregate) throw SqlTypeError(fmt::format("No such function: {}", upper));  // dropped
      if (!castable_to(args, e->decl.params)) return std::nullopt;
      ResolvedFunction f;
      f.name = upper;
      for (std::size_t i = 0; i < args.size(); ++i)
        f.arg_types.push_back(e->decl.params[i].with_nullable(args[i].nullable()));
      f.return_type = e->decl.result.with_nullable(true);
      f.kernel = e->kernel;
      f.null_policy = NullPolicy::kCustom;
      f.accepts_scalars = true;
      f.state = e;
      return f;
    });
    return;
  }
  r.add_aggregate(upper, signature,
                  [upper](std::span<const LogicalType> args,
                          const AggregateOptions& options) -> std::unique_ptr<AggregateFunction> {
                    std::shared_ptr<const Entry> e = lookup(upper);
                    if (!e || !e->decl.aggregate) throw SqlTypeError(fmt::format("No such function: {}", upper));
                    if (!castable_to(args, e->decl.params)) return nullptr;
                    std::unique_ptr<AggregateFunction> f = wasm::make_aggregate(e->module, e->decl);
                    if (!options.distinct) return f;
                    return make_distinct_aggregate(std::move(f), e->decl.params);
                  });
}

}  // namespace

bool wasm_udfs_built() { return wasm::built_with_wasmtime(); }

std::string read_wasm_module_file(const std::string& path) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) throw ClinkError(fmt::format("cannot read the wasm module '{}': {}", path, ec.message()));
  if (size > kWasmModuleLimit)
    throw ClinkError(fmt::format("the wasm module '{}' has {} bytes, above the limit of {} bytes (32 MiB)", path, size,
                                 kWasmModuleLimit));
  std::ifstream in(path, std::ios::binary);
  std::string bytes(size, '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size)))
    throw ClinkError(fmt::format("cannot read the wasm module '{}'", path));
  return bytes;
}

WasmUdfDecl register_wasm_udf(WasmUdfDecl d, std::uint64_t fuel) {
  if (d.module.size() > kWasmModuleLimit)
    throw ClinkError(fmt::format("wasm function {}: the module has {} bytes, above the limit of {} bytes (32 MiB)",
                                 d.name, d.module.size(), kWasmModuleLimit));
  if (d.export_name.empty()) d.export_name = d.name;
  std::shared_ptr<WasmModule> m = WasmModule::compile(d.module, d.name, fuel);
  // The export: as written, else lower-cased (SQL names are case-insensitive).
  auto has = [&](const std::string& e) { return m->func(e) || m->func(e + "_accumulate"); };
  if (!has(d.export_name)) {
    std::string lower = d.export_name;
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (has(lower)) d.export_name = lower;
  }
  bool scalar = !d.aggregate && m->func(d.export_name).has_value();
  bool aggregate = m->func(d.export_name + "_accumulate").has_value();
  if (!scalar && !aggregate)
    throw ClinkError(fmt::format("wasm function {}: the module exports neither {}", d.name, exports_hint(d.export_name)));
  d.aggregate = !scalar;
  if (d.aggregate) validate_aggregate(*m, d);
  else validate_scalar(*m, d);

  auto e = std::make_shared<Entry>();
  e->decl = d;
  e->module = m;
  if (!d.aggregate) e->kernel = wasm::make_scalar_kernel(m, d);
  else wasm::make_aggregate(m, d);  // runs <p>_init once: a module that traps there fails the CREATE
  std::string upper = upper_ascii(d.name);
  {
    Table& t = table();
    std::lock_guard lock(t.mu);
    t.entries[upper] = e;
  }
  ensure_in_registry(upper, d);
  return d;
}

void unregister_wasm_udf(std::string_view name) {
  Table& t = table();
  std::lock_guard lock(t.mu);
  if (auto it = t.entries.find(upper_ascii(name)); it != t.entries.end()) t.entries.erase(it);
}

bool wasm_udf_registered(std::string_view name) { return lookup(upper_ascii(name)) != nullptr; }

bool is_wasm_udf_name(std::string_view name) {
  Table& t = table();
  std::lock_guard lock(t.mu);
  std::string upper = upper_ascii(name);
  return t.in_registry.count("S:" + upper) > 0 || t.in_registry.count("A:" + upper) > 0;
}

nlohmann::json wasm_udf_to_json(const WasmUdfDecl& d) {
  nlohmann::json params = nlohmann::json::array();
  for (const auto& p : d.params) params.push_back(p.to_string());
  return {{"name", d.name}, {"kind", d.aggregate ? "aggregate" : "scalar"}, {"params", params},
          {"returns", d.result.to_string()}, {"export", d.export_name}, {"module", to_base64(d.module)}};
}

WasmUdfDecl wasm_udf_from_json(const nlohmann::json& j) {
  WasmUdfDecl d;
  d.name = j.at("name").get<std::string>();
  d.aggregate = j.value("kind", "scalar") == "aggregate";
  d.typed = true;
  for (const auto& p : j.at("params")) d.params.push_back(parse_logical_type(p.get<std::string>()));
  d.result = parse_logical_type(j.at("returns").get<std::string>());
  d.export_name = j.at("export").get<std::string>();
  d.module = from_base64(j.at("module").get<std::string>());
  return d;
}

nlohmann::json wasm_udfs_for_spec(const nlohmann::json& spec) {
  nlohmann::json out = nlohmann::json::array();
  if (!spec.contains("ops")) return out;
  std::string text = spec.at("ops").dump();
  for (auto& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::vector<std::shared_ptr<const Entry>> used;
  {
    Table& t = table();
    std::lock_guard lock(t.mu);
    for (const auto& [upper, e] : t.entries)  // a scalar call ("call") or an aggregate call ("function")
      if (text.find("\"CALL\":\"" + upper + "\"") != std::string::npos ||
          text.find("\"FUNCTION\":\"" + upper + "\"") != std::string::npos)
        used.push_back(e);
  }
  for (const auto& e : used) out.push_back(wasm_udf_to_json(e->decl));
  return out;
}

void register_spec_wasm_udfs(const nlohmann::json& udfs) {
  if (!udfs.is_array()) throw ClinkError("job spec: 'udfs' must be an array of function declarations");
  for (const auto& j : udfs) {
    WasmUdfDecl d = wasm_udf_from_json(j);
    if (std::shared_ptr<const Entry> e = lookup(upper_ascii(d.name));
        e && e->decl.module == d.module && e->decl.export_name == d.export_name && e->decl.params == d.params &&
        e->decl.result == d.result)
      continue;  // already here (this process declared it, or an earlier deploy shipped it)
    register_wasm_udf(std::move(d));
  }
}

}  // namespace clink::sql
