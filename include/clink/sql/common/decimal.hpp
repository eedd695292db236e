#pragma once
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace clink::sql {

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

// DECIMAL(p, s) as exact 128-bit fixed point: the value is unscaled * 10^-scale. The
// precision and scale live on the column's LogicalType, not on each value, so columns
// hold bare Int128s and these functions take the scales as arguments.
//
// Rounding is HALF_UP (Java's BigDecimal RoundingMode.HALF_UP, as Flink), and a result
// that does not fit its precision is NULL (nullopt), as Flink's DecimalData returns null.
// Intermediate results use 256 bits, so p = 38 operands never overflow internally.
struct Decimal128 {
  Int128 unscaled = 0;

  static constexpr int kMaxPrecision = 38;

  // 10^n for 0 <= n <= 38.
  static Int128 pow10(int n);
  // |unscaled| < 10^precision.
  static bool fits(Int128 unscaled, int precision);

  // Changes the scale, rounding HALF_UP when it drops digits; nullopt when the result
  // does not fit in 38 digits.
  static std::optional<Int128> rescale(Int128 unscaled, int from_scale, int to_scale);
  // Rescale then check the precision: Flink's DecimalData.fromBigDecimal(v, p, s).
  static std::optional<Int128> cast(Int128 unscaled, int from_scale, int precision, int scale);

  enum class ParseStatus { kOk, kInvalid, kOverflow };
  // Parses "[-+]digits[.digits][e[-+]digits]" (surrounding whitespace allowed), rounding
  // HALF_UP to `scale`; kOverflow when the rounded value does not fit `precision`.
  static ParseStatus parse(std::string_view text, int precision, int scale, Int128& out);
  // Plain notation with exactly `scale` fractional digits: "-1.20", "0.05", "12".
  static std::string to_string(Int128 unscaled, int scale);
  static void append_string(Int128 unscaled, int scale, std::string& out);

  static std::optional<Int128> from_int64(std::int64_t v, int precision, int scale);
  // Flink: BigDecimal.valueOf(double) (the shortest repr), then rounded HALF_UP.
  static std::optional<Int128> from_double(double v, int precision, int scale);
  static double to_double(Int128 unscaled, int scale);
  // Truncates toward zero (Java BigDecimal.longValue: wraps modulo 2^64 when too large).
  static std::int64_t to_int64(Int128 unscaled, int scale);

  // Results computed exactly, then rounded HALF_UP to (precision, scale) of the result
  // type; nullopt on overflow and on division by zero.
  static std::optional<Int128> add(Int128 a, int sa, Int128 b, int sb, int precision, int scale);
  static std::optional<Int128> subtract(Int128 a, int sa, Int128 b, int sb, int precision, int scale);
  static std::optional<Int128> multiply(Int128 a, int sa, Int128 b, int sb, int precision, int scale);
  static std::optional<Int128> divide(Int128 a, int sa, Int128 b, int sb, int precision, int scale);
  // The remainder with the dividend's sign (BigDecimal.remainder).
  static std::optional<Int128> mod(Int128 a, int sa, Int128 b, int sb, int precision, int scale);

  // Numeric comparison of two decimals of any scales: -1, 0 or 1.
  static int compare(Int128 a, int sa, Int128 b, int sb);

  friend bool operator==(const Decimal128&, const Decimal128&) = default;
};

}  // namespace clink::sql
