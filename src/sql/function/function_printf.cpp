// PRINTF(format, args...) as Flink's PrintfFunction: java.util.Formatter with Locale.US
// over the arguments' Java values. Supported conversions: %s %S %b %B %c %C %d %o %x %X
// %e %E %f %g %G %h %H %% %n, with argument indexes (n$, <), flags (- # + space 0 , ( ),
// width and precision. Floating conversions round the value's shortest decimal digits
// HALF_UP, as Java's FormattedFloatingDecimal does (so %.1f of 0.25 is 0.3). Where Java's
// Formatter throws (a conversion the argument's type does not take, DECIMAL under %e / %f /
// %g since Flink passes DecimalData, a missing argument) the result is NULL, as Flink's.
#include <charconv>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "../common/utf8_decode.hpp"
#include "clink/sql/common/decimal.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "clink/sql/common/value_format.hpp"
#include "clink/sql/function/string_util.hpp"
#include "kernel_util.hpp"

namespace clink::sql {

namespace {

struct Spec {
  bool left = false, alt = false, plus = false, space = false, zero = false, group = false, paren = false;
  int width = -1, precision = -1;
  char conv = 's';
  bool upper = false;
};

[[noreturn]] void fail(const std::string& msg) { throw SqlRuntimeError("PRINTF: " + msg); }

// Decimal digits and exponent of |v|: v = 0.d1d2d3... * 10^exp10 (digits without leading zeros).
struct Digits {
  std::string digits;
  int exp10 = 0;  // position of the decimal point relative to the first digit
};

void shortest_digits(double v, Digits& d) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, std::fabs(v), std::chars_format::scientific);
  std::string_view s(buf, static_cast<std::size_t>(r.ptr - buf));
  auto e = s.find('e');
  d.digits.clear();
  for (char c : s.substr(0, e))
    if (c != '.') d.digits += c;
  d.exp10 = std::atoi(std::string(s.substr(e + 1)).c_str()) + 1;
  while (d.digits.size() > 1 && d.digits.back() == '0') d.digits.pop_back();
}

// Rounds d HALF_UP to keep `keep` digits (keep may be <= 0: rounds to 0 or 1 unit).
void round_half_up(Digits& d, int keep) {
  if (keep >= static_cast<int>(d.digits.size())) return;
  if (keep < 0) {
    d.digits = "0";
    return;
  }
  bool up = d.digits[static_cast<std::size_t>(keep)] >= '5';
  d.digits.resize(static_cast<std::size_t>(keep));
  if (up) {
    int k = keep - 1;
    while (k >= 0 && d.digits[static_cast<std::size_t>(k)] == '9') d.digits[static_cast<std::size_t>(k--)] = '0';
    if (k < 0) {
      d.digits.insert(d.digits.begin(), '1');
      ++d.exp10;
    } else {
      ++d.digits[static_cast<std::size_t>(k)];
    }
  }
  if (d.digits.empty()) d.digits = "0";
}

char digit_at(const Digits& d, int k) { return k >= 0 && k < static_cast<int>(d.digits.size()) ? d.digits[static_cast<std::size_t>(k)] : '0'; }

// Fixed notation with `prec` fractional digits.
void fixed(const Digits& value, Digits& d, int prec, bool group, std::string& out) {
  d = value;
  bool zero = d.digits == "0";
  if (!zero) round_half_up(d, d.exp10 + prec);
  if (d.digits == "0" || zero) d.exp10 = 1, d.digits = "0";
  int int_digits = std::max(d.exp10, 1);
  for (int k = 0; k < int_digits; ++k) {
    if (group && k > 0 && (int_digits - k) % 3 == 0) out += ',';
    out += d.exp10 <= 0 ? '0' : digit_at(d, k);
  }
  if (prec > 0) {
    out += '.';
    for (int k = 0; k < prec; ++k) out += digit_at(d, d.exp10 + k);
  }
}

// Scientific notation d.ddde+xx with `prec` fractional digits.
void scientific(const Digits& value, Digits& d, int prec, bool upper, std::string& out) {
  d = value;
  bool zero = d.digits == "0";
  if (!zero) round_half_up(d, prec + 1);
  out += digit_at(d, 0);
  if (prec > 0) {
    out += '.';
    for (int k = 1; k <= prec; ++k) out += digit_at(d, k);
  }
  int e = zero ? 0 : d.exp10 - 1;
  out += upper ? 'E' : 'e';
  out += e < 0 ? '-' : '+';
  if (std::abs(e) < 10) out += '0';
  fmt::format_to(std::back_inserter(out), "{}", std::abs(e));
}

// The Java value of argument k at row i.
struct Arg {
  const KernelArg* a;
  std::size_t row;
  bool null() const { return !a->valid(row); }
  TypeKind kind() const { return a->column->type().kind(); }
};

void pad(const Spec& s, std::string_view body, std::string& out) {
  auto len = static_cast<int>(utf8_length(body));
  if (s.width > len && !s.left) out.append(static_cast<std::size_t>(s.width - len), ' ');
  out += body;
  if (s.width > len && s.left) out.append(static_cast<std::size_t>(s.width - len), ' ');
}

void upper_ascii_in_place(std::string& s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
}

// Applies sign, grouping-independent flags and zero padding to a magnitude text.
// Reused buffers of one kernel call (so rows allocate nothing once they have grown).
struct Scratch {
  Digits value, work, rounded;
  std::string text, mag, body;
};

void numeric(const Spec& s, bool negative, std::string_view magnitude, std::string& out, std::string& body) {
  body.clear();
  if (negative) body += s.paren ? '(' : '-';
  else if (s.plus) body += '+';
  else if (s.space) body += ' ';
  std::size_t sign_len = body.size();
  body += magnitude;
  if (negative && s.paren) body += ')';
  if (s.zero && s.width > static_cast<int>(body.size()))
    body.insert(sign_len, static_cast<std::size_t>(s.width - static_cast<int>(body.size())), '0');
  if (s.upper) upper_ascii_in_place(body);
  pad(s, body, out);
}

void format_one(const Spec& s, const Arg& arg, const TimeZone& zone, std::string& out, std::string& tmp, Scratch& sc) {
  tmp.clear();
  char c = s.conv;
  if (c == 'b') {
    tmp = arg.null() ? "false" : (arg.kind() == TypeKind::kBoolean ? (arg.a->column->values<std::uint8_t>()[arg.a->row(arg.row)] ? "true" : "false") : "true");
    if (s.precision >= 0 && static_cast<int>(tmp.size()) > s.precision) tmp.resize(static_cast<std::size_t>(s.precision));
    if (s.upper) upper_ascii_in_place(tmp);
    pad(s, tmp, out);
    return;
  }
  if (arg.null()) {
    tmp = "null";  // Java's Formatter prints null for any conversion, cut to the precision
    if (s.precision >= 0 && static_cast<std::size_t>(s.precision) < tmp.size()) tmp.resize(static_cast<std::size_t>(s.precision));
    if (s.upper) upper_ascii_in_place(tmp);
    pad(s, tmp, out);
    return;
  }
  const Column& col = *arg.a->column;
  std::size_t r = arg.a->row(arg.row);
  TypeKind k = arg.kind();
  bool integral = k == TypeKind::kTinyInt || k == TypeKind::kSmallInt || k == TypeKind::kInt || k == TypeKind::kBigInt;
  auto int_value = [&]() -> std::int64_t {
    switch (k) {
      case TypeKind::kTinyInt: return col.values<std::int8_t>()[r];
      case TypeKind::kSmallInt: return col.values<std::int16_t>()[r];
      case TypeKind::kInt: return col.values<std::int32_t>()[r];
      default: return col.values<std::int64_t>()[r];
    }
  };
  auto bad = [&] { fail(fmt::format("%{} != {}", c, col.type().to_string())); };
  switch (c) {
    case 's':
    case 'h': {
      if (c == 'h') throw ClinkError("PRINTF: %h (hashCode) is not supported");  // clink's gap: fails, not NULL
      append_print_cell(col, r, zone, tmp);
      if (s.precision >= 0) tmp.resize(utf8_offset(tmp, static_cast<std::size_t>(s.precision)));
      if (s.upper) upper_ascii_in_place(tmp);
      pad(s, tmp, out);
      return;
    }
    case 'c': {
      std::int64_t cp = 0;
      if (integral) cp = int_value();
      else if (k == TypeKind::kChar || k == TypeKind::kVarChar) fail("%c needs a character code, got a string");
      else bad();
      if (cp < 0 || cp > 0x10FFFF) fail(fmt::format("illegal code point {}", cp));
      utf8_encode(static_cast<std::uint32_t>(cp), tmp);
      if (s.upper) upper_ascii_in_place(tmp);
      pad(s, tmp, out);
      return;
    }
    case 'd': {
      if (!integral) bad();
      std::int64_t v = int_value();
      std::string& mag = sc.mag;
      mag.clear();
      fmt::format_to(std::back_inserter(mag), "{}", v < 0 ? -static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v));
      if (s.group)
        for (int at = static_cast<int>(mag.size()) - 3; at > 0; at -= 3) mag.insert(static_cast<std::size_t>(at), 1, ',');
      numeric(s, v < 0, mag, out, sc.body);
      return;
    }
    case 'o':
    case 'x': {
      if (!integral) bad();
      std::int64_t v = int_value();
      int bits = k == TypeKind::kTinyInt ? 8 : k == TypeKind::kSmallInt ? 16 : k == TypeKind::kInt ? 32 : 64;
      auto u = static_cast<std::uint64_t>(v);
      if (bits < 64) u &= (std::uint64_t{1} << bits) - 1;
      std::string& mag = sc.mag;
      mag.clear();
      if (c == 'x') fmt::format_to(std::back_inserter(mag), "{:x}", u);
      else fmt::format_to(std::back_inserter(mag), "{:o}", u);
      if (s.alt) mag.insert(0, c == 'x' ? "0x" : "0");
      Spec plain = s;
      plain.plus = plain.space = plain.paren = false;
      numeric(plain, false, mag, out, sc.body);
      return;
    }
    case 'e':
    case 'f':
    case 'g': {
      Digits& d = sc.value;
      d.digits.clear();
      bool negative = false;
      if (k == TypeKind::kDouble || k == TypeKind::kFloat) {
        double v = k == TypeKind::kDouble ? col.values<double>()[r] : static_cast<double>(col.values<float>()[r]);
        if (std::isnan(v) || std::isinf(v)) {
          tmp = std::isnan(v) ? "NaN" : (v < 0 ? (s.paren ? "(Infinity)" : "-Infinity") : (s.plus ? "+Infinity" : "Infinity"));
          if (s.upper) upper_ascii_in_place(tmp);
          pad(s, tmp, out);
          return;
        }
        negative = std::signbit(v);
        if (v == 0) d.digits = "0", d.exp10 = 1;
        else if (k == TypeKind::kFloat) {  // Float.toString digits
          std::string f;
          append_java_float(std::fabs(col.values<float>()[r]), f);
          shortest_digits(std::stod(f), d);
        } else {
          shortest_digits(v, d);
        }
      } else {
        bad();  // DECIMAL too: Flink passes DecimalData, which %e / %f / %g do not take
      }
      int prec = s.precision < 0 ? 6 : s.precision;
      std::string& mag = sc.mag;
      mag.clear();
      if (c == 'f') {
        fixed(d, sc.work, prec, s.group, mag);
      } else if (c == 'e') {
        scientific(d, sc.work, prec, false, mag);
      } else {
        if (prec == 0) prec = 1;
        Digits& rounded = sc.rounded;
        rounded = d;
        if (rounded.digits != "0") round_half_up(rounded, prec);
        bool zero = rounded.digits == "0";
        int e = rounded.exp10 - 1;
        if (zero || (e >= -4 && e < prec)) fixed(d, sc.work, zero ? prec - 1 : prec - 1 - e, s.group, mag);
        else scientific(d, sc.work, prec - 1, false, mag);
      }
      numeric(s, negative, mag, out, sc.body);
      return;
    }
    default: fail(fmt::format("unsupported conversion '%{}'", c));
  }
}

void format_row(std::string_view fmt_text, std::span<const KernelArg> a, std::size_t row, const TimeZone& zone,
                std::string& out, std::string& tmp, Scratch& sc) {
  std::size_t next_arg = 1, last_arg = 0;
  for (std::size_t i = 0; i < fmt_text.size();) {
    char ch = fmt_text[i];
    if (ch != '%') {
      out += ch;
      ++i;
      continue;
    }
    std::size_t start = i++;
    Spec s;
    std::size_t index = 0;
    bool previous = false;
    // argument_index$ (digits followed by '$') or '<'
    std::size_t j = i;
    while (j < fmt_text.size() && std::isdigit(static_cast<unsigned char>(fmt_text[j]))) ++j;
    if (j > i && j < fmt_text.size() && fmt_text[j] == '$') {
      index = static_cast<std::size_t>(std::stoul(std::string(fmt_text.substr(i, j - i))));
      i = j + 1;
    } else if (i < fmt_text.size() && fmt_text[i] == '<') {
      previous = true;
      ++i;
    }
    for (; i < fmt_text.size(); ++i) {
      char f = fmt_text[i];
      if (f == '-') s.left = true;
      else if (f == '#') s.alt = true;
      else if (f == '+') s.plus = true;
      else if (f == ' ') s.space = true;
      else if (f == '0') s.zero = true;
      else if (f == ',') s.group = true;
      else if (f == '(') s.paren = true;
      else break;
    }
    std::size_t w = i;
    while (i < fmt_text.size() && std::isdigit(static_cast<unsigned char>(fmt_text[i]))) ++i;
    if (i > w) s.width = std::stoi(std::string(fmt_text.substr(w, i - w)));
    if (i < fmt_text.size() && fmt_text[i] == '.') {
      std::size_t p = ++i;
      while (i < fmt_text.size() && std::isdigit(static_cast<unsigned char>(fmt_text[i]))) ++i;
      if (i == p) fail(fmt::format("illegal precision in '{}'", fmt_text.substr(start, i - start)));
      s.precision = std::stoi(std::string(fmt_text.substr(p, i - p)));
    }
    if (i >= fmt_text.size()) fail(fmt::format("unknown format conversion at the end of '{}'", fmt_text));
    char conv = fmt_text[i++];
    if ((s.left || s.zero) && s.width < 0) fail(fmt::format("missing width in '{}'", fmt_text.substr(start, i - start)));
    if (conv == '%') {
      Spec pct;
      pct.width = s.width;
      pct.left = s.left;
      pad(pct, "%", out);
      continue;
    }
    if (conv == 'n') {
      out += '\n';
      continue;
    }
    s.upper = std::isupper(static_cast<unsigned char>(conv)) != 0;
    s.conv = static_cast<char>(std::tolower(static_cast<unsigned char>(conv)));
    if (s.conv == 't' || s.conv == 'a')  // Java's, not implemented here: fails, not NULL
      throw ClinkError(fmt::format("PRINTF: the conversion '%{}' is not supported", conv));
    if (std::string_view("bcdoxefgsh").find(s.conv) == std::string_view::npos || (s.upper && (s.conv == 'd' || s.conv == 'o' || s.conv == 'f')))
      fail(fmt::format("unknown format conversion '{}'", conv));
    std::size_t k = previous ? last_arg : (index != 0 ? index : next_arg++);
    if (k == 0 || k >= a.size()) fail(fmt::format("missing format argument for '{}'", fmt_text.substr(start, i - start)));
    last_arg = k;
    format_one(s, Arg{&a[k], row}, zone, out, tmp, sc);
  }
}

}  // namespace

void register_printf_function(FunctionRegistry& r) {
  r.add_scalar("PRINTF", "PRINTF(STRING, ANY...)", [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (args.empty() || !supports_implicit_cast(args[0], LogicalType::string())) return std::nullopt;
    ResolvedFunction f;
    f.name = "PRINTF";
    f.arg_types.push_back(LogicalType::string().with_nullable(args[0].nullable()));
    for (std::size_t k = 1; k < args.size(); ++k) f.arg_types.push_back(args[k]);
    f.return_type = LogicalType::string();  // NULL when Java's Formatter throws
    f.null_policy = NullPolicy::kCustom;
    f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      std::string text, tmp;
      Scratch sc;
      const TimeZone& zone = ctx.session ? *ctx.session->time_zone : *TimeZone::utc();
      out.reserve(ctx.rows);
      for (std::size_t i = 0; i < ctx.rows; ++i) {
        if (!a[0].valid(i) || !ctx.is_active(i)) {
          out.append_null();
          continue;
        }
        text.clear();
        try {
          format_row(kernels::sv(a, 0, i), a, i, zone, text, tmp, sc);
        } catch (const SqlRuntimeError&) {  // Flink's PrintfFunction returns NULL on any exception
          out.append_null();
          continue;
        }
        out.append_string(text);
      }
    };
    return f;
  });
}

}  // namespace clink::sql
