#pragma once
// User-defined aggregate functions (UDAFs) from a plain C++ class. Include only where
// UDAFs are registered: the templates stay out of widely included headers.
//
//   struct WeightedAvg {
//     struct Acc { double sum = 0, weight = 0; };
//     void accumulate(Acc& a, double v, double w) const { a.sum += v * w; a.weight += w; }
//     void retract(Acc& a, double v, double w) const { a.sum -= v * w; a.weight -= w; }  // optional
//     void merge(Acc& a, const Acc& b) const { a.sum += b.sum; a.weight += b.weight; }   // optional
//     std::optional<double> get_value(const Acc& a) const {
//       if (a.weight == 0) return std::nullopt;
//       return a.sum / a.weight;
//     }
//   };
//   register_aggregate_udf(FunctionRegistry::process(), "weighted_avg", WeightedAvg{});
//   -- SELECT k, weighted_avg(price, qty) FROM t GROUP BY k
//
// The class's members (all const; the operator shares one instance between threads):
//   Acc                                   the accumulator type, default-constructed empty
//   void accumulate(Acc&, A...)           0..N arguments A of: bool, std::int32_t (INT),
//                                         std::int64_t (BIGINT), float, double,
//                                         std::string_view (STRING). Arguments are cast to
//                                         those types by the planner; a row with a NULL
//                                         argument is skipped (SQL aggregate semantics).
//   R get_value(const Acc&)               R: the same types (std::string for STRING) or
//                                         std::optional<R> to return NULL
//   void retract(Acc&, A...)              optional: without it the planner rejects the call
//                                         over updating input (a GROUP BY below it, ...)
//   void merge(Acc&, const Acc&)          optional: without it SESSION windows reject the
//                                         call, and other windows fold each row into each of
//                                         its windows instead of merging panes
//   void serialize(const Acc&, std::string& out)      required unless Acc is trivially
//   void deserialize(Acc&, std::string_view bytes)    copyable (then its bytes are the
//                                         checkpointed state); `bytes` is what serialize wrote
// FILTER (WHERE ...) and DISTINCT (on the whole argument tuple, with multiplicities) work
// on any UDAF. The framework runs accumulate in a tight loop over each batch.
#include <cstdint>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "clink/core/error.hpp"
#include "clink/sql/function/aggregate.hpp"
#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/function/function_udf.hpp"

namespace clink::sql {

namespace udaf_detail {

template <class F>
struct Accumulate;
template <class C, class Acc, class... A>
struct Accumulate<void (C::*)(Acc&, A...) const> {
  using args = std::tuple<std::decay_t<A>...>;
};

template <class U>
concept HasRetract = requires { &U::retract; };
template <class U>
concept HasMerge = requires(const U& u, typename U::Acc& a, const typename U::Acc& b) { u.merge(a, b); };
template <class U>
concept HasSerde = requires(const U& u, typename U::Acc& a, const typename U::Acc& c, std::string& out,
                            std::string_view in) {
  u.serialize(c, out);
  u.deserialize(a, in);
};

template <class R>
void append_result(const R& r, Column& out) {
  using Base = typename udf_detail::Optional<R>::type;
  if constexpr (udf_detail::Optional<R>::value) {
    if (!r) return out.append_null();
    append_result<Base>(*r, out);
  } else if constexpr (std::is_same_v<Base, std::string> || std::is_same_v<Base, std::string_view>) {
    out.append_string(r);
  } else if constexpr (std::is_same_v<Base, bool>) {
    out.append<std::uint8_t>(r ? 1 : 0);
  } else {
    out.append<Base>(r);
  }
}

template <class U>
class UdafFunction final : public AggregateFunction {
  using Acc = typename U::Acc;
  using Args = typename Accumulate<decltype(&U::accumulate)>::args;
  using Result = std::decay_t<decltype(std::declval<const U&>().get_value(std::declval<const Acc&>()))>;
  static constexpr std::size_t kArgs = std::tuple_size_v<Args>;
  static_assert(alignof(Acc) <= kAccumulatorAlign, "the accumulator's alignment is above 16");
  static_assert(std::is_trivially_copyable_v<Acc> || HasSerde<U>,
                "an accumulator that is not trivially copyable needs serialize(const Acc&, std::string&) and "
                "deserialize(Acc&, std::string_view)");

 public:
  UdafFunction(std::string name, const U& udaf)
      : name_(std::move(name)), udaf_(udaf),
        result_(udf_detail::TypeOf<typename udf_detail::Optional<Result>::type>::type().with_nullable(true)) {}

  static std::vector<LogicalType> params() {
    std::vector<LogicalType> p;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (p.push_back(udf_detail::TypeOf<std::tuple_element_t<I, Args>>::type()), ...);
    }(std::make_index_sequence<kArgs>{});
    return p;
  }

  const LogicalType& result_type() const override { return result_; }
  std::size_t accumulator_size() const override { return sizeof(Acc); }
  bool trivially_copyable() const override { return std::is_trivially_copyable_v<Acc>; }
  bool supports_retraction() const override { return HasRetract<U>; }
  bool supports_merge() const override { return HasMerge<U>; }
  std::vector<LogicalType> argument_types() const override { return params(); }

  void create(void* acc) const override { new (acc) Acc{}; }
  void destroy(void* acc) const override { static_cast<Acc*>(acc)->~Acc(); }
  void accumulate(void* const* accs, std::span<const Column* const> args,
                  std::span<const std::uint32_t> rows) const override {
    fold<false>(accs, args, rows);
  }
  void retract(void* const* accs, std::span<const Column* const> args,
               std::span<const std::uint32_t> rows) const override {
    if constexpr (HasRetract<U>) fold<true>(accs, args, rows);
    else throw ClinkError(fmt::format("aggregate function {} cannot retract a row", name_));
  }
  void merge(void* acc, const void* other) const override {
    if constexpr (HasMerge<U>) udaf_.merge(*static_cast<Acc*>(acc), *static_cast<const Acc*>(other));
    else throw ClinkError(fmt::format("aggregate function {} cannot merge accumulators", name_));
  }
  void get_value(const void* acc, Column& out) const override {
    append_result<Result>(udaf_.get_value(*static_cast<const Acc*>(acc)), out);
  }
  void serialize(const void* acc, std::string& out) const override {
    if constexpr (HasSerde<U>) {
      std::string bytes;
      udaf_.serialize(*static_cast<const Acc*>(acc), bytes);
      auto n = static_cast<std::uint32_t>(bytes.size());
      out.append(reinterpret_cast<const char*>(&n), sizeof n);
      out += bytes;
    } else {
      out.append(static_cast<const char*>(acc), sizeof(Acc));
    }
  }
  void deserialize(void* acc, std::string_view& in) const override {
    auto take = [&](std::size_t n) {
      if (in.size() < n) throw ClinkError(fmt::format("aggregate function {}: truncated accumulator state", name_));
      std::string_view b = in.substr(0, n);
      in.remove_prefix(n);
      return b;
    };
    if constexpr (HasSerde<U>) {
      std::uint32_t n;
      std::memcpy(&n, take(sizeof n).data(), sizeof n);
      udaf_.deserialize(*static_cast<Acc*>(acc), take(n));
    } else {
      std::memcpy(acc, take(sizeof(Acc)).data(), sizeof(Acc));
    }
  }

 private:
  template <bool kRetract>
  void fold(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const {
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (accs[k] == nullptr) continue;
      const std::uint32_t r = rows[k];
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        if ((args[I]->is_null(r) || ...)) return;  // a NULL argument: the row is skipped
        auto& acc = *static_cast<Acc*>(accs[k]);
        if constexpr (kRetract) udaf_.retract(acc, udf_detail::TypeOf<std::tuple_element_t<I, Args>>::read(*args[I], r)...);
        else udaf_.accumulate(acc, udf_detail::TypeOf<std::tuple_element_t<I, Args>>::read(*args[I], r)...);
      }(std::make_index_sequence<kArgs>{});
    }
  }
  std::string name_;
  U udaf_;
  LogicalType result_;
};

}  // namespace udaf_detail

// Registers `udaf` (see the top of this file) as aggregate function `name` in `registry`.
// Arguments implicitly castable to the accumulate() parameter types match.
template <class U>
void register_aggregate_udf(FunctionRegistry& registry, std::string_view name, U udaf = {}) {
  using F = udaf_detail::UdafFunction<U>;
  std::string upper = upper_ascii(name);
  std::vector<LogicalType> params = F::params();
  std::string signature = upper + "(";
  for (std::size_t i = 0; i < params.size(); ++i) signature += (i ? ", " : "") + params[i].to_string();
  signature += ")";
  registry.add_aggregate(
      name, signature,
      [upper, params, udaf](std::span<const LogicalType> args,
                            const AggregateOptions& options) -> std::unique_ptr<AggregateFunction> {
        if (args.size() != params.size()) return nullptr;
        for (std::size_t i = 0; i < args.size(); ++i)
          if (!supports_implicit_cast(args[i], params[i])) return nullptr;
        std::unique_ptr<AggregateFunction> f = std::make_unique<F>(upper, udaf);
        if (!options.distinct) return f;
        return make_distinct_aggregate(std::move(f), params);
      });
}

}  // namespace clink::sql
