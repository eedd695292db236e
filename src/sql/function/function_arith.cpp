// + - * / % (MOD), unary minus and ABS. Two semantics for integers, both keeping Flink's
// result type:
//  - Flink's (the default, the names + - * / % MOD ABS): overflow wraps (two's
//    complement, as Java's int / long: MIN / -1 is MIN, -MIN and ABS(MIN) are MIN), an
//    integer or DECIMAL division or MOD by zero fails the job ("Division by zero"),
//    only for rows whose result is used (CASE WHEN b <> 0 THEN a / b never fails);
//  - the seed's (the names $+ $- $* $/ $% $MOD $ABS, which the binder calls instead under
//    SET 'clink.sql.arithmetic' = 'null'): overflow and division by zero give NULL.
// DECIMAL is exact with Flink's result precision/scale, NULL on overflow (both); FLOAT /
// DOUBLE follow IEEE (x / 0.0 is Infinity, as in Flink).
#include <cmath>
#include <limits>

#include "clink/sql/common/decimal.hpp"
#include "kernel_util.hpp"

namespace clink::sql {

namespace {

using kernels::binary_fixed;
using kernels::unary_fixed;

template <class T>
struct Add {
  T operator()(T a, T b, bool& bad) const {
    if constexpr (sizeof(T) == 8) {
      using U = std::make_unsigned_t<T>;
      T r = static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
      bad = ((a ^ r) & (b ^ r)) < 0;
      return r;
    } else {
      std::int64_t r = static_cast<std::int64_t>(a) + b;
      bad = r < std::numeric_limits<T>::min() || r > std::numeric_limits<T>::max();
      return static_cast<T>(r);
    }
  }
};
template <class T>
struct Sub {
  T operator()(T a, T b, bool& bad) const {
    if constexpr (sizeof(T) == 8) {
      using U = std::make_unsigned_t<T>;
      T r = static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
      bad = ((a ^ b) & (a ^ r)) < 0;
      return r;
    } else {
      std::int64_t r = static_cast<std::int64_t>(a) - b;
      bad = r < std::numeric_limits<T>::min() || r > std::numeric_limits<T>::max();
      return static_cast<T>(r);
    }
  }
};
template <class T>
struct Mul {
  T operator()(T a, T b, bool& bad) const {
    T r;
    bad = __builtin_mul_overflow(a, b, &r);
    return r;
  }
};
template <class T>
struct Div {
  T operator()(T a, T b, bool& bad) const {
    bad = b == 0 || (a == std::numeric_limits<T>::min() && b == -1);
    return bad ? T(0) : static_cast<T>(a / b);
  }
};
// Flink's integer semantics: the wrapped two's-complement result; `bad` only for a zero
// divisor (the kernel then fails the job).
template <class T>
struct WrapAdd {
  T operator()(T a, T b, bool&) const {
    using U = std::make_unsigned_t<std::conditional_t<sizeof(T) == 8, T, std::int64_t>>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  }
};
template <class T>
struct WrapSub {
  T operator()(T a, T b, bool&) const {
    using U = std::make_unsigned_t<std::conditional_t<sizeof(T) == 8, T, std::int64_t>>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  }
};
template <class T>
struct WrapMul {
  T operator()(T a, T b, bool&) const {
    using U = std::make_unsigned_t<std::conditional_t<sizeof(T) == 8, T, std::int64_t>>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  }
};
template <class T>
struct WrapDiv {
  T operator()(T a, T b, bool& bad) const {
    bad = b == 0;
    if (bad) return T(0);
    if (b == -1) return WrapSub<T>{}(T(0), a, bad);  // MIN / -1 is MIN, as Java
    return static_cast<T>(a / b);
  }
};

// MOD: an int64 dividend, the divisor in its own type R, the result in R (|result| <
// |divisor|). The divisor keeps its type so that a serialised plan re-resolves to the
// same result type (casting it to BIGINT would make MOD(BIGINT, INT) reload as BIGINT).
template <class R>
struct Mod {
  R operator()(std::int64_t a, R b, bool& bad) const {
    bad = b == 0;
    return (b == 0 || b == -1) ? R(0) : static_cast<R>(a % static_cast<std::int64_t>(b));
  }
};

// Flink's semantics: a row whose arguments are valid but whose result the op marked bad
// (a zero divisor) fails the job, when its result is used.
void fail_on_bad_rows(const KernelContext& ctx, const Column& out) {
  for (std::size_t i = 0; i < ctx.rows; ++i)
    if (!out.is_valid(i) && ctx.args_valid_at(i) && ctx.is_active(i))
      throw SqlRuntimeError("Division by zero (an integer or DECIMAL division or MOD by 0 fails, as in Flink; SET "
                            "'clink.sql.arithmetic' = 'null' makes it NULL)");
}

template <class T, template <class> class Op>
ScalarKernel int_kernel() {
  return [](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
    binary_fixed<T, T, T>(ctx, args, out, Op<T>{});
  };
}

template <class T, template <class> class Op>
ScalarKernel failing_int_kernel() {
  return [](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
    binary_fixed<T, T, T>(ctx, args, out, Op<T>{});
    fail_on_bad_rows(ctx, out);
  };
}

template <template <class> class Op>
ScalarKernel int_kernel_for(TypeKind k) {
  switch (k) {
    case TypeKind::kTinyInt: return int_kernel<std::int8_t, Op>();
    case TypeKind::kSmallInt: return int_kernel<std::int16_t, Op>();
    case TypeKind::kInt: return int_kernel<std::int32_t, Op>();
    default: return int_kernel<std::int64_t, Op>();
  }
}

template <template <class> class Op>
ScalarKernel failing_int_kernel_for(TypeKind k) {
  switch (k) {
    case TypeKind::kTinyInt: return failing_int_kernel<std::int8_t, Op>();
    case TypeKind::kSmallInt: return failing_int_kernel<std::int16_t, Op>();
    case TypeKind::kInt: return failing_int_kernel<std::int32_t, Op>();
    default: return failing_int_kernel<std::int64_t, Op>();
  }
}

ScalarKernel mod_kernel_for(TypeKind k, bool null_on_error) {
  auto make = [null_on_error](auto tag) -> ScalarKernel {
    using R = decltype(tag);
    return [null_on_error](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
      binary_fixed<R, std::int64_t, R>(ctx, args, out, Mod<R>{});
      if (!null_on_error) fail_on_bad_rows(ctx, out);
    };
  };
  switch (k) {
    case TypeKind::kTinyInt: return make(std::int8_t{});
    case TypeKind::kSmallInt: return make(std::int16_t{});
    case TypeKind::kInt: return make(std::int32_t{});
    default: return make(std::int64_t{});
  }
}

template <class F>
ScalarKernel float_kernel(ArithmeticOp op) {
  switch (op) {
    case ArithmeticOp::kPlus:
      return [](KernelContext& c, std::span<const KernelArg> a, Column& o) { binary_fixed<F, F, F>(c, a, o, [](F x, F y, bool&) { return x + y; }); };
    case ArithmeticOp::kMinus:
      return [](KernelContext& c, std::span<const KernelArg> a, Column& o) { binary_fixed<F, F, F>(c, a, o, [](F x, F y, bool&) { return x - y; }); };
    case ArithmeticOp::kMultiply:
      return [](KernelContext& c, std::span<const KernelArg> a, Column& o) { binary_fixed<F, F, F>(c, a, o, [](F x, F y, bool&) { return x * y; }); };
    case ArithmeticOp::kDivide:
      return [](KernelContext& c, std::span<const KernelArg> a, Column& o) { binary_fixed<F, F, F>(c, a, o, [](F x, F y, bool&) { return x / y; }); };
    case ArithmeticOp::kMod:
      return [](KernelContext& c, std::span<const KernelArg> a, Column& o) {
        binary_fixed<F, F, F>(c, a, o, [](F x, F y, bool&) { return static_cast<F>(std::fmod(x, y)); });
      };
  }
  return nullptr;
}

// Overflow is NULL in both semantics (as Flink); a zero divisor fails in Flink's.
ScalarKernel decimal_kernel(ArithmeticOp op, int s1, int s2, int p, int s, bool null_on_error) {
  return [=](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
    if (!null_on_error && (op == ArithmeticOp::kDivide || op == ArithmeticOp::kMod)) {
      const Int128* y = args[1].column->values<Int128>();
      for (std::size_t i = 0; i < ctx.rows; ++i)
        if (y[args[1].row(i)] == 0 && ctx.args_valid_at(i) && ctx.is_active(i))
          throw SqlRuntimeError("Division by zero (an integer or DECIMAL division or MOD by 0 fails, as in Flink; "
                                "SET 'clink.sql.arithmetic' = 'null' makes it NULL)");
    }
    binary_fixed<Int128, Int128, Int128>(ctx, args, out, [=](Int128 a, Int128 b, bool& bad) -> Int128 {
      std::optional<Int128> r;
      switch (op) {
        case ArithmeticOp::kPlus: r = Decimal128::add(a, s1, b, s2, p, s); break;
        case ArithmeticOp::kMinus: r = Decimal128::subtract(a, s1, b, s2, p, s); break;
        case ArithmeticOp::kMultiply: r = Decimal128::multiply(a, s1, b, s2, p, s); break;
        case ArithmeticOp::kDivide: r = Decimal128::divide(a, s1, b, s2, p, s); break;
        case ArithmeticOp::kMod: r = Decimal128::mod(a, s1, b, s2, p, s); break;
      }
      bad = !r;
      return r.value_or(0);
    });
  };
}

std::optional<ResolvedFunction> resolve_arith(const std::string& name, ArithmeticOp op, bool null_on_error,
                                             std::span<const LogicalType> args) {
  if (args.size() != 2) return std::nullopt;
  auto rt = arithmetic_result_type(op, args[0], args[1]);
  if (!rt) return std::nullopt;
  ResolvedFunction f;
  f.name = name;
  f.accepts_scalars = true;
  bool n0 = args[0].nullable(), n1 = args[1].nullable();
  if (rt->is_integer()) {
    // The seed's semantics: overflow and x / 0 give NULL. Flink's: never NULL for
    // non-NULL arguments (wraps, or fails).
    f.return_type = null_on_error ? rt->with_nullable(true) : rt->with_nullable(n0 || n1);
    if (op == ArithmeticOp::kMod) {
      f.arg_types = {LogicalType::bigint().with_nullable(n0), rt->with_nullable(n1)};
      f.kernel = mod_kernel_for(rt->kind(), null_on_error);
    } else if (null_on_error) {
      f.arg_types = {rt->with_nullable(n0), rt->with_nullable(n1)};
      switch (op) {
        case ArithmeticOp::kPlus: f.kernel = int_kernel_for<Add>(rt->kind()); break;
        case ArithmeticOp::kMinus: f.kernel = int_kernel_for<Sub>(rt->kind()); break;
        case ArithmeticOp::kMultiply: f.kernel = int_kernel_for<Mul>(rt->kind()); break;
        default: f.kernel = int_kernel_for<Div>(rt->kind()); break;
      }
    } else {
      f.arg_types = {rt->with_nullable(n0), rt->with_nullable(n1)};
      switch (op) {
        case ArithmeticOp::kPlus: f.kernel = int_kernel_for<WrapAdd>(rt->kind()); break;
        case ArithmeticOp::kMinus: f.kernel = int_kernel_for<WrapSub>(rt->kind()); break;
        case ArithmeticOp::kMultiply: f.kernel = int_kernel_for<WrapMul>(rt->kind()); break;
        default: f.kernel = failing_int_kernel_for<WrapDiv>(rt->kind()); break;
      }
    }
  } else if (rt->is_approx_numeric()) {
    f.return_type = *rt;
    f.arg_types = {rt->with_nullable(n0), rt->with_nullable(n1)};
    f.kernel = rt->is(TypeKind::kFloat) ? float_kernel<float>(op) : float_kernel<double>(op);
  } else {
    LogicalType a = args[0].is(TypeKind::kNull) ? args[1] : args[0];
    LogicalType b = args[1].is(TypeKind::kNull) ? args[0] : args[1];
    LogicalType da = integer_as_decimal(a).with_nullable(n0), db = integer_as_decimal(b).with_nullable(n1);
    f.return_type = rt->with_nullable(true);
    f.arg_types = {da, db};
    f.kernel = decimal_kernel(op, da.scale(), db.scale(), rt->precision(), rt->scale(), null_on_error);
  }
  return f;
}

void add_arith(FunctionRegistry& r, const char* name, ArithmeticOp op) {
  for (bool null_on_error : {false, true}) {
    const std::string n = null_on_error ? std::string("$") + name : std::string(name);
    r.add_scalar(n, n + "(NUMERIC, NUMERIC)", [n, op, null_on_error](std::span<const LogicalType> args) {
      return resolve_arith(n, op, null_on_error, args);
    });
  }
}

// -MIN and ABS(MIN): NULL in the seed's semantics, MIN (wrapped) in Flink's.
template <class T>
ScalarKernel negate_kernel(bool null_on_error) {
  return [null_on_error](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
    unary_fixed<T, T>(ctx, args, out, [null_on_error](T a, bool& bad) {
      if constexpr (std::is_integral_v<T>) {
        if (a != std::numeric_limits<T>::min()) return static_cast<T>(-a);
        bad = null_on_error;
        return bad ? T(0) : a;
      } else {
        return static_cast<T>(-a);
      }
    });
  };
}
template <class T>
ScalarKernel abs_kernel(bool null_on_error) {
  return [null_on_error](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
    unary_fixed<T, T>(ctx, args, out, [null_on_error](T a, bool& bad) {
      if constexpr (std::is_integral_v<T>) {
        if (a != std::numeric_limits<T>::min()) return static_cast<T>(a < 0 ? -a : a);
        bad = null_on_error;
        return bad ? T(0) : a;
      } else {
        return static_cast<T>(std::fabs(a));
      }
    });
  };
}

std::optional<ResolvedFunction> resolve_unary(const std::string& name, bool is_abs, bool null_on_error,
                                              std::span<const LogicalType> args) {
  if (args.size() != 1) return std::nullopt;
  const LogicalType& t = args[0];
  ResolvedFunction f;
  f.name = name;
  f.arg_types = {t};
  f.return_type = t.is_approx_numeric() || !null_on_error ? t : t.with_nullable(true);
  const bool n = null_on_error;
  switch (t.kind()) {
    case TypeKind::kTinyInt: f.kernel = is_abs ? abs_kernel<std::int8_t>(n) : negate_kernel<std::int8_t>(n); break;
    case TypeKind::kSmallInt: f.kernel = is_abs ? abs_kernel<std::int16_t>(n) : negate_kernel<std::int16_t>(n); break;
    case TypeKind::kInt: f.kernel = is_abs ? abs_kernel<std::int32_t>(n) : negate_kernel<std::int32_t>(n); break;
    case TypeKind::kBigInt: f.kernel = is_abs ? abs_kernel<std::int64_t>(n) : negate_kernel<std::int64_t>(n); break;
    case TypeKind::kFloat: f.kernel = is_abs ? abs_kernel<float>(n) : negate_kernel<float>(n); break;
    case TypeKind::kDouble: f.kernel = is_abs ? abs_kernel<double>(n) : negate_kernel<double>(n); break;
    case TypeKind::kDecimal:
      f.return_type = t;
      f.kernel = [is_abs](KernelContext& ctx, std::span<const KernelArg> a, Column& o) {
        unary_fixed<Int128, Int128>(ctx, a, o, [is_abs](Int128 v, bool&) { return is_abs ? (v < 0 ? -v : v) : -v; });
      };
      break;
    case TypeKind::kIntervalDayTime:
      if (is_abs) return std::nullopt;
      f.kernel = negate_kernel<std::int64_t>(n);
      break;
    case TypeKind::kIntervalYearMonth:
      if (is_abs) return std::nullopt;
      f.kernel = negate_kernel<std::int32_t>(n);
      break;
    default: return std::nullopt;
  }
  return f;
}

}  // namespace

void register_arithmetic_functions(FunctionRegistry& r) {
  add_arith(r, "+", ArithmeticOp::kPlus);
  add_arith(r, "-", ArithmeticOp::kMinus);
  add_arith(r, "*", ArithmeticOp::kMultiply);
  add_arith(r, "/", ArithmeticOp::kDivide);
  add_arith(r, "%", ArithmeticOp::kMod);
  add_arith(r, "MOD", ArithmeticOp::kMod);
  for (bool null_on_error : {false, true}) {
    const std::string neg = null_on_error ? "$-" : "-", abs = null_on_error ? "$ABS" : "ABS";
    r.add_scalar(neg, neg + "(NUMERIC)", [neg, null_on_error](std::span<const LogicalType> a) {
      return resolve_unary(neg, false, null_on_error, a);
    });
    r.add_scalar(abs, abs + "(NUMERIC)", [abs, null_on_error](std::span<const LogicalType> a) {
      return resolve_unary(abs, true, null_on_error, a);
    });
  }
  r.add_scalar("+", "+(NUMERIC)", [](std::span<const LogicalType> a) -> std::optional<ResolvedFunction> {
    if (a.size() != 1 || !a[0].is_numeric()) return std::nullopt;
    ResolvedFunction f;
    f.name = "+";
    f.arg_types = {a[0]};
    f.return_type = a[0];
    f.kernel = [](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
      std::size_t w = static_cast<std::size_t>(fixed_width(out.type().kind()));
      if (ctx.rows != 0) std::memcpy(out.values_buffer().data(), args[0].column->values_buffer().data(), w * ctx.rows);
    };
    return f;
  });
}

}  // namespace clink::sql
