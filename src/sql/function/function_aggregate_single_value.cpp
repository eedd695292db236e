// SINGLE_VALUE(x): the value of a group's only row (NULL without rows); a second row is a
// runtime error with Flink's message (SingleValueAggFunction). The binder wraps a scalar
// subquery that is not a global aggregate in it, as Flink's planner does, so that a
// subquery returning more than one row fails the job instead of multiplying the outer rows.
#include <string>

#include "aggregate_support.hpp"
#include "clink/sql/common/column_key.hpp"
#include "clink/sql/function/aggregate.hpp"
#include "clink/sql/function/function_registry.hpp"

namespace clink::sql {

namespace {

using aggregate_support::get;
using aggregate_support::get_bytes;
using aggregate_support::put;
using aggregate_support::put_bytes;

struct SingleValueAcc {
  std::int64_t rows = 0;  // rows accumulated minus rows retracted (NULLs too)
  bool has = false;       // `value` holds the row's non-NULL value
  std::string value;      // its key bytes (column_key.hpp)
};

class SingleValueAggregate final : public AggregateFunction {
 public:
  explicit SingleValueAggregate(LogicalType t) : result_(t.with_nullable(true)) {}
  const LogicalType& result_type() const override { return result_; }
  std::size_t accumulator_size() const override { return sizeof(SingleValueAcc); }
  bool trivially_copyable() const override { return false; }
  bool supports_merge() const override { return false; }
  void create(void* acc) const override { new (acc) SingleValueAcc(); }
  void destroy(void* acc) const override { A(acc).~SingleValueAcc(); }
  void accumulate(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (accs[k] == nullptr) continue;
      auto& a = A(accs[k]);
      if (++a.rows > 1) throw ClinkError("SingleValueAggFunction received more than one element.");
      a.has = args[0]->is_valid(rows[k]);
      a.value.clear();
      if (a.has) append_key_value(*args[0], rows[k], a.value);
    }
  }
  void retract(void* const* accs, std::span<const Column* const>, std::span<const std::uint32_t> rows) const override {
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (accs[k] == nullptr) continue;
      auto& a = A(accs[k]);
      if (--a.rows <= 0) {
        a.has = false;
        a.value.clear();
      }
    }
  }
  void merge(void*, const void*) const override { throw ClinkError("SINGLE_VALUE cannot merge accumulators"); }
  void get_value(const void* acc, Column& out) const override {
    const auto& a = A(acc);
    if (a.rows != 1 || !a.has) {
      out.append_null();
      return;
    }
    std::string_view in = a.value;
    append_decoded_key_value(in, out);
  }
  void serialize(const void* acc, std::string& out) const override {
    const auto& a = A(acc);
    put<std::int64_t>(out, a.rows);
    put<std::uint8_t>(out, a.has ? 1 : 0);
    put_bytes(out, a.value);
  }
  void deserialize(void* acc, std::string_view& in) const override {
    auto& a = A(acc);
    a.rows = get<std::int64_t>(in);
    a.has = get<std::uint8_t>(in) != 0;
    a.value = std::string(get_bytes(in));
  }

 private:
  static SingleValueAcc& A(void* p) { return *static_cast<SingleValueAcc*>(p); }
  static const SingleValueAcc& A(const void* p) { return *static_cast<const SingleValueAcc*>(p); }
  LogicalType result_;
};

}  // namespace

void register_single_value_aggregate(FunctionRegistry& r) {
  r.add_aggregate("SINGLE_VALUE", "SINGLE_VALUE(T)",
                  [](std::span<const LogicalType> args, const AggregateOptions&) -> std::unique_ptr<AggregateFunction> {
                    if (args.size() != 1) return nullptr;
                    return std::make_unique<SingleValueAggregate>(args[0]);
                  });
}

}  // namespace clink::sql
