// COUNT, COUNT(*), SUM, AVG, MIN, MAX and DISTINCT over any of them.
// SUM and AVG accumulate exactly (128-bit for integers and DECIMAL) with a count of
// non-NULL inputs, so retraction is exact and an empty group gives NULL. Integer overflow
// as Flink's (IntSumAggFunction and the others add in the result type, AvgAggFunction sums
// in BIGINT): SUM of TINYINT / SMALLINT / INT / BIGINT wraps in its own type, AVG of them
// divides the sum wrapped to BIGINT. Two's complement addition wraps the same in any order,
// so the exact sum, wrapped, is what Flink's running sum gives, retractions and merges
// included. $SUM / $AVG (the binder's names under SET 'clink.sql.arithmetic' = 'null') give
// NULL instead, the seed's numeric model. A DECIMAL SUM that does not fit is NULL (both).
// AVG of integers is an integer (truncated), as Flink. Flink's further aggregates live
// beside it: FIRST_VALUE / LAST_VALUE / LISTAGG / ARRAY_AGG in function_aggregates_value.cpp,
// the variances in function_aggregates_stats.cpp.
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "aggregate_support.hpp"
#include "clink/sql/common/column_key.hpp"
#include "clink/sql/common/decimal.hpp"
#include "clink/sql/function/aggregate.hpp"
#include "clink/sql/function/function_registry.hpp"

namespace clink::sql {

namespace {

using aggregate_support::get;
using aggregate_support::PodAggregate;
using aggregate_support::put;
using aggregate_support::ValueOrNone;

Int128 exact_at(const Column& c, std::size_t i) {
  switch (c.type().kind()) {
    case TypeKind::kTinyInt: return c.values<std::int8_t>()[i];
    case TypeKind::kSmallInt: return c.values<std::int16_t>()[i];
    case TypeKind::kInt: return c.values<std::int32_t>()[i];
    case TypeKind::kBigInt: return c.values<std::int64_t>()[i];
    default: return c.values<Int128>()[i];
  }
}
double approx_at(const Column& c, std::size_t i) {
  return c.type().is(TypeKind::kFloat) ? static_cast<double>(c.values<float>()[i]) : c.values<double>()[i];
}

// Two's complement wrap of an exact integer to `bits` (Java's narrowing of a long; the
// low 64 bits first, then the narrower type, modulo 2^bits as C++20 defines it).
Int128 wrap_to(Int128 v, int bits) {
  switch (bits) {
    case 8: return static_cast<std::int8_t>(static_cast<std::uint8_t>(static_cast<std::uint64_t>(v)));
    case 16: return static_cast<std::int16_t>(static_cast<std::uint16_t>(static_cast<std::uint64_t>(v)));
    case 32: return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(v)));
    default: return static_cast<std::int64_t>(static_cast<std::uint64_t>(v));
  }
}

int integer_bits(const LogicalType& t) {
  switch (t.kind()) {
    case TypeKind::kTinyInt: return 8;
    case TypeKind::kSmallInt: return 16;
    case TypeKind::kInt: return 32;
    case TypeKind::kBigInt: return 64;
    default: return 0;
  }
}

void append_exact(Int128 v, Column& out) {
  const LogicalType& t = out.type();
  auto in_range = [&](auto lo, auto hi) { return v >= static_cast<Int128>(lo) && v <= static_cast<Int128>(hi); };
  switch (t.kind()) {
    case TypeKind::kTinyInt: in_range(INT8_MIN, INT8_MAX) ? out.append<std::int8_t>(static_cast<std::int8_t>(v)) : out.append_null(); break;
    case TypeKind::kSmallInt: in_range(INT16_MIN, INT16_MAX) ? out.append<std::int16_t>(static_cast<std::int16_t>(v)) : out.append_null(); break;
    case TypeKind::kInt: in_range(INT32_MIN, INT32_MAX) ? out.append<std::int32_t>(static_cast<std::int32_t>(v)) : out.append_null(); break;
    case TypeKind::kBigInt: in_range(INT64_MIN, INT64_MAX) ? out.append<std::int64_t>(static_cast<std::int64_t>(v)) : out.append_null(); break;
    default: Decimal128::fits(v, t.precision()) ? out.append<Int128>(v) : out.append_null(); break;
  }
}

struct CountAcc {
  std::int64_t count;
};

class CountAggregate final : public PodAggregate<CountAcc> {
 public:
  explicit CountAggregate(bool star) : PodAggregate(LogicalType::bigint().not_null()), star_(star) {}
  void accumulate(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override { update(accs, args, rows, 1); }
  void retract(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override { update(accs, args, rows, -1); }
  void merge(void* acc, const void* other) const override { A(acc).count += A(other).count; }
  void get_value(const void* acc, Column& out) const override { out.append<std::int64_t>(A(acc).count); }

 private:
  void update(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows,
              std::int64_t d) const {
    if (star_) {
      for (std::size_t k = 0; k < rows.size(); ++k)
        if (accs[k] != nullptr) A(accs[k]).count += d;
      return;
    }
    for (std::size_t k = 0; k < rows.size(); ++k)
      if (accs[k] != nullptr && args[0]->is_valid(rows[k])) A(accs[k]).count += d;
  }
  bool star_;
};

struct ExactSumAcc {
  Int128 sum;
  std::int64_t count;
};
struct ApproxSumAcc {
  double sum;
  std::int64_t count;
};

// SUM and AVG share accumulators; `avg` picks the result.
class ExactSumAggregate final : public PodAggregate<ExactSumAcc> {
 public:
  // wrap: Flink's integer overflow (above); false: NULL on overflow.
  ExactSumAggregate(LogicalType result, int input_scale, bool avg, bool wrap)
      : PodAggregate(std::move(result)), input_scale_(input_scale), avg_(avg), wrap_(wrap) {}
  void accumulate(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    update(accs, *args[0], rows, false);
  }
  void retract(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    update(accs, *args[0], rows, true);
  }
  void merge(void* acc, const void* other) const override {
    A(acc).sum += A(other).sum;
    A(acc).count += A(other).count;
  }
  void get_value(const void* acc, Column& out) const override {
    const auto& a = A(acc);
    if (a.count == 0) {
      out.append_null();
      return;
    }
    const int bits = wrap_ ? integer_bits(out.type()) : 0;
    if (!avg_) {
      append_exact(bits ? wrap_to(a.sum, bits) : a.sum, out);
    } else if (out.type().is(TypeKind::kDecimal)) {
      auto r = Decimal128::divide(a.sum, input_scale_, a.count, 0, out.type().precision(), out.type().scale());
      r ? out.append<Int128>(*r) : out.append_null();
    } else {
      const Int128 sum = bits ? wrap_to(a.sum, 64) : a.sum;
      append_exact(sum / a.count, out);  // truncates toward zero, like Java
    }
  }

 private:
  void update(void* const* accs, const Column& c, std::span<const std::uint32_t> rows, bool negate) const {
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (accs[k] == nullptr || c.is_null(rows[k])) continue;
      Int128 v = exact_at(c, rows[k]);
      A(accs[k]).sum += negate ? -v : v;
      A(accs[k]).count += negate ? -1 : 1;
    }
  }
  int input_scale_;
  bool avg_;
  bool wrap_;
};

class ApproxSumAggregate final : public PodAggregate<ApproxSumAcc> {
 public:
  ApproxSumAggregate(LogicalType result, bool avg) : PodAggregate(std::move(result)), avg_(avg) {}
  void accumulate(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    update(accs, *args[0], rows, 1);
  }
  void retract(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    update(accs, *args[0], rows, -1);
  }
  void merge(void* acc, const void* other) const override {
    A(acc).sum += A(other).sum;
    A(acc).count += A(other).count;
  }
  void get_value(const void* acc, Column& out) const override {
    const auto& a = A(acc);
    if (a.count == 0) {
      out.append_null();
      return;
    }
    double v = avg_ ? a.sum / static_cast<double>(a.count) : a.sum;
    if (out.type().is(TypeKind::kFloat)) out.append<float>(static_cast<float>(v));
    else out.append<double>(v);
  }

 private:
  void update(void* const* accs, const Column& c, std::span<const std::uint32_t> rows, int sign) const {
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (accs[k] == nullptr || c.is_null(rows[k])) continue;
      A(accs[k]).sum += sign * approx_at(c, rows[k]);
      A(accs[k]).count += sign;
    }
  }
  bool avg_;
};

// Non-retracting MIN/MAX over a fixed-width type T.
template <class T>
class FixedMinMax final : public PodAggregate<ValueOrNone<T>> {
  using Base = PodAggregate<ValueOrNone<T>>;

 public:
  FixedMinMax(LogicalType t, bool is_max) : Base(std::move(t)), max_(is_max) {}
  bool supports_retraction() const override { return false; }
  void accumulate(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    const T* v = args[0]->template values<T>();
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (accs[k] == nullptr || args[0]->is_null(rows[k])) continue;
      offer(Base::A(accs[k]), v[rows[k]]);
    }
  }
  void retract(void* const*, std::span<const Column* const>, std::span<const std::uint32_t>) const override {
    throw ClinkError(fmt::format("{} without retraction cannot retract a row", max_ ? "MAX" : "MIN"));
  }
  void merge(void* acc, const void* other) const override {
    if (Base::A(other).has) offer(Base::A(acc), Base::A(other).value);
  }
  void get_value(const void* acc, Column& out) const override {
    if (Base::A(acc).has) out.append<T>(Base::A(acc).value);
    else out.append_null();
  }

 private:
  void offer(ValueOrNone<T>& a, T v) const {
    if (!a.has || (max_ ? a.value < v : v < a.value)) {
      a.value = v;
      a.has = true;
    }
  }
  bool max_;
};

// The value multiset behind retracting MIN/MAX and DISTINCT: key bytes -> count.
using Multiset = std::map<std::string, std::int64_t>;

void serialize_multiset(const Multiset& m, std::string& out) {
  put<std::uint32_t>(out, static_cast<std::uint32_t>(m.size()));
  for (const auto& [k, n] : m) {
    put<std::uint32_t>(out, static_cast<std::uint32_t>(k.size()));
    out += k;
    put<std::int64_t>(out, n);
  }
}
void deserialize_multiset(Multiset& m, std::string_view& in) {
  m.clear();
  auto n = get<std::uint32_t>(in);
  for (std::uint32_t i = 0; i < n; ++i) {
    auto len = get<std::uint32_t>(in);
    if (in.size() < len) throw ClinkError("truncated aggregate state");
    std::string k(in.substr(0, len));
    in.remove_prefix(len);
    m[std::move(k)] = get<std::int64_t>(in);
  }
}

// MIN/MAX keys: order-preserving key bytes for numbers and temporals, raw bytes for
// strings (UTF-8 byte order is Flink's string order).
void sort_key(const Column& c, std::size_t i, std::string& out) {
  out.clear();
  if (c.layout() == PhysicalLayout::kVarLen) out.assign(c.string_at(i));
  else append_key_value(c, i, out);
}
void append_from_sort_key(const std::string& key, Column& out) {
  if (out.layout() == PhysicalLayout::kVarLen) {
    out.append_string(key);
    return;
  }
  std::string_view in = key;
  append_decoded_key_value(in, out);
}

// MIN/MAX with retraction (Flink's MinWithRetractAggFunction): a multiset of values.
class MultisetMinMax final : public AggregateFunction {
 public:
  MultisetMinMax(LogicalType t, bool is_max) : result_(std::move(t)), max_(is_max) {}
  const LogicalType& result_type() const override { return result_; }
  std::size_t accumulator_size() const override { return sizeof(Multiset); }
  bool trivially_copyable() const override { return false; }
  void create(void* acc) const override { new (acc) Multiset(); }
  void destroy(void* acc) const override { static_cast<Multiset*>(acc)->~Multiset(); }
  void accumulate(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    update(accs, *args[0], rows, 1);
  }
  void retract(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    update(accs, *args[0], rows, -1);
  }
  void merge(void* acc, const void* other) const override {
    auto& m = *static_cast<Multiset*>(acc);
    for (const auto& [k, n] : *static_cast<const Multiset*>(other))
      if ((m[k] += n) == 0) m.erase(k);
  }
  void get_value(const void* acc, Column& out) const override {
    const auto& m = *static_cast<const Multiset*>(acc);
    // Counts can go negative transiently (a retraction arriving first); skip those.
    auto pick = [&](auto begin, auto end) {
      for (auto it = begin; it != end; ++it)
        if (it->second > 0) return append_from_sort_key(it->first, out), true;
      return false;
    };
    bool found = max_ ? pick(m.rbegin(), m.rend()) : pick(m.begin(), m.end());
    if (!found) out.append_null();
  }
  void serialize(const void* acc, std::string& out) const override { serialize_multiset(*static_cast<const Multiset*>(acc), out); }
  void deserialize(void* acc, std::string_view& in) const override { deserialize_multiset(*static_cast<Multiset*>(acc), in); }

 private:
  void update(void* const* accs, const Column& c, std::span<const std::uint32_t> rows, std::int64_t d) const {
    std::string key;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (accs[k] == nullptr || c.is_null(rows[k])) continue;
      sort_key(c, rows[k], key);
      auto& m = *static_cast<Multiset*>(accs[k]);
      auto [it, created] = m.try_emplace(key, 0);
      if ((it->second += d) == 0) m.erase(it);
    }
  }
  LogicalType result_;
  bool max_;
};

// Non-retracting MIN/MAX over strings and bytes (Flink's MinAggFunction / MaxAggFunction
// on append-only input): the best value alone, not a multiset of every value (a short
// one, such as q16's MAX(DATE_FORMAT(...)), needs no allocation when a group is read).
class StringMinMax final : public AggregateFunction {
  struct Acc {
    bool has = false;
    std::string value;
  };
  static Acc& A(void* acc) { return *static_cast<Acc*>(acc); }
  static const Acc& A(const void* acc) { return *static_cast<const Acc*>(acc); }

 public:
  StringMinMax(LogicalType t, bool is_max) : result_(std::move(t)), max_(is_max) {}
  const LogicalType& result_type() const override { return result_; }
  std::size_t accumulator_size() const override { return sizeof(Acc); }
  bool trivially_copyable() const override { return false; }
  bool supports_retraction() const override { return false; }
  void create(void* acc) const override { new (acc) Acc(); }
  void destroy(void* acc) const override { A(acc).~Acc(); }
  void accumulate(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    for (std::size_t k = 0; k < rows.size(); ++k)
      if (accs[k] != nullptr && !args[0]->is_null(rows[k])) offer(A(accs[k]), args[0]->string_at(rows[k]));
  }
  void retract(void* const*, std::span<const Column* const>, std::span<const std::uint32_t>) const override {
    throw ClinkError(fmt::format("{} without retraction cannot retract a row", max_ ? "MAX" : "MIN"));
  }
  void merge(void* acc, const void* other) const override {
    if (A(other).has) offer(A(acc), A(other).value);
  }
  void get_value(const void* acc, Column& out) const override {
    if (A(acc).has) out.append_string(A(acc).value);
    else out.append_null();
  }
  void serialize(const void* acc, std::string& out) const override {
    put<std::uint8_t>(out, A(acc).has ? 1 : 0);
    if (!A(acc).has) return;
    put<std::uint32_t>(out, static_cast<std::uint32_t>(A(acc).value.size()));
    out += A(acc).value;
  }
  void deserialize(void* acc, std::string_view& in) const override {
    Acc& a = A(acc);
    a.has = get<std::uint8_t>(in) != 0;
    a.value.clear();
    if (!a.has) return;
    auto len = get<std::uint32_t>(in);
    if (in.size() < len) throw ClinkError("truncated aggregate state");
    a.value.assign(in.substr(0, len));
    in.remove_prefix(len);
  }

 private:
  // Bytewise (UTF-8 byte order is Flink's string order), as the multiset orders them.
  void offer(Acc& a, std::string_view v) const {
    if (!a.has || (max_ ? std::string_view(a.value) < v : v < std::string_view(a.value))) {
      a.value.assign(v);
      a.has = true;
    }
  }
  LogicalType result_;
  bool max_;
};

// DISTINCT over any aggregate and any number of arguments: a multiset of the argument
// tuples seen (their key bytes, one value after the other); a tuple reaches the inner
// aggregate when its count goes 0 -> 1 and is retracted from it when it goes 1 -> 0.
class DistinctAggregate final : public AggregateFunction {
 public:
  DistinctAggregate(std::unique_ptr<AggregateFunction> inner, std::vector<LogicalType> args)
      : inner_(std::move(inner)), args_(std::move(args)) {
    offset_ = (sizeof(Multiset) + kAccumulatorAlign - 1) / kAccumulatorAlign * kAccumulatorAlign;
  }
  const LogicalType& result_type() const override { return inner_->result_type(); }
  std::size_t accumulator_size() const override { return offset_ + inner_->accumulator_size(); }
  bool trivially_copyable() const override { return false; }
  bool supports_retraction() const override { return inner_->supports_retraction(); }
  bool supports_merge() const override { return inner_->supports_merge(); }
  std::vector<LogicalType> argument_types() const override { return inner_->argument_types(); }
  const AggregateFunction* distinct_inner() const override { return inner_.get(); }
  void create(void* acc) const override {
    new (acc) Multiset();
    inner_->create(inner(acc));
  }
  void destroy(void* acc) const override {
    inner_->destroy(inner(acc));
    static_cast<Multiset*>(acc)->~Multiset();
  }
  void accumulate(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    update(accs, args, rows, 1);
  }
  void retract(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows) const override {
    update(accs, args, rows, -1);
  }
  void merge(void* acc, const void* other) const override {
    auto& m = *static_cast<Multiset*>(acc);
    std::vector<Column> fresh, gone;
    for (const auto& t : args_) {
      fresh.emplace_back(t);
      gone.emplace_back(t);
    }
    for (const auto& [k, n] : *static_cast<const Multiset*>(other)) {
      auto [it, created] = m.try_emplace(k, 0);
      const std::int64_t before = it->second, after = before + n;
      if (before <= 0 && after > 0) decode_tuple(k, fresh);
      else if (before > 0 && after <= 0) decode_tuple(k, gone);
      if (after == 0) m.erase(it);
      else it->second = after;
    }
    forward(acc, fresh, false);
    forward(acc, gone, true);
  }
  void get_value(const void* acc, Column& out) const override { inner_->get_value(inner(acc), out); }
  void serialize(const void* acc, std::string& out) const override {
    serialize_multiset(*static_cast<const Multiset*>(acc), out);
    inner_->serialize(inner(acc), out);
  }
  void deserialize(void* acc, std::string_view& in) const override {
    deserialize_multiset(*static_cast<Multiset*>(acc), in);
    inner_->deserialize(inner(acc), in);
  }

 private:
  void* inner(void* acc) const { return static_cast<char*>(acc) + offset_; }
  const void* inner(const void* acc) const { return static_cast<const char*>(acc) + offset_; }
  static void decode_tuple(std::string_view key, std::vector<Column>& out) {
    for (auto& c : out) append_decoded_key_value(key, c);
  }
  void forward(void* acc, const std::vector<Column>& values, bool retract) const {
    const std::size_t n = values.empty() ? 0 : values[0].size();
    if (n == 0) return;
    std::vector<void*> accs(n, inner(acc));
    std::vector<std::uint32_t> rows(n);
    for (std::size_t i = 0; i < n; ++i) rows[i] = static_cast<std::uint32_t>(i);
    std::vector<const Column*> args;
    for (const auto& c : values) args.push_back(&c);
    if (retract) inner_->retract(accs.data(), args, rows);
    else inner_->accumulate(accs.data(), args, rows);
  }
  void update(void* const* accs, std::span<const Column* const> args, std::span<const std::uint32_t> rows,
              std::int64_t d) const {
    std::vector<void*> forwarded(rows.size(), nullptr);
    bool any = false;
    std::string key;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (accs[k] == nullptr) continue;
      const std::uint32_t r = rows[k];
      bool has_null = false;
      for (const Column* a : args) has_null = has_null || a->is_null(r);
      if (has_null) continue;
      key.clear();
      for (const Column* a : args) append_key_value(*a, r, key);
      auto& m = *static_cast<Multiset*>(accs[k]);
      auto [it, created] = m.try_emplace(key, 0);
      const std::int64_t before = it->second, after = before + d;
      if (after == 0) m.erase(it);
      else it->second = after;
      if ((d > 0 && before <= 0 && after > 0) || (d < 0 && before > 0 && after <= 0)) {
        forwarded[k] = inner(accs[k]);
        any = true;
      }
    }
    if (!any) return;
    if (d > 0) inner_->accumulate(forwarded.data(), args, rows);
    else inner_->retract(forwarded.data(), args, rows);
  }
  std::unique_ptr<AggregateFunction> inner_;
  std::vector<LogicalType> args_;
  std::size_t offset_;
};

std::unique_ptr<AggregateFunction> make_min_max(const LogicalType& t, bool is_max, bool retracting) {
  LogicalType r = t.with_nullable(true);
  if (t.is_nested() || t.is(TypeKind::kNull)) return nullptr;
  if (retracting) return std::make_unique<MultisetMinMax>(r, is_max);
  if (physical_layout(t.kind()) == PhysicalLayout::kVarLen) return std::make_unique<StringMinMax>(r, is_max);
  switch (t.kind()) {
    case TypeKind::kBoolean: return std::make_unique<FixedMinMax<std::uint8_t>>(r, is_max);
    case TypeKind::kTinyInt: return std::make_unique<FixedMinMax<std::int8_t>>(r, is_max);
    case TypeKind::kSmallInt: return std::make_unique<FixedMinMax<std::int16_t>>(r, is_max);
    case TypeKind::kInt:
    case TypeKind::kDate:
    case TypeKind::kTime:
    case TypeKind::kIntervalYearMonth: return std::make_unique<FixedMinMax<std::int32_t>>(r, is_max);
    case TypeKind::kFloat: return std::make_unique<FixedMinMax<float>>(r, is_max);
    case TypeKind::kDouble: return std::make_unique<FixedMinMax<double>>(r, is_max);
    case TypeKind::kDecimal: return std::make_unique<FixedMinMax<Int128>>(r, is_max);
    default: return std::make_unique<FixedMinMax<std::int64_t>>(r, is_max);
  }
}

std::unique_ptr<AggregateFunction> with_distinct(std::unique_ptr<AggregateFunction> a, std::span<const LogicalType> args,
                                                 const AggregateOptions& o) {
  if (!a || !o.distinct) return a;
  return make_distinct_aggregate(std::move(a), args);
}

}  // namespace

std::unique_ptr<AggregateFunction> make_distinct_aggregate(std::unique_ptr<AggregateFunction> inner,
                                                           std::span<const LogicalType> args) {
  if (!inner || args.empty()) return nullptr;
  for (const auto& t : args)
    if (t.is_nested()) return nullptr;
  return std::make_unique<DistinctAggregate>(std::move(inner), std::vector<LogicalType>(args.begin(), args.end()));
}

void register_single_value_aggregate(FunctionRegistry& r);  // function_aggregate_single_value.cpp

void register_aggregate_functions(FunctionRegistry& r) {
  r.add_aggregate("COUNT", "COUNT(*) | COUNT([DISTINCT] T)",
                  [](std::span<const LogicalType> args, const AggregateOptions& o) -> std::unique_ptr<AggregateFunction> {
                    if (args.empty()) return o.distinct ? nullptr : std::make_unique<CountAggregate>(true);
                    if (args.size() != 1) return nullptr;
                    return with_distinct(std::make_unique<CountAggregate>(false), args, o);
                  });
  // ROW_NUMBER() / RANK() / DENSE_RANK() over a non-time order without a Top-N filter run
  // as an OVER COUNT(*) (rank_plan.cpp, as Flink 2.3's plan); named so, EXPLAIN shows the
  // function the query called.
  for (const char* rank : {"ROW_NUMBER", "RANK", "DENSE_RANK"})
    r.add_aggregate(std::string("$OVER_") + rank, std::string(rank) + "() OVER (...)",
                    [](std::span<const LogicalType> args, const AggregateOptions& o) -> std::unique_ptr<AggregateFunction> {
                      if (!args.empty() || o.distinct) return nullptr;
                      return std::make_unique<CountAggregate>(true);
                    });
  for (bool avg : {false, true})
    for (bool wrap : {true, false}) {
      const std::string name = std::string(wrap ? "" : "$") + (avg ? "AVG" : "SUM");
      r.add_aggregate(name, name + "([DISTINCT] NUMERIC)",
                      [avg, wrap](std::span<const LogicalType> args, const AggregateOptions& o) -> std::unique_ptr<AggregateFunction> {
                        if (args.size() != 1 || !args[0].is_numeric()) return nullptr;
                        LogicalType result = avg ? avg_result_type(args[0]) : sum_result_type(args[0]);
                        std::unique_ptr<AggregateFunction> a;
                        if (args[0].is_approx_numeric()) a = std::make_unique<ApproxSumAggregate>(result, avg);
                        else a = std::make_unique<ExactSumAggregate>(result, args[0].is(TypeKind::kDecimal) ? args[0].scale() : 0, avg, wrap);
                        return with_distinct(std::move(a), args, o);
                      });
    }
  for (bool is_max : {false, true}) {
    r.add_aggregate(is_max ? "MAX" : "MIN", is_max ? "MAX(T)" : "MIN(T)",
                    [is_max](std::span<const LogicalType> args, const AggregateOptions& o) -> std::unique_ptr<AggregateFunction> {
                      if (args.size() != 1) return nullptr;
                      // DISTINCT does not change MIN/MAX.
                      return make_min_max(args[0], is_max, o.needs_retraction);
                    });
  }
  register_value_aggregate_functions(r);
  register_statistical_aggregate_functions(r);
  register_single_value_aggregate(r);
}

}  // namespace clink::sql
