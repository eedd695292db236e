#pragma once
// User-defined scalar functions from plain C++ callables. Include only where UDFs are
// registered: the templates stay out of widely included headers.
//
//   registry.add_scalar(...) by hand, or simply:
//   register_scalar_udf(registry, "add_tax", [](double price) { return price * 1.2; });
//   register_scalar_udf(registry, "greet", [](std::string_view s) { return "hi " + std::string(s); });
//   register_scalar_udf(registry, "nvl0", [](std::optional<std::int64_t> v) -> std::int64_t { return v.value_or(0); });
//
// Parameter types: bool, std::int32_t (INT), std::int64_t (BIGINT), float, double,
// std::string_view (STRING); any of them as std::optional<T> to see NULLs (otherwise a
// NULL argument gives NULL without calling the function). Return types: the same (with
// std::string for STRING), or std::optional<R> to return NULL. The framework runs the
// callable in a tight loop over each batch and writes strings straight into the output.
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "clink/sql/function/function_registry.hpp"

namespace clink::sql {

namespace udf_detail {

template <class T>
struct Optional : std::false_type {
  using type = T;
};
template <class T>
struct Optional<std::optional<T>> : std::true_type {
  using type = T;
};

template <class T>
struct TypeOf;
template <>
struct TypeOf<bool> {
  static LogicalType type() { return LogicalType::boolean(); }
  static bool read(const Column& c, std::size_t i) { return c.values<std::uint8_t>()[i] != 0; }
  static void write(bool v, Column& out, std::size_t i) { out.values<std::uint8_t>()[i] = v; }
};
template <>
struct TypeOf<std::int32_t> {
  static LogicalType type() { return LogicalType::int_type(); }
  static std::int32_t read(const Column& c, std::size_t i) { return c.values<std::int32_t>()[i]; }
  static void write(std::int32_t v, Column& out, std::size_t i) { out.values<std::int32_t>()[i] = v; }
};
template <>
struct TypeOf<std::int64_t> {
  static LogicalType type() { return LogicalType::bigint(); }
  static std::int64_t read(const Column& c, std::size_t i) { return c.values<std::int64_t>()[i]; }
  static void write(std::int64_t v, Column& out, std::size_t i) { out.values<std::int64_t>()[i] = v; }
};
template <>
struct TypeOf<float> {
  static LogicalType type() { return LogicalType::float_type(); }
  static float read(const Column& c, std::size_t i) { return c.values<float>()[i]; }
  static void write(float v, Column& out, std::size_t i) { out.values<float>()[i] = v; }
};
template <>
struct TypeOf<double> {
  static LogicalType type() { return LogicalType::double_type(); }
  static double read(const Column& c, std::size_t i) { return c.values<double>()[i]; }
  static void write(double v, Column& out, std::size_t i) { out.values<double>()[i] = v; }
};
template <>
struct TypeOf<std::string_view> {
  static LogicalType type() { return LogicalType::string(); }
  static std::string_view read(const Column& c, std::size_t i) { return c.string_at(i); }
};
template <>
struct TypeOf<std::string> {
  static LogicalType type() { return LogicalType::string(); }
};

template <class F>
struct Signature : Signature<decltype(&F::operator())> {};
template <class C, class R, class... A>
struct Signature<R (C::*)(A...) const> {
  using ret = R;
  using args = std::tuple<std::decay_t<A>...>;
};
template <class R, class... A>
struct Signature<R (*)(A...)> {
  using ret = R;
  using args = std::tuple<std::decay_t<A>...>;
};

template <class A>
auto read_arg(const KernelArg& a, std::size_t i) {
  using Base = typename Optional<A>::type;
  if constexpr (Optional<A>::value) {
    if (!a.valid(i)) return A{};
    return A{TypeOf<Base>::read(*a.column, a.row(i))};
  } else {
    return TypeOf<Base>::read(*a.column, a.row(i));
  }
}

template <class R>
void write_result(R&& r, Column& out, std::size_t i, bool fixed) {
  using Base = typename Optional<std::decay_t<R>>::type;
  if constexpr (Optional<std::decay_t<R>>::value) {
    if (!r) {
      if (fixed) out.set_valid(i, false);
      else out.append_null();
      return;
    }
    write_result(*r, out, i, fixed);
  } else if constexpr (std::is_same_v<Base, std::string> || std::is_same_v<Base, std::string_view>) {
    out.append_string(r);
  } else {
    TypeOf<Base>::write(r, out, i);
    out.set_valid(i, true);
  }
}

}  // namespace udf_detail

template <class F>
void register_scalar_udf(FunctionRegistry& registry, std::string_view name, F f) {
  using Sig = udf_detail::Signature<F>;
  using Args = typename Sig::args;
  using Ret = typename Sig::ret;
  constexpr std::size_t n = std::tuple_size_v<Args>;
  bool sees_nulls = false;
  std::vector<LogicalType> params;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((params.push_back(udf_detail::TypeOf<typename udf_detail::Optional<std::tuple_element_t<I, Args>>::type>::type()),
      sees_nulls = sees_nulls || udf_detail::Optional<std::tuple_element_t<I, Args>>::value),
     ...);
  }(std::make_index_sequence<n>{});
  LogicalType result = udf_detail::TypeOf<typename udf_detail::Optional<Ret>::type>::type();
  ScalarKernel kernel = [f, sees_nulls](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    bool fixed = physical_layout(out.type().kind()) == PhysicalLayout::kFixed;
    for (std::size_t i = 0; i < ctx.rows; ++i) {
      if (!sees_nulls) {
        bool all_valid = true;
        for (const auto& arg : a) all_valid = all_valid && arg.valid(i);
        if (!all_valid) {
          if (fixed) out.set_valid(i, false);
          else out.append_null();
          continue;
        }
      }
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        udf_detail::write_result(f(udf_detail::read_arg<std::tuple_element_t<I, Args>>(a[I], i)...), out, i, fixed);
      }(std::make_index_sequence<n>{});
    }
  };
  registry.add_fixed(name, std::move(params), result, std::move(kernel), NullPolicy::kCustom, true);
}

}  // namespace clink::sql
