#include "clink/sql/common/types.hpp"

#include "clink/sql/common/multiset_type.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace clink::sql {

namespace {

const char* interval_unit_text(IntervalUnit u) {
  switch (u) {
    case IntervalUnit::kYear: return "YEAR";
    case IntervalUnit::kYearToMonth: return "YEAR TO MONTH";
    case IntervalUnit::kMonth: return "MONTH";
    case IntervalUnit::kDay: return "DAY";
    case IntervalUnit::kDayToHour: return "DAY TO HOUR";
    case IntervalUnit::kDayToMinute: return "DAY TO MINUTE";
    case IntervalUnit::kDayToSecond: return "DAY TO SECOND";
    case IntervalUnit::kHour: return "HOUR";
    case IntervalUnit::kHourToMinute: return "HOUR TO MINUTE";
    case IntervalUnit::kHourToSecond: return "HOUR TO SECOND";
    case IntervalUnit::kMinute: return "MINUTE";
    case IntervalUnit::kMinuteToSecond: return "MINUTE TO SECOND";
    case IntervalUnit::kSecond: return "SECOND";
    case IntervalUnit::kNone: break;
  }
  return "";
}

int integer_rank(TypeKind k) {
  switch (k) {
    case TypeKind::kTinyInt: return 1;
    case TypeKind::kSmallInt: return 2;
    case TypeKind::kInt: return 3;
    case TypeKind::kBigInt: return 4;
    default: return 0;
  }
}

LogicalType adjust_precision_scale(int p, int s) {
  if (p <= kMaxDecimalPrecision) return LogicalType::decimal(p, s);
  int int_digits = p - s;
  int min_scale = std::min(s, 6);
  s = std::max(kMaxDecimalPrecision - int_digits, min_scale);
  return LogicalType::decimal(kMaxDecimalPrecision, s);
}

// What multiset_type() passes to LogicalType::map as the value type to ask for a
// multiset's children: a ROW whose field name no SQL text spells.
const LogicalType& multiset_request() {
  static const LogicalType kRequest = LogicalType::row({{"\x01multiset", LogicalType::int_type().not_null()}});
  return kRequest;
}

}  // namespace

LogicalType LogicalType::decimal(int precision, int scale) {
  if (precision < 1 || precision > kMaxDecimalPrecision)
    throw SqlTypeError(fmt::format("DECIMAL precision must be between 1 and 38, got {}", precision));
  if (scale < 0 || scale > precision)
    throw SqlTypeError(fmt::format("DECIMAL scale must be between 0 and the precision ({}), got {}", precision, scale));
  LogicalType t(TypeKind::kDecimal);
  t.precision_ = precision;
  t.scale_ = scale;
  return t;
}

LogicalType LogicalType::char_type(std::int32_t length) {
  if (length < 1) throw SqlTypeError(fmt::format("CHAR length must be at least 1, got {}", length));
  LogicalType t(TypeKind::kChar);
  t.precision_ = length;
  return t;
}
LogicalType LogicalType::varchar(std::int32_t length) {
  if (length < 1) throw SqlTypeError(fmt::format("VARCHAR length must be at least 1, got {}", length));
  LogicalType t(TypeKind::kVarChar);
  t.precision_ = length;
  return t;
}
LogicalType LogicalType::binary(std::int32_t length) {
  if (length < 1) throw SqlTypeError(fmt::format("BINARY length must be at least 1, got {}", length));
  LogicalType t(TypeKind::kBinary);
  t.precision_ = length;
  return t;
}
LogicalType LogicalType::varbinary(std::int32_t length) {
  if (length < 1) throw SqlTypeError(fmt::format("VARBINARY length must be at least 1, got {}", length));
  LogicalType t(TypeKind::kVarBinary);
  t.precision_ = length;
  return t;
}
LogicalType LogicalType::time(int precision) {
  if (precision < 0 || precision > 9)
    throw SqlTypeError(fmt::format("TIME precision must be between 0 and 9, got {}", precision));
  LogicalType t(TypeKind::kTime);
  t.precision_ = precision;
  return t;
}
LogicalType LogicalType::timestamp(int precision) {
  if (precision < 0 || precision > 9)
    throw SqlTypeError(fmt::format("TIMESTAMP precision must be between 0 and 9, got {}", precision));
  LogicalType t(TypeKind::kTimestamp);
  t.precision_ = precision;
  return t;
}
LogicalType LogicalType::timestamp_ltz(int precision) {
  if (precision < 0 || precision > 9)
    throw SqlTypeError(fmt::format("TIMESTAMP_LTZ precision must be between 0 and 9, got {}", precision));
  LogicalType t(TypeKind::kTimestampLtz);
  t.precision_ = precision;
  return t;
}
LogicalType LogicalType::interval_day_time(IntervalUnit unit, int leading, int fraction) {
  LogicalType t(TypeKind::kIntervalDayTime);
  t.unit_ = unit;
  t.precision_ = leading;
  t.scale_ = fraction;
  return t;
}
LogicalType LogicalType::interval_year_month(IntervalUnit unit, int leading) {
  LogicalType t(TypeKind::kIntervalYearMonth);
  t.unit_ = unit;
  t.precision_ = leading;
  return t;
}
LogicalType LogicalType::array(LogicalType element) {
  LogicalType t(TypeKind::kArray);
  t.children_ = std::make_shared<const std::vector<RowField>>(std::vector<RowField>{{"element", std::move(element)}});
  return t;
}
LogicalType LogicalType::map(LogicalType key, LogicalType value) {
  LogicalType t(TypeKind::kMap);
  if (value == multiset_request()) {
    t.children_ = std::make_shared<const std::vector<RowField>>(
        std::vector<RowField>{{"element", std::move(key)}, {"count", LogicalType::int_type().not_null()}});
    return t;
  }
  t.children_ = std::make_shared<const std::vector<RowField>>(
      std::vector<RowField>{{"key", std::move(key)}, {"value", std::move(value)}});
  return t;
}
LogicalType LogicalType::row(std::vector<RowField> fields) {
  LogicalType t(TypeKind::kRow);
  t.children_ = std::make_shared<const std::vector<RowField>>(std::move(fields));
  return t;
}

LogicalType multiset_type(LogicalType element) { return LogicalType::map(std::move(element), multiset_request()); }
bool is_multiset(const LogicalType& t) { return t.is(TypeKind::kMap) && t.fields().at(1).name == "count"; }

const LogicalType& LogicalType::element_type() const { return (*children_)[0].type; }
const LogicalType& LogicalType::key_type() const { return (*children_)[0].type; }
const LogicalType& LogicalType::value_type() const { return (*children_)[1].type; }
const std::vector<RowField>& LogicalType::fields() const {
  static const std::vector<RowField> kNone;
  return children_ ? *children_ : kNone;
}

bool LogicalType::is_integer() const { return integer_rank(kind_) > 0; }
bool LogicalType::is_exact_numeric() const { return is_integer() || kind_ == TypeKind::kDecimal; }
bool LogicalType::is_temporal() const {
  return kind_ == TypeKind::kDate || kind_ == TypeKind::kTime || kind_ == TypeKind::kTimestamp ||
         kind_ == TypeKind::kTimestampLtz;
}

bool operator==(const LogicalType& a, const LogicalType& b) {
  if (a.nullable_ != b.nullable_) return false;
  return a.same_ignoring_nullability(b);
}

bool LogicalType::same_ignoring_nullability(const LogicalType& o) const {
  if (kind_ != o.kind_ || precision_ != o.precision_ || scale_ != o.scale_ || unit_ != o.unit_) return false;
  if (children_ == o.children_) return true;
  if (!children_ || !o.children_) return false;
  return *children_ == *o.children_;
}

std::string LogicalType::to_string() const {
  std::string s;
  switch (kind_) {
    case TypeKind::kNull: return "NULL";  // the NULL type is always nullable
    case TypeKind::kBoolean: s = "BOOLEAN"; break;
    case TypeKind::kTinyInt: s = "TINYINT"; break;
    case TypeKind::kSmallInt: s = "SMALLINT"; break;
    case TypeKind::kInt: s = "INT"; break;
    case TypeKind::kBigInt: s = "BIGINT"; break;
    case TypeKind::kFloat: s = "FLOAT"; break;
    case TypeKind::kDouble: s = "DOUBLE"; break;
    case TypeKind::kDecimal: s = fmt::format("DECIMAL({}, {})", precision_, scale_); break;
    case TypeKind::kChar: s = fmt::format("CHAR({})", precision_); break;
    case TypeKind::kVarChar: s = precision_ == kMaxVarLength ? "STRING" : fmt::format("VARCHAR({})", precision_); break;
    case TypeKind::kBinary: s = fmt::format("BINARY({})", precision_); break;
    case TypeKind::kVarBinary: s = precision_ == kMaxVarLength ? "BYTES" : fmt::format("VARBINARY({})", precision_); break;
    case TypeKind::kDate: s = "DATE"; break;
    case TypeKind::kTime: s = fmt::format("TIME({})", precision_); break;
    case TypeKind::kTimestamp: s = fmt::format("TIMESTAMP({})", precision_); break;
    case TypeKind::kTimestampLtz: s = fmt::format("TIMESTAMP_LTZ({})", precision_); break;
    case TypeKind::kIntervalDayTime: {
      // Flink: INTERVAL DAY(2) TO SECOND(3), INTERVAL SECOND(3), INTERVAL HOUR TO MINUTE.
      auto u = unit_;
      bool leading_day = u == IntervalUnit::kDay || u == IntervalUnit::kDayToHour || u == IntervalUnit::kDayToMinute ||
                         u == IntervalUnit::kDayToSecond;
      bool ends_second = u == IntervalUnit::kDayToSecond || u == IntervalUnit::kHourToSecond ||
                         u == IntervalUnit::kMinuteToSecond || u == IntervalUnit::kSecond;
      if (u == IntervalUnit::kSecond) {
        s = fmt::format("INTERVAL SECOND({})", scale_);
        break;
      }
      std::string text = interval_unit_text(u);
      std::string first = text.substr(0, text.find(' '));
      std::string rest = text.find(' ') == std::string::npos ? "" : text.substr(text.find(' '));
      s = "INTERVAL " + first + (leading_day ? fmt::format("({})", precision_) : "") + rest +
          (ends_second ? fmt::format("({})", scale_) : "");
      break;
    }
    case TypeKind::kIntervalYearMonth: {
      if (unit_ == IntervalUnit::kMonth) s = "INTERVAL MONTH";
      else if (unit_ == IntervalUnit::kYear) s = fmt::format("INTERVAL YEAR({})", precision_);
      else s = fmt::format("INTERVAL YEAR({}) TO MONTH", precision_);
      break;
    }
    case TypeKind::kArray: s = "ARRAY<" + element_type().to_string() + ">"; break;
    case TypeKind::kMap:
      s = is_multiset(*this) ? "MULTISET<" + key_type().to_string() + ">"
                        : "MAP<" + key_type().to_string() + ", " + value_type().to_string() + ">";
      break;
    case TypeKind::kRow: {
      s = "ROW<";
      bool first = true;
      for (const auto& f : fields()) {
        if (!first) s += ", ";
        first = false;
        s += "`" + f.name + "` " + f.type.to_string();
      }
      s += ">";
      break;
    }
  }
  if (!nullable_) s += " NOT NULL";
  return s;
}

LogicalType integer_as_decimal(const LogicalType& t) {
  switch (t.kind()) {
    case TypeKind::kTinyInt: return LogicalType::decimal(3, 0).with_nullable(t.nullable());
    case TypeKind::kSmallInt: return LogicalType::decimal(5, 0).with_nullable(t.nullable());
    case TypeKind::kInt: return LogicalType::decimal(10, 0).with_nullable(t.nullable());
    case TypeKind::kBigInt: return LogicalType::decimal(19, 0).with_nullable(t.nullable());
    default: return t;
  }
}

LogicalType decimal_add_type(int p1, int s1, int p2, int s2) {
  int s = std::max(s1, s2);
  int p = std::max(p1 - s1, p2 - s2) + s + 1;
  return adjust_precision_scale(p, s);
}
LogicalType decimal_multiply_type(int p1, int s1, int p2, int s2) { return adjust_precision_scale(p1 + p2, s1 + s2); }
LogicalType decimal_divide_type(int p1, int s1, int p2, int s2) {
  int s = std::max(6, s1 + p2 + 1);
  int p = p1 - s1 + s2 + s;
  return adjust_precision_scale(p, s);
}
LogicalType decimal_mod_type(int p1, int s1, int p2, int s2) {
  int s = std::max(s1, s2);
  int p = std::min(p1 - s1, p2 - s2) + s;
  return adjust_precision_scale(p, s);
}

std::optional<LogicalType> arithmetic_result_type(ArithmeticOp op, const LogicalType& a, const LogicalType& b) {
  bool nullable = a.nullable() || b.nullable();
  LogicalType x = a, y = b;
  if (x.is(TypeKind::kNull)) x = y;
  if (y.is(TypeKind::kNull)) y = x;
  if (x.is(TypeKind::kNull)) return std::nullopt;
  if (!x.is_numeric() || !y.is_numeric()) return std::nullopt;
  LogicalType r;
  if (x.is_approx_numeric() || y.is_approx_numeric()) {
    bool both_float = (x.is(TypeKind::kFloat) || x.is_exact_numeric()) && (y.is(TypeKind::kFloat) || y.is_exact_numeric()) &&
                      !(x.is(TypeKind::kDecimal) || y.is(TypeKind::kDecimal));
    r = both_float ? LogicalType::float_type() : LogicalType::double_type();
  } else if (x.is(TypeKind::kDecimal) || y.is(TypeKind::kDecimal)) {
    LogicalType dx = integer_as_decimal(x), dy = integer_as_decimal(y);
    int p1 = dx.precision(), s1 = dx.scale(), p2 = dy.precision(), s2 = dy.scale();
    switch (op) {
      case ArithmeticOp::kPlus:
      case ArithmeticOp::kMinus: r = decimal_add_type(p1, s1, p2, s2); break;
      case ArithmeticOp::kMultiply: r = decimal_multiply_type(p1, s1, p2, s2); break;
      case ArithmeticOp::kDivide: r = decimal_divide_type(p1, s1, p2, s2); break;
      case ArithmeticOp::kMod: r = decimal_mod_type(p1, s1, p2, s2); break;
    }
  } else if (op == ArithmeticOp::kMod) {
    r = y;  // Calcite: MOD has the type of its divisor
  } else {
    r = integer_rank(x.kind()) >= integer_rank(y.kind()) ? x : y;
  }
  return r.with_nullable(nullable);
}

LogicalType round_decimal_type(int precision, int scale, std::int64_t digits) {
  if (digits >= scale) return LogicalType::decimal(precision, scale);
  if (digits < 0) return LogicalType::decimal(std::min(kMaxDecimalPrecision, 1 + precision - scale), 0);
  return LogicalType::decimal(std::min(kMaxDecimalPrecision, static_cast<int>(1 + precision - scale + digits)),
                              static_cast<int>(digits));
}

LogicalType sum_result_type(const LogicalType& arg) {
  if (arg.is(TypeKind::kDecimal)) return LogicalType::decimal(kMaxDecimalPrecision, arg.scale());
  return arg.with_nullable(true);
}
LogicalType avg_result_type(const LogicalType& arg) {
  if (arg.is(TypeKind::kDecimal)) return decimal_divide_type(kMaxDecimalPrecision, arg.scale(), 20, 0);
  return arg.with_nullable(true);
}

bool supports_implicit_cast(const LogicalType& from, const LogicalType& to) {
  if (from.is(TypeKind::kNull)) return true;
  if (from.same_ignoring_nullability(to)) return true;
  auto fk = from.kind(), tk = to.kind();
  if (from.is_integer()) {
    if (to.is_integer()) return integer_rank(fk) <= integer_rank(tk);
    if (tk == TypeKind::kDecimal) {
      LogicalType d = integer_as_decimal(from);
      return to.precision() - to.scale() >= d.precision();
    }
    return to.is_approx_numeric();
  }
  if (fk == TypeKind::kDecimal) {
    if (tk == TypeKind::kDecimal)
      return to.scale() >= from.scale() && to.precision() - to.scale() >= from.precision() - from.scale();
    return to.is_approx_numeric();
  }
  if (fk == TypeKind::kFloat) return tk == TypeKind::kDouble;
  if (from.is_character_string()) return to.is_character_string() && (tk == TypeKind::kVarChar) && to.length() >= from.length();
  if (from.is_binary_string()) return to.is_binary_string() && tk == TypeKind::kVarBinary && to.length() >= from.length();
  if (fk == TypeKind::kDate) return tk == TypeKind::kTimestamp || tk == TypeKind::kTimestampLtz;
  if (fk == TypeKind::kTime) return tk == TypeKind::kTime && to.precision() >= from.precision();
  if (fk == TypeKind::kTimestamp || fk == TypeKind::kTimestampLtz)
    return (tk == TypeKind::kTimestamp || tk == TypeKind::kTimestampLtz) && to.precision() >= from.precision();
  if (fk == TypeKind::kArray && tk == TypeKind::kArray) return supports_implicit_cast(from.element_type(), to.element_type());
  if (fk == TypeKind::kMap && tk == TypeKind::kMap)
    return is_multiset(from) == is_multiset(to) && supports_implicit_cast(from.key_type(), to.key_type()) &&
           supports_implicit_cast(from.value_type(), to.value_type());
  if (fk == TypeKind::kRow && tk == TypeKind::kRow) {
    if (from.fields().size() != to.fields().size()) return false;
    for (std::size_t i = 0; i < from.fields().size(); ++i)
      if (!supports_implicit_cast(from.fields()[i].type, to.fields()[i].type)) return false;
    return true;
  }
  return fk == tk && (fk == TypeKind::kIntervalDayTime || fk == TypeKind::kIntervalYearMonth);
}

bool supports_assignment_cast(const LogicalType& from, const LogicalType& to) {
  auto fk = from.kind(), tk = to.kind();
  if (fk == TypeKind::kNull || fk == tk) {
    if (!from.is_nested()) return true;
    if (fk == TypeKind::kArray) return supports_assignment_cast(from.element_type(), to.element_type());
    if (fk == TypeKind::kMap)
      return is_multiset(from) == is_multiset(to) && supports_assignment_cast(from.key_type(), to.key_type()) &&
             supports_assignment_cast(from.value_type(), to.value_type());
    if (from.fields().size() != to.fields().size()) return false;
    for (std::size_t i = 0; i < from.fields().size(); ++i)
      if (!supports_assignment_cast(from.fields()[i].type, to.fields()[i].type)) return false;
    return true;
  }
  switch (tk) {
    case TypeKind::kVarChar: return fk == TypeKind::kChar;
    case TypeKind::kVarBinary: return fk == TypeKind::kBinary;
    case TypeKind::kSmallInt:
    case TypeKind::kInt:
    case TypeKind::kBigInt: return from.is_integer() && integer_rank(fk) <= integer_rank(tk);
    case TypeKind::kFloat: return from.is_exact_numeric();
    case TypeKind::kDouble:
    case TypeKind::kDecimal: return from.is_numeric();
    case TypeKind::kDate:
    case TypeKind::kTime: return fk == TypeKind::kTimestamp;
    case TypeKind::kTimestamp: return fk == TypeKind::kTimestampLtz;
    case TypeKind::kTimestampLtz: return fk == TypeKind::kTimestamp;
    default: return false;
  }
}

bool supports_explicit_cast(const LogicalType& from, const LogicalType& to) {
  if (supports_implicit_cast(from, to)) return true;
  auto fk = from.kind(), tk = to.kind();
  // Everything converts to and from character strings (nested types only to strings).
  if (to.is_character_string()) return true;
  if (from.is_character_string())
    return !to.is_nested() && !to.is(TypeKind::kIntervalDayTime) && !to.is(TypeKind::kIntervalYearMonth);
  if (from.is_binary_string()) return to.is_binary_string();
  if (from.is_numeric() || fk == TypeKind::kBoolean) {
    if (to.is_numeric() || tk == TypeKind::kBoolean) return true;
    // Flink 1.15+: an integer casts to TIMESTAMP_LTZ as epoch seconds (not to TIMESTAMP).
    return from.is_integer() && tk == TypeKind::kTimestampLtz;
  }
  if (from.is_temporal()) {
    if (fk == TypeKind::kTimestampLtz && to.is_integer()) return true;  // epoch seconds
    if (fk == TypeKind::kTimestamp || fk == TypeKind::kTimestampLtz) return to.is_temporal();
    if (fk == TypeKind::kDate) return tk == TypeKind::kDate || tk == TypeKind::kTimestamp || tk == TypeKind::kTimestampLtz;
    if (fk == TypeKind::kTime) return tk == TypeKind::kTime || tk == TypeKind::kTimestamp || tk == TypeKind::kTimestampLtz;
  }
  if ((fk == TypeKind::kIntervalDayTime || fk == TypeKind::kIntervalYearMonth) && to.is_integer()) return true;
  if (fk == tk && from.is_nested()) {
    if (fk == TypeKind::kArray) return supports_explicit_cast(from.element_type(), to.element_type());
    if (fk == TypeKind::kMap)
      return is_multiset(from) == is_multiset(to) && supports_explicit_cast(from.key_type(), to.key_type()) &&
             supports_explicit_cast(from.value_type(), to.value_type());
    if (from.fields().size() != to.fields().size()) return false;
    for (std::size_t i = 0; i < from.fields().size(); ++i)
      if (!supports_explicit_cast(from.fields()[i].type, to.fields()[i].type)) return false;
    return true;
  }
  return false;
}

namespace {

std::optional<LogicalType> common_of_two(const LogicalType& a, const LogicalType& b) {
  if (a.is(TypeKind::kNull)) return b;
  if (b.is(TypeKind::kNull)) return a;
  auto ak = a.kind(), bk = b.kind();
  if (a.is_numeric() && b.is_numeric()) {
    if (a.is_approx_numeric() || b.is_approx_numeric()) {
      bool dbl = ak == TypeKind::kDouble || bk == TypeKind::kDouble || ak == TypeKind::kDecimal || bk == TypeKind::kDecimal;
      return dbl ? LogicalType::double_type() : LogicalType::float_type();
    }
    if (a.is_integer() && b.is_integer()) return integer_rank(ak) >= integer_rank(bk) ? a : b;
    LogicalType da = integer_as_decimal(a), db = integer_as_decimal(b);
    int s = std::max(da.scale(), db.scale());
    int ints = std::max(da.precision() - da.scale(), db.precision() - db.scale());
    return adjust_precision_scale(ints + s, s);
  }
  if (a.is_character_string() && b.is_character_string()) {
    if (ak == TypeKind::kChar && bk == TypeKind::kChar && a.length() == b.length()) return a;
    return LogicalType::varchar(std::max(a.length(), b.length()));
  }
  if (a.is_binary_string() && b.is_binary_string()) {
    if (ak == TypeKind::kBinary && bk == TypeKind::kBinary && a.length() == b.length()) return a;
    return LogicalType::varbinary(std::max(a.length(), b.length()));
  }
  auto is_ts = [](TypeKind k) { return k == TypeKind::kTimestamp || k == TypeKind::kTimestampLtz; };
  if ((is_ts(ak) || ak == TypeKind::kDate) && (is_ts(bk) || bk == TypeKind::kDate)) {
    if (ak == TypeKind::kDate && bk == TypeKind::kDate) return a;
    int p = std::max(is_ts(ak) ? a.precision() : 0, is_ts(bk) ? b.precision() : 0);
    if (ak == TypeKind::kTimestampLtz || bk == TypeKind::kTimestampLtz) return LogicalType::timestamp_ltz(p);
    return LogicalType::timestamp(p);
  }
  if (ak == TypeKind::kTime && bk == TypeKind::kTime) return LogicalType::time(std::max(a.precision(), b.precision()));
  if (ak != bk) return std::nullopt;
  switch (ak) {
    case TypeKind::kBoolean: return a;
    case TypeKind::kIntervalDayTime:
      return LogicalType::interval_day_time(IntervalUnit::kDayToSecond, std::max(a.precision(), b.precision()),
                                            std::max(a.scale(), b.scale()));
    case TypeKind::kIntervalYearMonth:
      return LogicalType::interval_year_month(IntervalUnit::kYearToMonth, std::max(a.precision(), b.precision()));
    case TypeKind::kArray: {
      auto e = common_of_two(a.element_type(), b.element_type());
      if (!e) return std::nullopt;
      return LogicalType::array(e->with_nullable(a.element_type().nullable() || b.element_type().nullable()));
    }
    case TypeKind::kMap: {
      if (is_multiset(a) != is_multiset(b)) return std::nullopt;
      if (is_multiset(a)) {
        auto e = common_of_two(a.key_type(), b.key_type());
        if (!e) return std::nullopt;
        return multiset_type(e->with_nullable(a.key_type().nullable() || b.key_type().nullable()));
      }
      auto k = common_of_two(a.key_type(), b.key_type());
      auto v = common_of_two(a.value_type(), b.value_type());
      if (!k || !v) return std::nullopt;
      return LogicalType::map(k->with_nullable(a.key_type().nullable() || b.key_type().nullable()),
                              v->with_nullable(a.value_type().nullable() || b.value_type().nullable()));
    }
    case TypeKind::kRow: {
      if (a.fields().size() != b.fields().size()) return std::nullopt;
      std::vector<RowField> fs;
      for (std::size_t i = 0; i < a.fields().size(); ++i) {
        auto t = common_of_two(a.fields()[i].type, b.fields()[i].type);
        if (!t) return std::nullopt;
        fs.push_back({a.fields()[i].name, t->with_nullable(a.fields()[i].type.nullable() || b.fields()[i].type.nullable())});
      }
      return LogicalType::row(std::move(fs));
    }
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<LogicalType> find_common_type(const std::vector<LogicalType>& types) {
  if (types.empty()) return std::nullopt;
  LogicalType acc = types[0];
  bool nullable = types[0].nullable();
  for (std::size_t i = 1; i < types.size(); ++i) {
    auto c = common_of_two(acc, types[i]);
    if (!c) return std::nullopt;
    acc = *c;
    nullable = nullable || types[i].nullable();
  }
  return acc.with_nullable(nullable);
}

std::optional<std::size_t> Schema::index_of(std::string_view name) const {
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    const auto& n = fields_[i].name;
    if (n.size() == name.size() &&
        std::equal(n.begin(), n.end(), name.begin(), [](char a, char b) { return std::tolower(a) == std::tolower(b); }))
      return i;
  }
  return std::nullopt;
}

std::string Schema::to_string() const {
  std::string s = "(";
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    if (i) s += ", ";
    s += "`" + fields_[i].name + "` " + fields_[i].type.to_string();
  }
  return s + ")";
}

}  // namespace clink::sql
