// Binder: SQL syntax that lowers onto registered functions with constant STRING arguments
// (docs/sql-functions.md, "Lowering the binder does"): TIMESTAMPADD / TIMESTAMPDIFF units,
// the SQL/JSON clauses of JSON_VALUE / JSON_QUERY / JSON_EXISTS, and IS [NOT] JSON.
// (EXTRACT, FLOOR/CEIL TO, TRIM, POSITION, SUBSTRING, OVERLAY and CURRENT_* have AST
// nodes of their own, lowered in binder_expr.cpp.)
#include "binder_internal.hpp"

namespace clink::sql {

namespace {

ExprPtr text(const std::string& s) { return expr::literal(Value(s), LogicalType::string().not_null()); }
ExprPtr null_text() { return expr::null_literal(LogicalType::string()); }

const char* behavior_name(ast::JsonBehavior::Kind k) {
  using K = ast::JsonBehavior::Kind;
  switch (k) {
    case K::Null: return "NULL";
    case K::Error: return "ERROR";
    case K::Default: return "DEFAULT";
    case K::EmptyArray: return "EMPTY ARRAY";
    case K::EmptyObject: return "EMPTY OBJECT";
    case K::True: return "TRUE";
    case K::False: return "FALSE";
    case K::Unknown: return "UNKNOWN";
  }
  return "NULL";
}

bool is_sub_day_unit(const std::string& u) {
  return u == "HOUR" || u == "MINUTE" || u == "SECOND" || u == "MILLISECOND" || u == "MICROSECOND";
}

// Runs the function's prepare step on its constant arguments now, so a unit the function
// rejects (TIMESTAMPADD(FOO, ...), TIMESTAMPADD(DOY, ...)) fails at `pos` when the query
// compiles, not when the job starts.
void check_constant_arguments(const Expr& call, SourcePosition pos) {
  if (call.kind != ExprKind::kCall || !call.function || !call.function->prepare) return;
  std::vector<LogicalType> types;
  std::vector<std::optional<Value>> constants;
  for (const auto& arg : call.args) {
    types.push_back(arg->type);
    constants.push_back(arg->is_literal() ? std::optional<Value>(arg->literal) : std::nullopt);
  }
  try {
    call.function->prepare(types, constants);
  } catch (const SqlTypeError& err) {
    throw TranslationError(pos, err.what());
  }
}

}  // namespace

ExprPtr Binder::Impl::bind_special_call(const std::string& name, const ast::FunctionCall& f, const ast::Expr& e,
                                        const ExprContext& ctx) {
  auto sub = [&](const ast::ExprPtr& x) { return bind_expr(*x, ctx); };
  if ((name == "TIMESTAMPADD" || name == "TIMESTAMPDIFF") && f.args.size() == 3) {
    // The unit arrives as an identifier (TIMESTAMPADD(DAY, ...)); it is a keyword, never a column.
    const auto* unit_ref = f.args[0]->as<ast::ColumnRef>();
    if (!unit_ref || unit_ref->names.size() != 1) return nullptr;
    std::string unit = upper_name(unit_ref->names[0]);
    if (unit == "SQL_TSI_DAY") unit = "DAY";
    ExprPtr a = sub(f.args[1]), b = sub(f.args[2]);
    // Flink widens DATE + a sub-day unit to TIMESTAMP(0).
    if (name == "TIMESTAMPADD" && b->type.is(TypeKind::kDate) && is_sub_day_unit(unit))
      b = at(e.pos, [&] { return expr::cast(b, LogicalType::timestamp(0).with_nullable(b->type.nullable())); });
    ExprPtr r = call(name, {text(unit), a, b}, e.pos);
    check_constant_arguments(*r, f.args[0]->pos);
    return r;
  }
  if (name == "JSON_OBJECT" || name == "JSON_ARRAY") return bind_json_constructor(name, f, e, ctx);
  if (!f.json || f.args.size() != 2) return nullptr;
  const ast::JsonClauses& j = *f.json;
  std::vector<ExprPtr> args{sub(f.args[0]), sub(f.args[1])};
  if (name == "JSON_VALUE") {
    auto behavior = [&](const std::optional<ast::JsonBehavior>& b) {
      args.push_back(text(b ? behavior_name(b->kind) : "NULL"));
      if (!b || b->kind != ast::JsonBehavior::Kind::Default) {
        args.push_back(null_text());
        return;
      }
      // The default is returned as its Java text: DEFAULT FALSE -> 'false'.
      ExprPtr d = sub(b->default_value);
      if (d->type.is(TypeKind::kBoolean))
        d = at(e.pos, [&] { return expr::case_when({{d, text("true")}, {call("NOT", {d}, e.pos), text("false")}}, nullptr); });
      else if (!d->type.is_character_string())
        d = at(e.pos, [&] { return expr::cast(d, LogicalType::string()); });
      args.push_back(d);
    };
    behavior(j.on_empty);
    behavior(j.on_error);
    ExprPtr v = call(name, std::move(args), e.pos);
    if (!j.returning) return v;
    LogicalType t = to_logical_type(*j.returning);
    return at(e.pos, [&] { return expr::cast_if_needed(v, t.with_nullable(true)); });
  }
  if (j.returning) fail(e.pos, fmt::format("{} has no RETURNING clause", name));
  if (name == "JSON_QUERY") {
    using W = ast::JsonClauses::Wrapper;
    args.push_back(text(j.wrapper == W::Conditional ? "CONDITIONAL" : j.wrapper == W::Unconditional ? "UNCONDITIONAL" : "WITHOUT"));
    args.push_back(text(j.on_empty ? behavior_name(j.on_empty->kind) : "NULL"));
    args.push_back(text(j.on_error ? behavior_name(j.on_error->kind) : "NULL"));
    return call(name, std::move(args), e.pos);
  }
  if (name == "JSON_EXISTS") {
    if (j.on_empty) fail(e.pos, "JSON_EXISTS has no ON EMPTY clause");
    if (j.on_error) args.push_back(text(behavior_name(j.on_error->kind)));
    return call(name, std::move(args), e.pos);
  }
  return nullptr;
}

// JSON_OBJECT / JSON_ARRAY (docs/sql-functions.md): a value that is itself a JSON_OBJECT
// or JSON_ARRAY call is inserted as JSON, not as a string (Flink's rule), and an explicit
// {NULL | ABSENT} ON NULL is passed on; both need the _EX form of the function.
ExprPtr Binder::Impl::bind_json_constructor(const std::string& name, const ast::FunctionCall& f, const ast::Expr& e,
                                            const ExprContext& ctx) {
  const bool object = name == "JSON_OBJECT";
  std::vector<ExprPtr> args;
  std::string mask;
  bool nested = false;
  for (std::size_t k = 0; k < f.args.size(); ++k) {
    args.push_back(bind_expr(*f.args[k], ctx));
    if (object && k % 2 == 0) continue;  // a key
    const auto* c = f.args[k]->as<ast::FunctionCall>();
    std::string inner = c && c->name.size() == 1 ? upper_name(c->name[0]) : std::string();
    bool raw = inner == "JSON_OBJECT" || inner == "JSON_ARRAY";
    mask += raw ? '1' : '0';
    nested = nested || raw;
  }
  std::optional<std::string> on_null = f.json ? f.json->on_null : std::nullopt;
  if (!on_null && !nested) return call(name, std::move(args), e.pos);
  args.insert(args.begin(), {text(on_null.value_or(object ? "NULL" : "ABSENT")), text(nested ? mask : "")});
  return call(name + "_EX", std::move(args), e.pos);
}

ExprPtr Binder::Impl::bind_is_json(const ast::IsTest& t, const ExprContext& ctx, SourcePosition pos) {
  ExprPtr r = call("IS_JSON", {bind_expr(*t.operand, ctx), text(t.json_kind.empty() ? "VALUE" : upper_name(t.json_kind))}, pos);
  return t.negated ? call("NOT", {r}, pos) : r;
}

}  // namespace clink::sql
