#pragma once
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "clink/sql/common/decimal.hpp"

namespace clink::sql {

// One SQL value outside a column: literals, UDF arguments, test rows, aggregate results.
// It carries no type: the LogicalType next to it (a column's, a literal's) says how to
// read it. Hot paths work on columns, never on Values.
//   NULL                                   std::monostate
//   BOOLEAN                                bool
//   TINYINT..BIGINT, DATE (days), TIME (ms), TIMESTAMP[_LTZ] (micros),
//   INTERVAL DAY-TIME (ms), YEAR-MONTH (months)      std::int64_t
//   FLOAT, DOUBLE                          double
//   DECIMAL (unscaled at the type's scale)  Int128
//   CHAR/VARCHAR/BINARY/VARBINARY          std::string
//   ARRAY, ROW (fields in order), MAP (key, value, key, value, ...)   ValueList
struct Value;
struct ValueList {
  std::vector<Value> items;
  friend bool operator==(const ValueList&, const ValueList&);
};

struct Value {
  std::variant<std::monostate, bool, std::int64_t, double, Int128, std::string, ValueList> v;

  Value() = default;
  static Value null() { return Value(); }
  Value(bool b) : v(b) {}  // NOLINT: implicit, so test rows read naturally
  Value(int i) : v(static_cast<std::int64_t>(i)) {}
  Value(std::int64_t i) : v(i) {}
  Value(double d) : v(d) {}
  Value(const char* s) : v(std::string(s)) {}
  Value(std::string s) : v(std::move(s)) {}
  Value(ValueList l) : v(std::move(l)) {}
  static Value decimal(Int128 unscaled) {
    Value x;
    x.v = unscaled;
    return x;
  }

  bool is_null() const { return std::holds_alternative<std::monostate>(v); }
  bool as_bool() const { return std::get<bool>(v); }
  std::int64_t as_int() const { return std::get<std::int64_t>(v); }
  double as_double() const { return std::get<double>(v); }
  Int128 as_decimal() const { return std::get<Int128>(v); }
  const std::string& as_string() const { return std::get<std::string>(v); }
  const ValueList& as_list() const { return std::get<ValueList>(v); }

  friend bool operator==(const Value& a, const Value& b) { return a.v == b.v; }
};

inline bool operator==(const ValueList& a, const ValueList& b) { return a.items == b.items; }

}  // namespace clink::sql
