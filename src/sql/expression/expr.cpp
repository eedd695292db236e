#include "clink/sql/expression/expr.hpp"

#include <memory>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "clink/sql/common/column.hpp"
#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "clink/sql/common/value_format.hpp"
#include "clink/sql/expression/expr_compiler.hpp"
#include "clink/sql/function/function_registry.hpp"

namespace clink::sql {

namespace {

std::shared_ptr<Expr> make(ExprKind kind, LogicalType type, std::vector<ExprPtr> args = {}) {
  auto e = std::make_shared<Expr>();
  e->kind = kind;
  e->type = std::move(type);
  e->args = std::move(args);
  return e;
}

// The values of the constant calls and casts built so far on this thread, so that a
// chain of them is evaluated once per call over its arguments' values, not once per
// prefix of the chain (a 3 000-term `+` chain took 8 s to bind, 1 000 nested ARRAYs 48 s).
// Keyed by address and checked against a weak pointer: an address is reused once its
// expression is gone.
struct ConstantValue {
  std::weak_ptr<const Expr> expr;
  Value value;
};
thread_local std::unordered_map<const Expr*, ConstantValue> constant_values;

const Value* known_constant_value(const ExprPtr& e) {
  auto it = constant_values.find(e.get());
  if (it == constant_values.end()) return nullptr;
  if (it->second.expr.lock() != e) {
    constant_values.erase(it);
    return nullptr;
  }
  return &it->second.value;
}

// ARRAY[...] and ROW(...) over known values: the value is the arguments' values in order
// (the type is NOT NULL already), recorded without evaluating. The arguments' values move
// in, so a constructor nested n deep costs O(n), not a copy of every level below per level.
bool cache_constructor_value(const std::shared_ptr<Expr>& e) {
  if (e->kind != ExprKind::kCall || (e->name != "ARRAY" && e->name != "ROW")) return false;
  for (const auto& a : e->args)
    if (!a->is_literal() && !known_constant_value(a)) return false;
  ValueList items;
  items.items.reserve(e->args.size());
  for (const auto& a : e->args) {
    if (a->is_literal()) {
      items.items.push_back(a->literal);
      continue;
    }
    auto it = constant_values.find(a.get());
    items.items.push_back(std::move(it->second.value));
    constant_values.erase(it);  // is_constant(a) still holds: it is a constructor over constants
  }
  constant_values[e.get()] = ConstantValue{e, Value(std::move(items))};
  return true;
}

// Whether e is a literal, or a deterministic call / cast over constants only.
bool is_constant(const ExprPtr& e) {
  if (e->is_literal() || known_constant_value(e)) return true;
  bool call = e->kind == ExprKind::kCall && e->function && e->function->deterministic;
  if (!call && e->kind != ExprKind::kCast) return false;
  for (const auto& a : e->args)
    if (!is_constant(a)) return false;
  return true;
}

// A call over constants has one known value: when that value is not NULL the call's type
// is NOT NULL (SELECT 1 + 1 is INT NOT NULL, as in Flink), even where the function can
// give NULL for other non-NULL arguments (integer overflow, a failed parse). A call that
// fails or is NULL keeps its type.
void tighten_constant_nullability(const std::shared_ptr<Expr>& e) {
  if (!is_constant(e)) return;
  if (cache_constructor_value(e)) return;
  try {
    ColumnBatch batch(make_schema({}), 1);
    batch.commit_rows(1);
    // The call over its arguments' known values (literals), not over their subtrees.
    auto shallow = std::make_shared<Expr>(*e);
    for (auto& a : shallow->args)
      if (const Value* v = known_constant_value(a)) a = expr::literal(*v, a->type);
    CompiledExpr compiled(shallow, SessionContext{});
    Column c = compiled.evaluate_owned(batch);
    // A cache: the values of expressions gone are dropped every 1 024 insertions (a long
    // session plans many statements), and it never holds more than 100 000.
    static thread_local std::size_t insertions = 0;
    if (++insertions % 1024 == 0) std::erase_if(constant_values, [](const auto& kv) { return kv.second.expr.expired(); });
    if (constant_values.size() > 100'000) constant_values.clear();
    constant_values[e.get()] = ConstantValue{e, c.value_at(0)};
    if (c.is_valid(0)) e->type = e->type.not_null();
  } catch (const std::exception&) {
    // raises at runtime, where Flink raises it; the type stays as it was
  }
}

std::string literal_text(const Expr& e) {
  if (e.literal.is_null()) return "null";
  Column c(e.type);
  c.append_value(e.literal);
  std::string s;
  append_cell_string(c, 0, *TimeZone::utc(), true, s);
  if (e.type.is_character_string()) return "'" + s + "'";
  return s;
}

void require_boolean(const ExprPtr& e, const char* what) {
  if (!e->type.is(TypeKind::kBoolean) && !e->type.is(TypeKind::kNull))
    throw SqlTypeError(fmt::format("{} needs a BOOLEAN operand, got {} for {}", what, e->type.to_string(), e->to_string()));
}

}  // namespace

std::string Expr::to_string() const {
  auto joined = [&](std::size_t from) {
    std::string s;
    for (std::size_t i = from; i < args.size(); ++i) {
      if (i > from) s += ", ";
      s += args[i]->to_string();
    }
    return s;
  };
  switch (kind) {
    case ExprKind::kColumnRef: return name.empty() ? fmt::format("${}", column_index) : name;
    case ExprKind::kLiteral: return literal_text(*this);
    case ExprKind::kCall: return fmt::format("{}({})", name, joined(0));
    case ExprKind::kCast:
      return fmt::format("{}({} AS {})", try_cast ? "TRY_CAST" : "CAST", args[0]->to_string(), type.with_nullable(true).to_string());
    case ExprKind::kCase: {
      std::string s = "CASE(";
      s += joined(0);
      return s + ")";
    }
    case ExprKind::kAnd: return fmt::format("AND({})", joined(0));
    case ExprKind::kOr: return fmt::format("OR({})", joined(0));
    case ExprKind::kCoalesce: return fmt::format("COALESCE({})", joined(0));
    case ExprKind::kInList:
      return fmt::format("{}({}, {})", negated ? "NOT IN" : "IN", args[0]->to_string(), joined(1));
  }
  return "?";
}

namespace expr {

ExprPtr column(std::size_t index, LogicalType type, std::string name) {
  auto e = make(ExprKind::kColumnRef, std::move(type));
  e->column_index = index;
  e->name = std::move(name);
  return e;
}

ExprPtr literal(Value value, LogicalType type) {
  if (value.is_null()) type = type.with_nullable(true);
  auto e = make(ExprKind::kLiteral, std::move(type));
  e->literal = std::move(value);
  return e;
}

ExprPtr null_literal(LogicalType type) { return literal(Value::null(), std::move(type)); }

static ExprPtr make_cast(ExprPtr e, LogicalType to, bool try_cast) {
  if (!supports_explicit_cast(e->type, to))
    throw SqlTypeError(fmt::format("Cannot cast {} of type {} to {}", e->to_string(), e->type.to_string(), to.to_string()));
  // A failing CAST is an error, so it keeps the input's nullability (Flink); TRY_CAST
  // and casts to DECIMAL (overflow gives NULL, as Flink) may produce NULL.
  bool nullable = e->type.nullable() || try_cast || to.is(TypeKind::kDecimal);
  auto c = make(ExprKind::kCast, to.with_nullable(nullable), {std::move(e)});
  c->try_cast = try_cast;
  tighten_constant_nullability(c);
  return c;
}

ExprPtr cast(ExprPtr e, LogicalType to) { return make_cast(std::move(e), std::move(to), false); }
ExprPtr try_cast(ExprPtr e, LogicalType to) { return make_cast(std::move(e), std::move(to), true); }

ExprPtr cast_if_needed(ExprPtr e, const LogicalType& to) {
  if (e->type.same_ignoring_nullability(to)) return e;
  auto c = make(ExprKind::kCast, to.with_nullable(e->type.nullable()), {e});
  if (!supports_explicit_cast(e->type, to))
    throw SqlTypeError(fmt::format("Cannot cast {} of type {} to {}", e->to_string(), e->type.to_string(), to.to_string()));
  return c;
}

ExprPtr and_(std::vector<ExprPtr> args) {
  bool nullable = false;
  for (auto& a : args) {
    require_boolean(a, "AND");
    a = cast_if_needed(a, LogicalType::boolean());
    nullable = nullable || a->type.nullable();
  }
  return make(ExprKind::kAnd, LogicalType::boolean().with_nullable(nullable), std::move(args));
}

ExprPtr or_(std::vector<ExprPtr> args) {
  bool nullable = false;
  for (auto& a : args) {
    require_boolean(a, "OR");
    a = cast_if_needed(a, LogicalType::boolean());
    nullable = nullable || a->type.nullable();
  }
  return make(ExprKind::kOr, LogicalType::boolean().with_nullable(nullable), std::move(args));
}

static LogicalType common_or_throw(const std::vector<ExprPtr>& es, const char* what) {
  std::vector<LogicalType> ts;
  for (const auto& e : es) ts.push_back(e->type);
  auto t = find_common_type(ts);
  if (!t) {
    std::string list;
    for (std::size_t i = 0; i < ts.size(); ++i) list += (i ? ", " : "") + ts[i].to_string();
    throw SqlTypeError(fmt::format("{} has operands of incompatible types: {}", what, list));
  }
  if (t->is(TypeKind::kNull)) return LogicalType::null_type();
  return *t;
}

ExprPtr coalesce(std::vector<ExprPtr> args) {
  if (args.empty()) throw SqlTypeError("COALESCE needs at least one argument");
  LogicalType t = common_or_throw(args, "COALESCE");
  bool nullable = true;
  for (auto& a : args) {
    nullable = nullable && a->type.nullable();
    a = cast_if_needed(a, t);
  }
  return make(ExprKind::kCoalesce, t.with_nullable(nullable), std::move(args));
}

ExprPtr case_when(std::vector<std::pair<ExprPtr, ExprPtr>> branches, ExprPtr otherwise) {
  if (branches.empty()) throw SqlTypeError("CASE needs at least one WHEN");
  std::vector<ExprPtr> values;
  for (auto& [c, v] : branches) {
    require_boolean(c, "CASE WHEN");
    values.push_back(v);
  }
  if (otherwise) values.push_back(otherwise);
  LogicalType t = common_or_throw(values, "CASE");
  bool nullable = !otherwise;
  for (const auto& v : values) nullable = nullable || v->type.nullable();
  std::vector<ExprPtr> args;
  for (auto& [c, v] : branches) {
    args.push_back(cast_if_needed(c, LogicalType::boolean()));
    args.push_back(cast_if_needed(v, t));
  }
  if (otherwise) args.push_back(cast_if_needed(otherwise, t));
  return make(ExprKind::kCase, t.with_nullable(nullable), std::move(args));
}

ExprPtr in_list(ExprPtr value, std::vector<ExprPtr> list, bool negated) {
  if (list.empty()) throw SqlTypeError("IN needs at least one value");
  std::vector<ExprPtr> all{value};
  all.insert(all.end(), list.begin(), list.end());
  LogicalType t = common_or_throw(all, "IN");
  bool nullable = false;
  for (auto& a : all) {
    nullable = nullable || a->type.nullable();
    a = cast_if_needed(a, t);
  }
  auto e = make(ExprKind::kInList, LogicalType::boolean().with_nullable(nullable), std::move(all));
  e->negated = negated;
  return e;
}

ExprPtr call(const FunctionRegistry& registry, std::string_view name, std::vector<ExprPtr> args) {
  std::string upper = upper_ascii(name);
  auto arity = [&](std::size_t n) {
    if (args.size() != n) throw SqlTypeError(fmt::format("{} takes {} arguments, got {}", upper, n, args.size()));
  };
  if (upper == "AND") return and_(std::move(args));
  if (upper == "OR") return or_(std::move(args));
  if (upper == "COALESCE") return coalesce(std::move(args));
  if (upper == "IFNULL") {
    arity(2);
    return coalesce(std::move(args));
  }
  if (upper == "IF") {
    arity(3);
    return case_when({{args[0], args[1]}}, args[2]);
  }
  if (upper == "BETWEEN" || upper == "NOT BETWEEN") {
    arity(3);
    if (upper == "BETWEEN")
      return and_({call(registry, ">=", {args[0], args[1]}), call(registry, "<=", {args[0], args[2]})});
    return or_({call(registry, "<", {args[0], args[1]}), call(registry, ">", {args[0], args[2]})});
  }
  std::vector<LogicalType> types;
  for (const auto& a : args) types.push_back(a->type);
  std::optional<Value> digits_literal;  // ROUND/TRUNCATE digits, before any cast
  if (args.size() == 2 && args[1]->is_literal()) digits_literal = args[1]->literal;
  auto f = std::make_shared<ResolvedFunction>(registry.resolve(upper, types));
  for (std::size_t i = 0; i < args.size() && i < f->arg_types.size(); ++i)
    args[i] = cast_if_needed(args[i], f->arg_types[i]);
  if ((upper == "ROUND" || upper == "TRUNCATE") && args.size() == 2 && args[0]->type.is(TypeKind::kDecimal)) {
    // The result scale depends on the digit count, which must then be a constant.
    if (!digits_literal)
      throw SqlTypeError(fmt::format("{} of a DECIMAL needs a constant number of digits, got {}", upper, args[1]->to_string()));
    std::int64_t digits = digits_literal->is_null() ? 0 : digits_literal->as_int();
    f->return_type = round_decimal_type(args[0]->type.precision(), args[0]->type.scale(), digits).with_nullable(true);
  }
  if (upper == "FIELD") {
    // The field's type depends on the constant field name/index.
    if (!args[1]->is_literal()) throw SqlTypeError("FIELD needs a constant field name or index, got " + args[1]->to_string());
    f->return_type = row_field_type(args[0]->type, args[1]->literal);
  }
  auto e = make(ExprKind::kCall, f->return_type, std::move(args));
  e->name = f->name;
  e->function = std::move(f);
  tighten_constant_nullability(e);
  return e;
}

}  // namespace expr

}  // namespace clink::sql
