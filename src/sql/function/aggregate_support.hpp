// Building blocks shared by the built-in aggregate functions (function_aggregates*.cpp):
// the byte helpers of their state encoding and the base of fixed-size accumulators.
// Private to src/sql.
#pragma once
#include <cstring>
#include <new>
#include <string>
#include <string_view>

#include "clink/core/error.hpp"
#include "clink/sql/common/column.hpp"
#include "clink/sql/function/aggregate.hpp"

namespace clink::sql {

class FunctionRegistry;

namespace aggregate_support {

template <class T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
template <class T>
T get(std::string_view& in) {
  if (in.size() < sizeof(T)) throw ClinkError("truncated aggregate state");
  T v;
  std::memcpy(&v, in.data(), sizeof v);
  in.remove_prefix(sizeof v);
  return v;
}
inline void put_bytes(std::string& out, std::string_view s) {
  put<std::uint32_t>(out, static_cast<std::uint32_t>(s.size()));
  out.append(s);
}
inline std::string_view get_bytes(std::string_view& in) {
  auto n = get<std::uint32_t>(in);
  if (in.size() < n) throw ClinkError("truncated aggregate state");
  std::string_view s = in.substr(0, n);
  in.remove_prefix(n);
  return s;
}

// A fixed-width value or none yet (MIN / MAX, FIRST_VALUE / LAST_VALUE): a PodAggregate's
// accumulator.
template <class T>
struct ValueOrNone {
  T value;
  bool has;
};

// Base for fixed-size, trivially copyable accumulators: their bytes are their state.
template <class Acc>
class PodAggregate : public AggregateFunction {
 public:
  explicit PodAggregate(LogicalType result) : result_(std::move(result)) {}
  const LogicalType& result_type() const override { return result_; }
  std::size_t accumulator_size() const override { return sizeof(Acc); }
  void create(void* acc) const override { new (acc) Acc{}; }
  void serialize(const void* acc, std::string& out) const override { put(out, *static_cast<const Acc*>(acc)); }
  void deserialize(void* acc, std::string_view& in) const override { *static_cast<Acc*>(acc) = get<Acc>(in); }

 protected:
  static Acc& A(void* p) { return *static_cast<Acc*>(p); }
  static const Acc& A(const void* p) { return *static_cast<const Acc*>(p); }
  LogicalType result_;
};

// Base for accumulators that own heap memory: a C++ object of type Acc placed in the
// block; the derived class supplies the state encoding.
template <class Acc>
class ObjectAggregate : public AggregateFunction {
 public:
  explicit ObjectAggregate(LogicalType result) : result_(std::move(result)) {}
  const LogicalType& result_type() const override { return result_; }
  std::size_t accumulator_size() const override { return sizeof(Acc); }
  bool trivially_copyable() const override { return false; }
  void create(void* acc) const override { new (acc) Acc(); }
  void destroy(void* acc) const override { static_cast<Acc*>(acc)->~Acc(); }

 protected:
  static Acc& A(void* p) { return *static_cast<Acc*>(p); }
  static const Acc& A(const void* p) { return *static_cast<const Acc*>(p); }
  LogicalType result_;
};

}  // namespace aggregate_support

// Registration of the aggregate groups beyond COUNT / SUM / AVG / MIN / MAX (called by
// register_aggregate_functions).
void register_value_aggregate_functions(FunctionRegistry& r);       // FIRST_VALUE, LAST_VALUE, LISTAGG, ARRAY_AGG, COLLECT
void register_statistical_aggregate_functions(FunctionRegistry& r);  // STDDEV_*, VAR_*, STDDEV, VARIANCE

}  // namespace clink::sql
