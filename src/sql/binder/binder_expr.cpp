// Binder: scalar expressions (AST -> bound Expr through expr.hpp's builders).
#include <cctype>

#include "binder_internal.hpp"
#include "clink/sql/common/decimal.hpp"
#include "clink/sql/common/temporal.hpp"

namespace clink::sql {

std::string upper_name(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool is_aggregate_name(const std::string& u, const FunctionRegistry& registry) {
  // Flink's aggregates this binder does not run are recognised so a call gets "not
  // supported" rather than "no such function".
  static const std::set<std::string> kNames = {"COUNT", "SUM", "AVG", "MIN", "MAX", "SUM0", "LISTAGG", "FIRST_VALUE",
                                               "LAST_VALUE", "STDDEV_POP", "STDDEV_SAMP", "VAR_POP", "VAR_SAMP",
                                               "COLLECT", "ARRAY_AGG", "STDDEV", "VARIANCE", "LEAD"};
  return kNames.count(u) > 0 || registry.has_aggregate(u);
}

void walk_children(const ast::Expr& e, const std::function<void(const ast::ExprPtr&)>& f) {
  std::visit(
      [&](const auto& n) {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, ast::Unary>) f(n.operand);
        else if constexpr (std::is_same_v<T, ast::Binary>) { f(n.left); f(n.right); }
        else if constexpr (std::is_same_v<T, ast::IsTest>) f(n.operand);
        else if constexpr (std::is_same_v<T, ast::Between>) { f(n.value); f(n.low); f(n.high); }
        else if constexpr (std::is_same_v<T, ast::InList>) { f(n.value); for (const auto& x : n.list) f(x); }
        else if constexpr (std::is_same_v<T, ast::Like>) { f(n.value); f(n.pattern); f(n.escape); }
        else if constexpr (std::is_same_v<T, ast::FunctionCall>) { for (const auto& x : n.args) f(x); f(n.filter); }
        else if constexpr (std::is_same_v<T, ast::Case>) {
          f(n.operand);
          for (const auto& w : n.whens) { f(w.when); f(w.then); }
          f(n.otherwise);
        }
        else if constexpr (std::is_same_v<T, ast::Cast>) f(n.value);
        else if constexpr (std::is_same_v<T, ast::Extract>) f(n.value);
        else if constexpr (std::is_same_v<T, ast::Position>) { f(n.needle); f(n.haystack); }
        else if constexpr (std::is_same_v<T, ast::Substring>) { f(n.value); f(n.from); f(n.length); }
        else if constexpr (std::is_same_v<T, ast::Trim>) { f(n.characters); f(n.value); }
        else if constexpr (std::is_same_v<T, ast::Overlay>) { f(n.value); f(n.placing); f(n.from); f(n.length); }
        else if constexpr (std::is_same_v<T, ast::FloorCeil>) f(n.value);
        else if constexpr (std::is_same_v<T, ast::ArrayConstructor>) { for (const auto& x : n.elements) f(x); }
        else if constexpr (std::is_same_v<T, ast::MapConstructor>) { for (const auto& x : n.keys_and_values) f(x); }
        else if constexpr (std::is_same_v<T, ast::RowConstructor>) { for (const auto& x : n.fields) f(x); }
        else if constexpr (std::is_same_v<T, ast::Subscript>) { f(n.base); f(n.index); }
        else if constexpr (std::is_same_v<T, ast::FieldAccess>) f(n.base);
      },
      e.node);
}

namespace {

// Replaces column references to `params` (indices 0..n-1) by the argument expressions:
// inlines a SQL function body. Types are unchanged, so the nodes are copied as they are.
ExprPtr substitute(const ExprPtr& e, const std::vector<ExprPtr>& args) {
  if (e->kind == ExprKind::kColumnRef) return args.at(e->column_index);
  if (e->args.empty()) return e;
  auto c = std::make_shared<Expr>(*e);
  for (auto& a : c->args) a = substitute(a, args);
  return c;
}

std::int64_t unit_ms(const std::string& unit) {
  if (unit == "WEEK") return 7 * 86400000LL;
  if (unit == "DAY") return 86400000LL;
  if (unit == "HOUR") return 3600000LL;
  if (unit == "MINUTE") return 60000LL;
  if (unit == "SECOND") return 1000LL;
  if (unit == "MILLISECOND") return 1LL;
  return 0;
}

IntervalUnit day_time_unit(const std::string& from, const std::string& to) {
  if (to.empty()) {
    if (from == "DAY" || from == "WEEK") return IntervalUnit::kDay;
    if (from == "HOUR") return IntervalUnit::kHour;
    if (from == "MINUTE") return IntervalUnit::kMinute;
    return IntervalUnit::kSecond;
  }
  if (from == "DAY") return to == "HOUR" ? IntervalUnit::kDayToHour : to == "MINUTE" ? IntervalUnit::kDayToMinute : IntervalUnit::kDayToSecond;
  if (from == "HOUR") return to == "MINUTE" ? IntervalUnit::kHourToMinute : IntervalUnit::kHourToSecond;
  return IntervalUnit::kMinuteToSecond;
}

// The value of an INTERVAL literal: milliseconds (day-time) or months (year-month).
std::pair<std::int64_t, bool /*year_month*/> interval_value(const ast::IntervalLiteral& l, SourcePosition pos) {
  std::string v = l.value;
  bool neg = l.negative;
  std::size_t i = 0;
  while (i < v.size() && v[i] == ' ') ++i;
  if (i < v.size() && (v[i] == '-' || v[i] == '+')) {
    neg = neg != (v[i] == '-');
    ++i;
  }
  v = v.substr(i);
  auto bad = [&]() -> std::pair<std::int64_t, bool> {
    fail(pos, fmt::format("invalid INTERVAL literal '{}' {}{}", l.value, l.from_unit, l.to_unit.empty() ? "" : " TO " + l.to_unit));
  };
  auto number = [&](const std::string& s) -> std::int64_t {
    if (s.empty() || s.size() > 18) bad();
    for (char c : s)
      if (!std::isdigit(static_cast<unsigned char>(c))) bad();
    return std::stoll(s);
  };
  const std::string& from = l.from_unit;
  const std::string& to = l.to_unit;
  if (from == "YEAR" || from == "MONTH") {
    std::int64_t months = 0;
    if (to.empty()) months = number(v) * (from == "YEAR" ? 12 : 1);
    else {
      auto dash = v.find('-');
      if (dash == std::string::npos || to != "MONTH") bad();
      months = number(v.substr(0, dash)) * 12 + number(v.substr(dash + 1));
    }
    return {neg ? -months : months, true};
  }
  if (unit_ms(from) == 0) bad();
  // Fields from `from` to `to` (or just `from`): DAY then ' ', others ':', seconds may carry a fraction.
  static const std::vector<std::string> kOrder = {"DAY", "HOUR", "MINUTE", "SECOND"};
  std::vector<std::string> units;
  if (to.empty()) units = {from};
  else {
    bool on = false;
    for (const auto& u : kOrder) {
      if (u == from) on = true;
      if (on) units.push_back(u);
      if (u == to) break;
    }
    if (units.empty() || units.back() != to) bad();
  }
  std::int64_t ms = 0;
  std::size_t p = 0;
  for (std::size_t k = 0; k < units.size(); ++k) {
    char sep = units[k] == "DAY" ? ' ' : ':';
    std::size_t end = k + 1 < units.size() ? v.find(sep, p) : v.size();
    if (end == std::string::npos) bad();
    std::string field = v.substr(p, end - p);
    p = end + 1;
    if (units[k] == "SECOND" || (units.size() == 1 && from == "SECOND")) {
      auto dot = field.find('.');
      std::int64_t whole = number(field.substr(0, dot));
      std::int64_t frac = 0;
      if (dot != std::string::npos) {
        std::string f = field.substr(dot + 1);
        if (f.empty() || f.size() > 9) bad();
        f.resize(3, '0');
        frac = number(f.substr(0, 3));
      }
      ms += whole * 1000 + frac;
    } else {
      ms += number(field) * unit_ms(units[k]);
    }
  }
  return {neg ? -ms : ms, false};
}

}  // namespace

void collect_aggregates(const ast::Expr* e, const FunctionRegistry& registry, std::vector<const ast::Expr*>& out) {
  if (!e) return;
  if (const auto* f = e->as<ast::FunctionCall>()) {
    if (!f->over && is_aggregate_name(upper_name(f->name.back()), registry)) {
      out.push_back(e);
      return;
    }
  }
  walk_children(*e, [&](const ast::ExprPtr& c) { collect_aggregates(c.get(), registry, out); });
}

void collect_over_calls(const ast::Expr* e, std::vector<const ast::Expr*>& out) {
  if (!e) return;
  if (const auto* f = e->as<ast::FunctionCall>(); f && f->over) {
    out.push_back(e);
    return;
  }
  walk_children(*e, [&](const ast::ExprPtr& c) { collect_over_calls(c.get(), out); });
}

std::int64_t interval_literal_ms(const ast::Expr& e, const char* what) {
  const auto* l = e.as<ast::IntervalLiteral>();
  if (!l) fail(e.pos, fmt::format("the window {} must be an INTERVAL literal", what));
  auto [v, ym] = interval_value(*l, e.pos);
  if (ym) fail(e.pos, fmt::format("the window {} must be a day-time interval (YEAR/MONTH intervals vary in length)", what));
  if (v <= 0 && std::string(what) != "offset") fail(e.pos, fmt::format("the window {} must be positive", what));
  return v;
}

std::vector<std::size_t> Binder::Impl::find_columns(const ast::ColumnRef& ref, const Scope& scope) const {
  const auto& names = ref.names;
  std::string name = names.back();
  std::string qualifier = names.size() >= 2 ? names[names.size() - 2] : "";
  std::vector<std::size_t> hits;
  for (std::size_t i = 0; i < scope.columns.size(); ++i) {
    const auto& c = scope.columns[i];
    if (c.qualified_only && qualifier.empty()) continue;
    if (c.name == name && (qualifier.empty() || c.qualifier == qualifier)) hits.push_back(i);
  }
  if (hits.empty()) {
    // Unquoted identifiers: fall back to a unique case-insensitive match.
    for (std::size_t i = 0; i < scope.columns.size(); ++i) {
      const auto& c = scope.columns[i];
      if (c.qualified_only && qualifier.empty()) continue;
      if (upper_name(c.name) == upper_name(name) && (qualifier.empty() || c.qualifier == qualifier)) hits.push_back(i);
    }
  }
  return hits;
}

std::size_t Binder::Impl::resolve_column(const ast::ColumnRef& ref, const Scope& scope, SourcePosition pos) const {
  const auto& names = ref.names;
  std::string name = names.back();
  std::string qualifier = names.size() >= 2 ? names[names.size() - 2] : "";
  if (names.size() > 2) fail(pos, fmt::format("nested field access `{}` is not supported", ast::to_string(ast::Expr{pos, ref})));
  std::vector<std::size_t> hits = find_columns(ref, scope);
  if (hits.size() == 1) return hits[0];
  std::string shown = qualifier.empty() ? name : qualifier + "." + name;
  if (hits.empty() && uncorrelated_outer && !find_columns(ref, *uncorrelated_outer).empty())
    fail(pos, fmt::format("`{}` refers to the outer query: a correlated subquery must be SELECT ... FROM ... [WHERE "
                          "...] without GROUP BY, HAVING, ORDER BY, LIMIT, WITH or subqueries in its WHERE", shown));
  if (hits.empty()) {
    if (!qualifier.empty()) {
      bool known = false;
      for (const auto& c : scope.columns) known = known || c.qualifier == qualifier;
      if (!known) {
        for (const auto& c : scope.columns)
          if (c.name == qualifier && c.type.is(TypeKind::kRow))
            fail(pos, fmt::format("field access `{}.{}` on the ROW column `{}` is not allowed here (only in "
                                  "expressions)", qualifier, name, qualifier));
        fail(pos, fmt::format("Table '{}' not found", qualifier));
      }
    }
    fail(pos, fmt::format("Column '{}' not found in any table", shown));
  }
  fail(pos, fmt::format("Column '{}' is ambiguous", shown));
}

ExprPtr Binder::Impl::call(std::string_view name, std::vector<ExprPtr> args, SourcePosition pos) {
  // SET 'clink.sql.arithmetic' = 'null': numeric operators give NULL on integer overflow
  // and division by zero (the seed's semantics; function_arith.cpp) instead of Flink's.
  static const std::set<std::string, std::less<>> kArithmetic = {"+", "-", "*", "/", "%", "MOD", "ABS"};
  if (kArithmetic.count(name) &&
      std::all_of(args.begin(), args.end(), [](const ExprPtr& a) { return a->type.is_numeric(); })) {
    if (auto it = session.find("clink.sql.arithmetic"); it != session.end()) {
      if (it->second == "null") return at(pos, [&] { return expr::call(registry, "$" + std::string(name), std::move(args)); });
      if (it->second != "flink")
        fail(pos, fmt::format("'clink.sql.arithmetic' = '{}': expected 'flink' (integer overflow wraps, division by "
                              "zero fails) or 'null' (both give NULL)",
                              it->second));
    }
  }
  return at(pos, [&] { return expr::call(registry, name, std::move(args)); });
}

ExprPtr Binder::Impl::bind_literal(const ast::Literal& l, SourcePosition pos) {
  using K = ast::Literal::Kind;
  switch (l.kind) {
    case K::Null: return expr::null_literal();
    case K::Boolean: return expr::literal(Value(l.text == "TRUE"), LogicalType::boolean().not_null());
    case K::Integer: {
      try {
        std::size_t used = 0;
        long long v = std::stoll(l.text, &used);
        if (v >= INT32_MIN && v <= INT32_MAX) return expr::literal(Value(static_cast<std::int64_t>(v)), LogicalType::int_type().not_null());
        return expr::literal(Value(static_cast<std::int64_t>(v)), LogicalType::bigint().not_null());
      } catch (const std::out_of_range&) {
        [[fallthrough]];
      }
    }
    case K::Decimal: {
      std::string digits = l.text;
      std::size_t dot = digits.find('.');
      int scale = dot == std::string::npos ? 0 : static_cast<int>(digits.size() - dot - 1);
      int precision = 0;
      for (char c : digits) precision += std::isdigit(static_cast<unsigned char>(c)) ? 1 : 0;
      // Leading zeros of "0.05" do not count towards the precision, but p >= s.
      std::size_t first = digits.find_first_not_of("-+0.");
      int significant = first == std::string::npos ? 1 : 0;
      if (first != std::string::npos)
        for (std::size_t i = first; i < digits.size(); ++i) significant += std::isdigit(static_cast<unsigned char>(digits[i])) ? 1 : 0;
      precision = std::max({significant, scale, 1});
      if (precision > 38) fail(pos, fmt::format("numeric literal {} exceeds DECIMAL(38)", l.text));
      Int128 unscaled = 0;
      if (Decimal128::parse(l.text, precision, scale, unscaled) != Decimal128::ParseStatus::kOk)
        fail(pos, fmt::format("invalid numeric literal {}", l.text));
      return expr::literal(Value::decimal(unscaled), LogicalType::decimal(precision, scale).not_null());
    }
    case K::Double: return expr::literal(Value(std::stod(l.text)), LogicalType::double_type().not_null());
    case K::String:
      return expr::literal(Value(l.text), LogicalType::char_type(std::max<std::int32_t>(1, static_cast<std::int32_t>(l.text.size()))).not_null());
    case K::Binary: {
      std::string bytes;
      for (std::size_t i = 0; i + 1 < l.text.size(); i += 2)
        bytes += static_cast<char>(std::stoi(l.text.substr(i, 2), nullptr, 16));
      return expr::literal(Value(bytes), LogicalType::binary(std::max<std::int32_t>(1, static_cast<std::int32_t>(bytes.size()))).not_null());
    }
    case K::Date: {
      auto d = parse_date(l.text);
      if (!d) fail(pos, fmt::format("invalid DATE literal '{}'", l.text));
      return expr::literal(Value(static_cast<std::int64_t>(*d)), LogicalType::date().not_null());
    }
    case K::Time: {
      auto t = parse_time(l.text);
      if (!t) fail(pos, fmt::format("invalid TIME literal '{}'", l.text));
      return expr::literal(Value(static_cast<std::int64_t>(*t)), LogicalType::time(0).not_null());
    }
    case K::Timestamp:
    case K::TimestampLtz: {
      auto ts = parse_timestamp(l.text);
      if (!ts) fail(pos, fmt::format("invalid TIMESTAMP literal '{}'", l.text));
      auto dot = l.text.find('.');
      int p = dot == std::string::npos ? 0 : std::min<int>(9, static_cast<int>(l.text.size() - dot - 1));
      if (l.kind == K::Timestamp) return expr::literal(Value(*ts), LogicalType::timestamp(p).not_null());
      fail(pos, "TIMESTAMP_LTZ literals are not supported (use TO_TIMESTAMP_LTZ)");
    }
  }
  fail(pos, "unsupported literal");
}

// Flink's (Calcite's) rule for `a.b[.c...]`: when `a` names a table in scope it is table
// a's column b; otherwise `a` is a column and the rest are ROW field accesses. Returns how
// many leading names name the column (1 or 2).
static std::size_t column_prefix_length(const ast::ColumnRef& ref, const Scope& scope) {
  if (ref.names.size() < 2) return 1;
  bool is_column = false;
  for (const auto& c : scope.columns) {
    if (c.qualifier == ref.names[0]) return 2;
    is_column = is_column || upper_name(c.name) == upper_name(ref.names[0]);
  }
  // Neither a table nor a column: resolve `a.b` as table.column for the error.
  return is_column ? 1 : 2;
}

ExprPtr Binder::Impl::field_accesses(ExprPtr base, const ast::ColumnRef& ref, std::size_t from, SourcePosition pos) {
  for (std::size_t k = from; k < ref.names.size(); ++k)
    base = call("FIELD", {base, expr::literal(Value(ref.names[k]), LogicalType::string().not_null())}, pos);
  return base;
}

ExprPtr Binder::Impl::bind_post_aggregate_column(const ast::Expr& e, const ExprContext& ctx) {
  const AggContext& agg = *ctx.agg;
  const auto& ref = std::get<ast::ColumnRef>(e.node);
  std::size_t column_names = column_prefix_length(ref, *agg.input);
  ast::ColumnRef head;
  head.names.assign(ref.names.begin(), ref.names.begin() + static_cast<std::ptrdiff_t>(column_names));
  std::size_t in = resolve_column(head, *agg.input, e.pos);
  // A grouped ROW column's fields are usable after the aggregation (GROUP BY r ... r.a).
  for (std::size_t k = 0; k < agg.key_columns.size(); ++k)
    if (agg.key_columns[k] == in)
      return field_accesses(expr::column(k, agg.output.type(k), agg.output.name(k)), ref, column_names, e.pos);
  if (agg.window_input_start && in >= *agg.window_input_start && in < *agg.window_input_start + 3) {
    std::size_t o = agg.window_output + (in - *agg.window_input_start);
    return field_accesses(expr::column(o, agg.output.type(o), agg.output.name(o)), ref, column_names, e.pos);
  }
  if (auto w = agg.attached_window.find(in); w != agg.attached_window.end()) {
    std::size_t o = agg.window_output + w->second;
    return field_accesses(expr::column(o, agg.output.type(o), agg.output.name(o)), ref, column_names, e.pos);
  }
  fail(e.pos, fmt::format("Expression '{}' is not being grouped", ast_text(e)));
}

ExprPtr Binder::Impl::bind_expr(const ast::Expr& e, const ExprContext& ctx) {
  if (!subquery_values.empty())
    if (auto it = subquery_values.find(&e); it != subquery_values.end()) return it->second;
  if (match_substitutions) {
    auto it = match_substitutions->find(ast_text(e));
    if (it != match_substitutions->end()) return it->second;
  }
  if (ctx.agg) {
    std::string text = ast_text(e);
    const AggContext& agg = *ctx.agg;
    for (std::size_t k = 0; k < agg.key_texts.size(); ++k)
      if (agg.key_texts[k] == text) return expr::column(k, agg.output.type(k), agg.output.name(k));
    auto found = agg.agg_outputs.find(text);
    if (found != agg.agg_outputs.end())
      return expr::column(found->second, agg.output.type(found->second), agg.output.name(found->second));
    if (e.as<ast::ColumnRef>()) return bind_post_aggregate_column(e, ctx);
  }
  return std::visit(
      [&](const auto& n) -> ExprPtr {
        using T = std::decay_t<decltype(n)>;
        auto sub = [&](const ast::ExprPtr& x) { return bind_expr(*x, ctx); };
        if constexpr (std::is_same_v<T, ast::Literal>) {
          return bind_literal(n, e.pos);
        } else if constexpr (std::is_same_v<T, ast::IntervalLiteral>) {
          auto [v, ym] = interval_value(n, e.pos);
          if (ym) return expr::literal(Value(v), LogicalType::interval_year_month().not_null());
          return expr::literal(Value(v), LogicalType::interval_day_time(day_time_unit(n.from_unit, n.to_unit), 2, 3).not_null());
        } else if constexpr (std::is_same_v<T, ast::ColumnRef>) {
          std::size_t column_names = column_prefix_length(n, *ctx.scope);
          ast::ColumnRef head;
          head.names.assign(n.names.begin(), n.names.begin() + static_cast<std::ptrdiff_t>(column_names));
          if (ctx.outer && head.names.size() <= 2 && find_columns(head, *ctx.scope).empty() &&
              !find_columns(head, *ctx.outer).empty()) {
            // A correlated reference: the outer query's column, after the inner ones.
            std::size_t i = resolve_column(head, *ctx.outer, e.pos);
            const auto& c = ctx.outer->columns[i];
            return field_accesses(expr::column(ctx.scope->columns.size() + i, c.type, c.name), n, column_names, e.pos);
          }
          std::size_t i = resolve_column(head, *ctx.scope, e.pos);
          const auto& c = ctx.scope->columns[i];
          ExprPtr out = expr::column(i, c.type, c.name);
          out = field_accesses(out, n, column_names, e.pos);
          return out;
        } else if constexpr (std::is_same_v<T, ast::Star>) {
          fail(e.pos, "* is only allowed in the select list and COUNT(*)");
        } else if constexpr (std::is_same_v<T, ast::Unary>) {
          ExprPtr operand = sub(n.operand);
          if (n.op == "+") return operand;
          return call(n.op, {operand}, e.pos);
        } else if constexpr (std::is_same_v<T, ast::Binary>) {
          ExprPtr l = sub(n.left), r = sub(n.right);
          if (n.op == "AND") return at(e.pos, [&] { return expr::and_({l, r}); });
          if (n.op == "OR") return at(e.pos, [&] { return expr::or_({l, r}); });
          return call(n.op, {l, r}, e.pos);
        } else if constexpr (std::is_same_v<T, ast::IsTest>) {
          if (n.what == ast::IsTest::What::Json) return bind_is_json(n, ctx, e.pos);
          static const char* kNames[] = {"NULL", "TRUE", "FALSE", "UNKNOWN"};
          std::string name = std::string("IS ") + (n.negated ? "NOT " : "") + kNames[static_cast<int>(n.what)];
          return call(name, {sub(n.operand)}, e.pos);
        } else if constexpr (std::is_same_v<T, ast::Between>) {
          if (n.symmetric) fail(e.pos, "BETWEEN SYMMETRIC is not supported");
          return call(n.negated ? "NOT BETWEEN" : "BETWEEN", {sub(n.value), sub(n.low), sub(n.high)}, e.pos);
        } else if constexpr (std::is_same_v<T, ast::InList>) {
          std::vector<ExprPtr> items;
          for (const auto& x : n.list) items.push_back(sub(x));
          ExprPtr v = sub(n.value);
          return at(e.pos, [&] { return expr::in_list(v, std::move(items), n.negated); });
        } else if constexpr (std::is_same_v<T, ast::InSubquery> || std::is_same_v<T, ast::Exists> ||
                             std::is_same_v<T, ast::ScalarSubquery>) {
          fail(e.pos, fmt::format("subqueries are not supported in {} (only in SELECT, WHERE, HAVING and JOIN ON)",
                                  ctx.clause.empty() ? "this clause" : ctx.clause));
        } else if constexpr (std::is_same_v<T, ast::Like>) {
          std::vector<ExprPtr> args{sub(n.value), sub(n.pattern)};
          if (n.escape) args.push_back(sub(n.escape));
          ExprPtr r = call(n.similar ? "SIMILAR TO" : "LIKE", std::move(args), e.pos);
          return n.negated ? call("NOT", {r}, e.pos) : r;
        } else if constexpr (std::is_same_v<T, ast::FunctionCall>) {
          return bind_call(n, e, ctx);
        } else if constexpr (std::is_same_v<T, ast::Case>) {
          std::vector<std::pair<ExprPtr, ExprPtr>> branches;
          ExprPtr operand = n.operand ? sub(n.operand) : nullptr;
          for (const auto& w : n.whens) {
            ExprPtr cond = operand ? call("=", {operand, sub(w.when)}, w.when->pos) : sub(w.when);
            branches.emplace_back(cond, sub(w.then));
          }
          ExprPtr otherwise = n.otherwise ? sub(n.otherwise) : nullptr;
          return at(e.pos, [&] { return expr::case_when(std::move(branches), otherwise); });
        } else if constexpr (std::is_same_v<T, ast::Cast>) {
          ExprPtr v = sub(n.value);
          LogicalType t = to_logical_type(n.type);
          return at(e.pos, [&] { return n.try_cast ? expr::try_cast(v, t) : expr::cast(v, t); });
        } else if constexpr (std::is_same_v<T, ast::Extract>) {
          return call("EXTRACT", {expr::literal(Value(n.unit), LogicalType::string().not_null()), sub(n.value)}, e.pos);
        } else if constexpr (std::is_same_v<T, ast::Position>) {
          return call("POSITION", {sub(n.needle), sub(n.haystack)}, e.pos);
        } else if constexpr (std::is_same_v<T, ast::Substring>) {
          std::vector<ExprPtr> args{sub(n.value), sub(n.from)};
          if (n.length) args.push_back(sub(n.length));
          return call("SUBSTRING", std::move(args), e.pos);
        } else if constexpr (std::is_same_v<T, ast::Trim>) {
          // TRIM(LEADING c FROM s) -> LTRIM(s, c), TRAILING -> RTRIM, BOTH -> TRIM (docs/sql-types.md).
          static const char* kFunctions[] = {"TRIM", "LTRIM", "RTRIM"};
          ExprPtr chars = n.characters ? sub(n.characters) : expr::literal(Value(" "), LogicalType::char_type(1).not_null());
          return call(kFunctions[static_cast<int>(n.side)], {sub(n.value), chars}, e.pos);
        } else if constexpr (std::is_same_v<T, ast::Overlay>) {
          std::vector<ExprPtr> args{sub(n.value), sub(n.placing), sub(n.from)};
          if (n.length) args.push_back(sub(n.length));
          return call("OVERLAY", std::move(args), e.pos);
        } else if constexpr (std::is_same_v<T, ast::FloorCeil>) {
          return call(n.ceil ? "CEIL" : "FLOOR", {sub(n.value), expr::literal(Value(n.unit), LogicalType::string().not_null())}, e.pos);
        } else if constexpr (std::is_same_v<T, ast::CurrentTime>) {
          return call(n.name, {}, e.pos);
        } else if constexpr (std::is_same_v<T, ast::ArrayConstructor>) {
          std::vector<ExprPtr> args;
          for (const auto& x : n.elements) args.push_back(sub(x));
          return call("ARRAY", std::move(args), e.pos);
        } else if constexpr (std::is_same_v<T, ast::MapConstructor>) {
          std::vector<ExprPtr> args;
          for (const auto& x : n.keys_and_values) args.push_back(sub(x));
          return call("MAP", std::move(args), e.pos);
        } else if constexpr (std::is_same_v<T, ast::RowConstructor>) {
          std::vector<ExprPtr> args;
          for (const auto& x : n.fields) args.push_back(sub(x));
          return call("ROW", std::move(args), e.pos);
        } else if constexpr (std::is_same_v<T, ast::Subscript>) {
          ExprPtr base = sub(n.base), index = sub(n.index);
          // A constant index below 1 into an ARRAY is Flink's validation error (a computed
          // one gives NULL at run time).
          if (base->type.is(TypeKind::kArray) && index->is_literal() && !index->literal.is_null() &&
              index->type.is_integer() && index->literal.as_int() < 1)
            fail(n.index->pos, fmt::format("Array element access needs an index starting at 1 but was {}.",
                                           index->literal.as_int()));
          return call("ITEM", {std::move(base), std::move(index)}, e.pos);
        } else {
          static_assert(std::is_same_v<T, ast::FieldAccess>);
          return call("FIELD", {sub(n.base), expr::literal(Value(n.field), LogicalType::string().not_null())}, e.pos);
        }
      },
      e.node);
}

ExprPtr Binder::Impl::bind_call(const ast::FunctionCall& f, const ast::Expr& e, const ExprContext& ctx) {
  std::string name = upper_name(f.name.back());
  if (f.name.size() > 1) fail(e.pos, fmt::format("qualified function names are not supported: {}", ast_text(e)));
  if (f.over) {
    if (!ctx.agg && ctx.clause == "SELECT")
      if (auto it = over_columns.find(ast_text(e)); it != over_columns.end())
        return expr::column(it->second.first, it->second.second);
    bind_over_reference(f, e, ctx);
  }
  if (!f.arg_names.empty()) fail(e.pos, "named function arguments are only supported in window TVFs");
  if (name == "GROUPING" || name == "GROUPING_ID") return bind_grouping(f, e, ctx);
  if (is_aggregate_name(name, registry)) {
    if (ctx.agg) fail(e.pos, fmt::format("aggregate {} is not allowed here", ast_text(e)));
    fail(e.pos, fmt::format("aggregate functions are not allowed in {}", ctx.clause));
  }
  if (f.distinct || f.filter || f.star) fail(e.pos, fmt::format("{} is not an aggregate function", name));
  static const std::set<std::string> kGroupWindowAux = {"TUMBLE_START", "TUMBLE_END", "TUMBLE_ROWTIME", "HOP_START",
                                                        "HOP_END", "HOP_ROWTIME", "SESSION_START", "SESSION_END",
                                                        "SESSION_ROWTIME", "TUMBLE_PROCTIME", "HOP_PROCTIME",
                                                        "SESSION_PROCTIME"};
  if (kGroupWindowAux.count(name)) {
    const AggContext* agg = ctx.agg;
    std::string fn = name.substr(0, name.find('_'));
    if (!agg || agg->legacy_window_text.empty() || agg->legacy_window_function != fn)
      fail(e.pos, fmt::format("{} needs a GROUP BY {}(...) group window", name, fn));
    std::string args;
    for (std::size_t i = 0; i < f.args.size(); ++i) args += (i ? ", " : "") + ast_text(*f.args[i]);
    if (args != agg->legacy_window_text)
      fail(e.pos, fmt::format("{}({}) does not match the group window {}({})", name, args, fn, agg->legacy_window_text));
    std::string what = name.substr(name.find('_') + 1);
    if (what == "PROCTIME" && !agg->legacy_window_proctime)
      fail(e.pos, fmt::format("{} needs a processing-time window (this one is over an event-time attribute)", name));
    if (what == "ROWTIME" && agg->legacy_window_proctime)
      fail(e.pos, fmt::format("{} needs an event-time window (this one is over a processing-time attribute)", name));
    if (what == "PROCTIME") what = "ROWTIME";  // both are the window_time column
    std::size_t o = agg->window_output + (what == "START" ? 0 : what == "END" ? 1 : 2);
    return expr::column(o, agg->output.type(o), agg->output.name(o));
  }
  if (name == "TUMBLE" || name == "HOP" || name == "SESSION" || name == "CUMULATE")
    fail(e.pos, fmt::format("{}(...) is only allowed in GROUP BY (or as a window TVF in FROM)", name));
  if (ExprPtr special = bind_special_call(name, f, e, ctx)) return special;
  if (f.json) fail(e.pos, fmt::format("{} takes no SQL/JSON clauses", name));
  std::vector<ExprPtr> args;
  for (const auto& a : f.args) args.push_back(bind_expr(*a, ctx));
  if (const FunctionDef* def = catalog.function(name)) {
    // A function created AS a class: a call of the class's C++ implementation, which is
    // registered under the class name (function_classes.hpp).
    if (!def->class_name.empty()) return call(def->class_name, std::move(args), e.pos);
    if (args.size() != def->params.size())
      fail(e.pos, fmt::format("function {} takes {} arguments, got {}", def->name, def->params.size(), args.size()));
    std::vector<ExprPtr> cast_args;
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (!supports_implicit_cast(args[i]->type, def->params[i].type))
        fail(f.args[i]->pos, fmt::format("function {}: argument `{}` takes {}, got {}", def->name, def->params[i].name,
                                         def->params[i].type.to_string(), args[i]->type.to_string()));
      cast_args.push_back(at(e.pos, [&] { return expr::cast_if_needed(args[i], def->params[i].type); }));
    }
    std::vector<RowField> params;
    for (const auto& p : def->params) params.push_back({p.name, p.type});
    Scope scope = Scope::of(Schema(params), "");
    ExprContext body_ctx;
    body_ctx.scope = &scope;
    body_ctx.clause = "function body";
    ExprPtr body;
    try {
      body = bind_expr(*def->body, body_ctx);
    } catch (const SqlError& err) {
      fail(e.pos, fmt::format("function {} cannot be expanded: {}", def->name, err.detail()));
    }
    ExprPtr inlined = substitute(body, cast_args);
    return at(e.pos, [&] { return expr::cast_if_needed(inlined, def->return_type); });
  }
  return call(name, std::move(args), e.pos);
}

}  // namespace clink::sql
