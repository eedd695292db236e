// The Wasmtime side of the WebAssembly UDFs (wasm_runtime.hpp): one engine per process
// (Cranelift, fuel metering on), modules compiled once, instances pooled per module.
// Without CLINK_WITH_WASM (CMake option) every entry point says the build has no wasm.
#include "wasm_runtime.hpp"

#include <cstring>

#include <fmt/format.h>

#include "clink/core/error.hpp"

#if CLINK_WITH_WASM
#include <wasmtime.h>
#endif

namespace clink::sql::wasm {

const char* to_string(ValType t) {
  switch (t) {
    case ValType::kI32: return "i32";
    case ValType::kI64: return "i64";
    case ValType::kF32: return "f32";
    case ValType::kF64: return "f64";
    default: return "(a non-numeric type)";
  }
}

std::string FuncSig::text() const {
  std::string s = "(";
  for (std::size_t i = 0; i < params.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", to_string(params[i]));
  s += ") -> ";
  if (results.empty()) return s + "()";
  if (results.size() == 1) return s + to_string(results[0]);
  s += "(";
  for (std::size_t i = 0; i < results.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", to_string(results[i]));
  return s + ")";
}

WasmModule::Lease::Lease(WasmModule* m, std::unique_ptr<Instance> i) : module_(m), instance_(std::move(i)) {}
WasmModule::Lease::Lease(Lease&& o) noexcept : module_(o.module_), instance_(std::move(o.instance_)) {}
WasmModule::Lease::~Lease() {
  if (!instance_) return;
  std::lock_guard lock(module_->mu_);
  module_->idle_.push_back(std::move(instance_));
}
void WasmModule::Lease::discard() { instance_.reset(); }

#if CLINK_WITH_WASM

static_assert(sizeof(RawVal) == sizeof(wasmtime_val_raw_t), "RawVal must match wasmtime_val_raw_t");

namespace {

std::string take_message(wasmtime_error_t* err) {
  wasm_name_t msg;
  wasmtime_error_message(err, &msg);
  std::string s(msg.data, msg.size);
  wasm_byte_vec_delete(&msg);
  wasmtime_error_delete(err);
  return s;
}

wasm_engine_t* engine() {
  static wasm_engine_t* e = [] {
    wasm_config_t* config = wasm_config_new();
    wasmtime_config_consume_fuel_set(config, true);
    wasmtime_config_cranelift_opt_level_set(config, WASMTIME_OPT_LEVEL_SPEED);
    return wasm_engine_new_with_config(config);
  }();
  return e;
}

ValType val_type(const wasm_valtype_t* t) {
  switch (wasm_valtype_kind(t)) {
    case WASM_I32: return ValType::kI32;
    case WASM_I64: return ValType::kI64;
    case WASM_F32: return ValType::kF32;
    case WASM_F64: return ValType::kF64;
    default: return ValType::kOther;
  }
}

}  // namespace

struct WasmModule::Impl {
  wasmtime_module_t* module = nullptr;
  std::vector<std::pair<std::string, FuncSig>> funcs;
  bool memory = false;
  ~Impl() {
    if (module) wasmtime_module_delete(module);
  }
};

struct Instance::Impl {
  WasmModule* module = nullptr;
  wasmtime_store_t* store = nullptr;
  wasmtime_context_t* ctx = nullptr;
  wasmtime_instance_t instance{};
  std::vector<wasmtime_func_t> funcs;
  bool has_memory = false;
  wasmtime_memory_t memory{};
  std::optional<wasmtime_func_t> alloc, dealloc;
  ~Impl() {
    if (store) wasmtime_store_delete(store);
  }
  [[noreturn]] void fail(wasmtime_error_t* err, wasm_trap_t* trap) const {
    std::string what;
    bool fuel = false;
    if (trap) {
      wasmtime_trap_code_t code;
      fuel = wasmtime_trap_code(trap, &code) && code == WASMTIME_TRAP_CODE_OUT_OF_FUEL;
      wasm_message_t msg;
      wasm_trap_message(trap, &msg);
      what.assign(msg.data, msg.size > 0 && msg.data[msg.size - 1] == '\0' ? msg.size - 1 : msg.size);
      wasm_byte_vec_delete(&msg);
      wasm_trap_delete(trap);
    } else {
      what = take_message(err);
    }
    if (fuel)
      throw ClinkError(fmt::format("wasm function {}: the call ran out of fuel ({} units; a runaway loop?)",
                                   module->udf(), module->fuel()));
    throw ClinkError(fmt::format("wasm function {}: the call trapped: {}", module->udf(), what));
  }
  void raw_call(const wasmtime_func_t& f, RawVal* vals, std::size_t n) {
    wasm_trap_t* trap = nullptr;
    wasmtime_error_t* err =
        wasmtime_func_call_unchecked(ctx, &f, reinterpret_cast<wasmtime_val_raw_t*>(vals), n, &trap);
    if (err || trap) fail(err, trap);
  }
  std::span<std::uint8_t> mem() {
    return {wasmtime_memory_data(ctx, &memory), wasmtime_memory_data_size(ctx, &memory)};
  }
};

std::shared_ptr<WasmModule> WasmModule::compile(std::string_view bytes, std::string udf, std::uint64_t fuel) {
  std::shared_ptr<WasmModule> m(new WasmModule());
  m->udf_ = std::move(udf);
  m->fuel_ = fuel;
  m->impl_ = std::make_unique<Impl>();
  wasm_byte_vec_t wat_out{};
  bool binary = bytes.size() >= 4 && bytes.substr(0, 4) == std::string_view("\0asm", 4);
  if (!binary) {
    if (wasmtime_error_t* err = wasmtime_wat2wasm(bytes.data(), bytes.size(), &wat_out))
      throw ClinkError(fmt::format("wasm function {}: the module is neither binary WebAssembly nor valid WAT text: {}",
                                   m->udf_, take_message(err)));
    bytes = std::string_view(wat_out.data, wat_out.size);
  }
  wasmtime_error_t* err = wasmtime_module_new(engine(), reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                              bytes.size(), &m->impl_->module);
  if (!binary) wasm_byte_vec_delete(&wat_out);
  if (err) throw ClinkError(fmt::format("wasm function {}: the module does not compile: {}", m->udf_, take_message(err)));

  wasm_importtype_vec_t imports;
  wasmtime_module_imports(m->impl_->module, &imports);
  std::string first_import;
  if (imports.size > 0) {
    const wasm_name_t* mod = wasm_importtype_module(imports.data[0]);
    const wasm_name_t* name = wasm_importtype_name(imports.data[0]);
    first_import = std::string(mod->data, mod->size) + "." + std::string(name->data, name->size);
  }
  std::size_t n_imports = imports.size;
  wasm_importtype_vec_delete(&imports);
  if (n_imports > 0)
    throw ClinkError(fmt::format("wasm function {}: the module imports {} ({} import{}); a UDF module must be "
                                 "self-contained (no imports: no WASI, no host functions)",
                                 m->udf_, first_import, n_imports, n_imports == 1 ? "" : "s"));

  wasm_exporttype_vec_t exports;
  wasmtime_module_exports(m->impl_->module, &exports);
  for (std::size_t i = 0; i < exports.size; ++i) {
    const wasm_name_t* n = wasm_exporttype_name(exports.data[i]);
    std::string name(n->data, n->size);
    const wasm_externtype_t* t = wasm_exporttype_type(exports.data[i]);
    if (wasm_externtype_kind(t) == WASM_EXTERN_MEMORY && name == "memory") m->impl_->memory = true;
    if (const wasm_functype_t* f = wasm_externtype_as_functype_const(t)) {
      FuncSig sig;
      const wasm_valtype_vec_t* ps = wasm_functype_params(f);
      for (std::size_t k = 0; k < ps->size; ++k) sig.params.push_back(val_type(ps->data[k]));
      const wasm_valtype_vec_t* rs = wasm_functype_results(f);
      for (std::size_t k = 0; k < rs->size; ++k) sig.results.push_back(val_type(rs->data[k]));
      m->impl_->funcs.emplace_back(std::move(name), std::move(sig));
    }
  }
  wasm_exporttype_vec_delete(&exports);
  return m;
}

WasmModule::~WasmModule() {
  idle_.clear();  // the instances (stores) go before the module
}

std::optional<FuncSig> WasmModule::func(std::string_view name) const {
  for (const auto& [n, sig] : impl_->funcs)
    if (n == name) return sig;
  return std::nullopt;
}

bool WasmModule::exports_memory() const { return impl_->memory; }

WasmModule::Lease WasmModule::lease() {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      std::unique_ptr<Instance> i = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(i));
    }
  }
  std::unique_ptr<Instance> inst(new Instance());
  inst->impl_ = std::make_unique<Instance::Impl>();
  Instance::Impl& x = *inst->impl_;
  x.module = this;
  x.store = wasmtime_store_new(engine(), nullptr, nullptr);
  x.ctx = wasmtime_store_context(x.store);
  if (wasmtime_error_t* err = wasmtime_context_set_fuel(x.ctx, fuel_))
    throw ClinkError(fmt::format("wasm function {}: {}", udf_, take_message(err)));
  wasm_trap_t* trap = nullptr;
  wasmtime_error_t* err = wasmtime_instance_new(x.ctx, impl_->module, nullptr, 0, &x.instance, &trap);
  if (err || trap) x.fail(err, trap);  // a start function that traps or runs out of fuel
  wasmtime_extern_t item;
  if (wasmtime_instance_export_get(x.ctx, &x.instance, "memory", 6, &item) && item.kind == WASMTIME_EXTERN_MEMORY) {
    x.has_memory = true;
    x.memory = item.of.memory;
  }
  if (wasmtime_instance_export_get(x.ctx, &x.instance, "alloc", 5, &item) && item.kind == WASMTIME_EXTERN_FUNC)
    x.alloc = item.of.func;
  if (wasmtime_instance_export_get(x.ctx, &x.instance, "dealloc", 7, &item) && item.kind == WASMTIME_EXTERN_FUNC)
    x.dealloc = item.of.func;
  return Lease(this, std::move(inst));
}

Instance::~Instance() = default;

FuncId Instance::func(std::string_view name) {
  wasmtime_extern_t item;
  if (!wasmtime_instance_export_get(impl_->ctx, &impl_->instance, name.data(), name.size(), &item) ||
      item.kind != WASMTIME_EXTERN_FUNC)
    throw ClinkError(fmt::format("wasm function {}: the module has no function export `{}`", impl_->module->udf(), name));
  impl_->funcs.push_back(item.of.func);
  return static_cast<FuncId>(impl_->funcs.size() - 1);
}

void Instance::refuel() {
  if (wasmtime_error_t* err = wasmtime_context_set_fuel(impl_->ctx, impl_->module->fuel()))
    throw ClinkError(fmt::format("wasm function {}: {}", impl_->module->udf(), take_message(err)));
}

void Instance::call(FuncId f, std::span<RawVal> vals) {
  impl_->raw_call(impl_->funcs[static_cast<std::size_t>(f)], vals.data(), vals.size());
}

bool Instance::has_alloc() const { return impl_->alloc.has_value() && impl_->has_memory; }

std::uint32_t Instance::put(std::string_view bytes) {
  if (bytes.empty()) return 0;
  RawVal v[1];
  v[0].i32 = static_cast<std::int32_t>(bytes.size());
  impl_->raw_call(*impl_->alloc, v, 1);
  auto ptr = static_cast<std::uint32_t>(v[0].i32);
  std::span<std::uint8_t> mem = impl_->mem();  // after alloc: it may have grown the memory
  if (std::uint64_t{ptr} + bytes.size() > mem.size())
    throw ClinkError(fmt::format("wasm function {}: alloc({}) returned {}, outside the guest memory ({} bytes)",
                                 impl_->module->udf(), bytes.size(), ptr, mem.size()));
  std::memcpy(mem.data() + ptr, bytes.data(), bytes.size());
  return ptr;
}

void Instance::free(std::uint32_t ptr, std::uint32_t len) {
  if (len == 0 || !impl_->dealloc) return;
  RawVal v[2];
  v[0].i32 = static_cast<std::int32_t>(ptr);
  v[1].i32 = static_cast<std::int32_t>(len);
  impl_->raw_call(*impl_->dealloc, v, 2);
}

std::string_view Instance::view(std::int64_t packed) {
  auto ptr = static_cast<std::uint32_t>(static_cast<std::uint64_t>(packed) >> 32);
  auto len = static_cast<std::uint32_t>(static_cast<std::uint64_t>(packed) & 0xffffffffu);
  if (len == 0) return {};
  std::span<std::uint8_t> mem = impl_->mem();
  if (std::uint64_t{ptr} + len > mem.size())
    throw ClinkError(fmt::format("wasm function {}: the result (ptr {}, len {}) lies outside the guest memory ({} bytes)",
                                 impl_->module->udf(), ptr, len, mem.size()));
  return {reinterpret_cast<const char*>(mem.data() + ptr), len};
}

bool built_with_wasmtime() { return true; }

#else  // !CLINK_WITH_WASM

struct WasmModule::Impl {};
struct Instance::Impl {};

std::shared_ptr<WasmModule> WasmModule::compile(std::string_view, std::string udf, std::uint64_t) {
  throw ClinkError(fmt::format("wasm function {}: this clink was built without WebAssembly UDFs "
                               "(configure with -DCLINK_WITH_WASM=ON)", udf));
}
WasmModule::~WasmModule() = default;
std::optional<FuncSig> WasmModule::func(std::string_view) const { return std::nullopt; }
bool WasmModule::exports_memory() const { return false; }
WasmModule::Lease WasmModule::lease() { throw ClinkError("WebAssembly UDFs are not built in"); }
Instance::~Instance() = default;
FuncId Instance::func(std::string_view) { return 0; }
void Instance::refuel() {}
void Instance::call(FuncId, std::span<RawVal>) {}
bool Instance::has_alloc() const { return false; }
std::uint32_t Instance::put(std::string_view) { return 0; }
void Instance::free(std::uint32_t, std::uint32_t) {}
std::string_view Instance::view(std::int64_t) { return {}; }
bool built_with_wasmtime() { return false; }

#endif

}  // namespace clink::sql::wasm
