// Temporal functions over DATE, TIME, TIMESTAMP and TIMESTAMP_LTZ values: EXTRACT and its
// shorthands (YEAR(), HOUR(), ...), FLOOR/CEIL(x TO unit), TIMESTAMPADD, TIMESTAMPDIFF,
// the clock functions (CURRENT_TIMESTAMP, NOW(), PROCTIME(), ...) and CURRENT_WATERMARK.
// Units arrive as constant STRING arguments (the binder lowers EXTRACT(YEAR FROM x) to
// EXTRACT('YEAR', x)). Calendar fields use floor division, so values before 1970 are
// exact (Flink's codegen truncates there: EXTRACT(HOUR FROM TIMESTAMP '1969-12-31
// 23:00:00') gives -1 in Flink, 23 here: a documented deviation).
#include <chrono>

#include "kernel_util.hpp"
#include "temporal_units.hpp"

namespace clink::sql {

namespace temporal_fn {

TimeUnit unit_argument(std::string_view fn, std::span<const std::optional<Value>> constants, std::size_t index) {
  if (index >= constants.size() || !constants[index] || constants[index]->is_null())
    throw SqlTypeError(fmt::format("{}: the time unit must be a constant string", fn));
  std::string u = upper_ascii(constants[index]->as_string());
  if (u.rfind("SQL_TSI_", 0) == 0) u = u.substr(8);
  static const std::pair<const char*, TimeUnit> kUnits[] = {
      {"MILLENNIUM", TimeUnit::kMillennium}, {"CENTURY", TimeUnit::kCentury}, {"DECADE", TimeUnit::kDecade},
      {"YEAR", TimeUnit::kYear}, {"ISOYEAR", TimeUnit::kIsoYear}, {"QUARTER", TimeUnit::kQuarter},
      {"MONTH", TimeUnit::kMonth}, {"WEEK", TimeUnit::kWeek}, {"DAY", TimeUnit::kDay},
      {"DOY", TimeUnit::kDoy}, {"DOW", TimeUnit::kDow}, {"ISODOW", TimeUnit::kIsoDow},
      {"HOUR", TimeUnit::kHour}, {"MINUTE", TimeUnit::kMinute}, {"SECOND", TimeUnit::kSecond},
      {"MILLISECOND", TimeUnit::kMillisecond}, {"MICROSECOND", TimeUnit::kMicrosecond},
      {"NANOSECOND", TimeUnit::kNanosecond}, {"EPOCH", TimeUnit::kEpoch}, {"FRAC_SECOND", TimeUnit::kMicrosecond},
  };
  for (const auto& [name, unit] : kUnits)
    if (u == name) return unit;
  throw SqlTypeError(fmt::format("{}: unknown time unit '{}'", fn, constants[index]->as_string()));
}

const char* unit_name(TimeUnit u) {
  static const char* const kNames[] = {"MILLENNIUM", "CENTURY", "DECADE", "YEAR", "ISOYEAR", "QUARTER", "MONTH",
                                       "WEEK", "DAY", "DOY", "DOW", "ISODOW", "HOUR", "MINUTE", "SECOND",
                                       "MILLISECOND", "MICROSECOND", "NANOSECOND", "EPOCH"};
  return kNames[static_cast<int>(u)];
}

std::int64_t now_micros(const SessionContext& s) {
  if (s.batch_time && s.batch_time->now_micros) return *s.batch_time->now_micros;
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace temporal_fn

namespace {

using namespace temporal_fn;

bool is_datetime(const LogicalType& t) {
  return t.is(TypeKind::kDate) || t.is(TypeKind::kTimestamp) || t.is(TypeKind::kTimestampLtz) || t.is(TypeKind::kTime);
}

// ISO-8601 week number and week-based year of a day.
std::pair<std::int64_t, std::int64_t> iso_week(std::int64_t days) {
  std::int64_t thursday = days - iso_day_of_week(days) + 4;
  std::int64_t year = civil_from_days(thursday).year;
  return {(thursday - days_from_civil(year, 1, 1)) / 7 + 1, year};
}

// A calendar or clock field of a wall-clock time (Flink's DateTimeUtils.extractFromDate
// and convertExtract, with floor division).
std::int64_t extract_field(TimeUnit u, std::int64_t micros) {
  std::int64_t days = floor_div(micros, kMicrosPerDay);
  std::int64_t of_day = micros - days * kMicrosPerDay;
  switch (u) {
    case TimeUnit::kEpoch: return floor_div(micros, kMicrosPerSecond);
    case TimeUnit::kHour: return of_day / (3600 * kMicrosPerSecond);
    case TimeUnit::kMinute: return of_day / (60 * kMicrosPerSecond) % 60;
    case TimeUnit::kSecond: return of_day / kMicrosPerSecond % 60;
    case TimeUnit::kMillisecond: return of_day / kMicrosPerMilli % 1000;
    case TimeUnit::kMicrosecond: return of_day % kMicrosPerSecond;
    case TimeUnit::kNanosecond: return of_day % kMicrosPerSecond * 1000;
    case TimeUnit::kDow: return floor_mod(days + 4, 7) + 1;  // Sunday = 1
    case TimeUnit::kIsoDow: return iso_day_of_week(days);
    case TimeUnit::kWeek: return iso_week(days).first;
    case TimeUnit::kIsoYear: return iso_week(days).second;
    default: break;
  }
  CivilDate d = civil_from_days(days);
  switch (u) {
    case TimeUnit::kYear: return d.year;
    case TimeUnit::kQuarter: return (d.month + 2) / 3;
    case TimeUnit::kMonth: return d.month;
    case TimeUnit::kDay: return d.day;
    case TimeUnit::kDoy: return days - days_from_civil(d.year, 1, 1) + 1;
    case TimeUnit::kDecade: return floor_div(d.year, 10);
    case TimeUnit::kCentury: return d.year > 0 ? (d.year + 99) / 100 : (d.year - 99) / 100;
    case TimeUnit::kMillennium: return d.year > 0 ? (d.year + 999) / 1000 : (d.year - 999) / 1000;
    default: return 0;
  }
}

// EXTRACT(unit FROM interval): fields of the interval's value.
std::int64_t extract_interval(TimeUnit u, bool year_month, std::int64_t v) {
  if (year_month) {
    if (u == TimeUnit::kYear) return v / 12;
    if (u == TimeUnit::kMonth) return v % 12;
    if (u == TimeUnit::kQuarter) return v % 12 / 3 + 1;
    return 0;
  }
  switch (u) {
    case TimeUnit::kDay: return v / kMillisPerDay;
    case TimeUnit::kHour: return v / 3600000 % 24;
    case TimeUnit::kMinute: return v / 60000 % 60;
    case TimeUnit::kSecond: return v / 1000 % 60;
    case TimeUnit::kMillisecond: return v % 1000;
    case TimeUnit::kEpoch: return v / 1000;
    default: return 0;
  }
}

bool unit_valid_for(TimeUnit u, TypeKind k) {
  bool clock = u == TimeUnit::kHour || u == TimeUnit::kMinute || u == TimeUnit::kSecond ||
               u == TimeUnit::kMillisecond || u == TimeUnit::kMicrosecond || u == TimeUnit::kNanosecond;
  switch (k) {
    case TypeKind::kTime: return clock;
    case TypeKind::kDate: return !clock;
    case TypeKind::kIntervalYearMonth: return u == TimeUnit::kYear || u == TimeUnit::kMonth || u == TimeUnit::kQuarter;
    case TypeKind::kIntervalDayTime:
      return u == TimeUnit::kDay || u == TimeUnit::kHour || u == TimeUnit::kMinute || u == TimeUnit::kSecond ||
             u == TimeUnit::kMillisecond || u == TimeUnit::kEpoch;
    default: return true;
  }
}

struct UnitState {
  TimeUnit unit;
};

ScalarKernel extract_kernel(TypeKind kind, std::optional<TimeUnit> fixed_unit, std::size_t value_arg) {
  return [=](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    TimeUnit u = fixed_unit ? *fixed_unit : static_cast<const UnitState*>(ctx.state)->unit;
    const Column& c = *a[value_arg].column;
    auto* o = out.values<std::int64_t>();
    if (kind == TypeKind::kIntervalYearMonth || kind == TypeKind::kIntervalDayTime) {
      bool ym = kind == TypeKind::kIntervalYearMonth;
      for (std::size_t i = 0; i < ctx.rows; ++i)
        o[i] = extract_interval(u, ym, ym ? c.values<std::int32_t>()[i] : c.values<std::int64_t>()[i]);
      return;
    }
    for (std::size_t i = 0; i < ctx.rows; ++i) o[i] = extract_field(u, wall_micros(kind, c, i, *ctx.session));
  };
}

void add_extract(FunctionRegistry& r) {
  r.add_scalar("EXTRACT", "EXTRACT(STRING unit, DATE|TIME|TIMESTAMP|TIMESTAMP_LTZ|INTERVAL)",
               [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
                 if (args.size() != 2 || !args[0].is_character_string()) return std::nullopt;
                 TypeKind k = args[1].kind();
                 if (!is_datetime(args[1]) && k != TypeKind::kIntervalDayTime && k != TypeKind::kIntervalYearMonth)
                   return std::nullopt;
                 ResolvedFunction f;
                 f.name = "EXTRACT";
                 f.arg_types = {args[0], args[1]};
                 f.return_type = LogicalType::bigint().with_nullable(args[1].nullable());
                 f.kernel = extract_kernel(k, std::nullopt, 1);
                 f.prepare = [k](std::span<const LogicalType> t, std::span<const std::optional<Value>> c) {
                   TimeUnit u = unit_argument("EXTRACT", c, 0);
                   if (!unit_valid_for(u, k))
                     throw SqlTypeError(fmt::format("EXTRACT: unit {} is not supported for type {}", unit_name(u),
                                                    t[1].to_string()));
                   return std::shared_ptr<const void>(std::make_shared<UnitState>(UnitState{u}));
                 };
                 return f;
               });
  // The shorthands: YEAR(x) = EXTRACT(YEAR FROM x) ..., BIGINT as in Flink.
  static const std::pair<const char*, TimeUnit> kShort[] = {
      {"YEAR", TimeUnit::kYear}, {"QUARTER", TimeUnit::kQuarter}, {"MONTH", TimeUnit::kMonth},
      {"WEEK", TimeUnit::kWeek}, {"DAYOFYEAR", TimeUnit::kDoy}, {"DAYOFMONTH", TimeUnit::kDay},
      {"DAYOFWEEK", TimeUnit::kDow}, {"HOUR", TimeUnit::kHour}, {"MINUTE", TimeUnit::kMinute},
      {"SECOND", TimeUnit::kSecond},
  };
  for (const auto& [name, unit] : kShort) {
    TimeUnit u = unit;
    std::string n = name;
    r.add_scalar(name, fmt::format("{}(DATE|TIMESTAMP|TIMESTAMP_LTZ{})", name, unit_valid_for(u, TypeKind::kTime) ? "|TIME" : ""),
                 [u, n](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
                   if (args.size() != 1 || !is_datetime(args[0]) || !unit_valid_for(u, args[0].kind())) return std::nullopt;
                   ResolvedFunction f;
                   f.name = n;
                   f.arg_types = {args[0]};
                   f.return_type = LogicalType::bigint().with_nullable(args[0].nullable());
                   f.kernel = extract_kernel(args[0].kind(), u, 0);
                   return f;
                 });
  }
}

// Calcite's DateTimeUtils.addMonths on a day number: the day of month is clamped to the
// target month's length.
std::int64_t add_months_to_days(std::int64_t days, std::int64_t months) {
  CivilDate d = civil_from_days(days);
  std::int64_t m0 = d.month - 1 + months;
  std::int64_t year = d.year + floor_div(m0, 12);
  int month = static_cast<int>(floor_mod(m0, 12)) + 1;
  int day = std::min(d.day, days_in_month(year, month));
  return days_from_civil(year, month, day);
}

std::int64_t add_months_to_micros(std::int64_t micros, std::int64_t months) {
  std::int64_t days = floor_div(micros, kMicrosPerDay);
  return add_months_to_days(days, months) * kMicrosPerDay + (micros - days * kMicrosPerDay);
}

// Calcite's DateTimeUtils.subtractMonths (whole months from date1 to date0).
std::int64_t subtract_months_days(std::int64_t date0, std::int64_t date1) {
  if (date0 < date1) return -subtract_months_days(date1, date0);
  std::int64_t m = (date0 - date1) / 31;
  for (;;) {
    std::int64_t d2 = add_months_to_days(date1, m);
    if (d2 >= date0) return m;
    std::int64_t d3 = add_months_to_days(date1, m + 1);
    if (d3 > date0) return m;
    ++m;
  }
}

std::int64_t subtract_months_millis(std::int64_t t0, std::int64_t t1) {
  std::int64_t ms0 = floor_mod(t0, kMillisPerDay), ms1 = floor_mod(t1, kMillisPerDay);
  std::int64_t d0 = floor_div(t0, kMillisPerDay), d1 = floor_div(t1, kMillisPerDay);
  std::int64_t x = subtract_months_days(d0, d1);
  if (add_months_to_days(d1, x) == d0 && ms0 < ms1) --x;
  return x;
}

std::int64_t unit_micros(TimeUnit u) {
  switch (u) {
    case TimeUnit::kWeek: return 7 * kMicrosPerDay;
    case TimeUnit::kDay: return kMicrosPerDay;
    case TimeUnit::kHour: return 3600 * kMicrosPerSecond;
    case TimeUnit::kMinute: return 60 * kMicrosPerSecond;
    case TimeUnit::kSecond: return kMicrosPerSecond;
    case TimeUnit::kMillisecond: return kMicrosPerMilli;
    case TimeUnit::kMicrosecond: return 1;
    default: return 0;
  }
}

std::int64_t unit_months(TimeUnit u) {
  switch (u) {
    case TimeUnit::kYear: return 12;
    case TimeUnit::kQuarter: return 3;
    case TimeUnit::kMonth: return 1;
    default: return 0;
  }
}

// TIMESTAMPADD(unit, n, x): the result has x's type. Months and days move the wall clock
// (for TIMESTAMP_LTZ in the session zone); smaller units move TIMESTAMP_LTZ's instant.
// DATE accepts DAY and larger units only (Flink widens DATE + HOUR to TIMESTAMP; the
// type cannot depend on the unit argument here, so such calls are rejected: cast first).
void add_timestampadd(FunctionRegistry& r) {
  r.add_scalar("TIMESTAMPADD", "TIMESTAMPADD(STRING unit, INT|BIGINT, DATE|TIME|TIMESTAMP|TIMESTAMP_LTZ)",
               [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
                 if (args.size() != 3 || !args[0].is_character_string() || !is_datetime(args[2])) return std::nullopt;
                 if (!supports_implicit_cast(args[1], LogicalType::bigint())) return std::nullopt;
                 ResolvedFunction f;
                 f.name = "TIMESTAMPADD";
                 f.arg_types = {args[0], LogicalType::bigint().with_nullable(args[1].nullable()), args[2]};
                 f.return_type = args[2].with_nullable(true);  // NULL beyond the type's range
                 TypeKind k = args[2].kind();
                 f.prepare = [k](std::span<const LogicalType> t, std::span<const std::optional<Value>> c) {
                   TimeUnit u = unit_argument("TIMESTAMPADD", c, 0);
                   bool months = unit_months(u) != 0, sub = unit_micros(u) != 0;
                   if ((!months && !sub) || (k == TypeKind::kDate && !months && unit_micros(u) < kMicrosPerDay) ||
                       (k == TypeKind::kTime && (months || unit_micros(u) >= kMicrosPerDay)))
                     throw SqlTypeError(fmt::format("TIMESTAMPADD: unit {} is not supported for {}", unit_name(u),
                                                    t[2].to_string()));
                   return std::shared_ptr<const void>(std::make_shared<UnitState>(UnitState{u}));
                 };
                 f.kernel = [k](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
                   TimeUnit u = static_cast<const UnitState*>(ctx.state)->unit;
                   std::int64_t months = unit_months(u), step = unit_micros(u);
                   const auto* n = a[1].column->values<std::int64_t>();
                   const TimeZone& zone = *ctx.session->time_zone;
                   // delta: months, days (DATE) or microseconds; results beyond the range are NULL.
                   std::int64_t unit = months ? months : k == TypeKind::kDate ? step / kMicrosPerDay : step;
                   for (std::size_t i = 0; i < ctx.rows; ++i) {
                     if (!out.is_valid(i)) continue;
                     std::int64_t delta = 0, v = 0;
                     bool overflow = __builtin_mul_overflow(n[i], unit, &delta);
                     switch (k) {
                       case TypeKind::kDate: {
                         std::int64_t days = a[2].column->values<std::int32_t>()[i];
                         if (!overflow) overflow = __builtin_add_overflow(days, months ? 0 : delta, &v);
                         if (!overflow && months) v = add_months_to_days(days, delta);
                         overflow = overflow || v < INT32_MIN || v > INT32_MAX;
                         if (!overflow) out.values<std::int32_t>()[i] = static_cast<std::int32_t>(v);
                         break;
                       }
                       case TypeKind::kTime: {  // wraps around the day, as Flink's TIME arithmetic
                         std::int64_t ms = a[2].column->values<std::int32_t>()[i];
                         out.values<std::int32_t>()[i] = static_cast<std::int32_t>(floor_mod(ms + floor_mod(delta / kMicrosPerMilli, kMillisPerDay), kMillisPerDay));
                         break;
                       }
                       case TypeKind::kTimestampLtz: {
                         v = a[2].column->values<std::int64_t>()[i];
                         if (overflow) break;
                         if (months || step >= kMicrosPerDay) {  // calendar units move the session-zone wall clock
                           std::int64_t local = zone.utc_micros_to_local(v);
                           if (months) local = add_months_to_micros(local, delta);
                           else overflow = __builtin_add_overflow(local, delta, &local);
                           v = zone.local_micros_to_utc(local);
                         } else {
                           overflow = __builtin_add_overflow(v, delta, &v);
                         }
                         out.values<std::int64_t>()[i] = v;
                         break;
                       }
                       default: {
                         v = a[2].column->values<std::int64_t>()[i];
                         if (overflow) break;
                         if (months) v = add_months_to_micros(v, delta);
                         else overflow = __builtin_add_overflow(v, delta, &v);
                         out.values<std::int64_t>()[i] = v;
                       }
                     }
                     if (overflow) out.set_valid(i, false);
                   }
                 };
                 return f;
               });
}

// The unit TIMESTAMPDIFF counts for `u`, as Flink 2.3 counts it (checked on Flink): the
// day-of units count days, EPOCH seconds, ISOYEAR and DECADE years; CENTURY and
// MILLENNIUM count their own months (unit_months). NANOSECOND stays unsupported (Flink
// gives the seconds times 10^9 as a BIGINT).
TimeUnit timestampdiff_unit(TimeUnit u) {
  switch (u) {
    case TimeUnit::kDoy:
    case TimeUnit::kDow:
    case TimeUnit::kIsoDow: return TimeUnit::kDay;
    case TimeUnit::kEpoch: return TimeUnit::kSecond;
    case TimeUnit::kIsoYear:
    case TimeUnit::kDecade: return TimeUnit::kYear;
    default: return u;
  }
}
std::int64_t timestampdiff_months(TimeUnit u) {
  return u == TimeUnit::kCentury ? 1200 : u == TimeUnit::kMillennium ? 12000 : unit_months(u);
}

// TIMESTAMPDIFF(unit, a, b): whole units from a to b as INT (Flink: months through
// subtractMonths, smaller units by dividing the millisecond difference, toward zero).
void add_timestampdiff(FunctionRegistry& r) {
  r.add_scalar("TIMESTAMPDIFF", "TIMESTAMPDIFF(STRING unit, DATE|TIMESTAMP|TIMESTAMP_LTZ, DATE|TIMESTAMP|TIMESTAMP_LTZ)",
               [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
                 if (args.size() != 3 || !args[0].is_character_string()) return std::nullopt;
                 for (std::size_t k = 1; k < 3; ++k)
                   if (!is_datetime(args[k]) || args[k].is(TypeKind::kTime)) return std::nullopt;
                 bool ltz1 = args[1].is(TypeKind::kTimestampLtz), ltz2 = args[2].is(TypeKind::kTimestampLtz);
                 if (ltz1 != ltz2) return std::nullopt;  // Flink requires both or neither with a zone
                 ResolvedFunction f;
                 f.name = "TIMESTAMPDIFF";
                 f.arg_types = {args[0], args[1], args[2]};
                 f.return_type = LogicalType::int_type().with_nullable(args[1].nullable() || args[2].nullable());
                 TypeKind k1 = args[1].kind(), k2 = args[2].kind();
                 f.prepare = [](std::span<const LogicalType>, std::span<const std::optional<Value>> c) {
                   TimeUnit u = timestampdiff_unit(unit_argument("TIMESTAMPDIFF", c, 0));
                   if (timestampdiff_months(u) == 0 && unit_micros(u) == 0)
                     throw SqlTypeError(fmt::format("TIMESTAMPDIFF: unit {} is not supported", unit_name(u)));
                   return std::shared_ptr<const void>(std::make_shared<UnitState>(UnitState{u}));
                 };
                 f.kernel = [k1, k2](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
                   TimeUnit u = static_cast<const UnitState*>(ctx.state)->unit;
                   std::int64_t months = timestampdiff_months(u), step = unit_micros(u);
                   // LTZ pairs compare instants; others compare wall clocks.
                   auto micros = [&](TypeKind k, const Column& c, std::size_t i) {
                     return k == TypeKind::kDate ? std::int64_t{c.values<std::int32_t>()[i]} * kMicrosPerDay
                                                 : c.values<std::int64_t>()[i];
                   };
                   auto* o = out.values<std::int32_t>();
                   for (std::size_t i = 0; i < ctx.rows; ++i) {
                     if (!out.is_valid(i)) continue;
                     std::int64_t from = micros(k1, *a[1].column, i), to = micros(k2, *a[2].column, i);
                     std::int64_t v;
                     if (months) {
                       v = subtract_months_millis(floor_div(to, kMicrosPerMilli), floor_div(from, kMicrosPerMilli)) / months;
                     } else if (step < kMicrosPerMilli) {
                       v = to - from;
                     } else {
                       v = (floor_div(to, kMicrosPerMilli) - floor_div(from, kMicrosPerMilli)) / (step / kMicrosPerMilli);
                     }
                     o[i] = static_cast<std::int32_t>(v);
                   }
                 };
                 return f;
               });
}

// FLOOR/CEIL(x TO unit) on the wall clock; WEEK starts on Sunday (Calcite's julianDateFloor).
std::int64_t floor_ceil_micros(std::int64_t micros, TimeUnit u, bool ceil) {
  std::int64_t step = unit_micros(u);
  if (u != TimeUnit::kWeek && step != 0) {
    std::int64_t f = floor_div(micros, step) * step;
    return ceil && f != micros ? f + step : f;
  }
  std::int64_t days = floor_div(micros, kMicrosPerDay);
  bool exact_day = days * kMicrosPerDay == micros;
  std::int64_t fd;
  if (u == TimeUnit::kWeek) {
    fd = days - floor_mod(days + 4, 7);
  } else {
    CivilDate d = civil_from_days(days);
    int month = u == TimeUnit::kYear ? 1 : u == TimeUnit::kQuarter ? (d.month - 1) / 3 * 3 + 1 : d.month;
    fd = days_from_civil(d.year, month, 1);
  }
  if (ceil && !(exact_day && fd == days)) {
    fd = u == TimeUnit::kWeek ? fd + 7 : add_months_to_days(fd, unit_months(u));
  }
  return fd * kMicrosPerDay;
}

void add_floor_ceil_to(FunctionRegistry& r, const char* name, bool ceil) {
  std::string n = name;
  r.add_scalar(name, fmt::format("{}(DATE|TIME|TIMESTAMP|TIMESTAMP_LTZ, STRING unit)", name),
               [n, ceil](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
                 if (args.size() != 2 || !is_datetime(args[0]) || !args[1].is_character_string()) return std::nullopt;
                 ResolvedFunction f;
                 f.name = n;
                 f.arg_types = {args[0], args[1]};
                 f.return_type = args[0];
                 TypeKind k = args[0].kind();
                 f.prepare = [n, k](std::span<const LogicalType> t, std::span<const std::optional<Value>> c) {
                   TimeUnit u = unit_argument(n, c, 1);
                   bool ok = unit_months(u) != 0 || (unit_micros(u) >= kMicrosPerMilli);
                   if (k == TypeKind::kTime) ok = unit_months(u) == 0 && unit_micros(u) < kMicrosPerDay && ok;
                   if (!ok) throw SqlTypeError(fmt::format("{}: unit {} is not supported for {}", n, unit_name(u), t[0].to_string()));
                   return std::shared_ptr<const void>(std::make_shared<UnitState>(UnitState{u}));
                 };
                 f.kernel = [k, ceil](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
                   TimeUnit u = static_cast<const UnitState*>(ctx.state)->unit;
                   const Column& c = *a[0].column;
                   const TimeZone& zone = *ctx.session->time_zone;
                   for (std::size_t i = 0; i < ctx.rows; ++i) {
                     if (!out.is_valid(i)) continue;
                     switch (k) {
                       case TypeKind::kDate:
                         out.values<std::int32_t>()[i] = static_cast<std::int32_t>(
                             floor_ceil_micros(std::int64_t{c.values<std::int32_t>()[i]} * kMicrosPerDay, u, ceil) / kMicrosPerDay);
                         break;
                       case TypeKind::kTime:
                         out.values<std::int32_t>()[i] = static_cast<std::int32_t>(floor_mod(
                             floor_ceil_micros(std::int64_t{c.values<std::int32_t>()[i]} * kMicrosPerMilli, u, ceil) / kMicrosPerMilli,
                             kMillisPerDay));
                         break;
                       case TypeKind::kTimestampLtz:
                         out.values<std::int64_t>()[i] = zone.local_micros_to_utc(
                             floor_ceil_micros(zone.utc_micros_to_local(c.values<std::int64_t>()[i]), u, ceil));
                         break;
                       default: out.values<std::int64_t>()[i] = floor_ceil_micros(c.values<std::int64_t>()[i], u, ceil);
                     }
                   }
                 };
                 return f;
               });
}

// A non-deterministic function of no arguments, evaluated once per batch.
template <class T, class F>
void add_clock(FunctionRegistry& r, const char* name, LogicalType result, F value) {
  std::string n = name;
  r.add_scalar(name, fmt::format("{}()", name), [n, result, value](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (!args.empty()) return std::nullopt;
    ResolvedFunction f;
    f.name = n;
    f.return_type = result.not_null();
    f.deterministic = false;
    f.null_policy = NullPolicy::kCustom;
    f.kernel = [value](KernelContext& ctx, std::span<const KernelArg>, Column& out) {
      T v = static_cast<T>(value(*ctx.session, now_micros(*ctx.session)));
      auto* o = out.values<T>();
      for (std::size_t i = 0; i < ctx.rows; ++i) o[i] = v;
      out.set_all_valid();
    };
    return f;
  });
}

std::int64_t millis_floor(std::int64_t micros) { return floor_div(micros, kMicrosPerMilli) * kMicrosPerMilli; }

void add_clock_functions(FunctionRegistry& r) {
  auto instant = [](const SessionContext&, std::int64_t now) { return millis_floor(now); };
  auto local = [](const SessionContext& s, std::int64_t now) { return s.time_zone->utc_micros_to_local(millis_floor(now)); };
  auto date = [](const SessionContext& s, std::int64_t now) { return floor_div(s.time_zone->utc_micros_to_local(now), kMicrosPerDay); };
  auto time = [](const SessionContext& s, std::int64_t now) {  // TIME(0): whole seconds
    return floor_mod(floor_div(s.time_zone->utc_micros_to_local(now), kMicrosPerSecond), 86400) * 1000;
  };
  for (const char* n : {"CURRENT_TIMESTAMP", "NOW", "PROCTIME", "CURRENT_ROW_TIMESTAMP"})
    add_clock<std::int64_t>(r, n, LogicalType::timestamp_ltz(3), instant);
  add_clock<std::int64_t>(r, "LOCALTIMESTAMP", LogicalType::timestamp(3), local);
  add_clock<std::int32_t>(r, "CURRENT_DATE", LogicalType::date(), date);
  add_clock<std::int32_t>(r, "CURRENT_TIME", LogicalType::time(0), time);
  add_clock<std::int32_t>(r, "LOCALTIME", LogicalType::time(0), time);
  add_clock<std::int64_t>(r, "UNIX_TIMESTAMP", LogicalType::bigint(),
                          [](const SessionContext&, std::int64_t now) { return floor_div(now, kMicrosPerSecond); });
  // CURRENT_WATERMARK(rowtime): the operator's watermark in the rowtime's type, NULL
  // before the first watermark.
  r.add_scalar("CURRENT_WATERMARK", "CURRENT_WATERMARK(TIMESTAMP|TIMESTAMP_LTZ)",
               [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
                 if (args.size() != 1 || !(args[0].is(TypeKind::kTimestamp) || args[0].is(TypeKind::kTimestampLtz)))
                   return std::nullopt;
                 ResolvedFunction f;
                 f.name = "CURRENT_WATERMARK";
                 f.arg_types = {args[0]};
                 // Flink: the rowtime's type with precision 3.
                 f.return_type = args[0].is(TypeKind::kTimestamp) ? LogicalType::timestamp(3) : LogicalType::timestamp_ltz(3);
                 f.deterministic = false;
                 f.null_policy = NullPolicy::kCustom;
                 f.kernel = [](KernelContext& ctx, std::span<const KernelArg>, Column& out) {
                   const auto& bt = ctx.session->batch_time;
                   bool has = bt && bt->current_watermark_millis;
                   std::int64_t v = has ? *bt->current_watermark_millis * kMicrosPerMilli : 0;
                   auto* o = out.values<std::int64_t>();
                   for (std::size_t i = 0; i < ctx.rows; ++i) o[i] = v;
                   if (has) out.set_all_valid();
                   else std::fill(out.validity(), out.validity() + out.validity_words(), 0);
                 };
                 return f;
               });
}

}  // namespace

void register_temporal_functions(FunctionRegistry& r) {
  add_extract(r);
  add_timestampadd(r);
  add_timestampdiff(r);
  add_floor_ceil_to(r, "FLOOR", false);
  add_floor_ceil_to(r, "CEIL", true);
  add_floor_ceil_to(r, "CEILING", true);
  add_clock_functions(r);
}

}  // namespace clink::sql
