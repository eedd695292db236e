// Temporal +/- INTERVAL (the operators; TIMESTAMPADD and friends are temporal functions):
//   TIMESTAMP(_LTZ) +/- INTERVAL DAY TO SECOND   adds milliseconds
//   TIMESTAMP(_LTZ) +/- INTERVAL YEAR TO MONTH   adds months, clamping the day (Jan 31 + 1 month = Feb 29/28)
//   DATE +/- INTERVAL                             DATE (a day-time interval adds whole days)
//   TIME +/- INTERVAL DAY TO SECOND               TIME, wrapping around midnight
//   INTERVAL +/- INTERVAL of one kind, and INTERVAL + temporal (commuted)
// Overflow of the int64 microsecond range gives NULL.
#include "clink/sql/common/temporal.hpp"
#include "kernel_util.hpp"

namespace clink::sql {

namespace {

using kernels::binary_fixed;

std::int64_t add_months_to_days(std::int64_t days, std::int64_t months) {
  CivilDate c = civil_from_days(days);
  std::int64_t total = c.year * 12 + (c.month - 1) + months;
  std::int64_t y = floor_div(total, 12);
  int m = static_cast<int>(floor_mod(total, 12)) + 1;
  int d = std::min(c.day, days_in_month(y, m));
  return days_from_civil(y, m, d);
}

std::int64_t add_months_to_micros(std::int64_t micros, std::int64_t months) {
  std::int64_t days = floor_div(micros, kMicrosPerDay);
  return add_months_to_days(days, months) * kMicrosPerDay + (micros - days * kMicrosPerDay);
}

// kernel(temporal T, interval I) -> T; `sign` is +1 or -1.
template <class T, class I, class F>
ScalarKernel temporal_kernel(bool interval_first, F f) {
  return [interval_first, f](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
    if (interval_first) {
      KernelArg swapped[2] = {args[1], args[0]};
      binary_fixed<T, T, I>(ctx, swapped, out, f);
    } else {
      binary_fixed<T, T, I>(ctx, args, out, f);
    }
  };
}

std::optional<ResolvedFunction> resolve(const char* name, int sign, std::span<const LogicalType> args) {
  if (args.size() != 2) return std::nullopt;
  auto is_interval = [](const LogicalType& t) {
    return t.is(TypeKind::kIntervalDayTime) || t.is(TypeKind::kIntervalYearMonth);
  };
  ResolvedFunction f;
  f.name = name;
  f.accepts_scalars = true;
  f.arg_types = {args[0], args[1]};
  bool nullable = args[0].nullable() || args[1].nullable();
  if (is_interval(args[0]) && is_interval(args[1])) {
    if (args[0].kind() != args[1].kind()) return std::nullopt;
    auto common = find_common_type({args[0], args[1]});
    f.arg_types = {common->with_nullable(args[0].nullable()), common->with_nullable(args[1].nullable())};
    f.return_type = common->with_nullable(true);
    if (args[0].is(TypeKind::kIntervalDayTime)) {
      f.kernel = [sign](KernelContext& c, std::span<const KernelArg> a, Column& o) {
        binary_fixed<std::int64_t, std::int64_t, std::int64_t>(c, a, o, [sign](std::int64_t x, std::int64_t y, bool& bad) {
          std::int64_t r;
          bad = sign > 0 ? __builtin_add_overflow(x, y, &r) : __builtin_sub_overflow(x, y, &r);
          return r;
        });
      };
    } else {
      f.kernel = [sign](KernelContext& c, std::span<const KernelArg> a, Column& o) {
        binary_fixed<std::int32_t, std::int32_t, std::int32_t>(c, a, o, [sign](std::int32_t x, std::int32_t y, bool& bad) {
          std::int32_t r;
          bad = sign > 0 ? __builtin_add_overflow(x, y, &r) : __builtin_sub_overflow(x, y, &r);
          return r;
        });
      };
    }
    return f;
  }
  bool interval_first = is_interval(args[0]);
  if (interval_first && sign < 0) return std::nullopt;  // INTERVAL - TIMESTAMP is not defined
  const LogicalType& t = interval_first ? args[1] : args[0];
  const LogicalType& iv = interval_first ? args[0] : args[1];
  if (!is_interval(iv) || !t.is_temporal()) return std::nullopt;
  f.return_type = t.with_nullable(nullable);
  bool months = iv.is(TypeKind::kIntervalYearMonth);
  switch (t.kind()) {
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampLtz:
      f.return_type = t.with_nullable(true);
      if (months) {
        f.kernel = temporal_kernel<std::int64_t, std::int32_t>(interval_first, [sign](std::int64_t ts, std::int32_t m, bool&) {
          return add_months_to_micros(ts, sign * static_cast<std::int64_t>(m));
        });
      } else {
        f.kernel = temporal_kernel<std::int64_t, std::int64_t>(interval_first, [sign](std::int64_t ts, std::int64_t ms, bool& bad) {
          std::int64_t delta, r;
          bad = __builtin_mul_overflow(ms, sign * kMicrosPerMilli, &delta) || __builtin_add_overflow(ts, delta, &r);
          return bad ? 0 : r;
        });
      }
      return f;
    case TypeKind::kDate:
      if (months) {
        f.kernel = temporal_kernel<std::int32_t, std::int32_t>(interval_first, [sign](std::int32_t d, std::int32_t m, bool&) {
          return static_cast<std::int32_t>(add_months_to_days(d, sign * static_cast<std::int64_t>(m)));
        });
      } else {
        f.kernel = temporal_kernel<std::int32_t, std::int64_t>(interval_first, [sign](std::int32_t d, std::int64_t ms, bool&) {
          return static_cast<std::int32_t>(d + sign * (ms / kMillisPerDay));
        });
      }
      return f;
    case TypeKind::kTime:
      if (months) return std::nullopt;
      f.kernel = temporal_kernel<std::int32_t, std::int64_t>(interval_first, [sign](std::int32_t t, std::int64_t ms, bool&) {
        return static_cast<std::int32_t>(floor_mod(t + sign * floor_mod(ms, kMillisPerDay), kMillisPerDay));
      });
      return f;
    default: return std::nullopt;
  }
}

}  // namespace

void register_interval_arithmetic(FunctionRegistry& r) {
  r.add_scalar("+", "+(TEMPORAL, INTERVAL)", [](std::span<const LogicalType> a) { return resolve("+", 1, a); });
  r.add_scalar("-", "-(TEMPORAL, INTERVAL)", [](std::span<const LogicalType> a) { return resolve("-", -1, a); });
}

}  // namespace clink::sql
