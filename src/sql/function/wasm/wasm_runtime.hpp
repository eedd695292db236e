#pragma once
// Internal: the one seam to Wasmtime (wasm_runtime.cpp is the only file that includes its
// C API). A WasmModule is one compiled, validated module and a pool of instances: a
// Wasmtime store is single-threaded, so concurrent callers each borrow an instance
// (WasmModule::lease), run their whole batch on it and give it back. A call that traps
// (fuel exhausted, out-of-bounds, unreachable) throws and its instance is dropped, so a
// module whose allocator state is suspect never serves another call.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace clink::sql::wasm {

enum class ValType : std::uint8_t { kI32, kI64, kF32, kF64, kOther };
const char* to_string(ValType t);

struct FuncSig {
  std::vector<ValType> params;
  std::vector<ValType> results;
  std::string text() const;  // "(i64, i64) -> i64"
};

// An argument or result slot of a call, laid out as Wasmtime's wasmtime_val_raw_t (16
// bytes; wasm_runtime.cpp asserts it): a call passes the arguments in the first slots and
// reads the results back from the same array, so a batch reuses one array for every row.
union RawVal {
  std::int32_t i32;
  std::int64_t i64;
  float f32;
  double f64;
  unsigned char bytes[16];
};

class Instance;

class WasmModule {
 public:
  // Compiles `bytes` (a binary module, or WAT text) for the function `udf` (named in
  // errors). Throws ClinkError: not wasm, does not compile, declares imports.
  static std::shared_ptr<WasmModule> compile(std::string_view bytes, std::string udf, std::uint64_t fuel);
  ~WasmModule();

  const std::string& udf() const { return udf_; }
  std::uint64_t fuel() const { return fuel_; }
  // The signature of the exported function `name`; nullopt when there is none.
  std::optional<FuncSig> func(std::string_view name) const;
  bool exports_memory() const;

  // An instance for the caller's exclusive use, returned to the pool on destruction
  // unless discard() was called (a trapped call does that).
  class Lease {
   public:
    Lease(WasmModule* m, std::unique_ptr<Instance> i);
    Lease(Lease&&) noexcept;
    ~Lease();
    Instance& operator*() const { return *instance_; }
    Instance* operator->() const { return instance_.get(); }
    void discard();

   private:
    WasmModule* module_;
    std::unique_ptr<Instance> instance_;
  };
  Lease lease();

 private:
  WasmModule() = default;
  friend class Instance;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string udf_;
  std::uint64_t fuel_ = 0;
  std::mutex mu_;
  std::vector<std::unique_ptr<Instance>> idle_;
};

// An export resolved once per instance (index into the instance's table of functions).
using FuncId = int;

class Instance {
 public:
  ~Instance();
  // Resolves an exported function (validated at CREATE, so it exists).
  FuncId func(std::string_view name);
  // Gives the instance the fuel budget of one call: a row's whole guest sequence (its
  // allocs, the call, the deallocs) runs on it, so an allocator cannot smuggle work.
  void refuel();
  // Calls `f`: args in vals[0..], results written back from vals[0]. Throws ClinkError
  // naming the UDF (and its fuel limit when it ran out).
  void call(FuncId f, std::span<RawVal> vals);
  // The guest-memory string ABI (alloc / dealloc exports, bounds-checked memory).
  bool has_alloc() const;
  // Places `bytes` in guest memory through alloc (0 for an empty string); returns the pointer.
  std::uint32_t put(std::string_view bytes);
  // Frees what put() placed (when the module exports dealloc).
  void free(std::uint32_t ptr, std::uint32_t len);
  // The bytes at a packed (ptr << 32 | len) result, bounds-checked; valid until the next call.
  std::string_view view(std::int64_t packed);

 private:
  friend class WasmModule;
  Instance() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

bool built_with_wasmtime();

}  // namespace clink::sql::wasm
