#include "clink/sql/common/decimal.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace clink::sql {

namespace {

// Unsigned 256-bit magnitude: little-endian 64-bit limbs. Only what exact decimal
// arithmetic needs: 128x128 multiply, add/subtract, compare, division.
struct U256 {
  std::uint64_t w[4] = {0, 0, 0, 0};

  static U256 from(UInt128 v) {
    U256 r;
    r.w[0] = static_cast<std::uint64_t>(v);
    r.w[1] = static_cast<std::uint64_t>(v >> 64);
    return r;
  }
  bool fits128() const { return w[2] == 0 && w[3] == 0; }
  UInt128 low128() const { return (static_cast<UInt128>(w[1]) << 64) | w[0]; }
  bool is_zero() const { return (w[0] | w[1] | w[2] | w[3]) == 0; }
};

int cmp(const U256& a, const U256& b) {
  for (int i = 3; i >= 0; --i)
    if (a.w[i] != b.w[i]) return a.w[i] < b.w[i] ? -1 : 1;
  return 0;
}
U256 uadd(const U256& a, const U256& b) {
  U256 r;
  UInt128 carry = 0;
  for (int i = 0; i < 4; ++i) {
    UInt128 s = static_cast<UInt128>(a.w[i]) + b.w[i] + carry;
    r.w[i] = static_cast<std::uint64_t>(s);
    carry = s >> 64;
  }
  return r;
}
U256 usub(const U256& a, const U256& b) {  // requires a >= b
  U256 r;
  std::uint64_t borrow = 0;
  for (int i = 0; i < 4; ++i) {
    std::uint64_t bi = b.w[i] + borrow;
    std::uint64_t nb = (bi < borrow) || (a.w[i] < bi) ? 1 : 0;
    r.w[i] = a.w[i] - bi;
    borrow = nb;
  }
  return r;
}
U256 mul(UInt128 a, UInt128 b) {
  std::uint64_t x[2] = {static_cast<std::uint64_t>(a), static_cast<std::uint64_t>(a >> 64)};
  std::uint64_t y[2] = {static_cast<std::uint64_t>(b), static_cast<std::uint64_t>(b >> 64)};
  U256 r;
  for (int i = 0; i < 2; ++i) {
    UInt128 carry = 0;
    for (int j = 0; j < 2; ++j) {
      UInt128 t = static_cast<UInt128>(x[i]) * y[j] + r.w[i + j] + carry;
      r.w[i + j] = static_cast<std::uint64_t>(t);
      carry = t >> 64;
    }
    int k = i + 2;
    while (carry != 0 && k < 4) {
      UInt128 t = static_cast<UInt128>(r.w[k]) + carry;
      r.w[k] = static_cast<std::uint64_t>(t);
      carry = t >> 64;
      ++k;
    }
  }
  return r;
}
U256 shl1(const U256& a) {
  U256 r;
  for (int i = 3; i > 0; --i) r.w[i] = (a.w[i] << 1) | (a.w[i - 1] >> 63);
  r.w[0] = a.w[0] << 1;
  return r;
}
// Divides by a 64-bit divisor in place; returns the remainder.
std::uint64_t divmod_small(U256& a, std::uint64_t d) {
  UInt128 rem = 0;
  for (int i = 3; i >= 0; --i) {
    UInt128 cur = (rem << 64) | a.w[i];
    a.w[i] = static_cast<std::uint64_t>(cur / d);
    rem = cur % d;
  }
  return static_cast<std::uint64_t>(rem);
}
// Binary long division: q = n / d, r = n % d (d != 0).
void divmod(const U256& n, const U256& d, U256& q, U256& r) {
  if (n.fits128() && d.fits128()) {
    q = U256::from(n.low128() / d.low128());
    r = U256::from(n.low128() % d.low128());
    return;
  }
  q = U256{};
  r = U256{};
  for (int bit = 255; bit >= 0; --bit) {
    r = shl1(r);
    r.w[0] |= (n.w[bit / 64] >> (bit % 64)) & 1;
    if (cmp(r, d) >= 0) {
      r = usub(r, d);
      q.w[bit / 64] |= std::uint64_t(1) << (bit % 64);
    }
  }
}

const UInt128 kPow10[39] = {
    1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL, 100000000ULL, 1000000000ULL,
    10000000000ULL, 100000000000ULL, 1000000000000ULL, 10000000000000ULL, 100000000000000ULL,
    1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL, 1000000000000000000ULL,
    static_cast<UInt128>(1000000000000000000ULL) * 10U, static_cast<UInt128>(1000000000000000000ULL) * 100U,
    static_cast<UInt128>(1000000000000000000ULL) * 1000U, static_cast<UInt128>(1000000000000000000ULL) * 10000U,
    static_cast<UInt128>(1000000000000000000ULL) * 100000U, static_cast<UInt128>(1000000000000000000ULL) * 1000000U,
    static_cast<UInt128>(1000000000000000000ULL) * 10000000U,
    static_cast<UInt128>(1000000000000000000ULL) * 100000000U,
    static_cast<UInt128>(1000000000000000000ULL) * 1000000000U,
    static_cast<UInt128>(1000000000000000000ULL) * 10000000000ULL,
    static_cast<UInt128>(1000000000000000000ULL) * 100000000000ULL,
    static_cast<UInt128>(1000000000000000000ULL) * 1000000000000ULL,
    static_cast<UInt128>(1000000000000000000ULL) * 10000000000000ULL,
    static_cast<UInt128>(1000000000000000000ULL) * 100000000000000ULL,
    static_cast<UInt128>(1000000000000000000ULL) * 1000000000000000ULL,
    static_cast<UInt128>(1000000000000000000ULL) * 10000000000000000ULL,
    static_cast<UInt128>(1000000000000000000ULL) * 100000000000000000ULL,
    static_cast<UInt128>(1000000000000000000ULL) * 1000000000000000000ULL,
    static_cast<UInt128>(1000000000000000000ULL) * 1000000000000000000ULL * 10U,
    static_cast<UInt128>(1000000000000000000ULL) * 1000000000000000000ULL * 100U,
};

// Multiplies a magnitude by 10^n (n may exceed 38: repeated).
U256 scale_up(U256 v, int n) {
  while (n > 0) {
    int k = std::min(n, 19);
    U256 r;
    std::uint64_t m = static_cast<std::uint64_t>(kPow10[k]);
    UInt128 carry = 0;
    for (int i = 0; i < 4; ++i) {
      UInt128 t = static_cast<UInt128>(v.w[i]) * m + carry;
      r.w[i] = static_cast<std::uint64_t>(t);
      carry = t >> 64;
    }
    v = r;
    n -= k;
  }
  return v;
}
// Divides a magnitude by 10^n, rounding HALF_UP: only the first dropped digit decides.
U256 scale_down_half_up(U256 v, int n) {
  if (n <= 0) return v;
  int rest = n - 1;
  while (rest > 0) {
    int k = std::min(rest, 19);
    divmod_small(v, static_cast<std::uint64_t>(kPow10[k]));
    rest -= k;
  }
  std::uint64_t digit = divmod_small(v, 10);
  if (digit >= 5) v = uadd(v, U256::from(1));
  return v;
}

// A signed 256-bit value as sign and magnitude.
struct S256 {
  bool neg = false;
  U256 mag;
};
S256 to_s256(Int128 v) {
  S256 s;
  s.neg = v < 0;
  s.mag = U256::from(v < 0 ? -static_cast<UInt128>(v) : static_cast<UInt128>(v));
  return s;
}
S256 signed_add(const S256& a, const S256& b) {
  if (a.neg == b.neg) return {a.neg, uadd(a.mag, b.mag)};
  int c = cmp(a.mag, b.mag);
  if (c >= 0) return {c == 0 ? false : a.neg, usub(a.mag, b.mag)};
  return {b.neg, usub(b.mag, a.mag)};
}
// Rounds an exact result at `from_scale` to `scale` and checks `precision`.
std::optional<Int128> finish(S256 v, int from_scale, int precision, int scale) {
  U256 m = scale > from_scale ? scale_up(v.mag, scale - from_scale) : scale_down_half_up(v.mag, from_scale - scale);
  if (!m.fits128()) return std::nullopt;
  UInt128 u = m.low128();
  if (u >= kPow10[precision]) return std::nullopt;
  Int128 r = static_cast<Int128>(u);
  return v.neg ? -r : r;
}

}  // namespace

Int128 Decimal128::pow10(int n) { return static_cast<Int128>(kPow10[n]); }

bool Decimal128::fits(Int128 v, int precision) {
  UInt128 m = v < 0 ? -static_cast<UInt128>(v) : static_cast<UInt128>(v);
  return m < kPow10[precision];
}

std::optional<Int128> Decimal128::rescale(Int128 v, int from_scale, int to_scale) {
  if (from_scale == to_scale) return v;
  return finish(to_s256(v), from_scale, kMaxPrecision, to_scale);
}

std::optional<Int128> Decimal128::cast(Int128 v, int from_scale, int precision, int scale) {
  if (from_scale == scale) {
    if (!fits(v, precision)) return std::nullopt;
    return v;
  }
  return finish(to_s256(v), from_scale, precision, scale);
}

Decimal128::ParseStatus Decimal128::parse(std::string_view s, int precision, int scale, Int128& out) {
  std::size_t i = 0, n = s.size();
  while (i < n && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  while (n > i && std::isspace(static_cast<unsigned char>(s[n - 1]))) --n;
  bool neg = false;
  if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  std::string digits;  // significant digits, leading zeros dropped
  int frac_digits = 0;
  bool any_digit = false, dot = false;
  for (; i < n; ++i) {
    char c = s[i];
    if (c >= '0' && c <= '9') {
      any_digit = true;
      if (!(digits.empty() && c == '0')) digits += c;
      if (dot) ++frac_digits;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (!any_digit) return ParseStatus::kInvalid;
  long exponent = 0;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) eneg = s[i++] == '-';
    if (i >= n) return ParseStatus::kInvalid;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; ++i) {
      exponent = exponent * 10 + (s[i] - '0');
      if (exponent > 100000) return ParseStatus::kInvalid;
    }
    if (eneg) exponent = -exponent;
  }
  if (i != n) return ParseStatus::kInvalid;
  // value = digits * 10^(exponent - frac_digits); we want unscaled at `scale`.
  long shift = exponent - frac_digits + scale;  // multiply digits by 10^shift
  if (digits.empty()) {
    out = 0;
    return ParseStatus::kOk;
  }
  long keep = static_cast<long>(digits.size()) + shift;  // digits that survive
  if (keep > 39) return ParseStatus::kOverflow;
  UInt128 v = 0;
  if (keep <= 0) {
    // Everything is dropped; only the first dropped digit (a zero when keep < 0) rounds.
    v = (keep == 0 && digits[0] >= '5') ? 1 : 0;
  } else {
    for (long k = 0; k < keep; ++k) {
      int d = k < static_cast<long>(digits.size()) ? digits[static_cast<std::size_t>(k)] - '0' : 0;
      v = v * 10 + static_cast<unsigned>(d);
    }
    if (keep < static_cast<long>(digits.size()) && digits[static_cast<std::size_t>(keep)] >= '5') v += 1;
  }
  if (v >= kPow10[precision]) return ParseStatus::kOverflow;
  out = neg ? -static_cast<Int128>(v) : static_cast<Int128>(v);
  return ParseStatus::kOk;
}

void Decimal128::append_string(Int128 v, int scale, std::string& out) {
  UInt128 m = v < 0 ? -static_cast<UInt128>(v) : static_cast<UInt128>(v);
  char buf[48];
  int len = 0;
  do {
    buf[len++] = static_cast<char>('0' + static_cast<int>(m % 10));
    m /= 10;
  } while (m != 0);
  while (len < scale + 1) buf[len++] = '0';
  if (v < 0) out += '-';
  for (int k = len - 1; k >= 0; --k) {
    out += buf[k];
    if (k == scale && scale > 0) out += '.';
  }
}

std::string Decimal128::to_string(Int128 v, int scale) {
  std::string s;
  append_string(v, scale, s);
  return s;
}

std::optional<Int128> Decimal128::from_int64(std::int64_t v, int precision, int scale) {
  return finish(to_s256(v), 0, precision, scale);
}

std::optional<Int128> Decimal128::from_double(double v, int precision, int scale) {
  if (!std::isfinite(v)) return std::nullopt;
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  Int128 out = 0;
  if (parse(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)), precision, scale, out) != ParseStatus::kOk)
    return std::nullopt;
  return out;
}

double Decimal128::to_double(Int128 v, int scale) {
  static const double kExact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  UInt128 m = v < 0 ? -static_cast<UInt128>(v) : static_cast<UInt128>(v);
  if (m < (static_cast<UInt128>(1) << 53) && scale <= 22) {
    // Both operands are exact doubles, so one IEEE division is correctly rounded.
    double d = static_cast<double>(static_cast<std::uint64_t>(m)) / kExact[scale];
    return v < 0 ? -d : d;
  }
  std::string s = to_string(v, scale);
  double d = 0;
  std::from_chars(s.data(), s.data() + s.size(), d);
  return d;
}

std::int64_t Decimal128::to_int64(Int128 v, int scale) {
  Int128 q = v / pow10(scale);  // C++ division truncates toward zero
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(static_cast<UInt128>(q)));
}

std::optional<Int128> Decimal128::add(Int128 a, int sa, Int128 b, int sb, int precision, int scale) {
  if (sa == sb && sa == scale) {
    Int128 r;
    if (!__builtin_add_overflow(a, b, &r)) {
      if (!fits(r, precision)) return std::nullopt;
      return r;
    }
  }
  int s = std::max(sa, sb);
  S256 x = to_s256(a), y = to_s256(b);
  x.mag = scale_up(x.mag, s - sa);
  y.mag = scale_up(y.mag, s - sb);
  return finish(signed_add(x, y), s, precision, scale);
}

std::optional<Int128> Decimal128::subtract(Int128 a, int sa, Int128 b, int sb, int precision, int scale) {
  if (b == std::numeric_limits<Int128>::min()) return std::nullopt;
  return add(a, sa, -b, sb, precision, scale);
}

std::optional<Int128> Decimal128::multiply(Int128 a, int sa, Int128 b, int sb, int precision, int scale) {
  S256 x = to_s256(a), y = to_s256(b);
  S256 p{x.neg != y.neg, mul(x.mag.low128(), y.mag.low128())};
  if (p.mag.is_zero()) p.neg = false;
  return finish(p, sa + sb, precision, scale);
}

std::optional<Int128> Decimal128::divide(Int128 a, int sa, Int128 b, int sb, int precision, int scale) {
  if (b == 0) return std::nullopt;
  // a/10^sa / (b/10^sb) at `scale`: a * 10^(scale - sa + sb) / b, rounded HALF_UP.
  S256 x = to_s256(a), y = to_s256(b);
  int e = scale - sa + sb;
  U256 num = x.mag, den = y.mag;
  if (e >= 0) num = scale_up(num, e);
  else den = scale_up(den, -e);
  U256 q, r;
  divmod(num, den, q, r);
  if (cmp(r, usub(den, r)) >= 0 && !r.is_zero()) q = uadd(q, U256::from(1));
  if (!q.fits128() || q.low128() >= kPow10[precision]) return std::nullopt;
  Int128 v = static_cast<Int128>(q.low128());
  return (x.neg != y.neg) ? -v : v;
}

std::optional<Int128> Decimal128::mod(Int128 a, int sa, Int128 b, int sb, int precision, int scale) {
  if (b == 0) return std::nullopt;
  int s = std::max(sa, sb);
  S256 x = to_s256(a), y = to_s256(b);
  U256 q, r;
  divmod(scale_up(x.mag, s - sa), scale_up(y.mag, s - sb), q, r);
  return finish(S256{x.neg && !r.is_zero(), r}, s, precision, scale);
}

int Decimal128::compare(Int128 a, int sa, Int128 b, int sb) {
  if (sa == sb) return a < b ? -1 : (a > b ? 1 : 0);
  if ((a < 0) != (b < 0)) return a < 0 ? -1 : 1;
  int s = std::max(sa, sb);
  S256 x = to_s256(a), y = to_s256(b);
  int c = cmp(scale_up(x.mag, s - sa), scale_up(y.mag, s - sb));
  return a < 0 ? -c : c;
}

}  // namespace clink::sql
