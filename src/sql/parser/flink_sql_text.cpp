// Calcite's unparse of an expression (see flink_sql_text.hpp). Precedences are Calcite's
// (SqlStdOperatorTable): a left operand is parenthesised when it binds less tightly than
// its operator, a right operand when it binds no more tightly (operators associate to
// the left). Node kinds no Flink table definition prints this way (subqueries, JSON
// clauses, OVER) keep the canonical form.
#include "clink/sql/parser/flink_sql_text.hpp"

#include <cctype>

#include "clink/sql/parser/type_syntax.hpp"

namespace clink::sql::ast {
namespace {

constexpr int kOr = 22, kAnd = 24, kNot = 26, kPostfix = 28, kComparison = 30, kBetween = 32, kAdditive = 40,
              kMultiplicative = 60, kPrefix = 80, kAtom = 100;

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

int binary_precedence(const std::string& op) {
  const std::string o = upper(op);
  if (o == "OR") return kOr;
  if (o == "AND") return kAnd;
  if (o == "+" || o == "-") return kAdditive;
  if (o == "*" || o == "/" || o == "%" || o == "||") return kMultiplicative;
  return kComparison;  // = <> < <= > >= IS [NOT] DISTINCT FROM
}

struct Printed {
  std::string text;
  int precedence;
};

struct FlinkPrinter {
  Printed print(const ExprPtr& e) const { return std::visit(*this, e->node); }
  std::string text(const ExprPtr& e) const { return print(e).text; }
  // An operand: parenthesised when it binds less tightly than `at_least`.
  std::string operand(const ExprPtr& e, int at_least) const {
    Printed p = print(e);
    return p.precedence < at_least ? "(" + p.text + ")" : p.text;
  }
  std::string list(const std::vector<ExprPtr>& es) const {
    std::string s;
    for (std::size_t i = 0; i < es.size(); ++i) s += (i ? ", " : "") + text(es[i]);
    return s;
  }

  Printed operator()(const Literal& l) const {
    // Calcite prints TIMESTAMP_LTZ literals as TIMESTAMP WITH LOCAL TIME ZONE; the rest as written.
    if (l.kind == Literal::Kind::TimestampLtz) return {"TIMESTAMP WITH LOCAL TIME ZONE " + quote_string(l.text), kAtom};
    const bool negative = !l.text.empty() && l.text[0] == '-';
    return {to_string(Expr{{}, l}), negative ? kPrefix : kAtom};
  }
  Printed operator()(const IntervalLiteral& i) const { return {to_string(Expr{{}, i}), kAtom}; }
  Printed operator()(const ColumnRef& c) const {
    std::string s;
    for (std::size_t i = 0; i < c.names.size(); ++i) s += (i ? "." : "") + backquoted_identifier(c.names[i]);
    return {s, kAtom};
  }
  Printed operator()(const Unary& u) const {
    if (upper(u.op) == "NOT") return {"NOT " + operand(u.operand, kNot + 1), kNot};
    return {u.op + " " + operand(u.operand, kPrefix), kPrefix};
  }
  Printed operator()(const Binary& b) const {
    const int p = binary_precedence(b.op);
    const std::string op = p == kOr || p == kAnd ? upper(b.op) : b.op;
    return {operand(b.left, p) + " " + op + " " + operand(b.right, p + 1), p};
  }
  Printed operator()(const IsTest& t) const {
    static const char* kWhat[] = {"NULL", "TRUE", "FALSE", "UNKNOWN", "JSON"};
    std::string s = operand(t.operand, kPostfix) + (t.negated ? " IS NOT " : " IS ") + kWhat[static_cast<int>(t.what)];
    if (t.what == IsTest::What::Json) s += " " + t.json_kind;
    return {s, kPostfix};
  }
  Printed operator()(const Between& b) const {
    return {operand(b.value, kBetween + 1) + (b.negated ? " NOT" : "") + " BETWEEN " +
                (b.symmetric ? "SYMMETRIC " : "ASYMMETRIC ") + operand(b.low, kBetween + 1) + " AND " +
                operand(b.high, kBetween + 1),
            kBetween};
  }
  Printed operator()(const InList& i) const {
    return {operand(i.value, kBetween + 1) + (i.negated ? " NOT IN (" : " IN (") + list(i.list) + ")", kBetween};
  }
  Printed operator()(const Like& l) const {
    std::string s = operand(l.value, kBetween + 1) + (l.negated ? " NOT" : "") + (l.similar ? " SIMILAR TO " : " LIKE ") +
                    operand(l.pattern, kBetween + 1);
    if (l.escape) s += " ESCAPE " + operand(l.escape, kBetween + 1);
    return {s, kBetween};
  }
  Printed operator()(const FunctionCall& f) const {
    if (f.json || f.over || f.filter || !f.arg_names.empty() || f.name.size() != 1) return {to_string(Expr{{}, f}), kAtom};
    std::string s = upper(f.name[0]) + "(";
    if (f.distinct) s += "DISTINCT ";
    if (f.star) s += "*";
    s += list(f.args);
    if (f.ignore_nulls) s += " IGNORE NULLS";
    return {s + ")", kAtom};
  }
  Printed operator()(const Case& c) const {
    std::string s = "CASE";
    if (c.operand) s += " " + text(c.operand);
    for (const auto& w : c.whens) s += " WHEN " + text(w.when) + " THEN " + text(w.then);
    if (c.otherwise) s += " ELSE " + text(c.otherwise);
    return {s + " END", kAtom};
  }
  Printed operator()(const Cast& c) const {
    std::string type = to_string(c.type);
    if (type == "INT" || type.rfind("INT ", 0) == 0) type = "INTEGER" + type.substr(3);
    return {std::string(c.try_cast ? "TRY_CAST(" : "CAST(") + text(c.value) + " AS " + type + ")", kAtom};
  }
  Printed operator()(const Extract& e) const { return {"EXTRACT(" + e.unit + " FROM " + text(e.value) + ")", kAtom}; }
  Printed operator()(const FloorCeil& f) const {
    return {std::string(f.ceil ? "CEIL(" : "FLOOR(") + text(f.value) + " TO " + f.unit + ")", kAtom};
  }
  Printed operator()(const ArrayConstructor& a) const { return {"ARRAY[" + list(a.elements) + "]", kAtom}; }
  Printed operator()(const MapConstructor& m) const { return {"MAP[" + list(m.keys_and_values) + "]", kAtom}; }
  Printed operator()(const RowConstructor& r) const { return {"ROW(" + list(r.fields) + ")", kAtom}; }
  Printed operator()(const Subscript& s) const { return {operand(s.base, kAtom) + "[" + text(s.index) + "]", kAtom}; }
  Printed operator()(const FieldAccess& f) const { return {operand(f.base, kAtom) + "." + backquoted_identifier(f.field), kAtom}; }
  template <class Node>
  Printed operator()(const Node& n) const {
    return {to_string(Expr{{}, n}), kAtom};
  }
};

}  // namespace

std::string to_flink_string(const Expr& expr) { return std::visit(FlinkPrinter{}, expr.node).text; }

std::string backquoted_identifier(const std::string& name) {
  std::string out = "`";
  for (char c : name) out += c == '`' ? std::string("``") : std::string(1, c);
  return out + "`";
}

}  // namespace clink::sql::ast
