#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "clink/sql/common/decimal.hpp"
#include "clink/sql/common/temporal.hpp"
#include "clink/sql/common/value_format.hpp"
#include "clink/sql/function/cast.hpp"
#include "kernel_util.hpp"

namespace clink::sql {

namespace {

using kernels::map_rows;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

[[noreturn]] void cast_failure(std::string_view text, const LogicalType& from, const LogicalType& to) {
  throw SqlRuntimeError(fmt::format("Cannot cast '{}' of type {} to {}", text, from.with_nullable(true).to_string(),
                                    to.with_nullable(true).to_string()));
}

// Java's (long) d: NaN -> 0, saturating.
std::int64_t java_double_to_long(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 9.2233720368547758e18) return std::numeric_limits<std::int64_t>::max();
  if (d <= -9.2233720368547758e18) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(d);
}
std::int32_t java_double_to_int(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 2147483647.0) return std::numeric_limits<std::int32_t>::max();
  if (d <= -2147483648.0) return std::numeric_limits<std::int32_t>::min();
  return static_cast<std::int32_t>(d);
}

// Flink's BinaryStringDataUtil.toLong: optional sign, digits, an optional fraction that is
// validated and dropped; nullopt when invalid or out of range.
std::optional<std::int64_t> parse_integer(std::string_view s, std::int64_t lo, std::int64_t hi) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  bool neg = false;
  std::size_t i = 0;
  if (s[0] == '+' || s[0] == '-') {
    neg = s[0] == '-';
    ++i;
  }
  if (i >= s.size()) return std::nullopt;
  Int128 v = 0;
  bool digits = false;
  for (; i < s.size() && s[i] != '.'; ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + (s[i] - '0');
    digits = true;
    if (v > static_cast<Int128>(hi) + 1) return std::nullopt;
  }
  if (i < s.size()) {
    for (++i; i < s.size(); ++i)
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
  }
  if (!digits) return std::nullopt;
  if (neg) v = -v;
  if (v < lo || v > hi) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

std::optional<double> parse_double(std::string_view s) {
  s = trim(s);
  if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (s == "Infinity" || s == "+Infinity") return std::numeric_limits<double>::infinity();
  if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  double d = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return d;
}

std::optional<bool> parse_bool(std::string_view s) {
  std::string l(trim(s));
  for (auto& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (l == "t" || l == "true" || l == "y" || l == "yes" || l == "1") return true;
  if (l == "f" || l == "false" || l == "n" || l == "no" || l == "0") return false;
  return std::nullopt;
}

// A number read from any numeric (or boolean) cell.
struct Num {
  enum Kind { kInt, kDouble, kDecimal } kind;
  std::int64_t i = 0;
  double d = 0;
  Int128 dec = 0;
  int scale = 0;
};

Num read_num(const Column& c, std::size_t r) {
  switch (c.type().kind()) {
    case TypeKind::kBoolean: return {Num::kInt, c.values<std::uint8_t>()[r] != 0 ? 1 : 0};
    case TypeKind::kTinyInt: return {Num::kInt, c.values<std::int8_t>()[r]};
    case TypeKind::kSmallInt: return {Num::kInt, c.values<std::int16_t>()[r]};
    case TypeKind::kInt: return {Num::kInt, c.values<std::int32_t>()[r]};
    case TypeKind::kBigInt: return {Num::kInt, c.values<std::int64_t>()[r]};
    case TypeKind::kFloat: return {Num::kDouble, 0, c.values<float>()[r]};
    case TypeKind::kDouble: return {Num::kDouble, 0, c.values<double>()[r]};
    case TypeKind::kDecimal: return {Num::kDecimal, 0, 0, c.values<Int128>()[r], c.type().scale()};
    case TypeKind::kIntervalDayTime: return {Num::kInt, c.values<std::int64_t>()[r]};
    case TypeKind::kIntervalYearMonth: return {Num::kInt, c.values<std::int32_t>()[r]};
    default: return {Num::kInt, 0};
  }
}

// Writes a number into a numeric/boolean target at row i; false when it overflows a DECIMAL.
bool write_num(const Num& n, Column& out, std::size_t i) {
  const LogicalType& t = out.type();
  auto as_long = [&]() -> std::int64_t {
    if (n.kind == Num::kInt) return n.i;
    if (n.kind == Num::kDouble) return java_double_to_long(n.d);
    return Decimal128::to_int64(n.dec, n.scale);
  };
  auto as_int = [&]() -> std::int32_t {
    if (n.kind == Num::kDouble) return java_double_to_int(n.d);
    return static_cast<std::int32_t>(as_long());
  };
  auto as_double = [&]() -> double {
    if (n.kind == Num::kInt) return static_cast<double>(n.i);
    if (n.kind == Num::kDouble) return n.d;
    return Decimal128::to_double(n.dec, n.scale);
  };
  switch (t.kind()) {
    case TypeKind::kBoolean:
      out.values<std::uint8_t>()[i] = n.kind == Num::kInt ? n.i != 0 : n.kind == Num::kDouble ? n.d != 0 : n.dec != 0;
      return true;
    case TypeKind::kTinyInt: out.values<std::int8_t>()[i] = static_cast<std::int8_t>(as_int()); return true;
    case TypeKind::kSmallInt: out.values<std::int16_t>()[i] = static_cast<std::int16_t>(as_int()); return true;
    case TypeKind::kInt: out.values<std::int32_t>()[i] = as_int(); return true;
    case TypeKind::kBigInt: out.values<std::int64_t>()[i] = as_long(); return true;
    case TypeKind::kFloat: out.values<float>()[i] = static_cast<float>(as_double()); return true;
    case TypeKind::kDouble: out.values<double>()[i] = as_double(); return true;
    case TypeKind::kDecimal: {
      std::optional<Int128> v;
      if (n.kind == Num::kInt) v = Decimal128::from_int64(n.i, t.precision(), t.scale());
      else if (n.kind == Num::kDouble) v = Decimal128::from_double(n.d, t.precision(), t.scale());
      else v = Decimal128::cast(n.dec, n.scale, t.precision(), t.scale());
      if (!v) return false;
      out.values<Int128>()[i] = *v;
      return true;
    }
    case TypeKind::kIntervalDayTime: out.values<std::int64_t>()[i] = as_long(); return true;
    case TypeKind::kIntervalYearMonth: out.values<std::int32_t>()[i] = as_int(); return true;
    default: return false;
  }
}

// Number of bytes of the first n UTF-8 code points of s.
std::size_t utf8_prefix_bytes(std::string_view s, std::size_t n) {
  std::size_t i = 0, count = 0;
  while (i < s.size() && count < n) {
    auto c = static_cast<unsigned char>(s[i]);
    i += c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    ++count;
  }
  return std::min(i, s.size());
}
std::size_t utf8_length(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// CHAR(n) pads with spaces, VARCHAR(n) truncates (Flink's CharVarCharTrimPadCastRule).
void fit_string_length(std::string& s, const LogicalType& to) {
  if (to.is(TypeKind::kVarChar) && to.length() != kMaxVarLength) {
    s.resize(utf8_prefix_bytes(s, static_cast<std::size_t>(to.length())));
  } else if (to.is(TypeKind::kChar)) {
    std::size_t len = utf8_length(s), n = static_cast<std::size_t>(to.length());
    if (len > n) s.resize(utf8_prefix_bytes(s, n));
    else s.append(n - len, ' ');
  } else if (to.is(TypeKind::kVarBinary) && to.length() != kMaxVarLength) {
    if (s.size() > static_cast<std::size_t>(to.length())) s.resize(static_cast<std::size_t>(to.length()));
  } else if (to.is(TypeKind::kBinary)) {
    s.resize(static_cast<std::size_t>(to.length()), '\0');
  }
}

// Reads a temporal cell as wall-clock micros (TIMESTAMP semantics) in the session zone.
std::int64_t wall_micros(const Column& c, std::size_t r, const SessionContext& s) {
  switch (c.type().kind()) {
    case TypeKind::kDate: return c.values<std::int32_t>()[r] * kMicrosPerDay;
    case TypeKind::kTime: return c.values<std::int32_t>()[r] * kMicrosPerMilli;
    case TypeKind::kTimestamp: return c.values<std::int64_t>()[r];
    case TypeKind::kTimestampLtz: return s.time_zone->utc_micros_to_local(c.values<std::int64_t>()[r]);
    default: return 0;
  }
}

std::int64_t truncate_micros(std::int64_t micros, int precision) {
  if (precision >= 6) return micros;
  std::int64_t unit = 1;
  for (int p = precision; p < 6; ++p) unit *= 10;
  return floor_div(micros, unit) * unit;
}

// Writes wall-clock micros into a temporal target.
void write_wall(std::int64_t micros, Column& out, std::size_t i, const SessionContext& s) {
  const LogicalType& t = out.type();
  switch (t.kind()) {
    case TypeKind::kDate: out.values<std::int32_t>()[i] = static_cast<std::int32_t>(floor_div(micros, kMicrosPerDay)); break;
    case TypeKind::kTime: {
      std::int64_t ms = floor_mod(micros, kMicrosPerDay) / kMicrosPerMilli;
      std::int64_t unit = t.precision() >= 3 ? 1 : (t.precision() == 2 ? 10 : t.precision() == 1 ? 100 : 1000);
      out.values<std::int32_t>()[i] = static_cast<std::int32_t>(ms / unit * unit);
      break;
    }
    case TypeKind::kTimestamp: out.values<std::int64_t>()[i] = truncate_micros(micros, t.precision()); break;
    case TypeKind::kTimestampLtz:
      out.values<std::int64_t>()[i] = truncate_micros(s.time_zone->local_micros_to_utc(micros), t.precision());
      break;
    default: break;
  }
}

// Parses text into a fixed-width target at row i; false when the text is invalid,
// nullopt-like overflow for DECIMAL reported through `overflow`.
bool parse_into(std::string_view text, Column& out, std::size_t i, const SessionContext& s, bool& overflow) {
  const LogicalType& t = out.type();
  switch (t.kind()) {
    case TypeKind::kBoolean: {
      auto b = parse_bool(text);
      if (!b) return false;
      out.values<std::uint8_t>()[i] = *b;
      return true;
    }
    case TypeKind::kTinyInt:
    case TypeKind::kSmallInt:
    case TypeKind::kInt:
    case TypeKind::kBigInt: {
      int bits = fixed_width(t.kind()) * 8;
      std::int64_t hi = bits == 64 ? std::numeric_limits<std::int64_t>::max() : (std::int64_t(1) << (bits - 1)) - 1;
      auto v = parse_integer(text, -hi - 1, hi);
      if (!v) return false;
      return write_num({Num::kInt, *v}, out, i);
    }
    case TypeKind::kFloat:
    case TypeKind::kDouble: {
      auto d = parse_double(text);
      if (!d) return false;
      return write_num({Num::kDouble, 0, *d}, out, i);
    }
    case TypeKind::kDecimal: {
      Int128 v = 0;
      auto st = Decimal128::parse(text, t.precision(), t.scale(), v);
      if (st == Decimal128::ParseStatus::kInvalid) return false;
      if (st == Decimal128::ParseStatus::kOverflow) {
        overflow = true;
        return true;
      }
      out.values<Int128>()[i] = v;
      return true;
    }
    case TypeKind::kDate: {
      auto d = parse_date(text);
      if (!d) {
        auto ts = parse_timestamp(text);  // Flink accepts a timestamp text for a DATE
        if (!ts) return false;
        d = static_cast<std::int32_t>(floor_div(*ts, kMicrosPerDay));
      }
      out.values<std::int32_t>()[i] = *d;
      return true;
    }
    case TypeKind::kTime: {
      auto tm = parse_time(text);
      if (!tm) return false;
      write_wall(*tm * kMicrosPerMilli, out, i, s);
      return true;
    }
    case TypeKind::kTimestamp: {
      auto ts = parse_timestamp(text);
      if (!ts) return false;
      write_wall(*ts, out, i, s);
      return true;
    }
    case TypeKind::kTimestampLtz: {
      auto p = parse_timestamp_with_offset(text);
      if (!p) return false;
      if (p->has_offset) out.values<std::int64_t>()[i] = truncate_micros(p->micros, t.precision());
      else write_wall(p->micros, out, i, s);
      return true;
    }
    default: return false;
  }
}

bool is_fixed(const LogicalType& t) { return physical_layout(t.kind()) == PhysicalLayout::kFixed; }

// The hot implicit widenings, as tight loops.
template <class From, class To>
ScalarKernel widen_kernel() {
  return [](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
    const From* x = args[0].column->values<From>();
    To* o = out.values<To>();
    for (std::size_t i = 0; i < ctx.rows; ++i) o[i] = static_cast<To>(x[i]);
  };
}

template <class From>
ScalarKernel widen_from(TypeKind to) {
  switch (to) {
    case TypeKind::kSmallInt: return widen_kernel<From, std::int16_t>();
    case TypeKind::kInt: return widen_kernel<From, std::int32_t>();
    case TypeKind::kBigInt: return widen_kernel<From, std::int64_t>();
    case TypeKind::kFloat: return widen_kernel<From, float>();
    case TypeKind::kDouble: return widen_kernel<From, double>();
    default: return nullptr;
  }
}

ScalarKernel fast_numeric_kernel(const LogicalType& from, const LogicalType& to) {
  if (!(from.is_integer() || from.is(TypeKind::kFloat))) return nullptr;
  if (!(to.is_integer() || to.is_approx_numeric())) return nullptr;
  if (to.is_integer() && (from.is(TypeKind::kFloat) || fixed_width(to.kind()) < fixed_width(from.kind()))) return nullptr;
  switch (from.kind()) {
    case TypeKind::kTinyInt: return widen_from<std::int8_t>(to.kind());
    case TypeKind::kSmallInt: return widen_from<std::int16_t>(to.kind());
    case TypeKind::kInt: return widen_from<std::int32_t>(to.kind());
    case TypeKind::kBigInt: return widen_from<std::int64_t>(to.kind());
    case TypeKind::kFloat: return to.is(TypeKind::kDouble) ? widen_kernel<float, double>() : nullptr;
    default: return nullptr;
  }
}

}  // namespace

ScalarKernel make_cast_kernel(const LogicalType& from, const LogicalType& to, bool try_cast) {
  // Same type: copy (a no-op CAST, or a nullability change).
  if (from.same_ignoring_nullability(to) && !to.is_string_like()) {
    return [](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
      std::vector<std::uint64_t> valid(ctx.args_valid, ctx.args_valid + (ctx.rows + 63) / 64);
      out.clear();
      out.append_range(*args[0].column, 0, ctx.rows);
      if (!valid.empty()) std::memcpy(out.validity(), valid.data(), valid.size() * 8);
    };
  }
  if (from.is(TypeKind::kNull)) {
    return [](KernelContext& ctx, std::span<const KernelArg>, Column& out) {
      if (out.size() != ctx.rows)
        for (std::size_t i = 0; i < ctx.rows; ++i) out.append_null();
      else
        for (std::size_t w = 0; w < (ctx.rows + 63) / 64; ++w) out.validity()[w] = 0;
    };
  }
  if (auto k = fast_numeric_kernel(from, to)) return k;

  // Anything -> character string: the CAST AS STRING text, fitted to the length.
  if (to.is_character_string() || (to.is_binary_string() && from.is_string_like())) {
    return [from, to](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
      std::string s;
      kernels::for_each_valid_row(ctx, out, [&](std::size_t i) {
        s.clear();
        if (from.is_string_like()) s.assign(args[0].column->string_at(i));
        else append_cell_string(*args[0].column, i, *ctx.session->time_zone, false, s);
        fit_string_length(s, to);
        out.append_string(s);
      });
    };
  }
  // Character string -> fixed-width types.
  if (from.is_character_string() && is_fixed(to)) {
    if (to.is(TypeKind::kIntervalDayTime) || to.is(TypeKind::kIntervalYearMonth))
      throw SqlTypeError(fmt::format("CAST from {} to {} is not supported", from.to_string(), to.to_string()));
    return [from, to, try_cast](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
      const Column& in = *args[0].column;
      auto* valid = out.validity();
      for (std::size_t i = 0; i < ctx.rows; ++i) {
        if (!out.is_valid(i)) continue;
        bool overflow = false;
        std::string_view text = in.string_at(i);
        if (!parse_into(text, out, i, *ctx.session, overflow)) {
          if (!try_cast && ctx.is_active(i)) cast_failure(text, from, to);
          valid[i >> 6] &= ~(std::uint64_t(1) << (i & 63));
        } else if (overflow) {
          valid[i >> 6] &= ~(std::uint64_t(1) << (i & 63));
        }
      }
    };
  }
  // Numbers, booleans and intervals among themselves.
  auto numeric_like = [](const LogicalType& t) {
    return t.is_numeric() || t.is(TypeKind::kBoolean) || t.is(TypeKind::kIntervalDayTime) ||
           t.is(TypeKind::kIntervalYearMonth);
  };
  if (numeric_like(from) && numeric_like(to)) {
    return [](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
      auto* valid = out.validity();
      for (std::size_t i = 0; i < ctx.rows; ++i) {
        if (!out.is_valid(i)) continue;
        if (!write_num(read_num(*args[0].column, i), out, i)) valid[i >> 6] &= ~(std::uint64_t(1) << (i & 63));
      }
    };
  }
  // Integers <-> TIMESTAMP_LTZ as epoch seconds.
  if (from.is_integer() && to.is(TypeKind::kTimestampLtz)) {
    return [](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
      for (std::size_t i = 0; i < ctx.rows; ++i)
        out.values<std::int64_t>()[i] = read_num(*args[0].column, i).i * kMicrosPerSecond;
    };
  }
  if (from.is(TypeKind::kTimestampLtz) && to.is_integer()) {
    return [](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
      for (std::size_t i = 0; i < ctx.rows; ++i)
        write_num({Num::kInt, floor_div(args[0].column->values<std::int64_t>()[i], kMicrosPerSecond)}, out, i);
    };
  }
  // Temporal <-> temporal through the wall clock.
  if (from.is_temporal() && to.is_temporal()) {
    if (from.is(TypeKind::kTimestampLtz) && to.is(TypeKind::kTimestampLtz)) {
      return [](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
        for (std::size_t i = 0; i < ctx.rows; ++i)
          out.values<std::int64_t>()[i] = truncate_micros(args[0].column->values<std::int64_t>()[i], out.type().precision());
      };
    }
    return [](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
      for (std::size_t i = 0; i < ctx.rows; ++i)
        if (out.is_valid(i)) write_wall(wall_micros(*args[0].column, i, *ctx.session), out, i, *ctx.session);
    };
  }
  // Nested -> nested: element by element through Values (rare; not a hot path).
  if (from.is_nested() && to.is_nested()) {
    return [from, to, try_cast](KernelContext& ctx, std::span<const KernelArg> args, Column& out) {
      kernels::for_each_valid_row(ctx, out, [&](std::size_t i) {
        out.append_value(cast_value(args[0].column->value_at(i), from, to, *ctx.session, try_cast));
      });
    };
  }
  throw SqlTypeError(fmt::format("CAST from {} to {} is not supported", from.to_string(), to.to_string()));
}

Value cast_value(const Value& v, const LogicalType& from, const LogicalType& to, const SessionContext& session,
                 bool try_cast) {
  if (v.is_null()) return Value::null();
  if (from.is_nested() && to.is_nested() && from.kind() == to.kind()) {
    const auto& items = v.as_list().items;
    ValueList out;
    for (std::size_t k = 0; k < items.size(); ++k) {
      const LogicalType* f;
      const LogicalType* t;
      if (from.is(TypeKind::kArray)) {
        f = &from.element_type();
        t = &to.element_type();
      } else if (from.is(TypeKind::kMap)) {
        f = k % 2 == 0 ? &from.key_type() : &from.value_type();
        t = k % 2 == 0 ? &to.key_type() : &to.value_type();
      } else {
        f = &from.fields()[k].type;
        t = &to.fields()[k].type;
      }
      out.items.push_back(cast_value(items[k], *f, *t, session, try_cast));
    }
    return Value(std::move(out));
  }
  Column in(from);
  in.append_value(v);
  Column out(to);
  auto kernel = make_cast_kernel(from, to, try_cast);
  std::uint64_t valid = 1;
  if (physical_layout(to.kind()) == PhysicalLayout::kFixed) {
    out.resize_fixed(1);
    out.validity()[0] = 1;
  }
  KernelContext ctx{1, nullptr, &valid, &session, nullptr};
  KernelArg arg{&in, false};
  kernel(ctx, std::span<const KernelArg>(&arg, 1), out);
  return out.value_at(0);
}

}  // namespace clink::sql
