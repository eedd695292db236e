// Filter pushdown for the jdbc source (jdbc_filter_sql.hpp).
#include "jdbc_filter_sql.hpp"

#include <array>

#include "clink/connectors/jdbc/pg_values.hpp"
#include "clink/sql/common/column.hpp"

namespace clink::sql {

namespace {

bool comparable_type(const LogicalType& t) {
  switch (t.kind()) {
    case TypeKind::kBoolean:
    case TypeKind::kTinyInt:
    case TypeKind::kSmallInt:
    case TypeKind::kInt:
    case TypeKind::kBigInt:
    case TypeKind::kDecimal:
    case TypeKind::kVarChar:
    case TypeKind::kDate:
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampLtz: return true;
    default: return false;
  }
}

// A cast that keeps every value as it is: an integer to a wider integer or a DECIMAL, a
// DECIMAL to one of the same scale and no smaller precision (the binder adds such casts to
// compare a column with a literal of another type).
bool widening_cast(const Expr& e) {
  if (e.try_cast || e.args.size() != 1) return false;
  const LogicalType& from = e.args[0]->type;
  const LogicalType& to = e.type;
  if (from.kind() == TypeKind::kDecimal)
    return to.kind() == TypeKind::kDecimal && to.scale() == from.scale() && to.precision() >= from.precision();
  return from.is_integer() && (to.is_integer() || to.kind() == TypeKind::kDecimal) &&
         (to.kind() == TypeKind::kDecimal || static_cast<int>(to.kind()) >= static_cast<int>(from.kind()));
}

class Translator {
 public:
  explicit Translator(const std::vector<std::string>& columns) : columns_(columns) {}

  // A value operand: a column or a literal (through widening casts of integer columns).
  bool operand(const Expr& e, std::string& out) {
    switch (e.kind) {
      case ExprKind::kColumnRef:
        if (e.column_index >= columns_.size() || !comparable_type(e.type)) return false;
        out += columns_[e.column_index];
        return true;
      case ExprKind::kLiteral: {
        if (e.literal.is_null() || !comparable_type(e.type)) return false;
        Column c(e.type);
        c.append_value(e.literal);
        append_pg_literal(c, 0, out);
        return true;
      }
      case ExprKind::kCast:
        return widening_cast(e) && e.args[0]->kind == ExprKind::kColumnRef && operand(*e.args[0], out);
      default: return false;
    }
  }

  bool predicate(const Expr& e, std::string& out) {
    switch (e.kind) {
      case ExprKind::kColumnRef:
        return e.type.kind() == TypeKind::kBoolean && operand(e, out);
      case ExprKind::kAnd:
      case ExprKind::kOr: {
        out += '(';
        for (std::size_t i = 0; i < e.args.size(); ++i) {
          if (i) out += e.kind == ExprKind::kAnd ? " AND " : " OR ";
          if (!predicate(*e.args[i], out)) return false;
        }
        out += ')';
        return true;
      }
      case ExprKind::kInList: {
        out += '(';
        if (!operand(*e.args[0], out)) return false;
        out += e.negated ? " NOT IN (" : " IN (";
        for (std::size_t i = 1; i < e.args.size(); ++i) {
          if (i > 1) out += ", ";
          if (e.args[i]->kind != ExprKind::kLiteral || !operand(*e.args[i], out)) return false;
        }
        out += "))";
        return true;
      }
      case ExprKind::kCall: return call(e, out);
      default: return false;
    }
  }

 private:
  bool call(const Expr& e, std::string& out) {
    const std::string& f = e.name;
    if ((f == "IS NULL" || f == "IS NOT NULL") && e.args.size() == 1) {
      out += '(';
      if (!operand(*e.args[0], out)) return false;
      out += ' ' + f + ')';
      return true;
    }
    if (f == "NOT" && e.args.size() == 1) {
      out += "(NOT ";
      if (!predicate(*e.args[0], out)) return false;
      out += ')';
      return true;
    }
    if (f == "LIKE" && e.args.size() == 2) {
      const Expr& pattern = *e.args[1];
      if (pattern.kind != ExprKind::kLiteral || pattern.literal.is_null() ||
          pattern.literal.as_string().find('\\') != std::string::npos)
        return false;
      out += '(';
      if (!operand(*e.args[0], out)) return false;
      out += " LIKE ";
      if (!operand(pattern, out)) return false;
      out += ')';
      return true;
    }
    static constexpr std::array<const char*, 6> kComparisons = {"=", "<>", "<", "<=", ">", ">="};
    bool comparison = false;
    for (const char* c : kComparisons) comparison = comparison || f == c;
    if (!comparison || e.args.size() != 2) return false;
    const bool strings = e.args[0]->type.is_character_string() || e.args[1]->type.is_character_string();
    if (strings && f != "=" && f != "<>") return false;
    out += '(';
    if (!operand(*e.args[0], out)) return false;
    out += ' ' + f + ' ';
    if (!operand(*e.args[1], out)) return false;
    out += ')';
    return true;
  }

  const std::vector<std::string>& columns_;
};

}  // namespace

std::optional<std::string> jdbc_filter_sql(const Expr& e, const std::vector<std::string>& columns) {
  std::string out;
  Translator t(columns);
  if (!t.predicate(e, out)) return std::nullopt;
  return out;
}

}  // namespace clink::sql
