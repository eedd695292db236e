// STDDEV_POP, STDDEV_SAMP, VAR_POP, VAR_SAMP and their aliases STDDEV (= STDDEV_SAMP)
// and VARIANCE (= VAR_SAMP), as Flink computes them: its AggregateReduceFunctionsRule
// rewrites each into the internal WELFORD_M2 aggregate and COUNT,
//   VAR_POP = M2 / n,  VAR_SAMP = M2 / (n - 1) (NULL when n = 1),  STDDEV_* = POWER(VAR_*, 0.5),
// in DOUBLE, then CAST to the result type, which is AVG's (integers keep their type,
// DECIMAL(p, s) -> DECIMAL(38, max(6, s)), FLOAT/DOUBLE keep theirs). M2 follows Welford's
// online algorithm with Flink's update, retraction and merge formulas (so results agree to
// the last bit), and is NULL for an empty group or when retractions made it negative.
// The accumulator is 24 trivially copyable bytes: no allocation per record.
// Over an OVER window of an integer, FLOAT or DOUBLE argument Flink 2.3 computes them
// otherwise: Calcite's convertlet expands the call into window sums in the argument's
// arithmetic, VAR_* = (SUM(x * x) - SUM(x) * SUM(x) / COUNT(x)) / (COUNT(x) [- 1]) (integer
// divisions for integers), STDDEV_* = POWER(VAR_*, 0.5), cast back (STDDEV_SAMP of the INTs
// 1 and 2 is 1, not 0). The binder names those calls $OVER_<function>.
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>

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

// The sums of an OVER window's expansion, in the argument's arithmetic: T is uint64_t for
// integers (wrapping as Flink's), float for FLOAT, double for DOUBLE.
template <class T>
struct SumsAcc {
  std::int64_t n;
  T sum;
  T sum_sq;
};

template <class T>
T value_as(const Column& c, std::size_t i) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(as_double(c, i));
  } else {
    switch (c.type().kind()) {
      case TypeKind::kTinyInt: return static_cast<T>(c.values<std::int8_t>()[i]);
      case TypeKind::kSmallInt: return static_cast<T>(c.values<std::int16_t>()[i]);
      case TypeKind::kInt: return static_cast<T>(c.values<std::int32_t>()[i]);
      default: return static_cast<T>(c.values<std::int64_t>()[i]);
    }
  }
}

template <class T>
class OverMomentAggregate final : public PodAggregate<SumsAcc<T>> {
  using Base = PodAggregate<SumsAcc<T>>;
  using Base::A;

 public:
  OverMomentAggregate(LogicalType result, Moment moment) : Base(std::move(result)), moment_(moment) {}

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
    a.sum = static_cast<T>(a.sum + o.sum);
    a.sum_sq = static_cast<T>(a.sum_sq + o.sum_sq);
  }
  void get_value(const void* acc, Column& out) const override {
    const auto& a = A(acc);
    const bool sample = moment_ == Moment::kVarSamp || moment_ == Moment::kStddevSamp;
    if (a.n <= 0 || (sample && a.n == 1)) return out.append_null();
    double var;
    if constexpr (std::is_floating_point_v<T>) {
      const T n = static_cast<T>(a.n);
      var = static_cast<T>(static_cast<T>(a.sum_sq - static_cast<T>(a.sum * a.sum / n)) / (sample ? n - 1 : n));
    } else {
      const auto sum = static_cast<std::int64_t>(a.sum);
      const auto diff = static_cast<std::int64_t>(a.sum_sq - static_cast<std::uint64_t>(sum * sum / a.n));
      const std::int64_t v = diff / (sample ? a.n - 1 : a.n);
      if (moment_ == Moment::kVarPop || moment_ == Moment::kVarSamp) {
        switch (out.type().kind()) {  // Java's narrowing of a long
          case TypeKind::kTinyInt: return out.append<std::int8_t>(static_cast<std::int8_t>(v));
          case TypeKind::kSmallInt: return out.append<std::int16_t>(static_cast<std::int16_t>(v));
          case TypeKind::kInt: return out.append<std::int32_t>(static_cast<std::int32_t>(v));
          default: return out.append<std::int64_t>(v);
        }
      }
      var = static_cast<double>(v);
    }
    const double r = moment_ == Moment::kStddevPop || moment_ == Moment::kStddevSamp ? std::pow(var, 0.5) : var;
    switch (out.type().kind()) {
      case TypeKind::kTinyInt: return out.append<std::int8_t>(java_narrow<std::int8_t>(r));
      case TypeKind::kSmallInt: return out.append<std::int16_t>(java_narrow<std::int16_t>(r));
      case TypeKind::kInt: return out.append<std::int32_t>(java_narrow<std::int32_t>(r));
      case TypeKind::kBigInt: return out.append<std::int64_t>(java_narrow<std::int64_t>(r));
      case TypeKind::kFloat: return out.append<float>(static_cast<float>(r));
      default: return out.append<double>(r);
    }
  }

 private:
  void add(void* const* accs, const Column& c, std::span<const std::uint32_t> rows, int sign) const {
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (accs[k] == nullptr || c.is_null(rows[k])) continue;
      auto& a = A(accs[k]);
      const T v = value_as<T>(c, rows[k]);
      const T sq = static_cast<T>(v * v);
      a.n += sign;
      a.sum = static_cast<T>(sign > 0 ? a.sum + v : a.sum - v);
      a.sum_sq = static_cast<T>(sign > 0 ? a.sum_sq + sq : a.sum_sq - sq);
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
    r.add_aggregate(std::string("$OVER_") + e.name, std::string(e.name) + "(INTEGER | FLOAT | DOUBLE) OVER (...)",
                    [moment](std::span<const LogicalType> args, const AggregateOptions& o) -> std::unique_ptr<AggregateFunction> {
                      if (args.size() != 1) return nullptr;
                      const LogicalType result = avg_result_type(args[0]);
                      std::unique_ptr<AggregateFunction> a;
                      if (args[0].is_integer()) a = std::make_unique<OverMomentAggregate<std::uint64_t>>(result, moment);
                      else if (args[0].is(TypeKind::kFloat)) a = std::make_unique<OverMomentAggregate<float>>(result, moment);
                      else if (args[0].is(TypeKind::kDouble)) a = std::make_unique<OverMomentAggregate<double>>(result, moment);
                      else return nullptr;
                      if (!o.distinct) return a;
                      return make_distinct_aggregate(std::move(a), args);
                    });
  }
}

}  // namespace clink::sql
