// Comparison (= <> < <= > >=), NOT, IS [NOT] NULL / TRUE / FALSE, IS [NOT] DISTINCT FROM,
// GREATEST, LEAST and NULLIF. Operands are cast to their common type first, so a kernel
// compares two values of one physical type.
#include <cstring>

#include <fmt/format.h>

#include "kernel_util.hpp"

namespace clink::sql {

namespace {

using kernels::binary_fixed;

enum class Cmp { kEq, kNe, kLt, kLe, kGt, kGe };

template <class T>
bool compare(Cmp op, const T& a, const T& b) {
  switch (op) {
    case Cmp::kEq: return a == b;
    case Cmp::kNe: return a != b;
    case Cmp::kLt: return a < b;
    case Cmp::kLe: return a <= b;
    case Cmp::kGt: return a > b;
    case Cmp::kGe: return a >= b;
  }
  return false;
}

template <class T, Cmp op>
ScalarKernel fixed_compare_kernel() {
  return [](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
    binary_fixed<std::uint8_t, T, T>(ctx, args, out, [](T a, T b, bool&) { return static_cast<std::uint8_t>(compare(op, a, b)); });
  };
}

template <Cmp op>
ScalarKernel compare_kernel_for(const LogicalType& t) {
  switch (physical_layout(t.kind())) {
    case PhysicalLayout::kFixed:
      switch (t.kind()) {
        case TypeKind::kBoolean: return fixed_compare_kernel<std::uint8_t, op>();
        case TypeKind::kTinyInt: return fixed_compare_kernel<std::int8_t, op>();
        case TypeKind::kSmallInt: return fixed_compare_kernel<std::int16_t, op>();
        case TypeKind::kInt:
        case TypeKind::kDate:
        case TypeKind::kTime:
        case TypeKind::kIntervalYearMonth: return fixed_compare_kernel<std::int32_t, op>();
        case TypeKind::kFloat: return fixed_compare_kernel<float, op>();
        case TypeKind::kDouble: return fixed_compare_kernel<double, op>();
        case TypeKind::kDecimal: return fixed_compare_kernel<Int128, op>();
        default: return fixed_compare_kernel<std::int64_t, op>();
      }
    case PhysicalLayout::kVarLen:
      // Byte order of UTF-8 is code point order (Flink compares BinaryStringData bytewise).
      return [](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
        auto* o = out.values<std::uint8_t>();
        for (std::size_t i = 0; i < ctx.rows; ++i)
          o[i] = ctx.args_valid_at(i) &&
                 compare(op, args[0].column->string_at(args[0].row(i)), args[1].column->string_at(args[1].row(i)));
      };
    default:
      return [](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
        auto* o = out.values<std::uint8_t>();
        for (std::size_t i = 0; i < ctx.rows; ++i) {
          if (!ctx.args_valid_at(i)) continue;
          bool eq = args[0].column->value_at(args[0].row(i)) == args[1].column->value_at(args[1].row(i));
          o[i] = op == Cmp::kEq ? eq : !eq;
        }
      };
  }
}

bool orderable(const LogicalType& t) { return !t.is_nested() && !t.is(TypeKind::kNull); }

std::optional<LogicalType> comparable_type(std::span<const LogicalType> args) {
  auto t = find_common_type(std::vector<LogicalType>(args.begin(), args.end()));
  if (!t) return std::nullopt;
  // Strings compare with strings, numbers with numbers: no implicit string <-> number.
  bool any_string = false, any_other = false;
  for (const auto& a : args) {
    if (a.is(TypeKind::kNull)) continue;
    (a.is_character_string() ? any_string : any_other) = true;
  }
  if (any_string && any_other) return std::nullopt;
  if (t->is(TypeKind::kNull)) return LogicalType::boolean().with_nullable(true);
  return t;
}

template <Cmp op>
void add_compare(FunctionRegistry& r, const char* name) {
  r.add_scalar(name, fmt::format("{}(T, T)", name), [name](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (args.size() != 2) return std::nullopt;
    auto t = comparable_type(args);
    if (!t) return std::nullopt;
    if (op != Cmp::kEq && op != Cmp::kNe && !orderable(*t)) return std::nullopt;
    ResolvedFunction f;
    f.name = name;
    f.arg_types = {t->with_nullable(args[0].nullable()), t->with_nullable(args[1].nullable())};
    f.return_type = LogicalType::boolean().with_nullable(args[0].nullable() || args[1].nullable());
    f.kernel = compare_kernel_for<op>(*t);
    f.accepts_scalars = physical_layout(t->kind()) == PhysicalLayout::kFixed;
    return f;
  });
}

// A kernel that writes a non-NULL BOOLEAN from a per-row predicate.
template <class F>
ScalarKernel total_bool_kernel(F f) {
  return [f](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
    auto* o = out.values<std::uint8_t>();
    for (std::size_t i = 0; i < ctx.rows; ++i) o[i] = f(args, i);
    out.set_all_valid();
  };
}

void add_total_bool(FunctionRegistry& r, const char* name, int arity, bool boolean_args,
                    std::function<bool(std::span<const KernelArg>, std::size_t)> f) {
  r.add_scalar(name, fmt::format("{}({})", name, arity == 1 ? "T" : "T, T"),
               [=](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
                 if (static_cast<int>(args.size()) != arity) return std::nullopt;
                 ResolvedFunction fn;
                 fn.name = name;
                 if (boolean_args) {
                   if (!supports_implicit_cast(args[0], LogicalType::boolean())) return std::nullopt;
                   fn.arg_types = {LogicalType::boolean().with_nullable(args[0].nullable())};
                 } else if (arity == 2) {
                   auto t = comparable_type(args);
                   if (!t) return std::nullopt;
                   fn.arg_types = {t->with_nullable(args[0].nullable()), t->with_nullable(args[1].nullable())};
                 } else {
                   fn.arg_types = {args[0]};
                 }
                 fn.return_type = LogicalType::boolean().not_null();
                 fn.null_policy = NullPolicy::kCustom;
                 fn.kernel = total_bool_kernel(f);
                 return fn;
               });
}

bool cells_equal(const Column& a, std::size_t i, const Column& b, std::size_t j) {
  if (a.layout() == PhysicalLayout::kFixed) {
    if (a.type().is(TypeKind::kDouble)) return a.values<double>()[i] == b.values<double>()[j];
    if (a.type().is(TypeKind::kFloat)) return a.values<float>()[i] == b.values<float>()[j];
    auto w = static_cast<std::size_t>(fixed_width(a.type().kind()));
    return std::memcmp(a.values_buffer().data() + i * w, b.values_buffer().data() + j * w, w) == 0;
  }
  if (a.layout() == PhysicalLayout::kVarLen) return a.string_at(i) == b.string_at(j);
  if (a.layout() == PhysicalLayout::kNull) return true;
  return a.value_at(i) == b.value_at(j);
}

// -1 / 0 / 1 between two non-NULL cells of one orderable type.
int cell_compare(const Column& a, std::size_t i, const Column& b, std::size_t j) {
  auto cmp3 = [](const auto& x, const auto& y) { return x < y ? -1 : (y < x ? 1 : 0); };
  switch (a.type().kind()) {
    case TypeKind::kBoolean: return cmp3(a.values<std::uint8_t>()[i], b.values<std::uint8_t>()[j]);
    case TypeKind::kTinyInt: return cmp3(a.values<std::int8_t>()[i], b.values<std::int8_t>()[j]);
    case TypeKind::kSmallInt: return cmp3(a.values<std::int16_t>()[i], b.values<std::int16_t>()[j]);
    case TypeKind::kInt:
    case TypeKind::kDate:
    case TypeKind::kTime:
    case TypeKind::kIntervalYearMonth: return cmp3(a.values<std::int32_t>()[i], b.values<std::int32_t>()[j]);
    case TypeKind::kFloat: return cmp3(a.values<float>()[i], b.values<float>()[j]);
    case TypeKind::kDouble: return cmp3(a.values<double>()[i], b.values<double>()[j]);
    case TypeKind::kDecimal: return cmp3(a.values<Int128>()[i], b.values<Int128>()[j]);
    case TypeKind::kChar:
    case TypeKind::kVarChar:
    case TypeKind::kBinary:
    case TypeKind::kVarBinary: return cmp3(a.string_at(i), b.string_at(j));
    default: return cmp3(a.values<std::int64_t>()[i], b.values<std::int64_t>()[j]);
  }
}

void add_greatest_least(FunctionRegistry& r, const char* name, bool greatest) {
  r.add_scalar(name, fmt::format("{}(T, T, ...)", name), [=](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (args.size() < 1) return std::nullopt;
    auto t = comparable_type(args);
    if (!t || !orderable(*t)) return std::nullopt;
    ResolvedFunction f;
    f.name = name;
    bool nullable = false;
    for (const auto& a : args) {
      f.arg_types.push_back(t->with_nullable(a.nullable()));
      nullable = nullable || a.nullable();
    }
    f.return_type = t->with_nullable(nullable);
    // Flink: NULL when any argument is NULL (propagating policy).
    f.kernel = [greatest](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
      bool fixed = out.layout() == PhysicalLayout::kFixed;
      for (std::size_t i = 0; i < ctx.rows; ++i) {
        if (!ctx.args_valid_at(i)) {
          if (!fixed) out.append_null();
          continue;
        }
        std::size_t best = 0;
        for (std::size_t k = 1; k < args.size(); ++k) {
          int c = cell_compare(*args[k].column, i, *args[best].column, i);
          if (greatest ? c > 0 : c < 0) best = k;
        }
        if (fixed) {
          auto w = static_cast<std::size_t>(fixed_width(out.type().kind()));
          std::memcpy(out.values_buffer().data() + i * w, args[best].column->values_buffer().data() + i * w, w);
        } else {
          out.append_string(args[best].column->string_at(i));
        }
      }
    };
    return f;
  });
}

}  // namespace

void register_comparison_functions(FunctionRegistry& r) {
  add_compare<Cmp::kEq>(r, "=");
  add_compare<Cmp::kNe>(r, "<>");
  add_compare<Cmp::kLt>(r, "<");
  add_compare<Cmp::kLe>(r, "<=");
  add_compare<Cmp::kGt>(r, ">");
  add_compare<Cmp::kGe>(r, ">=");
  r.add_fixed("NOT", {LogicalType::boolean()}, LogicalType::boolean(),
              [](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
                const auto* x = args[0].column->values<std::uint8_t>();
                auto* o = out.values<std::uint8_t>();
                for (std::size_t i = 0; i < ctx.rows; ++i) o[i] = !x[i];
              });
  add_total_bool(r, "IS NULL", 1, false, [](std::span<const KernelArg> a, std::size_t i) { return !a[0].valid(i); });
  add_total_bool(r, "IS NOT NULL", 1, false, [](std::span<const KernelArg> a, std::size_t i) { return a[0].valid(i); });
  auto truth = [](std::span<const KernelArg> a, std::size_t i, bool want) {
    return a[0].valid(i) && (a[0].column->values<std::uint8_t>()[a[0].row(i)] != 0) == want;
  };
  add_total_bool(r, "IS TRUE", 1, true, [truth](auto a, std::size_t i) { return truth(a, i, true); });
  add_total_bool(r, "IS FALSE", 1, true, [truth](auto a, std::size_t i) { return truth(a, i, false); });
  add_total_bool(r, "IS NOT TRUE", 1, true, [truth](auto a, std::size_t i) { return !truth(a, i, true); });
  add_total_bool(r, "IS NOT FALSE", 1, true, [truth](auto a, std::size_t i) { return !truth(a, i, false); });
  // $SINK_NOT_NULL(value, 'column'): the value, NOT NULL; a NULL fails the job with Flink's
  // message (table.exec.sink.not-null-enforcer = ERROR, its default). The binder wraps a
  // nullable query column written into a NOT NULL sink column in it.
  r.add_scalar(kSinkNotNull, "$SINK_NOT_NULL(T, STRING) -> T NOT NULL",
               [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
                 if (args.size() != 2 || !args[1].is_character_string()) return std::nullopt;
                 ResolvedFunction f;
                 f.name = kSinkNotNull;
                 f.arg_types = {args[0], LogicalType::string()};
                 f.return_type = args[0].not_null();
                 f.null_policy = NullPolicy::kCustom;
                 f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
                   prepare_for_copy(out, ctx.rows);
                   for (std::size_t i = 0; i < ctx.rows; ++i) {
                     if (!a[0].valid(i) && ctx.is_active(i))
                       throw SqlRuntimeError(fmt::format(
                           "Column '{}' is NOT NULL, however, a null value is being written into it. You can set job "
                           "configuration 'table.exec.sink.not-null-enforcer'='DROP' to suppress this exception and "
                           "drop such records silently.",
                           a[1].column->string_at(a[1].row(i))));
                     copy_row(a[0].column, a[0].row(i), out, i);
                   }
                 };
                 return f;
               });
  add_total_bool(r, "IS UNKNOWN", 1, true, [](std::span<const KernelArg> a, std::size_t i) { return !a[0].valid(i); });
  add_total_bool(r, "IS NOT UNKNOWN", 1, true, [](std::span<const KernelArg> a, std::size_t i) { return a[0].valid(i); });
  auto distinct = [](std::span<const KernelArg> a, std::size_t i) {
    bool va = a[0].valid(i), vb = a[1].valid(i);
    if (!va || !vb) return va != vb;
    return !cells_equal(*a[0].column, a[0].row(i), *a[1].column, a[1].row(i));
  };
  add_total_bool(r, "IS DISTINCT FROM", 2, false, distinct);
  add_total_bool(r, "IS NOT DISTINCT FROM", 2, false, [distinct](auto a, std::size_t i) { return !distinct(a, i); });
  add_greatest_least(r, "GREATEST", true);
  add_greatest_least(r, "LEAST", false);
  // NULLIF(a, b): NULL when a = b, else a.
  r.add_scalar("NULLIF", "NULLIF(T, T)", [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (args.size() != 2) return std::nullopt;
    auto t = comparable_type(args);
    if (!t) return std::nullopt;
    ResolvedFunction f;
    f.name = "NULLIF";
    f.arg_types = {t->with_nullable(args[0].nullable()), t->with_nullable(args[1].nullable())};
    f.return_type = t->with_nullable(true);
    f.null_policy = NullPolicy::kCustom;
    f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      bool fixed = out.layout() == PhysicalLayout::kFixed;
      for (std::size_t i = 0; i < ctx.rows; ++i) {
        bool va = a[0].valid(i);
        bool null = !va || (a[1].valid(i) && cells_equal(*a[0].column, i, *a[1].column, i));
        if (fixed) {
          out.set_valid(i, !null);
          if (!null) {
            auto w = static_cast<std::size_t>(fixed_width(out.type().kind()));
            std::memcpy(out.values_buffer().data() + i * w, a[0].column->values_buffer().data() + i * w, w);
          }
        } else if (null) {
          out.append_null();
        } else {
          out.append_string(a[0].column->string_at(i));
        }
      }
    };
    return f;
  });
}

}  // namespace clink::sql
