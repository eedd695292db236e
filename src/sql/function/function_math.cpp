// Math: POWER, SQRT, LN, LOG, LOG10, LOG2, EXP, PI, E, FLOOR, CEIL, ROUND, TRUNCATE, SIGN.
// Transcendental functions compute in DOUBLE like Java's Math (LN(-1) is NaN). ROUND and
// TRUNCATE follow Flink's BigDecimal semantics (HALF_UP / DOWN on the decimal digits).
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "clink/sql/common/decimal.hpp"
#include "kernel_util.hpp"

namespace clink::sql {

namespace {

using kernels::binary_fixed;
using kernels::unary_fixed;

void add_double_unary(FunctionRegistry& r, const char* name, double (*fn)(double)) {
  r.add_fixed(name, {LogicalType::double_type()}, LogicalType::double_type(),
              [fn](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
                unary_fixed<double, double>(ctx, args, out, [fn](double x, bool&) { return fn(x); });
              });
}

// 10^k as Int128 for k in 0..38 (else 0: "too many digits").
Int128 pow10_or_zero(std::int64_t k) { return k >= 0 && k <= 38 ? Decimal128::pow10(static_cast<int>(k)) : 0; }

// Rounds an unscaled decimal at `scale` to `digits` fractional digits (may be negative),
// HALF_UP or toward zero, and returns it at `out_scale`; nullopt on overflow.
std::optional<Int128> round_decimal(Int128 v, int scale, std::int64_t digits, int out_scale, int out_precision, bool half_up) {
  if (digits >= scale) return Decimal128::cast(v, scale, out_precision, out_scale);
  std::int64_t drop = scale - digits;  // digits to remove
  Int128 unit = pow10_or_zero(drop);
  Int128 q = 0;
  if (unit != 0) {
    q = v / unit;
    Int128 rem = v % unit;
    if (half_up && (rem < 0 ? -rem : rem) * 2 >= unit) q += v < 0 ? -1 : 1;
  }
  // q is at scale `digits`; move to out_scale.
  if (digits < 0) {
    Int128 back = pow10_or_zero(-digits);
    if (back == 0) return q == 0 ? std::optional<Int128>(0) : std::nullopt;
    Int128 r;
    if (__builtin_mul_overflow(q, back, &r)) return std::nullopt;
    return Decimal128::cast(r, 0, out_precision, out_scale);
  }
  return Decimal128::cast(q, static_cast<int>(digits), out_precision, out_scale);
}

double round_double(double x, std::int64_t digits, bool half_up) {
  if (!std::isfinite(x) || x == 0) return x;
  // BigDecimal.valueOf(x) is the shortest decimal representation: x = D * 10^e.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, std::fabs(x), std::chars_format::scientific);
  std::string_view text(buf, static_cast<std::size_t>(res.ptr - buf));
  auto e_pos = text.find('e');
  Int128 d = 0;
  int ndigits = 0;
  for (char c : text.substr(0, e_pos))
    if (c != '.') {
      d = d * 10 + (c - '0');
      ++ndigits;
    }
  int exp10 = 0;
  std::from_chars(text.data() + e_pos + 1 + (text[e_pos + 1] == '+' ? 1 : 0), text.data() + text.size(), exp10);
  std::int64_t e = exp10 - (ndigits - 1);
  std::int64_t drop = -digits - e;  // low digits of D to remove
  if (drop <= 0) return x;
  Int128 q = 0;
  if (drop <= 38) {
    Int128 unit = Decimal128::pow10(static_cast<int>(drop));
    q = d / unit;
    if (half_up && (d % unit) * 2 >= unit) q += 1;
  }
  std::string out = Decimal128::to_string(q, 0) + "e" + std::to_string(-digits);
  double r = 0;
  std::from_chars(out.data(), out.data() + out.size(), r);
  return x < 0 ? -r : r;
}

template <class T>
T round_integer(T v, std::int64_t digits, bool half_up, bool& bad) {
  if (digits >= 0) return v;
  auto r = round_decimal(v, 0, digits, 0, 38, half_up);
  if (!r || *r > std::numeric_limits<T>::max() || *r < std::numeric_limits<T>::min()) {
    bad = true;
    return 0;
  }
  return static_cast<T>(*r);
}

// ROUND / TRUNCATE over one type; `digits` comes from the second argument (0 if absent).
ScalarKernel round_kernel(const LogicalType& t, bool half_up) {
  auto digits_at = [](std::span<const KernelArg> a, std::size_t i) -> std::int64_t {
    return a.size() > 1 ? a[1].column->values<std::int32_t>()[a[1].row(i)] : 0;
  };
  auto make_int = [&](auto tag) -> ScalarKernel {
    using T = decltype(tag);
    return [=](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      kernels::map_rows(ctx.rows, out.values<T>(), out.validity(), [&](std::size_t i, bool& bad) {
        return round_integer<T>(a[0].column->values<T>()[i], digits_at(a, i), half_up, bad);
      });
    };
  };
  switch (t.kind()) {
    case TypeKind::kTinyInt: return make_int(std::int8_t{});
    case TypeKind::kSmallInt: return make_int(std::int16_t{});
    case TypeKind::kInt: return make_int(std::int32_t{});
    case TypeKind::kBigInt: return make_int(std::int64_t{});
    case TypeKind::kFloat:
      return [=](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
        for (std::size_t i = 0; i < ctx.rows; ++i)
          out.values<float>()[i] = static_cast<float>(round_double(a[0].column->values<float>()[i], digits_at(a, i), half_up));
      };
    case TypeKind::kDouble:
      return [=](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
        for (std::size_t i = 0; i < ctx.rows; ++i)
          out.values<double>()[i] = round_double(a[0].column->values<double>()[i], digits_at(a, i), half_up);
      };
    default: {
      int scale = t.scale();
      return [=](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
        kernels::map_rows(ctx.rows, out.values<Int128>(), out.validity(), [&](std::size_t i, bool& bad) {
          auto r = round_decimal(a[0].column->values<Int128>()[i], scale, digits_at(a, i), out.type().scale(),
                                 out.type().precision(), half_up);
          bad = !r;
          return r.value_or(0);
        });
      };
    }
  }
}

void add_round(FunctionRegistry& r, const char* name, bool half_up) {
  r.add_scalar(name, std::string(name) + "(NUMERIC [, INT])", [=](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (args.empty() || args.size() > 2 || !args[0].is_numeric()) return std::nullopt;
    if (args.size() == 2 && !supports_implicit_cast(args[1], LogicalType::int_type())) return std::nullopt;
    ResolvedFunction f;
    f.name = name;
    f.arg_types = {args[0]};
    if (args.size() == 2) f.arg_types.push_back(LogicalType::int_type().with_nullable(args[1].nullable()));
    bool nullable = args[0].nullable() || (args.size() == 2 && args[1].nullable());
    // DECIMAL: the type for 0 digits here; expr::call narrows it for a literal digit count.
    if (args[0].is(TypeKind::kDecimal) && args.size() == 1)
      f.return_type = round_decimal_type(args[0].precision(), args[0].scale(), 0);
    else
      f.return_type = args[0];
    f.return_type = f.return_type.with_nullable(nullable || args[0].is_exact_numeric());
    f.kernel = round_kernel(args[0], half_up);
    return f;
  });
}

template <class T>
ScalarKernel floor_ceil_kernel(bool ceil) {
  return [ceil](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    unary_fixed<T, T>(ctx, a, out, [ceil](T x, bool&) { return static_cast<T>(ceil ? std::ceil(x) : std::floor(x)); });
  };
}

void add_floor_ceil(FunctionRegistry& r, const char* name, bool ceil) {
  r.add_scalar(name, std::string(name) + "(NUMERIC)", [=](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (args.size() != 1 || !args[0].is_numeric()) return std::nullopt;
    ResolvedFunction f;
    f.name = name;
    f.arg_types = {args[0]};
    const LogicalType& t = args[0];
    if (t.is_integer()) {
      f.return_type = t;
      f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
        std::size_t w = static_cast<std::size_t>(fixed_width(out.type().kind()));
        if (ctx.rows != 0) std::memcpy(out.values_buffer().data(), a[0].column->values_buffer().data(), w * ctx.rows);
      };
    } else if (t.is(TypeKind::kFloat)) {
      f.return_type = t;
      f.kernel = floor_ceil_kernel<float>(ceil);
    } else if (t.is(TypeKind::kDouble)) {
      f.return_type = t;
      f.kernel = floor_ceil_kernel<double>(ceil);
    } else {
      f.return_type = round_decimal_type(t.precision(), t.scale(), 0).with_nullable(t.nullable());
      int scale = t.scale();
      f.kernel = [=](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
        Int128 unit = Decimal128::pow10(scale);
        unary_fixed<Int128, Int128>(ctx, a, out, [=](Int128 v, bool&) {
          Int128 q = v / unit, rem = v % unit;
          if (rem != 0 && (ceil ? v > 0 : v < 0)) q += ceil ? 1 : -1;
          return q;
        });
      };
    }
    return f;
  });
}

}  // namespace

void register_math_functions(FunctionRegistry& r) {
  add_double_unary(r, "SQRT", [](double x) { return std::sqrt(x); });
  add_double_unary(r, "LN", [](double x) { return std::log(x); });
  add_double_unary(r, "LOG10", [](double x) { return std::log10(x); });
  add_double_unary(r, "LOG2", [](double x) { return std::log2(x); });
  add_double_unary(r, "LOG", [](double x) { return std::log(x); });
  add_double_unary(r, "EXP", [](double x) { return std::exp(x); });
  auto binary_double = [](double (*fn)(double, double)) {
    return [fn](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
      binary_fixed<double, double, double>(ctx, args, out, [fn](double a, double b, bool&) { return fn(a, b); });
    };
  };
  r.add_fixed("POWER", {LogicalType::double_type(), LogicalType::double_type()}, LogicalType::double_type(),
              binary_double([](double a, double b) { return std::pow(a, b); }), NullPolicy::kPropagate, true);
  r.add_fixed("LOG", {LogicalType::double_type(), LogicalType::double_type()}, LogicalType::double_type(),
              binary_double([](double base, double x) { return std::log(x) / std::log(base); }), NullPolicy::kPropagate, true);
  auto constant = [](double v) {
    return [v](KernelContext& ctx, std::span<const KernelArg>, Column& out) {
      for (std::size_t i = 0; i < ctx.rows; ++i) out.values<double>()[i] = v;
      out.set_all_valid();
    };
  };
  r.add_fixed("PI", {}, LogicalType::double_type().not_null(), constant(M_PI), NullPolicy::kCustom);
  r.add_fixed("E", {}, LogicalType::double_type().not_null(), constant(M_E), NullPolicy::kCustom);
  add_floor_ceil(r, "FLOOR", false);
  add_floor_ceil(r, "CEIL", true);
  add_floor_ceil(r, "CEILING", true);
  add_round(r, "ROUND", true);
  add_round(r, "TRUNCATE", false);
  r.add_scalar("SIGN", "SIGN(NUMERIC)", [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (args.size() != 1 || !args[0].is_numeric()) return std::nullopt;
    ResolvedFunction f;
    f.name = "SIGN";
    f.arg_types = {args[0]};
    f.return_type = args[0];
    auto make = [](auto tag) -> ScalarKernel {
      using T = decltype(tag);
      return [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
        unary_fixed<T, T>(ctx, a, out, [](T x, bool&) { return static_cast<T>(x > T(0) ? 1 : (x < T(0) ? -1 : 0)); });
      };
    };
    switch (args[0].kind()) {
      case TypeKind::kTinyInt: f.kernel = make(std::int8_t{}); break;
      case TypeKind::kSmallInt: f.kernel = make(std::int16_t{}); break;
      case TypeKind::kInt: f.kernel = make(std::int32_t{}); break;
      case TypeKind::kBigInt: f.kernel = make(std::int64_t{}); break;
      case TypeKind::kFloat: f.kernel = make(float{}); break;
      case TypeKind::kDouble: f.kernel = make(double{}); break;
      default: {
        Int128 one = Decimal128::pow10(args[0].scale());
        f.kernel = [one](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
          unary_fixed<Int128, Int128>(ctx, a, out, [one](Int128 x, bool&) { return x > 0 ? one : (x < 0 ? -one : Int128(0)); });
        };
      }
    }
    return f;
  });
}

}  // namespace clink::sql
