// STDDEV_POP, STDDEV_SAMP, VAR_POP, VAR_SAMP and their aliases STDDEV (= STDDEV_SAMP)
// and VARIANCE (= VAR_SAMP), as Flink computes them: its AggregateReduceFunctionsRule
// rewrites each into the internal WELFORD_M2 aggregate and COUNT,
//   VAR_POP = M2 / n,  VAR_SAMP = M2 / (n - 1) (NULL when n = 1),  STDDEV_* = POWER(VAR_*, 0.5),
// in DOUBLE, then CAST to the result type, which is AVG's (integers keep their type,
// DECIMAL(p, s) -> DECIMAL(38, max(6, s)), FLOAT/DOUBLE keep theirs). M2 follows Welford's
// online algorithm with Flink's update, retraction and merge formulas (so results agree to
// the last bit), and is NULL for an empty group or when retractions made it negative.
// The accumulator is 24 trivially copyable bytes: no allocation per record.
// Over an OVER window of an integer argument Flink 2.3 computes them otherwise: Calcite's
// convertlet expands the call into window sums in the argument's integer arithmetic,
//   VAR_* = (SUM(x * x) - SUM(x) * SUM(x) / COUNT(x)) / (COUNT(x) [- 1]),
// with integer divisions, STDDEV_* = POWER(VAR_*, 0.5) cast back (STDDEV_SAMP of 1 and 2 is
// 1, not 0). The binder names those calls $OVER_<function>; the sums add in 64 bits.
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>

#include "aggregate_support.hpp"
#include "clink/sql/common/decimal.hpp"
#include "clink/sql/function/function_registry.hpp"

namespace clink::sql {

namespace {

using aggregate_support::PodAggregate;

struct WelfordAcc {
  std::int64_t n;
  double mean;
  double m2;
};

enum class Moment { kVarPop, kVarSamp, kStddevPop, kStddevSamp };

double as_double(const Column& c, std::size_t i) {
  switch (c.type().kind()) {
    case TypeKind::kTinyInt: return c.values<std::int8_t>()[i];
    case TypeKind::kSmallInt: return c.values<std::int16_t>()[i];
    case TypeKind::kInt: return c.values<std::int32_t>()[i];
    case TypeKind::kBigInt: return static_cast<double>(c.values<std::int64_t>()[i]);
    case TypeKind::kFloat: return c.values<float>()[i];
    case TypeKind::kDouble: return c.values<double>()[i];
    default: return Decimal128::to_double(c.values<Int128>()[i], c.type().scale());
  }
}

// Java's narrowing of a double (Flink's CAST(DOUBLE AS <integer>)): NaN is 0, values
// beyond the range saturate at int/long; TINYINT and SMALLINT then wrap from int.
template <class T>
T java_narrow(double v) {
  if (std::isnan(v)) return 0;
  if constexpr (sizeof(T) == 8) {
    if (v >= 9223372036854775807.0) return std::numeric_limits<std::int64_t>::max();
    if (v <= -9223372036854775808.0) return std::numeric_limits<std::int64_t>::min();
    return static_cast<T>(v);
  } else {
    std::int32_t i;
    if (v >= 2147483647.0) i = std::numeric_limits<std::int32_t>::max();
    else if (v <= -2147483648.0) i = std::numeric_limits<std::int32_t>::min();
    else i = static_cast<std::int32_t>(v);
    return static_cast<T>(i);
  }
}

class WelfordAggregate final : public PodAggregate<WelfordAcc> {
 public:
  WelfordAggregate(LogicalType result, Moment moment) : PodAggregate(std::move(result)), moment_(moment) {}

  void accumulate(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    const Column& c = *args[0];
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (accs[k] == nullptr || c.is_null(rows[k])) continue;
      auto& a = A(accs[k]);
      a.n += 1;
      if (a.n <= 0) continue;  // unmatched retractions came first: count only, as Flink
      const double v = as_double(c, rows[k]);
      const double delta = v - a.mean;
      a.mean += delta / static_cast<double>(a.n);
      a.m2 += delta * (v - a.mean);
    }
  }
  void retract(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    const Column& c = *args[0];
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (accs[k] == nullptr || c.is_null(rows[k])) continue;
      auto& a = A(accs[k]);
      a.n -= 1;
      if (a.n <= 0) {
        if (a.n == 0) a.mean = a.m2 = 0.0;
        continue;
      }
      const double v = as_double(c, rows[k]);
      const double delta2 = v - a.mean;
      a.mean -= delta2 / static_cast<double>(a.n);
      a.m2 -= (v - a.mean) * delta2;
    }
  }
  void merge(void* acc, const void* other) const override {
    auto& a = A(acc);
    const auto& o = A(other);
    if (o.n <= 0) {
      a.n += o.n;  // Flink adds the invalid (negative) counts after the valid ones
    } else if (a.n == 0) {
      a = o;
    } else {
      const std::int64_t n = a.n + o.n;
      const double delta = o.mean - a.mean;
      const double mean = a.mean + static_cast<double>(o.n) / static_cast<double>(n) * delta;
      const double m2 =
          a.m2 + o.m2 + static_cast<double>(a.n) * static_cast<double>(o.n) / static_cast<double>(n) * delta * delta;
      a = WelfordAcc{n, mean, m2};
    }
    if (a.n <= 0) a.mean = a.m2 = 0.0;
  }
  void get_value(const void* acc, Column& out) const override {
    const auto& a = A(acc);
    if (a.n <= 0 || a.m2 < 0) return out.append_null();
    const bool sample = moment_ == Moment::kVarSamp || moment_ == Moment::kStddevSamp;
    if (sample && a.n == 1) return out.append_null();
    double v = a.m2 / static_cast<double>(sample ? a.n - 1 : a.n);
    if (moment_ == Moment::kStddevPop || moment_ == Moment::kStddevSamp) v = std::pow(v, 0.5);
    switch (out.type().kind()) {
      case TypeKind::kTinyInt: return out.append<std::int8_t>(java_narrow<std::int8_t>(v));
      case TypeKind::kSmallInt: return out.append<std::int16_t>(java_narrow<std::int16_t>(v));
      case TypeKind::kInt: return out.append<std::int32_t>(java_narrow<std::int32_t>(v));
      case TypeKind::kBigInt: return out.append<std::int64_t>(java_narrow<std::int64_t>(v));
      case TypeKind::kFloat: return out.append<float>(static_cast<float>(v));
      case TypeKind::kDouble: return out.append<double>(v);
      default: {
        auto d = Decimal128::from_double(v, out.type().precision(), out.type().scale());
        d ? out.append<Int128>(*d) : out.append_null();
      }
    }
  }

 private:
  Moment moment_;
};

struct SumsAcc {
  std::int64_t n;
  std::uint64_t sum;  // unsigned: integer overflow wraps, as Flink's
  std::uint64_t sum_sq;
};

std::int64_t as_int64(const Column& c, std::size_t i) {
  switch (c.type().kind()) {
    case TypeKind::kTinyInt: return c.values<std::int8_t>()[i];
    case TypeKind::kSmallInt: return c.values<std::int16_t>()[i];
    case TypeKind::kInt: return c.values<std::int32_t>()[i];
    default: return c.values<std::int64_t>()[i];
  }
}

class OverIntegerMomentAggregate final : public PodAggregate<SumsAcc> {
 public:
  OverIntegerMomentAggregate(LogicalType result, Moment moment) : PodAggregate(std::move(result)), moment_(moment) {}

  void accumulate(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    add(accs, *args[0], rows, 1);
  }
  void retract(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    add(accs, *args[0], rows, -1);
  }
  void merge(void* acc, const void* other) const override {
    auto& a = A(acc);
    const auto& o = A(other);
    a.n += o.n;
    a.sum += o.sum;
    a.sum_sq += o.sum_sq;
  }
  void get_value(const void* acc, Column& out) const override {
    const auto& a = A(acc);
    const bool sample = moment_ == Moment::kVarSamp || moment_ == Moment::kStddevSamp;
    if (a.n <= 0 || (sample && a.n == 1)) return out.append_null();
    const auto sum = static_cast<std::int64_t>(a.sum);
    const std::int64_t diff = static_cast<std::int64_t>(a.sum_sq - static_cast<std::uint64_t>(sum * sum / a.n));
    const std::int64_t var = diff / (sample ? a.n - 1 : a.n);
    if (moment_ == Moment::kStddevPop || moment_ == Moment::kStddevSamp) {
      const double v = std::pow(static_cast<double>(var), 0.5);
      switch (out.type().kind()) {
        case TypeKind::kTinyInt: return out.append<std::int8_t>(java_narrow<std::int8_t>(v));
        case TypeKind::kSmallInt: return out.append<std::int16_t>(java_narrow<std::int16_t>(v));
        case TypeKind::kInt: return out.append<std::int32_t>(java_narrow<std::int32_t>(v));
        default: return out.append<std::int64_t>(java_narrow<std::int64_t>(v));
      }
    }
    switch (out.type().kind()) {  // Java's narrowing of a long
      case TypeKind::kTinyInt: return out.append<std::int8_t>(static_cast<std::int8_t>(var));
      case TypeKind::kSmallInt: return out.append<std::int16_t>(static_cast<std::int16_t>(var));
      case TypeKind::kInt: return out.append<std::int32_t>(static_cast<std::int32_t>(var));
      default: return out.append<std::int64_t>(var);
    }
  }

 private:
  void add(void* const* accs, const Column& c, std::span<const std::uint32_t> rows, int sign) const {
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (accs[k] == nullptr || c.is_null(rows[k])) continue;
      auto& a = A(accs[k]);
      const auto v = static_cast<std::uint64_t>(as_int64(c, rows[k]));
      a.n += sign;
      a.sum += sign > 0 ? v : -v;
      a.sum_sq += sign > 0 ? v * v : -(v * v);
    }
  }
  Moment moment_;
};

}  // namespace

void register_statistical_aggregate_functions(FunctionRegistry& r) {
  struct Entry {
    const char* name;
    Moment moment;
  };
  static constexpr Entry kEntries[] = {
      {"STDDEV_POP", Moment::kStddevPop}, {"STDDEV_SAMP", Moment::kStddevSamp}, {"STDDEV", Moment::kStddevSamp},
      {"VAR_POP", Moment::kVarPop},       {"VAR_SAMP", Moment::kVarSamp},       {"VARIANCE", Moment::kVarSamp},
  };
  for (const Entry& e : kEntries) {
    const Moment moment = e.moment;
    r.add_aggregate(e.name, std::string(e.name) + "([DISTINCT] NUMERIC)",
                    [moment](std::span<const LogicalType> args, const AggregateOptions& o) -> std::unique_ptr<AggregateFunction> {
                      if (args.size() != 1 || !args[0].is_numeric()) return nullptr;
                      std::unique_ptr<AggregateFunction> a = std::make_unique<WelfordAggregate>(avg_result_type(args[0]), moment);
                      if (!o.distinct) return a;
                      return make_distinct_aggregate(std::move(a), args);
                    });
    r.add_aggregate(std::string("$OVER_") + e.name, std::string(e.name) + "(INTEGER) OVER (...)",
                    [moment](std::span<const LogicalType> args, const AggregateOptions& o) -> std::unique_ptr<AggregateFunction> {
                      if (args.size() != 1 || !args[0].is_integer()) return nullptr;
                      std::unique_ptr<AggregateFunction> a =
                          std::make_unique<OverIntegerMomentAggregate>(avg_result_type(args[0]), moment);
                      if (!o.distinct) return a;
                      return make_distinct_aggregate(std::move(a), args);
                    });
  }
}

}  // namespace clink::sql
