// The batched scalar kernel of a WebAssembly UDF and the SQL <-> wasm value mapping.
// One batch borrows one instance and resolves the export once; each row then costs the
// guest call (plus alloc/dealloc for its strings), through one RawVal array reused for
// every row: no host allocation per row.
#include <cstring>

#include <fmt/format.h>

#include "clink/core/error.hpp"
#include "wasm_functions.hpp"

namespace clink::sql::wasm {

Carrier carrier_of(const LogicalType& t, const std::string& udf) {
  switch (t.kind()) {
    case TypeKind::kInt: return Carrier::kI32;
    case TypeKind::kBigInt: return Carrier::kI64;
    case TypeKind::kFloat: return Carrier::kF32;
    case TypeKind::kDouble: return Carrier::kF64;
    case TypeKind::kBoolean: return Carrier::kBool;
    case TypeKind::kVarChar:
    case TypeKind::kChar: return Carrier::kString;
    default:
      throw ClinkError(fmt::format("wasm function {}: {} has no WebAssembly form (use INT, BIGINT, FLOAT, DOUBLE, "
                                   "BOOLEAN or STRING)", udf, t.to_string()));
  }
}

void append_params(Carrier c, std::vector<ValType>& out) {
  switch (c) {
    case Carrier::kI32:
    case Carrier::kBool: out.push_back(ValType::kI32); break;
    case Carrier::kI64: out.push_back(ValType::kI64); break;
    case Carrier::kF32: out.push_back(ValType::kF32); break;
    case Carrier::kF64: out.push_back(ValType::kF64); break;
    case Carrier::kString: out.insert(out.end(), {ValType::kI32, ValType::kI32}); break;
  }
}

ValType result_val(Carrier c) {
  switch (c) {
    case Carrier::kI32:
    case Carrier::kBool: return ValType::kI32;
    case Carrier::kF32: return ValType::kF32;
    case Carrier::kF64: return ValType::kF64;
    default: return ValType::kI64;
  }
}

LogicalType inferred_type(ValType v) {
  switch (v) {
    case ValType::kI32: return LogicalType::int_type();
    case ValType::kI64: return LogicalType::bigint();
    case ValType::kF32: return LogicalType::float_type();
    default: return LogicalType::double_type();
  }
}

std::size_t marshal_arg(Instance& inst, Carrier c, const Column& col, std::size_t r, RawVal* vals,
                        std::vector<std::pair<std::uint32_t, std::uint32_t>>& put) {
  switch (c) {
    case Carrier::kI32: vals[0].i32 = col.values<std::int32_t>()[r]; return 1;
    case Carrier::kBool: vals[0].i32 = col.values<std::uint8_t>()[r] != 0; return 1;
    case Carrier::kI64: vals[0].i64 = col.values<std::int64_t>()[r]; return 1;
    case Carrier::kF32: vals[0].f32 = col.values<float>()[r]; return 1;
    case Carrier::kF64: vals[0].f64 = col.values<double>()[r]; return 1;
    case Carrier::kString: {
      std::string_view s = col.string_at(r);
      std::uint32_t ptr = inst.put(s);
      put.emplace_back(ptr, static_cast<std::uint32_t>(s.size()));
      vals[0].i32 = static_cast<std::int32_t>(ptr);
      vals[1].i32 = static_cast<std::int32_t>(s.size());
      return 2;
    }
  }
  return 0;
}

void write_result(Instance& inst, Carrier c, const RawVal& v, Column& out, std::size_t i, bool fixed) {
  auto put = [&](auto x) {
    using T = decltype(x);
    if (fixed) {
      out.values<T>()[i] = x;
      out.set_valid(i, true);
    } else {
      out.append<T>(x);
    }
  };
  switch (c) {
    case Carrier::kI32: put(v.i32); break;
    case Carrier::kBool: put(static_cast<std::uint8_t>(v.i32 != 0)); break;
    case Carrier::kI64: put(v.i64); break;
    case Carrier::kF32: put(v.f32); break;
    case Carrier::kF64: put(v.f64); break;
    case Carrier::kString: {
      std::string_view s = inst.view(v.i64);
      out.append_string(s);
      auto packed = static_cast<std::uint64_t>(v.i64);
      inst.free(static_cast<std::uint32_t>(packed >> 32), static_cast<std::uint32_t>(packed & 0xffffffffu));
      break;
    }
  }
}

namespace {

struct ScalarPlan {
  std::shared_ptr<WasmModule> module;
  std::string export_name;
  std::vector<Carrier> args;
  Carrier result;
  std::size_t slots = 1;  // RawVal slots per call: max(argument slots, 1)
};

void run_batch(const ScalarPlan& p, KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
  const bool fixed = out.type().kind() != TypeKind::kVarChar && out.type().kind() != TypeKind::kChar;
  WasmModule::Lease inst = p.module->lease();
  try {
    const FuncId f = inst->func(p.export_name);
    RawVal vals[32];
    std::vector<std::pair<std::uint32_t, std::uint32_t>> put;
    put.reserve(p.args.size());
    for (std::size_t i = 0; i < ctx.rows; ++i) {
      bool skip = !ctx.is_active(i);
      for (std::size_t k = 0; k < a.size() && !skip; ++k) skip = !a[k].valid(i);
      if (skip) {  // NULL in, NULL out: the module is not entered
        if (fixed) out.set_valid(i, false);
        else out.append_null();
        continue;
      }
      inst->refuel();
      std::size_t n = 0;
      for (std::size_t k = 0; k < a.size(); ++k) n += marshal_arg(*inst, p.args[k], *a[k].column, a[k].row(i), vals + n, put);
      inst->call(f, std::span<RawVal>(vals, p.slots));
      write_result(*inst, p.result, vals[0], out, i, fixed);
      for (auto [ptr, len] : put) inst->free(ptr, len);
      put.clear();
    }
  } catch (...) {
    inst.discard();
    throw;
  }
}

}  // namespace

ScalarKernel make_scalar_kernel(std::shared_ptr<WasmModule> module, const WasmUdfDecl& decl) {
  auto p = std::make_shared<ScalarPlan>();
  p->module = std::move(module);
  p->export_name = decl.export_name;
  std::size_t slots = 0;
  for (const auto& t : decl.params) {
    p->args.push_back(carrier_of(t, decl.name));
    slots += p->args.back() == Carrier::kString ? 2 : 1;
  }
  if (slots > 32) throw ClinkError(fmt::format("wasm function {}: more than 32 wasm parameters", decl.name));
  p->slots = std::max<std::size_t>(slots, 1);
  p->result = carrier_of(decl.result, decl.name);
  return [p](KernelContext& ctx, std::span<const KernelArg> a, Column& out) { run_batch(*p, ctx, a, out); };
}

}  // namespace clink::sql::wasm
