// A WebAssembly aggregate function (CREATE AGGREGATE / CREATE FUNCTION over a module
// exporting <p>_init, <p>_accumulate, <p>_result and optionally <p>_retract, <p>_merge).
// The accumulator is opaque guest bytes the module lays out as it likes: the host keeps
// them in a std::string per group, places them in guest memory for each call and takes
// the returned (ptr << 32 | len) bytes back, so they checkpoint like any accumulator.
#include <cstring>
#include <new>

#include <fmt/format.h>

#include "clink/core/error.hpp"
#include "wasm_functions.hpp"

namespace clink::sql::wasm {
namespace {

using Acc = std::string;
using Buffers = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

class WasmAggregate final : public AggregateFunction {
 public:
  WasmAggregate(std::shared_ptr<WasmModule> module, const WasmUdfDecl& decl)
      : module_(std::move(module)), name_(decl.name), prefix_(decl.export_name), params_(decl.params),
        result_type_(decl.result.with_nullable(true)), result_(carrier_of(decl.result, decl.name)),
        retract_(module_->func(prefix_ + "_retract").has_value()), merge_(module_->func(prefix_ + "_merge").has_value()) {
    for (const auto& t : params_) args_.push_back(carrier_of(t, name_));
    WasmModule::Lease inst = module_->lease();
    try {
      RawVal v[1];
      inst->refuel();
      inst->call(inst->func(prefix_ + "_init"), v);
      init_ = std::string(inst->view(v[0].i64));
      auto packed = static_cast<std::uint64_t>(v[0].i64);
      inst->free(static_cast<std::uint32_t>(packed >> 32), static_cast<std::uint32_t>(packed & 0xffffffffu));
    } catch (...) {
      inst.discard();
      throw;
    }
  }

  const LogicalType& result_type() const override { return result_type_; }
  std::size_t accumulator_size() const override { return sizeof(Acc); }
  bool trivially_copyable() const override { return false; }
  bool supports_retraction() const override { return retract_; }
  bool supports_merge() const override { return merge_; }
  std::vector<LogicalType> argument_types() const override { return params_; }

  void create(void* acc) const override { new (acc) Acc(init_); }
  void destroy(void* acc) const override { static_cast<Acc*>(acc)->~Acc(); }
  void accumulate(void* const* accs, std::span<const Column* const> args,
                  std::span<const std::uint32_t> rows) const override {
    fold("_accumulate", accs, args, rows);
  }
  void retract(void* const* accs, std::span<const Column* const> args,
               std::span<const std::uint32_t> rows) const override {
    if (!retract_)
      throw ClinkError(fmt::format("aggregate function {} cannot retract a row (its module exports no {}_retract)",
                                   name_, prefix_));
    fold("_retract", accs, args, rows);
  }
  void merge(void* acc, const void* other) const override {
    if (!merge_)
      throw ClinkError(fmt::format("aggregate function {} cannot merge accumulators (its module exports no {}_merge)",
                                   name_, prefix_));
    with_instance([&](Instance& inst) {
      Acc& a = *static_cast<Acc*>(acc);
      const Acc& b = *static_cast<const Acc*>(other);
      RawVal v[4];
      inst.refuel();
      std::uint32_t pa = inst.put(a), pb = inst.put(b);
      v[0].i32 = static_cast<std::int32_t>(pa);
      v[1].i32 = static_cast<std::int32_t>(a.size());
      v[2].i32 = static_cast<std::int32_t>(pb);
      v[3].i32 = static_cast<std::int32_t>(b.size());
      inst.call(inst.func(prefix_ + "_merge"), v);
      take(inst, v[0].i64, a, {{pa, static_cast<std::uint32_t>(a.size())}, {pb, static_cast<std::uint32_t>(b.size())}});
    });
  }
  void get_value(const void* acc, Column& out) const override {
    with_instance([&](Instance& inst) {
      const Acc& a = *static_cast<const Acc*>(acc);
      RawVal v[2];
      inst.refuel();
      std::uint32_t pa = inst.put(a);
      v[0].i32 = static_cast<std::int32_t>(pa);
      v[1].i32 = static_cast<std::int32_t>(a.size());
      inst.call(inst.func(prefix_ + "_result"), v);
      write_result(inst, result_, v[0], out, 0, false);
      inst.free(pa, static_cast<std::uint32_t>(a.size()));
    });
  }
  void serialize(const void* acc, std::string& out) const override {
    const Acc& a = *static_cast<const Acc*>(acc);
    auto n = static_cast<std::uint32_t>(a.size());
    out.append(reinterpret_cast<const char*>(&n), sizeof n);
    out += a;
  }
  void deserialize(void* acc, std::string_view& in) const override {
    std::uint32_t n;
    if (in.size() < sizeof n) throw ClinkError(fmt::format("aggregate function {}: truncated accumulator state", name_));
    std::memcpy(&n, in.data(), sizeof n);
    if (in.size() < sizeof n + n) throw ClinkError(fmt::format("aggregate function {}: truncated accumulator state", name_));
    static_cast<Acc*>(acc)->assign(in.data() + sizeof n, n);
    in.remove_prefix(sizeof n + n);
  }

 private:
  template <class F>
  void with_instance(F&& f) const {
    WasmModule::Lease inst = module_->lease();
    try {
      f(*inst);
    } catch (...) {
      inst.discard();
      throw;
    }
  }
  // The new accumulator at `packed` replaces `acc`; then the guest buffers are freed (the
  // result's too, unless the module returned one of the argument buffers, updated in place).
  static void take(Instance& inst, std::int64_t packed, Acc& acc, const Buffers& args) {
    acc.assign(inst.view(packed));
    auto u = static_cast<std::uint64_t>(packed);
    auto ptr = static_cast<std::uint32_t>(u >> 32), len = static_cast<std::uint32_t>(u & 0xffffffffu);
    bool reused = false;
    for (auto [p, n] : args) {
      reused = reused || (p == ptr && n != 0);
      inst.free(p, n);
    }
    if (!reused) inst.free(ptr, len);
  }
  void fold(const char* suffix, void* const* accs, std::span<const Column* const> args,
            std::span<const std::uint32_t> rows) const {
    with_instance([&](Instance& inst) {
      const FuncId f = inst.func(prefix_ + suffix);
      RawVal vals[34];
      Buffers put;
      for (std::size_t k = 0; k < rows.size(); ++k) {
        if (accs[k] == nullptr) continue;
        const std::uint32_t r = rows[k];
        bool has_null = false;
        for (const Column* c : args) has_null = has_null || c->is_null(r);
        if (has_null) continue;  // a NULL argument: the row is skipped (the module is not entered)
        Acc& acc = *static_cast<Acc*>(accs[k]);
        inst.refuel();
        std::uint32_t pa = inst.put(acc);
        put.emplace_back(pa, static_cast<std::uint32_t>(acc.size()));
        vals[0].i32 = static_cast<std::int32_t>(pa);
        vals[1].i32 = static_cast<std::int32_t>(acc.size());
        std::size_t n = 2;
        for (std::size_t a = 0; a < args.size(); ++a) n += marshal_arg(inst, args_[a], *args[a], r, vals + n, put);
        inst.call(f, std::span<RawVal>(vals, n));
        take(inst, vals[0].i64, acc, put);
        put.clear();
      }
    });
  }

  std::shared_ptr<WasmModule> module_;
  std::string name_, prefix_;
  std::vector<LogicalType> params_;
  LogicalType result_type_;
  Carrier result_;
  std::vector<Carrier> args_;
  bool retract_, merge_;
  std::string init_;
};

}  // namespace

std::unique_ptr<AggregateFunction> make_aggregate(std::shared_ptr<WasmModule> module, const WasmUdfDecl& decl) {
  return std::make_unique<WasmAggregate>(std::move(module), decl);
}

}  // namespace clink::sql::wasm
