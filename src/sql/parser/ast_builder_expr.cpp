// libpg_query JSON -> clink AST: expressions. Placeholders the preparse shim put into
// the text (__clink_ctype_N, __clink_lit_N, TRY_CAST / MAP / FLOOR markers) are swapped
// back for the recorded Flink constructs here.
#include "ast_builder_impl.hpp"

namespace clink::sql::detail::pg {

ExprPtr Builder::expr(const J& j, SourcePosition fallback) {
  Node n = node_of(j);
  const J& f = *n.fields;
  SourcePosition p = pos(location(f), fallback);
  const std::string& t = n.type;
  if (t == "ColumnRef") return column_ref(f, p);
  if (t == "A_Const") return constant(f, p);
  if (t == "A_Expr") return a_expr(f, p);
  if (t == "BoolExpr") return bool_expr(f, p);
  if (t == "NullTest") {
    IsTest test{IsTest::What::Null, str(f, "nulltesttype") == "IS_NOT_NULL", expr(f.at("arg"), p), ""};
    if (location(f) >= 0) {
      auto json = ctx_.placeholders.is_json.find(origin(location(f)));
      if (json != ctx_.placeholders.is_json.end()) {
        test.what = IsTest::What::Json;
        test.json_kind = json->second;
      }
    }
    SourcePosition at = test.operand->pos;
    return make_expr(at, std::move(test));
  }
  if (t == "BooleanTest") {
    std::string k = str(f, "booltesttype");
    IsTest test;
    test.what = k.find("TRUE") != std::string::npos    ? IsTest::What::True
                : k.find("FALSE") != std::string::npos ? IsTest::What::False
                                                       : IsTest::What::Unknown;
    test.negated = k.find("NOT") != std::string::npos;
    test.operand = expr(f.at("arg"), p);
    SourcePosition at = test.operand->pos;  // where the predicate starts, like a Binary
    return make_expr(at, std::move(test));
  }
  if (t == "SubLink") return sublink(f, p);
  if (t == "FuncCall") return func_call(f, p);
  if (t == "CaseExpr") {
    Case c;
    if (auto* a = child(f, "arg")) c.operand = expr(*a, p);
    for (const auto& w : f.at("args")) {
      const J& wf = *node_of(w).fields;
      c.whens.push_back({expr(wf.at("expr"), p), expr(wf.at("result"), p)});
    }
    if (auto* d = child(f, "defresult")) c.otherwise = expr(*d, p);
    return make_expr(p, std::move(c));
  }
  if (t == "CoalesceExpr") return call(p, "COALESCE", exprs(f.at("args"), p));
  if (t == "MinMaxExpr") return call(p, str(f, "op") == "IS_GREATEST" ? "GREATEST" : "LEAST", exprs(f.at("args"), p));
  if (t == "GroupingFunc") return call(p, "GROUPING", exprs(f.at("args"), p));
  if (t == "TypeCast") return type_cast(f, p);
  if (t == "SQLValueFunction") return value_function(f, p);
  if (t == "A_ArrayExpr") {
    std::vector<ExprPtr> elements;
    if (auto* e = child(f, "elements")) elements = exprs(*e, p);
    if (location(f) >= 0 && ctx_.placeholders.map_constructors.count(origin(location(f)))) {
      if (elements.empty() || elements.size() % 2 != 0)
        throw ParseError(p, "MAP[...] needs key/value pairs (an even number of elements)");
      return make_expr(p, MapConstructor{std::move(elements)});
    }
    return make_expr(p, ArrayConstructor{std::move(elements)});
  }
  if (t == "RowExpr") {
    std::vector<ExprPtr> fields;
    if (auto* a = child(f, "args")) fields = exprs(*a, p);
    return make_expr(p, RowConstructor{std::move(fields), str(f, "row_format") == "COERCE_EXPLICIT_CALL"});
  }
  if (t == "A_Indirection") {
    ExprPtr base = expr(f.at("arg"), p);
    for (const auto& ind : f.at("indirection")) {
      Node in = node_of(ind);
      if (in.type == "A_Indices") {
        if (in.fields->value("is_slice", false)) unsupported(p, "array slices are not supported");
        base = make_expr(base->pos, Subscript{base, expr(in.fields->at("uidx"), p)});
      } else if (in.type == "String") {
        base = make_expr(base->pos, FieldAccess{base, str(*in.fields, "sval")});
      } else {
        unsupported(p, "(expr).* is not supported");
      }
    }
    return base;
  }
  if (t == "ParamRef") unsupported(p, "query parameters ($n) are not supported");
  if (t == "CollateClause") unsupported(p, "COLLATE is not supported");
  unsupported(p, "expression " + t + " is not supported");
}

std::vector<ExprPtr> Builder::exprs(const J& list, SourcePosition fallback) {
  std::vector<ExprPtr> out;
  for (const auto& e : list) out.push_back(expr(e, fallback));
  return out;
}

ExprPtr Builder::call(SourcePosition p, const std::string& name, std::vector<ExprPtr> args) {
  FunctionCall c;
  c.name = {name};
  c.args = std::move(args);
  return make_expr(p, std::move(c));
}

ExprPtr Builder::column_ref(const J& f, SourcePosition p) {
  std::vector<std::string> names;
  bool star = false;
  for (const auto& field : f.at("fields")) {
    Node n = node_of(field);
    if (n.type == "A_Star") {
      star = true;
    } else {
      names.push_back(str(*n.fields, "sval"));
    }
  }
  names = spelled(location(f), names);
  if (star) return make_expr(p, Star{std::move(names)});
  if (names.size() == 1 && starts_with(names[0], "__clink_lit_"))
    return ctx_.placeholders.literals.at(std::stoul(names[0].substr(12)));
  return make_expr(p, ColumnRef{std::move(names)});
}

// Numbers come from the source spelling: exact text, and libpg_query's JSON drops
// zero (and negative) integer values.
std::string Builder::number_text(int loc) const {
  const auto& text = ctx_.rewritten.text.text;
  const auto& sp = ctx_.rewritten.spellings;
  size_t at = static_cast<size_t>(loc);
  std::string sign;
  if (at < text.size() && text[at] == '-') {
    sign = "-";
    ++at;
  }
  auto it = sp.lower_bound(static_cast<uint32_t>(at));
  if (it == sp.end()) throw ParseError(ctx_.fallback, "internal: number without spelling");
  return sign + it->second;
}

ExprPtr Builder::constant(const J& f, SourcePosition p) {
  Literal lit;
  if (f.value("isnull", false)) {
    lit.kind = Literal::Kind::Null;
  } else if (f.contains("sval")) {
    lit.kind = Literal::Kind::String;
    lit.text = str(f.at("sval"), "sval");
  } else if (f.contains("boolval")) {
    lit.kind = Literal::Kind::Boolean;
    lit.text = f.at("boolval").value("boolval", false) ? "TRUE" : "FALSE";
  } else if (f.contains("ival") || f.contains("fval")) {
    lit.text = number_text(location(f));
    if (lit.text.find_first_of("eE") != std::string::npos) {
      lit.kind = Literal::Kind::Double;
    } else if (lit.text.find('.') != std::string::npos) {
      lit.kind = Literal::Kind::Decimal;
    } else {
      lit.kind = Literal::Kind::Integer;
    }
  } else {
    unsupported(p, "bit-string literals are not supported");
  }
  return make_expr(p, std::move(lit));
}

ExprPtr Builder::a_expr(const J& f, SourcePosition p) {
  std::string kind = str(f, "kind");
  std::string op = f.contains("name") ? string_node(f.at("name").back()) : "";
  auto left = [&] { return expr(f.at("lexpr"), p); };
  auto right = [&] { return expr(f.at("rexpr"), p); };
  if (kind == "AEXPR_OP") {
    static const char* kOps[] = {"+", "-", "*", "/", "%", "=", "<>", "<", ">", "<=", ">=", "||"};
    if (std::find(std::begin(kOps), std::end(kOps), op) == std::end(kOps))
      unsupported(p, "operator " + op + " is not supported");
    if (!f.contains("lexpr")) {
      if (op != "-" && op != "+") unsupported(p, "prefix operator " + op + " is not supported");
      return make_expr(p, Unary{op, right()});
    }
    // A binary node's position is its left operand's (where the expression starts).
    ExprPtr l = left();
    return make_expr(l->pos, Binary{op, l, right()});
  }
  if (kind == "AEXPR_DISTINCT" || kind == "AEXPR_NOT_DISTINCT") {
    ExprPtr l = left();
    return make_expr(l->pos, Binary{kind == "AEXPR_DISTINCT" ? "IS DISTINCT FROM" : "IS NOT DISTINCT FROM", l, right()});
  }
  if (kind == "AEXPR_NULLIF") return call(p, "NULLIF", {left(), right()});
  if (kind == "AEXPR_IN") {
    ExprPtr l = left();
    return make_expr(l->pos, InList{l, exprs(list_items(f.at("rexpr")), p), op == "<>"});
  }
  if (kind == "AEXPR_LIKE" || kind == "AEXPR_SIMILAR") {
    Like like;
    like.similar = kind == "AEXPR_SIMILAR";
    like.negated = op[0] == '!';
    like.value = left();
    Node r = node_of(f.at("rexpr"));
    std::string fname = r.type == "FuncCall" ? string_node(r.fields->at("funcname").back()) : "";
    if (fname == "like_escape" || fname == "similar_to_escape") {
      const J& args = r.fields->at("args");
      like.pattern = expr(args.at(0), p);
      if (args.size() > 1) like.escape = expr(args.at(1), p);
    } else {
      like.pattern = right();
    }
    SourcePosition at = like.value->pos;
    return make_expr(at, std::move(like));
  }
  if (kind == "AEXPR_ILIKE") unsupported(p, "ILIKE is not supported (use LOWER(x) LIKE ...)");
  if (starts_with(kind, "AEXPR_BETWEEN") || starts_with(kind, "AEXPR_NOT_BETWEEN")) {
    Between b;
    b.value = left();
    const J& bounds = list_items(f.at("rexpr"));
    b.low = expr(bounds.at(0), p);
    b.high = expr(bounds.at(1), p);
    b.negated = starts_with(kind, "AEXPR_NOT");
    b.symmetric = kind.size() > 4 && kind.compare(kind.size() - 4, 4, "_SYM") == 0;
    SourcePosition at = b.value->pos;
    return make_expr(at, std::move(b));
  }
  if (kind == "AEXPR_OP_ANY" || kind == "AEXPR_OP_ALL") unsupported(p, "ANY / ALL comparisons are not supported");
  unsupported(p, "operator expression " + kind + " is not supported");
}

ExprPtr Builder::bool_expr(const J& f, SourcePosition p) {
  std::string op = str(f, "boolop");
  const J& args = f.at("args");
  if (op == "NOT_EXPR") {
    Node inner = node_of(args.at(0));
    if (inner.type == "SubLink" && str(*inner.fields, "subLinkType") == "ANY_SUBLINK") {
      ExprPtr in = sublink(*inner.fields, pos(location(*inner.fields), p));
      InSubquery s = *in->as<InSubquery>();
      s.negated = true;
      return make_expr(p, std::move(s));
    }
    return make_expr(p, Unary{"NOT", expr(args.at(0), p)});
  }
  std::string name = op == "AND_EXPR" ? "AND" : "OR";
  ExprPtr acc = expr(args.at(0), p);
  for (size_t i = 1; i < args.size(); ++i) acc = make_expr(acc->pos, Binary{name, acc, expr(args.at(i), p)});
  return acc;
}

ExprPtr Builder::sublink(const J& f, SourcePosition p) {
  std::string kind = str(f, "subLinkType");
  QueryPtr q = query(f.at("subselect"), p);
  if (kind == "EXISTS_SUBLINK") return make_expr(p, Exists{q});
  if (kind == "EXPR_SUBLINK") return make_expr(p, ScalarSubquery{q});
  if (kind == "ANY_SUBLINK" && (!f.contains("operName") || string_node(f.at("operName").back()) == "=")) {
    ExprPtr value = expr(f.at("testexpr"), p);
    return make_expr(value->pos, InSubquery{value, q, false});
  }
  unsupported(p, "subquery comparison " + kind + " is not supported");
}

ExprPtr Builder::type_cast(const J& f, SourcePosition p) {
  const J& tn = f.at("typeName");
  std::string name = tn.contains("names") ? string_node(tn.at("names").back()) : "";
  if (!starts_with(name, "__clink_ctype_"))
    unsupported(p, "the :: cast syntax is not supported, use CAST(x AS type)");
  Cast c;
  c.value = expr(f.at("arg"), p);
  c.type = ctx_.placeholders.types.at(std::stoul(name.substr(14)));
  c.try_cast = location(f) >= 0 && ctx_.placeholders.try_casts.count(origin(location(f))) > 0;
  return make_expr(p, std::move(c));
}

ExprPtr Builder::value_function(const J& f, SourcePosition p) {
  std::string op = str(f, "op");
  static const std::pair<const char*, const char*> kNames[] = {
      {"SVFOP_CURRENT_DATE", "CURRENT_DATE"}, {"SVFOP_CURRENT_TIME", "CURRENT_TIME"},
      {"SVFOP_CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP"}, {"SVFOP_LOCALTIME", "LOCALTIME"},
      {"SVFOP_LOCALTIMESTAMP", "LOCALTIMESTAMP"}};
  CurrentTime ct;
  bool with_precision = op.size() > 2 && op.compare(op.size() - 2, 2, "_N") == 0;
  std::string base = with_precision ? op.substr(0, op.size() - 2) : op;
  for (const auto& [pg, name] : kNames)
    if (base == pg) ct.name = name;
  if (ct.name.empty()) {
    std::string name = op.substr(6);
    std::string hint = name == "USER" ? " (to name a column user, quote it: `user`)" : "";
    unsupported(p, name + " is not supported" + hint);
  }
  if (with_precision) ct.precision = f.value("typmod", -1);
  return make_expr(p, std::move(ct));
}

std::shared_ptr<const WindowSpec> Builder::window(const J& w, SourcePosition p, bool definition) {
  WindowSpec spec;
  // PostgreSQL: OVER w sets `name`, OVER (w ...) and WINDOW x AS (w ...) set `refname`.
  spec.ref = str(w, "refname");
  if (!definition && spec.ref.empty()) spec.ref = str(w, "name");
  if (auto* part = child(w, "partitionClause")) spec.partition_by = exprs(*part, p);
  if (auto* ord = child(w, "orderClause")) spec.order_by = order_items(*ord, p);
  int opts = w.value("frameOptions", 0);
  // PostgreSQL's FRAMEOPTION_* bits (nodes/parsenodes.h).
  constexpr int kNonDefault = 0x1, kRange = 0x2, kRows = 0x4, kGroups = 0x8, kBetween = 0x10;
  if (opts & kNonDefault) {
    if (opts & kGroups) unsupported(p, "GROUPS frames are not supported");
    if (opts & 0x38000) unsupported(p, "frame EXCLUDE clauses are not supported");
    WindowFrame frame;
    frame.mode = (opts & kRows) ? WindowFrame::Mode::Rows : WindowFrame::Mode::Range;
    (void)kRange;
    auto bound = [&](int unbounded_preceding, int unbounded_following, int current, int offset_preceding,
                     int offset_following, const char* offset_key) {
      FrameBound b;
      if (opts & unbounded_preceding) b.kind = FrameBound::Kind::UnboundedPreceding;
      else if (opts & unbounded_following) b.kind = FrameBound::Kind::UnboundedFollowing;
      else if (opts & current) b.kind = FrameBound::Kind::CurrentRow;
      else if (opts & offset_preceding) b.kind = FrameBound::Kind::Preceding;
      else if (opts & offset_following) b.kind = FrameBound::Kind::Following;
      if (auto* o = child(w, offset_key)) b.offset = expr(*o, p);
      return b;
    };
    frame.start = bound(0x20, 0x80, 0x200, 0x800, 0x2000, "startOffset");
    if (opts & kBetween) frame.end = bound(0x40, 0x100, 0x400, 0x1000, 0x4000, "endOffset");
    spec.frame = std::move(frame);
  }
  return std::make_shared<const WindowSpec>(std::move(spec));
}

ExprPtr Builder::func_call(const J& f, SourcePosition p) {
  std::vector<std::string> name;
  for (const auto& part : f.at("funcname")) name.push_back(string_node(part));
  std::vector<ExprPtr> args;
  std::vector<std::string> arg_names;
  if (auto* a = child(f, "args")) {
    for (const auto& arg : *a) {
      Node n = node_of(arg);
      if (n.type == "NamedArgExpr") {
        arg_names.push_back(str(*n.fields, "name"));
        args.push_back(expr(n.fields->at("arg"), p));
      } else {
        if (!arg_names.empty()) unsupported(p, "positional arguments after named arguments are not supported");
        args.push_back(expr(arg, p));
      }
    }
  }
  if (str(f, "funcformat") == "COERCE_SQL_SYNTAX" && name.size() == 2 && name[0] == "pg_catalog")
    return sql_syntax_function(name[1], args, p);
  if (f.contains("agg_order")) unsupported(p, "ORDER BY inside a function call is not supported");
  if (f.value("agg_within_group", false)) unsupported(p, "WITHIN GROUP is not supported");
  if (f.value("func_variadic", false)) unsupported(p, "VARIADIC is not supported");
  name = spelled(location(f), name);
  std::string lname = lower(name.back());
  if (name.size() == 1 && (lname == "floor" || lname == "ceil" || lname == "ceiling") && location(f) >= 0) {
    auto it = ctx_.placeholders.floor_ceil_units.find(origin(location(f)));
    if (it != ctx_.placeholders.floor_ceil_units.end()) {
      if (args.size() != 1) throw ParseError(p, upper(lname) + "(x TO unit) takes one value");
      return make_expr(p, FloorCeil{lname != "floor", args[0], it->second});
    }
  }
  FunctionCall c;
  c.name = std::move(name);
  c.args = std::move(args);
  if (!arg_names.empty()) {
    c.arg_names = spelled(-1, arg_names);
    // Named arguments are case-insensitive parameter names: print them upper case.
    for (auto& n : c.arg_names) n = upper(n);
  }
  c.star = f.value("agg_star", false);
  c.distinct = f.value("agg_distinct", false);
  if (auto* flt = child(f, "agg_filter")) c.filter = expr(*flt, p);
  if (auto* over = child(f, "over")) c.over = window(*over, p);
  if (location(f) >= 0) {
    auto json = ctx_.placeholders.json_clauses.find(origin(location(f)));
    if (json != ctx_.placeholders.json_clauses.end()) c.json = json->second;
    auto nulls = ctx_.placeholders.null_treatment.find(origin(location(f)));
    c.ignore_nulls = nulls != ctx_.placeholders.null_treatment.end() && nulls->second == "IGNORE";
    auto on_null = ctx_.placeholders.json_on_null.find(origin(location(f)));
    bool key_value = ctx_.placeholders.json_key_value.count(origin(location(f))) > 0;
    if (on_null != ctx_.placeholders.json_on_null.end() || key_value) {
      auto clauses = std::make_shared<JsonClauses>();
      if (on_null != ctx_.placeholders.json_on_null.end()) clauses->on_null = on_null->second;
      clauses->key_value = key_value;
      c.json = std::move(clauses);
    }
  }
  return make_expr(p, std::move(c));
}

ExprPtr Builder::sql_syntax_function(const std::string& fn, std::vector<ExprPtr>& a, SourcePosition p) {
  if (fn == "extract") {
    const Literal* unit = a.at(0)->as<Literal>();
    return make_expr(p, Extract{upper(unit ? unit->text : ""), a.at(1)});
  }
  if (fn == "position") return make_expr(p, Position{a.at(1), a.at(0)});
  if (fn == "substring") {
    if (a.size() < 2) unsupported(p, "SUBSTRING(x FOR n) without FROM is not supported");
    return make_expr(p, Substring{a.at(0), a.at(1), a.size() > 2 ? a.at(2) : nullptr});
  }
  if (fn == "btrim" || fn == "ltrim" || fn == "rtrim") {
    Trim t;
    t.side = fn == "btrim" ? Trim::Side::Both : fn == "ltrim" ? Trim::Side::Leading : Trim::Side::Trailing;
    t.value = a.at(0);
    if (a.size() > 1) t.characters = a.at(1);
    return make_expr(p, std::move(t));
  }
  if (fn == "overlay") return make_expr(p, Overlay{a.at(0), a.at(1), a.at(2), a.size() > 3 ? a.at(3) : nullptr});
  if (fn == "timezone") unsupported(p, "AT TIME ZONE is not supported");
  unsupported(p, "SQL function syntax " + fn + " is not supported");
}
}  // namespace clink::sql::detail::pg
