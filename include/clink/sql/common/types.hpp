#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clink/core/error.hpp"

namespace clink::sql {

// A type error found while deriving, parsing or checking SQL types (the binder turns
// it into a TranslationError with the position of the expression).
class SqlTypeError : public ClinkError {
 public:
  using ClinkError::ClinkError;
};

// The numeric values are written by the batch encoding (column_serde.hpp): append only.
enum class TypeKind : std::uint8_t {
  kNull,  // the type of an untyped NULL literal; every value is NULL
  kBoolean,
  kTinyInt,
  kSmallInt,
  kInt,
  kBigInt,
  kFloat,
  kDouble,
  kDecimal,    // precision 1..38, scale 0..precision; unscaled __int128
  kChar,       // length = precision
  kVarChar,    // length = precision; 2147483647 is STRING
  kBinary,     // length = precision
  kVarBinary,  // length = precision; 2147483647 is BYTES
  kDate,       // int32 days since 1970-01-01
  kTime,       // int32 milliseconds of the day; precision 0..3 kept (Flink's runtime holds ms)
  kTimestamp,  // int64 microseconds since 1970-01-01 00:00:00 (no zone); precision 0..9, held at 6
  kTimestampLtz,       // int64 microseconds since the epoch (an instant); shown in the session zone
  kIntervalDayTime,    // int64 milliseconds
  kIntervalYearMonth,  // int32 months
  kArray,
  kMap,
  kRow,
};

// The unit range of an interval type, as written after INTERVAL (Flink keeps it on the type).
enum class IntervalUnit : std::uint8_t {
  kNone,
  kYear, kYearToMonth, kMonth,
  kDay, kDayToHour, kDayToMinute, kDayToSecond, kHour, kHourToMinute, kHourToSecond,
  kMinute, kMinuteToSecond, kSecond,
};

inline constexpr std::int32_t kMaxVarLength = 2147483647;  // VARCHAR/VARBINARY max (STRING/BYTES)
inline constexpr int kMaxDecimalPrecision = 38;
inline constexpr int kTimestampStoredPrecision = 6;  // microseconds

struct RowField;

// A SQL logical type: kind, nullability and parameters. A small value type; nested types
// share their (immutable) children.
class LogicalType {
 public:
  LogicalType() = default;

  static LogicalType null_type() { return LogicalType(TypeKind::kNull); }
  static LogicalType boolean() { return LogicalType(TypeKind::kBoolean); }
  static LogicalType tinyint() { return LogicalType(TypeKind::kTinyInt); }
  static LogicalType smallint() { return LogicalType(TypeKind::kSmallInt); }
  static LogicalType int_type() { return LogicalType(TypeKind::kInt); }
  static LogicalType bigint() { return LogicalType(TypeKind::kBigInt); }
  static LogicalType float_type() { return LogicalType(TypeKind::kFloat); }
  static LogicalType double_type() { return LogicalType(TypeKind::kDouble); }
  static LogicalType decimal(int precision, int scale);
  static LogicalType char_type(std::int32_t length);
  static LogicalType varchar(std::int32_t length);
  static LogicalType string() { return varchar(kMaxVarLength); }
  static LogicalType binary(std::int32_t length);
  static LogicalType varbinary(std::int32_t length);
  static LogicalType bytes() { return varbinary(kMaxVarLength); }
  static LogicalType date() { return LogicalType(TypeKind::kDate); }
  static LogicalType time(int precision = 0);
  static LogicalType timestamp(int precision = 6);
  static LogicalType timestamp_ltz(int precision = 6);
  // DAY(leading) TO SECOND(fraction) and its sub-ranges; values are milliseconds.
  static LogicalType interval_day_time(IntervalUnit unit = IntervalUnit::kDayToSecond, int leading = 2,
                                       int fraction = 6);
  static LogicalType interval_year_month(IntervalUnit unit = IntervalUnit::kYearToMonth, int leading = 2);
  static LogicalType array(LogicalType element);
  static LogicalType map(LogicalType key, LogicalType value);
  static LogicalType row(std::vector<RowField> fields);

  TypeKind kind() const { return kind_; }
  bool nullable() const { return nullable_; }
  // DECIMAL precision, CHAR/VARCHAR/BINARY/VARBINARY length, TIME/TIMESTAMP precision,
  // interval leading precision.
  int precision() const { return precision_; }
  int length() const { return precision_; }
  // DECIMAL scale, interval fractional precision.
  int scale() const { return scale_; }
  IntervalUnit interval_unit() const { return unit_; }

  const LogicalType& element_type() const;  // ARRAY
  const LogicalType& key_type() const;      // MAP
  const LogicalType& value_type() const;    // MAP
  const std::vector<RowField>& fields() const;  // ROW

  LogicalType with_nullable(bool nullable) const {
    LogicalType t = *this;
    t.nullable_ = nullable;
    return t;
  }
  LogicalType not_null() const { return with_nullable(false); }

  bool is(TypeKind k) const { return kind_ == k; }
  bool is_integer() const;       // TINYINT..BIGINT
  bool is_exact_numeric() const;  // integers and DECIMAL
  bool is_approx_numeric() const { return kind_ == TypeKind::kFloat || kind_ == TypeKind::kDouble; }
  bool is_numeric() const { return is_exact_numeric() || is_approx_numeric(); }
  bool is_character_string() const { return kind_ == TypeKind::kChar || kind_ == TypeKind::kVarChar; }
  bool is_binary_string() const { return kind_ == TypeKind::kBinary || kind_ == TypeKind::kVarBinary; }
  bool is_string_like() const { return is_character_string() || is_binary_string(); }
  bool is_temporal() const;
  bool is_nested() const { return kind_ == TypeKind::kArray || kind_ == TypeKind::kMap || kind_ == TypeKind::kRow; }

  // Flink's summary form: "DECIMAL(10, 2)", "STRING", "TIMESTAMP(3)", "INT NOT NULL",
  // "TIMESTAMP_LTZ(3)", "ARRAY<INT>", "MAP<STRING, BIGINT>", "ROW<`a` INT, `b` STRING>".
  std::string to_string() const;

  // Equality of kind, parameters and nullability (field names of rows included).
  friend bool operator==(const LogicalType& a, const LogicalType& b);
  // Equality ignoring nullability at the top level.
  bool same_ignoring_nullability(const LogicalType& other) const;

 private:
  explicit LogicalType(TypeKind k) : kind_(k) {}

  TypeKind kind_ = TypeKind::kNull;
  bool nullable_ = true;
  IntervalUnit unit_ = IntervalUnit::kNone;
  std::int32_t precision_ = 0;
  std::int32_t scale_ = 0;
  std::shared_ptr<const std::vector<RowField>> children_;  // array: [element]; map: [key, value]; row
};

struct RowField {
  std::string name;
  LogicalType type;
  friend bool operator==(const RowField&, const RowField&) = default;
};

// Parses the text form that to_string() prints, and the usual SQL spellings
// (INTEGER, DEC/NUMERIC, DOUBLE PRECISION, CHARACTER VARYING, TIMESTAMP(3) WITH LOCAL
// TIME ZONE, TIMESTAMP WITHOUT TIME ZONE, ARRAY<T>, MAP<K, V>, ROW<a INT, b STRING>,
// ROW(a INT), INTERVAL DAY TO SECOND(3), ... NOT NULL). Throws SqlTypeError naming the
// offending character offset.
LogicalType parse_logical_type(std::string_view text);

// Flink's implicit cast (LogicalTypeCasts.supportsImplicitCast): a value of `from` is
// usable where `to` is expected without a CAST (numeric widening, CHAR -> VARCHAR,
// DATE -> TIMESTAMP, NULL -> anything, same kind with wider parameters).
bool supports_implicit_cast(const LogicalType& from, const LogicalType& to);
// Flink's rule for writing a query column into a sink column (DynamicSinkUtils uses
// LogicalTypeCasts.supportsImplicitCast, whose rules are by type root): precision, scale
// and length are ignored (DECIMAL(38, 2) goes into DECIMAL(10, 2), VARCHAR into VARCHAR(1),
// TIMESTAMP(9) into TIMESTAMP(3), through a CAST), integers only widen, any numeric goes
// into DECIMAL or DOUBLE, nested types by their children. Nullability is checked apart.
bool supports_assignment_cast(const LogicalType& from, const LogicalType& to);
// Whether an explicit CAST from -> to exists at all.
bool supports_explicit_cast(const LogicalType& from, const LogicalType& to);

// Flink's LogicalTypeMerging.findCommonType: the type all arguments widen to (for CASE,
// COALESCE, IN, UNION, comparison), nullable when any input is; nullopt when none exists.
std::optional<LogicalType> find_common_type(const std::vector<LogicalType>& types);

// The type an integer kind becomes inside DECIMAL arithmetic: TINYINT -> DECIMAL(3, 0),
// SMALLINT -> (5, 0), INT -> (10, 0), BIGINT -> (19, 0).
LogicalType integer_as_decimal(const LogicalType& t);

// Flink's decimal result rules (LogicalTypeMerging): precision capped at 38 with
// adjustPrecisionScale keeping at least min(scale, 6) fractional digits.
LogicalType decimal_add_type(int p1, int s1, int p2, int s2);
LogicalType decimal_multiply_type(int p1, int s1, int p2, int s2);
LogicalType decimal_divide_type(int p1, int s1, int p2, int s2);
LogicalType decimal_mod_type(int p1, int s1, int p2, int s2);

// ROUND/TRUNCATE/FLOOR/CEIL of DECIMAL(p, s) to `digits` fractional digits
// (Flink's findRoundDecimalType): DECIMAL(p, s) when digits >= s, else one more integer
// digit for the carry: DECIMAL(1 + p - s + max(digits, 0), max(digits, 0)).
LogicalType round_decimal_type(int precision, int scale, std::int64_t digits);

enum class ArithmeticOp { kPlus, kMinus, kMultiply, kDivide, kMod };
// The result type of a binary arithmetic operator over two numeric types; nullable when
// either input is. Integer op integer keeps Flink's type (the wider of both; MOD takes
// the divisor's type), DECIMAL follows the rules above, FLOAT/DOUBLE widen to DOUBLE.
std::optional<LogicalType> arithmetic_result_type(ArithmeticOp op, const LogicalType& a, const LogicalType& b);

// SUM: integers keep their type, DECIMAL(p, s) -> DECIMAL(38, s), FLOAT/DOUBLE -> DOUBLE.
// AVG: integers keep their type (integer average), DECIMAL(p, s) -> DECIMAL(38, max(s, 6)).
// Both are nullable (empty groups give NULL).
LogicalType sum_result_type(const LogicalType& arg);
LogicalType avg_result_type(const LogicalType& arg);

// Named, typed fields of a relation; shared immutably by every batch that carries it.
class Schema {
 public:
  Schema() = default;
  explicit Schema(std::vector<RowField> fields) : fields_(std::move(fields)) {}

  std::size_t size() const { return fields_.size(); }
  const RowField& field(std::size_t i) const { return fields_[i]; }
  const LogicalType& type(std::size_t i) const { return fields_[i].type; }
  const std::string& name(std::size_t i) const { return fields_[i].name; }
  const std::vector<RowField>& fields() const { return fields_; }
  // Case-insensitive lookup, as Flink resolves unquoted identifiers; nullopt when absent.
  std::optional<std::size_t> index_of(std::string_view name) const;
  // "(`a` INT, `b` STRING)".
  std::string to_string() const;
  LogicalType as_row_type() const { return LogicalType::row(fields_); }

  friend bool operator==(const Schema&, const Schema&) = default;

 private:
  std::vector<RowField> fields_;
};
using SchemaPtr = std::shared_ptr<const Schema>;

inline SchemaPtr make_schema(std::vector<RowField> fields) {
  return std::make_shared<const Schema>(std::move(fields));
}

}  // namespace clink::sql
