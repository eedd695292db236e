// More math functions with Flink's semantics: the trigonometric functions (SIN COS TAN
// COT ASIN ACOS ATAN ATAN2 SINH COSH TANH), DEGREES, RADIANS, BIN, HEX, and the random
// ones RAND, RAND_INTEGER, UUID. Every argument is computed in DOUBLE like Java's Math.
#include <cmath>
#include <random>

#include "clink/core/java_random.hpp"
#include "kernel_util.hpp"

namespace clink::sql {

namespace {

using kernels::binary_fixed;
using kernels::for_each_valid_row;
using kernels::unary_fixed;

LogicalType dbl() { return LogicalType::double_type(); }

void add_unary(FunctionRegistry& r, const char* name, double (*fn)(double)) {
  r.add_fixed(name, {dbl()}, dbl(), [fn](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    unary_fixed<double, double>(ctx, a, out, [fn](double x, bool&) { return fn(x); });
  });
}

// Long.toBinaryString / Long.toHexString (two's complement for negative values), upper
// case hex as Flink's HEX.
void append_radix(std::int64_t v, int bits, Column& out) {
  const char* digits = "0123456789ABCDEF";
  auto u = static_cast<std::uint64_t>(v);
  char buf[64];
  std::size_t n = 0;
  do {
    buf[63 - n++] = digits[u & ((1u << bits) - 1)];
    u >>= bits;
  } while (u != 0);
  out.append_string(std::string_view(buf + 64 - n, n));
}

// One generator per thread: RAND and UUID are non-deterministic, as Flink's.
std::mt19937_64& rng() {
  thread_local std::mt19937_64 g{std::random_device{}()};
  return g;
}

// RAND(seed) / RAND_INTEGER(seed, n) as Flink's code generation: a constant seed seeds one
// java.util.Random per compiled expression (per operator instance), which every row that
// reaches the call draws from in turn (rows a WHERE drops draw nothing); a seed read from
// the row seeds a new Random for that row alone.
struct SeededRandom {
  mutable JavaRandom random;
};

std::shared_ptr<const void> prepare_seeded_random(std::span<const LogicalType>, std::span<const std::optional<Value>> constants) {
  if (constants.empty() || !constants[0] || !std::holds_alternative<std::int64_t>(constants[0]->v)) return nullptr;
  return std::make_shared<SeededRandom>(SeededRandom{JavaRandom(static_cast<std::int32_t>(constants[0]->as_int()))});
}

// The generator for row i: the expression's own, or one seeded by the row's seed.
JavaRandom& random_for_row(KernelContext& ctx, const KernelArg& seed, std::size_t i, JavaRandom& scratch) {
  if (ctx.state != nullptr) return static_cast<const SeededRandom*>(ctx.state)->random;
  scratch.set_seed(seed.column->values<std::int32_t>()[seed.row(i)]);
  return scratch;
}

void add_seeded_random(FunctionRegistry& r) {
  r.add_scalar("RAND", "RAND(INT)", [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (args.size() != 1 || !supports_implicit_cast(args[0], LogicalType::int_type())) return std::nullopt;
    ResolvedFunction f;
    f.name = "RAND";
    f.arg_types = {LogicalType::int_type().with_nullable(args[0].nullable())};
    f.return_type = dbl().with_nullable(args[0].nullable());
    f.deterministic = false;
    f.prepare = prepare_seeded_random;
    f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      auto* o = out.values<double>();
      JavaRandom scratch;
      for (std::size_t i = 0; i < ctx.rows; ++i)
        if (ctx.args_valid_at(i) && ctx.is_active(i)) o[i] = random_for_row(ctx, a[0], i, scratch).next_double();
    };
    return f;
  });
  r.add_scalar("RAND_INTEGER", "RAND_INTEGER(INT, INT)", [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (args.size() != 2 || !supports_implicit_cast(args[0], LogicalType::int_type()) ||
        !supports_implicit_cast(args[1], LogicalType::int_type()))
      return std::nullopt;
    const bool nullable = args[0].nullable() || args[1].nullable();
    ResolvedFunction f;
    f.name = "RAND_INTEGER";
    f.arg_types = {LogicalType::int_type().with_nullable(args[0].nullable()),
                   LogicalType::int_type().with_nullable(args[1].nullable())};
    f.return_type = LogicalType::int_type().with_nullable(nullable);
    f.deterministic = false;
    f.prepare = prepare_seeded_random;
    f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      auto* o = out.values<std::int32_t>();
      JavaRandom scratch;
      for (std::size_t i = 0; i < ctx.rows; ++i) {
        if (!ctx.args_valid_at(i) || !ctx.is_active(i)) continue;
        std::int32_t bound = a[1].column->values<std::int32_t>()[a[1].row(i)];
        if (bound <= 0) throw SqlRuntimeError("RAND_INTEGER: the bound must be positive, got " + std::to_string(bound));
        o[i] = random_for_row(ctx, a[0], i, scratch).next_int(bound);
      }
    };
    return f;
  });
}

}  // namespace

void register_math_more_functions(FunctionRegistry& r) {
  add_seeded_random(r);
  // CURRENT_DATABASE(): clink has one catalog with one database.
  r.add_scalar("CURRENT_DATABASE", "CURRENT_DATABASE()", [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (!args.empty()) return std::nullopt;
    ResolvedFunction f;
    f.name = "CURRENT_DATABASE";
    f.return_type = LogicalType::string().not_null();
    f.null_policy = NullPolicy::kCustom;
    f.kernel = [](KernelContext& ctx, std::span<const KernelArg>, Column& out) {
      for (std::size_t i = 0; i < ctx.rows; ++i) out.append_string("default_database");
    };
    return f;
  });
  add_unary(r, "SIN", [](double x) { return std::sin(x); });
  add_unary(r, "COS", [](double x) { return std::cos(x); });
  add_unary(r, "TAN", [](double x) { return std::tan(x); });
  add_unary(r, "COT", [](double x) { return 1.0 / std::tan(x); });
  add_unary(r, "ASIN", [](double x) { return std::asin(x); });
  add_unary(r, "ACOS", [](double x) { return std::acos(x); });
  add_unary(r, "ATAN", [](double x) { return std::atan(x); });
  add_unary(r, "SINH", [](double x) { return std::sinh(x); });
  add_unary(r, "COSH", [](double x) { return std::cosh(x); });
  add_unary(r, "TANH", [](double x) { return std::tanh(x); });
  add_unary(r, "DEGREES", [](double x) { return x * (180.0 / M_PI); });  // Math.toDegrees
  add_unary(r, "RADIANS", [](double x) { return x * (M_PI / 180.0); });  // Math.toRadians
  r.add_fixed("ATAN2", {dbl(), dbl()}, dbl(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    binary_fixed<double, double, double>(ctx, a, out, [](double y, double x, bool&) { return std::atan2(y, x); });
  });
  // BIN(n): Long.toBinaryString; HEX(n): Long.toHexString upper case; HEX(s): the UTF-8
  // bytes of s in upper-case hex.
  r.add_fixed("BIN", {LogicalType::bigint()}, LogicalType::string(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    for_each_valid_row(ctx, out, [&](std::size_t i) { append_radix(a[0].column->values<std::int64_t>()[a[0].row(i)], 1, out); });
  });
  r.add_fixed("HEX", {LogicalType::bigint()}, LogicalType::string(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    for_each_valid_row(ctx, out, [&](std::size_t i) { append_radix(a[0].column->values<std::int64_t>()[a[0].row(i)], 4, out); });
  });
  r.add_fixed("HEX", {LogicalType::string()}, LogicalType::string(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    for_each_valid_row(ctx, out, [&](std::size_t i) {
      static const char kDigits[] = "0123456789ABCDEF";
      Buffer& arena = out.arena();
      for (unsigned char c : a[0].column->string_at(a[0].row(i))) {
        char two[2] = {kDigits[c >> 4], kDigits[c & 15]};
        arena.append(two, 2);
      }
      out.commit_string();
    });
  });
  // RAND(): uniform in [0, 1); RAND_INTEGER(n): uniform in [0, n); UUID(): a random
  // (version 4) UUID. Each row draws anew; never folded.
  r.add_scalar("RAND", "RAND()", [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (!args.empty()) return std::nullopt;
    ResolvedFunction f;
    f.name = "RAND";
    f.return_type = dbl().not_null();
    f.null_policy = NullPolicy::kCustom;
    f.deterministic = false;
    f.kernel = [](KernelContext& ctx, std::span<const KernelArg>, Column& out) {
      std::uniform_real_distribution<double> d(0.0, 1.0);
      for (std::size_t i = 0; i < ctx.rows; ++i) out.values<double>()[i] = d(rng());
      out.set_all_valid();
    };
    return f;
  });
  r.add_scalar("RAND_INTEGER", "RAND_INTEGER(INT)", [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (args.size() != 1 || !supports_implicit_cast(args[0], LogicalType::int_type())) return std::nullopt;
    ResolvedFunction f;
    f.name = "RAND_INTEGER";
    f.arg_types = {LogicalType::int_type().with_nullable(args[0].nullable())};
    f.return_type = LogicalType::int_type().with_nullable(args[0].nullable());
    f.deterministic = false;
    f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      auto* o = out.values<std::int32_t>();
      for (std::size_t i = 0; i < ctx.rows; ++i) {
        if (!ctx.args_valid_at(i) || !ctx.is_active(i)) continue;
        std::int32_t bound = a[0].column->values<std::int32_t>()[a[0].row(i)];
        // Java's Random.nextInt(bound) throws for bound <= 0, which fails Flink's query.
        if (bound <= 0) throw SqlRuntimeError("RAND_INTEGER: the bound must be positive, got " + std::to_string(bound));
        o[i] = std::uniform_int_distribution<std::int32_t>(0, bound - 1)(rng());
      }
    };
    return f;
  });
  r.add_scalar("UUID", "UUID()", [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (!args.empty()) return std::nullopt;
    ResolvedFunction f;
    f.name = "UUID";
    f.return_type = LogicalType::char_type(36).not_null();
    f.null_policy = NullPolicy::kCustom;
    f.deterministic = false;
    f.kernel = [](KernelContext& ctx, std::span<const KernelArg>, Column& out) {
      static const char kDigits[] = "0123456789abcdef";
      for (std::size_t i = 0; i < ctx.rows; ++i) {
        std::uint64_t hi = rng()(), lo = rng()();
        hi = (hi & ~0xF000ull) | 0x4000ull;                       // version 4
        lo = (lo & ~(0xC000ull << 48)) | (0x8000ull << 48);       // IETF variant
        char buf[36];
        std::size_t n = 0;
        for (int k = 0; k < 32; ++k) {
          if (k == 8 || k == 12 || k == 16 || k == 20) buf[n++] = '-';
          std::uint64_t word = k < 16 ? hi : lo;
          buf[n++] = kDigits[(word >> (60 - 4 * (k % 16))) & 15];
        }
        out.append_string(std::string_view(buf, 36));
      }
    };
    return f;
  });
}

}  // namespace clink::sql
