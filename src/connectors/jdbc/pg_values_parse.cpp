// PostgreSQL text -> column cells, and the clink -> PostgreSQL type names
// (include/clink/connectors/jdbc/pg_values.hpp). The text is what PostgreSQL's output
// functions write under PgConnection's session settings (DateStyle ISO, TimeZone UTC,
// IntervalStyle iso_8601, bytea_output hex).
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "clink/connectors/jdbc/pg_values.hpp"
#include "clink/sql/common/decimal.hpp"
#include "clink/sql/common/temporal.hpp"

namespace clink::sql {

namespace {

[[noreturn]] void invalid(std::string_view text, const LogicalType& t, std::string_view why = {}) {
  std::string shown(text.substr(0, 100));
  if (text.size() > 100) shown += "...";
  throw PgValueError(why.empty() ? fmt::format("'{}' is not a valid {} value", shown, t.to_string())
                                 : fmt::format("'{}' is not a valid {} value: {}", shown, t.to_string(), why));
}

// A cursor over text, for the hand-written parsers below.
struct Scan {
  std::string_view s;
  std::size_t i = 0;
  bool done() const { return i >= s.size(); }
  char peek() const { return done() ? '\0' : s[i]; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++i;
    return true;
  }
  bool eat(std::string_view w) {
    if (s.substr(i, w.size()) != w) return false;
    i += w.size();
    return true;
  }
  // Unsigned decimal digits; nullopt when none.
  std::optional<std::int64_t> digits(int* count = nullptr) {
    std::int64_t v = 0;
    std::size_t start = i;
    while (!done() && s[i] >= '0' && s[i] <= '9') {
      if (v > (std::numeric_limits<std::int64_t>::max() - 9) / 10) return std::nullopt;
      v = v * 10 + (s[i] - '0');
      ++i;
    }
    if (count) *count = static_cast<int>(i - start);
    if (i == start) return std::nullopt;
    return v;
  }
  // ".ffffff" as microseconds (digits past 6 truncated); 0 when absent.
  std::optional<std::int64_t> fraction_micros() {
    if (!eat('.')) return 0;
    int n = 0;
    std::int64_t v = 0;
    std::size_t start = i;
    while (!done() && s[i] >= '0' && s[i] <= '9') {
      if (n < 6) {
        v = v * 10 + (s[i] - '0');
        ++n;
      }
      ++i;
    }
    if (i == start) return std::nullopt;
    for (; n < 6; ++n) v *= 10;
    return v;
  }
};

// yyyy-mm-dd -> (year, month, day) as written (BC handled by the caller).
std::optional<std::int64_t> parse_date_part(Scan& sc, std::int64_t& year, int& month, int& day) {
  auto y = sc.digits();
  if (!y || !sc.eat('-')) return std::nullopt;
  auto m = sc.digits();
  if (!m || !sc.eat('-')) return std::nullopt;
  auto d = sc.digits();
  if (!d) return std::nullopt;
  year = *y;
  month = static_cast<int>(*m);
  day = static_cast<int>(*d);
  return 0;
}

// hh:mm:ss[.f] -> microseconds of the day (24:00:00 allowed, as PostgreSQL).
std::optional<std::int64_t> parse_time_part(Scan& sc) {
  auto h = sc.digits();
  if (!h || !sc.eat(':')) return std::nullopt;
  auto m = sc.digits();
  if (!m || !sc.eat(':')) return std::nullopt;
  auto s = sc.digits();
  if (!s) return std::nullopt;
  auto f = sc.fraction_micros();
  if (!f || *h > 24 || *m > 59 || *s > 60) return std::nullopt;
  std::int64_t v = ((*h * 60 + *m) * 60 + *s) * kMicrosPerSecond + *f;
  if (v > kMicrosPerDay) return std::nullopt;
  return v;
}

// +hh[:mm[:ss]] -> seconds east of UTC.
std::optional<std::int64_t> parse_offset(Scan& sc) {
  int sign = sc.eat('+') ? 1 : (sc.eat('-') ? -1 : 0);
  if (sign == 0) return std::nullopt;
  auto h = sc.digits();
  if (!h) return std::nullopt;
  std::int64_t secs = *h * 3600;
  if (sc.eat(':')) {
    auto m = sc.digits();
    if (!m) return std::nullopt;
    secs += *m * 60;
    if (sc.eat(':')) {
      auto s = sc.digits();
      if (!s) return std::nullopt;
      secs += *s;
    }
  }
  return sign * secs;
}

// [date] [time] [offset] [BC] -> days and micros of day; the parts `want_*` say.
std::optional<std::int64_t> parse_datetime(std::string_view text, bool want_time, bool want_offset) {
  Scan sc{text};
  std::int64_t year = 0;
  int month = 0, day = 0;
  if (!parse_date_part(sc, year, month, day)) return std::nullopt;
  std::int64_t of_day = 0, offset = 0;
  if (want_time) {
    if (!sc.eat(' ') && !sc.eat('T')) return std::nullopt;
    auto t = parse_time_part(sc);
    if (!t) return std::nullopt;
    of_day = *t;
    if (want_offset) {
      auto o = parse_offset(sc);
      if (!o) return std::nullopt;
      offset = *o;
    }
  }
  if (sc.eat(" BC")) year = 1 - year;
  if (!sc.done() || !is_valid_civil(year, month, day)) return std::nullopt;
  std::int64_t days = days_from_civil(year, month, day);
  if (!want_time) return days;
  return days * kMicrosPerDay + of_day - offset * kMicrosPerSecond;
}

// ISO 8601 duration (IntervalStyle iso_8601): P[nY][nM][nD][T[nH][nM][n[.f]S]], each
// number optionally signed. Returns months and microseconds (days as 24 h).
bool parse_iso_interval(std::string_view text, std::int64_t& months, std::int64_t& micros) {
  Scan sc{text};
  months = micros = 0;
  if (!sc.eat('P')) return false;
  bool in_time = false, any = false;
  while (!sc.done()) {
    if (sc.eat('T')) {
      if (in_time) return false;
      in_time = true;
      continue;
    }
    int sign = 1;
    if (sc.eat('-')) sign = -1;
    else sc.eat('+');
    auto n = sc.digits();
    if (!n) return false;
    std::int64_t frac = 0;
    if (sc.peek() == '.') {
      auto f = sc.fraction_micros();
      if (!f) return false;
      frac = *f;
    }
    char unit = sc.peek();
    ++sc.i;
    if (frac != 0 && !(in_time && unit == 'S')) return false;
    if (!in_time && unit == 'Y') months += sign * *n * 12;
    else if (!in_time && unit == 'M') months += sign * *n;
    else if (!in_time && unit == 'W') micros += sign * *n * 7 * kMicrosPerDay;
    else if (!in_time && unit == 'D') micros += sign * *n * kMicrosPerDay;
    else if (in_time && unit == 'H') micros += sign * *n * 3600 * kMicrosPerSecond;
    else if (in_time && unit == 'M') micros += sign * *n * 60 * kMicrosPerSecond;
    else if (in_time && unit == 'S') micros += sign * (*n * kMicrosPerSecond + frac);
    else return false;
    any = true;
  }
  return any;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

template <class T>
void parse_integer(Column& col, std::string_view text) {
  std::int64_t v = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) invalid(text, col.type());
  if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
    invalid(text, col.type(), "out of range");
  col.append<T>(static_cast<T>(v));
}

template <class T>
void parse_floating(Column& col, std::string_view text) {
  T v{};
  if (text == "NaN") v = std::numeric_limits<T>::quiet_NaN();
  else if (text == "Infinity") v = std::numeric_limits<T>::infinity();
  else if (text == "-Infinity") v = -std::numeric_limits<T>::infinity();
  else {
    auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size()) invalid(text, col.type());
  }
  col.append<T>(v);
}

// One element of an array / composite / hstore: quoted ("a\"b") or bare up to a
// delimiter. Returns nullopt for an unquoted NULL (when `null_word`) or an empty bare
// field (when not: composites write NULL as nothing).
std::optional<std::string> read_element(Scan& sc, std::string_view delims, bool null_word, std::string_view text,
                                        const LogicalType& t) {
  std::string out;
  if (sc.eat('"')) {
    while (true) {
      if (sc.done()) invalid(text, t, "unclosed '\"'");
      char c = sc.s[sc.i++];
      if (c == '\\') {
        if (sc.done()) invalid(text, t);
        out += sc.s[sc.i++];
      } else if (c == '"') {
        if (sc.peek() == '"') {  // "" inside a composite's quotes
          out += '"';
          ++sc.i;
        } else {
          break;
        }
      } else {
        out += c;
      }
    }
    return out;
  }
  while (!sc.done() && delims.find(sc.peek()) == std::string_view::npos) {
    char c = sc.s[sc.i++];
    if (c == '\\' && !sc.done()) c = sc.s[sc.i++];
    out += c;
  }
  while (!out.empty() && out.back() == ' ' && null_word) out.pop_back();
  if (null_word && out == "NULL") return std::nullopt;
  if (!null_word && out.empty()) return std::nullopt;
  return out;
}

void parse_array(Column& col, std::string_view text) {
  Scan sc{text};
  if (sc.peek() == '[') {  // explicit bounds: [0:2]={...}
    auto eq = text.find('=');
    if (eq == std::string_view::npos) invalid(text, col.type());
    sc.i = eq + 1;
  }
  Column& child = col.child(0);
  bool nested = child.type().is(TypeKind::kArray);
  if (!sc.eat('{')) invalid(text, col.type(), "'{' expected");
  std::size_t appended = 0;
  try {
    if (!sc.eat('}')) {
      while (true) {
        while (sc.eat(' ')) {}
        if (nested && sc.peek() == '{') {
          // A sub-array: find its closing brace (quotes may hold braces).
          std::size_t start = sc.i;
          int depth = 0;
          bool quoted = false;
          for (; !sc.done(); ++sc.i) {
            char c = sc.s[sc.i];
            if (quoted) {
              if (c == '\\') ++sc.i;
              else if (c == '"') quoted = false;
            } else if (c == '"') {
              quoted = true;
            } else if (c == '{') {
              ++depth;
            } else if (c == '}' && --depth == 0) {
              ++sc.i;
              break;
            }
          }
          if (depth != 0) invalid(text, col.type(), "unbalanced braces");
          parse_array(child, text.substr(start, sc.i - start));
        } else {
          auto e = read_element(sc, ",}", true, text, col.type());
          if (e) append_pg_text_value(child, *e);
          else child.append_null();
        }
        ++appended;
        while (sc.eat(' ')) {}
        if (sc.eat(',')) continue;
        if (sc.eat('}')) break;
        invalid(text, col.type(), "',' or '}' expected");
      }
    }
    if (!sc.done()) invalid(text, col.type(), "junk after '}'");
  } catch (...) {
    // Leave the column as it was: drop the elements appended so far.
    Column copy(child.type());
    copy.append_range(child, 0, child.size() - appended);
    child = std::move(copy);
    throw;
  }
  col.grow_validity(col.size() + 1);
  auto end = static_cast<std::uint32_t>(child.size());
  col.values_buffer().append(&end, sizeof end);
  col.set_valid(col.size(), true);
  col.set_size(col.size() + 1);
}

void parse_row(Column& col, std::string_view text) {
  Scan sc{text};
  if (!sc.eat('(')) invalid(text, col.type(), "'(' expected");
  std::vector<std::optional<std::string>> fields;
  if (!sc.eat(')')) {
    while (true) {
      fields.push_back(read_element(sc, ",)", false, text, col.type()));
      if (sc.eat(',')) continue;
      if (sc.eat(')')) break;
      invalid(text, col.type(), "',' or ')' expected");
    }
  }
  if (!sc.done()) invalid(text, col.type(), "junk after ')'");
  if (fields.size() != col.num_children())
    invalid(text, col.type(), fmt::format("{} fields for {}", fields.size(), col.num_children()));
  // Check every field first (a composite is appended whole or not at all).
  std::vector<Column> parsed;
  for (std::size_t f = 0; f < fields.size(); ++f) {
    Column one(col.child(f).type());
    if (fields[f]) append_pg_text_value(one, *fields[f]);
    else one.append_null();
    parsed.push_back(std::move(one));
  }
  for (std::size_t f = 0; f < fields.size(); ++f) col.child(f).append_range(parsed[f], 0, 1);
  col.grow_validity(col.size() + 1);
  col.set_valid(col.size(), true);
  col.set_size(col.size() + 1);
}

void parse_hstore(Column& col, std::string_view text) {
  Scan sc{text};
  Column keys(col.child(0).type()), values(col.child(1).type());
  while (true) {
    while (sc.eat(' ')) {}
    if (sc.done()) break;
    auto k = read_element(sc, "=", true, text, col.type());
    if (!k) invalid(text, col.type(), "a NULL key");
    if (!sc.eat("=>")) invalid(text, col.type(), "'=>' expected");
    auto v = read_element(sc, ",", true, text, col.type());
    append_pg_text_value(keys, *k);
    if (v) append_pg_text_value(values, *v);
    else values.append_null();
    while (sc.eat(' ')) {}
    if (!sc.eat(',')) break;
  }
  if (!sc.done()) invalid(text, col.type(), "',' expected");
  col.child(0).append_range(keys, 0, keys.size());
  col.child(1).append_range(values, 0, values.size());
  col.grow_validity(col.size() + 1);
  auto end = static_cast<std::uint32_t>(col.child(0).size());
  col.values_buffer().append(&end, sizeof end);
  col.set_valid(col.size(), true);
  col.set_size(col.size() + 1);
}

}  // namespace

void append_pg_text_value(Column& col, std::string_view text) {
  const LogicalType& t = col.type();
  switch (t.kind()) {
    case TypeKind::kNull: col.append_null(); return;
    case TypeKind::kBoolean:
      if (text == "t" || text == "true") col.append<std::uint8_t>(1);
      else if (text == "f" || text == "false") col.append<std::uint8_t>(0);
      else invalid(text, t);
      return;
    case TypeKind::kTinyInt: parse_integer<std::int8_t>(col, text); return;
    case TypeKind::kSmallInt: parse_integer<std::int16_t>(col, text); return;
    case TypeKind::kInt: parse_integer<std::int32_t>(col, text); return;
    case TypeKind::kBigInt: parse_integer<std::int64_t>(col, text); return;
    case TypeKind::kFloat: parse_floating<float>(col, text); return;
    case TypeKind::kDouble: parse_floating<double>(col, text); return;
    case TypeKind::kDecimal: {
      Int128 v = 0;
      auto st = Decimal128::parse(text, t.precision(), t.scale(), v);
      if (st == Decimal128::ParseStatus::kOverflow) invalid(text, t, "does not fit the precision");
      if (st != Decimal128::ParseStatus::kOk) invalid(text, t);
      col.append<Int128>(v);
      return;
    }
    case TypeKind::kChar:
    case TypeKind::kVarChar: col.append_string(text); return;
    case TypeKind::kBinary:
    case TypeKind::kVarBinary: {
      if (!text.starts_with("\\x") || text.size() % 2 != 0) invalid(text, t, "not bytea's hex form \\x...");
      auto& arena = col.arena();
      std::size_t n = (text.size() - 2) / 2;
      std::size_t base = arena.size();
      arena.resize(base + n);
      for (std::size_t i = 0; i < n; ++i) {
        int hi = hex_value(text[2 + 2 * i]), lo = hex_value(text[3 + 2 * i]);
        if (hi < 0 || lo < 0) {
          arena.resize(base);
          invalid(text, t, "not a hex digit");
        }
        arena.data()[base + i] = static_cast<unsigned char>(hi * 16 + lo);
      }
      col.commit_string();
      return;
    }
    case TypeKind::kDate: {
      auto d = parse_datetime(text, false, false);
      if (!d || *d < std::numeric_limits<std::int32_t>::min() || *d > std::numeric_limits<std::int32_t>::max())
        invalid(text, t);
      col.append<std::int32_t>(static_cast<std::int32_t>(*d));
      return;
    }
    case TypeKind::kTime: {
      Scan sc{text};
      auto v = parse_time_part(sc);
      if (!v || !sc.done()) invalid(text, t);
      col.append<std::int32_t>(static_cast<std::int32_t>(*v / kMicrosPerMilli));
      return;
    }
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampLtz: {
      auto v = parse_datetime(text, true, t.is(TypeKind::kTimestampLtz));
      if (!v) invalid(text, t);
      col.append<std::int64_t>(*v);
      return;
    }
    case TypeKind::kIntervalDayTime: {
      std::int64_t months = 0, micros = 0;
      if (!parse_iso_interval(text, months, micros)) invalid(text, t);
      if (months != 0) invalid(text, t, "it has months, which have no fixed length");
      col.append<std::int64_t>(floor_div(micros, kMicrosPerMilli));
      return;
    }
    case TypeKind::kIntervalYearMonth: {
      std::int64_t months = 0, micros = 0;
      if (!parse_iso_interval(text, months, micros)) invalid(text, t);
      if (micros != 0) invalid(text, t, "it has days or a time");
      col.append<std::int32_t>(static_cast<std::int32_t>(months));
      return;
    }
    case TypeKind::kArray: parse_array(col, text); return;
    case TypeKind::kRow: parse_row(col, text); return;
    case TypeKind::kMap: parse_hstore(col, text); return;
  }
}

std::string pg_type_name(const LogicalType& t) {
  switch (t.kind()) {
    case TypeKind::kNull: return "text";
    case TypeKind::kBoolean: return "boolean";
    case TypeKind::kTinyInt:
    case TypeKind::kSmallInt: return "smallint";
    case TypeKind::kInt: return "integer";
    case TypeKind::kBigInt: return "bigint";
    case TypeKind::kFloat: return "real";
    case TypeKind::kDouble: return "double precision";
    case TypeKind::kDecimal: return fmt::format("numeric({}, {})", t.precision(), t.scale());
    case TypeKind::kChar: return fmt::format("char({})", t.length());
    case TypeKind::kVarChar: return t.length() == kMaxVarLength ? "text" : fmt::format("varchar({})", t.length());
    case TypeKind::kBinary:
    case TypeKind::kVarBinary: return "bytea";
    case TypeKind::kDate: return "date";
    case TypeKind::kTime: return fmt::format("time({})", std::min(t.precision(), 6));
    case TypeKind::kTimestamp: return fmt::format("timestamp({})", std::min(t.precision(), 6));
    case TypeKind::kTimestampLtz: return fmt::format("timestamptz({})", std::min(t.precision(), 6));
    case TypeKind::kIntervalDayTime:
    case TypeKind::kIntervalYearMonth: return "interval";
    case TypeKind::kArray: {
      const LogicalType* e = &t.element_type();
      while (e->is(TypeKind::kArray)) e = &e->element_type();  // PostgreSQL: T[] at every depth
      return pg_type_name(*e) + "[]";
    }
    case TypeKind::kMap: return "hstore";
    case TypeKind::kRow:
      throw PgValueError(fmt::format("{} maps to a PostgreSQL composite type, which has to be created by name",
                                     t.to_string()));
  }
  return "text";
}

}  // namespace clink::sql
