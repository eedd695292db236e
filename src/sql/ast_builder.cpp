// libpg_query JSON parse tree -> clink AST. Placeholders the preparse shim put into the
// text (__clink_ctype_N, __clink_lit_N, __clink_tvf_N, TRY_CAST / MAP / FLOOR markers,
// hints) are swapped back for the recorded Flink constructs here, as the tree is built.
#include "ast_builder.hpp"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

namespace clink::sql::detail {

namespace {

using J = nlohmann::json;
using namespace ast;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}
bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

// The single-key object {"NodeName": {...fields}}.
struct Node {
  std::string type;
  const J* fields;
};
Node node_of(const J& j) {
  if (!j.is_object() || j.size() != 1) return {"", &j};
  auto it = j.begin();
  return {it.key(), &it.value()};
}

std::string str(const J& f, const char* key) {
  auto it = f.find(key);
  return it == f.end() ? std::string() : it->get<std::string>();
}
const J* child(const J& f, const char* key) {
  auto it = f.find(key);
  return it == f.end() || it->is_null() ? nullptr : &*it;
}
int location(const J& f) {
  auto it = f.find("location");
  return it == f.end() ? -1 : it->get<int>();
}
// The items of a {"List": {"items": [...]}} node (or a plain array).
const J& list_items(const J& j) {
  if (j.is_object() && j.contains("List")) return j.at("List").at("items");
  return j;
}

// The "sval" of a {"String": {...}} node.
std::string string_node(const J& j) {
  Node n = node_of(j);
  return n.type == "String" ? str(*n.fields, "sval") : std::string();
}

class Builder {
 public:
  explicit Builder(const PgContext& ctx) : ctx_(ctx) {}

  // ------------------------------------------------------------ positions & names

  uint32_t origin(int loc) const { return ctx_.rewritten.text.original_offset(static_cast<size_t>(loc)); }
  SourcePosition pos(int loc, SourcePosition fallback) const {
    return loc < 0 ? fallback : ctx_.map.position(origin(loc));
  }
  SourcePosition pos(const J& f) const { return pos(location(f), ctx_.fallback); }

  [[noreturn]] void unsupported(SourcePosition at, const std::string& what) const {
    throw TranslationError(at.known() ? at : ctx_.fallback, what);
  }

  // The smallest location anywhere under `j` (a query has no location of its own).
  int min_location(const J& j) const {
    int best = -1;
    if (j.is_object()) {
      for (auto it = j.begin(); it != j.end(); ++it) {
        int l = -1;
        if (it.key() == "location" && it->is_number_integer()) {
          l = it->get<int>();
        } else if (it->is_structured()) {
          l = min_location(*it);
        }
        if (l >= 0 && (best < 0 || l < best)) best = l;
      }
    } else if (j.is_array()) {
      for (const auto& e : j) {
        int l = min_location(e);
        if (l >= 0 && (best < 0 || l < best)) best = l;
      }
    }
    return best;
  }

  // Names PostgreSQL returns for the identifiers written from offset `loc` on, in the
  // spelling the user wrote (PostgreSQL lower-cases unquoted keywords used as names).
  std::vector<std::string> spelled(int loc, const std::vector<std::string>& pg_names) const {
    std::vector<std::string> out = pg_names;
    if (loc < 0) return out;
    auto it = ctx_.rewritten.spellings.lower_bound(static_cast<uint32_t>(loc));
    for (auto& name : out) {
      if (it == ctx_.rewritten.spellings.end()) break;
      if (lower(it->second) == lower(name)) name = it->second;
      ++it;
    }
    return out;
  }

  // ------------------------------------------------------------ expressions

  ExprPtr expr(const J& j, SourcePosition fallback) {
    Node n = node_of(j);
    const J& f = *n.fields;
    SourcePosition p = pos(location(f), fallback);
    const std::string& t = n.type;
    if (t == "ColumnRef") return column_ref(f, p);
    if (t == "A_Const") return constant(f, p);
    if (t == "A_Expr") return a_expr(f, p);
    if (t == "BoolExpr") return bool_expr(f, p);
    if (t == "NullTest") {
      return make_expr(p, IsTest{IsTest::What::Null, str(f, "nulltesttype") == "IS_NOT_NULL", expr(f.at("arg"), p)});
    }
    if (t == "BooleanTest") {
      std::string k = str(f, "booltesttype");
      IsTest test;
      test.what = k.find("TRUE") != std::string::npos    ? IsTest::What::True
                  : k.find("FALSE") != std::string::npos ? IsTest::What::False
                                                         : IsTest::What::Unknown;
      test.negated = k.find("NOT") != std::string::npos;
      test.operand = expr(f.at("arg"), p);
      return make_expr(p, std::move(test));
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

  std::vector<ExprPtr> exprs(const J& list, SourcePosition fallback) {
    std::vector<ExprPtr> out;
    for (const auto& e : list) out.push_back(expr(e, fallback));
    return out;
  }

  static ExprPtr call(SourcePosition p, const std::string& name, std::vector<ExprPtr> args) {
    FunctionCall c;
    c.name = {name};
    c.args = std::move(args);
    return make_expr(p, std::move(c));
  }

  ExprPtr column_ref(const J& f, SourcePosition p) {
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
  std::string number_text(int loc) const {
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

  ExprPtr constant(const J& f, SourcePosition p) {
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

  ExprPtr a_expr(const J& f, SourcePosition p) {
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

  ExprPtr bool_expr(const J& f, SourcePosition p) {
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

  ExprPtr sublink(const J& f, SourcePosition p) {
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

  ExprPtr type_cast(const J& f, SourcePosition p) {
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

  ExprPtr value_function(const J& f, SourcePosition p) {
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
    if (ct.name.empty()) unsupported(p, op.substr(6) + " is not supported");
    if (with_precision) ct.precision = f.value("typmod", -1);
    return make_expr(p, std::move(ct));
  }

  std::shared_ptr<const WindowSpec> window(const J& w, SourcePosition p) {
    if (!str(w, "refname").empty() || !str(w, "name").empty())
      unsupported(p, "named windows (OVER w / WINDOW w AS ...) are not supported");
    WindowSpec spec;
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

  ExprPtr func_call(const J& f, SourcePosition p) {
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
    return make_expr(p, std::move(c));
  }

  ExprPtr sql_syntax_function(const std::string& fn, std::vector<ExprPtr>& a, SourcePosition p) {
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

  // ------------------------------------------------------------ queries

  std::vector<OrderItem> order_items(const J& list, SourcePosition p) {
    std::vector<OrderItem> out;
    for (const auto& s : list) {
      const J& f = *node_of(s).fields;
      OrderItem item;
      item.expr = expr(f.at("node"), p);
      item.pos = item.expr->pos;
      std::string dir = str(f, "sortby_dir");
      if (dir == "SORTBY_USING") unsupported(p, "ORDER BY ... USING is not supported");
      item.descending = dir == "SORTBY_DESC";
      std::string nulls = str(f, "sortby_nulls");
      if (nulls == "SORTBY_NULLS_FIRST") item.nulls_first = true;
      if (nulls == "SORTBY_NULLS_LAST") item.nulls_first = false;
      out.push_back(std::move(item));
    }
    return out;
  }

  // `j` is {"SelectStmt": {...}} or, for set-operation arms, the bare fields.
  QueryPtr query(const J& j, SourcePosition fallback) {
    Node n = node_of(j);
    const J& f = n.type == "SelectStmt" ? *n.fields : j;
    if (!n.type.empty() && n.type != "SelectStmt") unsupported(fallback, n.type + " is not a query");
    int loc = min_location(f);
    auto q = std::make_shared<Query>();
    q->pos = pos(loc, fallback);
    SourcePosition p = q->pos;
    if (f.contains("intoClause")) unsupported(p, "SELECT ... INTO is not supported");
    if (f.contains("lockingClause")) unsupported(p, "FOR UPDATE / FOR SHARE is not supported");
    if (auto* w = child(f, "withClause")) {
      if (w->value("recursive", false)) unsupported(p, "WITH RECURSIVE is not supported");
      for (const auto& c : w->at("ctes")) {
        const J& cf = *node_of(c).fields;
        CommonTableExpr cte;
        cte.name = str(cf, "ctename");
        cte.pos = pos(cf);
        if (auto* cols = child(cf, "aliascolnames"))
          for (const auto& col : *cols) cte.columns.push_back(string_node(col));
        cte.query = query(cf.at("ctequery"), cte.pos);
        q->with.push_back(std::move(cte));
      }
    }
    std::string op = str(f, "op");
    if (op == "SETOP_NONE" || op.empty()) {
      if (auto* values = child(f, "valuesLists")) {
        Values v;
        for (const auto& row : *values) v.rows.push_back(exprs(node_of(row).fields->at("items"), p));
        q->body = std::move(v);
      } else {
        q->body = select(f, p);
      }
    } else {
      SetOperation s;
      s.op = op == "SETOP_UNION" ? SetOperation::Op::Union
             : op == "SETOP_INTERSECT" ? SetOperation::Op::Intersect : SetOperation::Op::Except;
      s.all = f.value("all", false);
      s.left = query(f.at("larg"), p);
      s.right = query(f.at("rarg"), p);
      q->body = std::move(s);
    }
    if (auto* sort = child(f, "sortClause")) q->order_by = order_items(*sort, p);
    if (str(f, "limitOption") == "LIMIT_OPTION_WITH_TIES") unsupported(p, "FETCH ... WITH TIES is not supported");
    if (auto* lim = child(f, "limitCount")) {
      ExprPtr e = expr(*lim, p);
      const Literal* l = e->as<Literal>();
      if (!(l && l->kind == Literal::Kind::Null)) q->limit = e;  // LIMIT ALL
    }
    if (auto* off = child(f, "limitOffset")) q->offset = expr(*off, p);
    return q;
  }

  Select select(const J& f, SourcePosition p) {
    Select s;
    if (auto* d = child(f, "distinctClause")) {
      for (const auto& e : *d)
        if (!e.empty()) unsupported(p, "DISTINCT ON is not supported");
      s.distinct = true;
    }
    if (f.contains("windowClause")) unsupported(p, "the WINDOW clause is not supported");
    if (auto* targets = child(f, "targetList")) {
      for (const auto& t : *targets) {
        const J& tf = *node_of(t).fields;
        SelectItem item;
        item.expr = expr(tf.at("val"), pos(tf));
        item.pos = item.expr->pos;
        if (tf.contains("name")) item.alias = str(tf, "name");
        s.items.push_back(std::move(item));
      }
    }
    if (auto* from = child(f, "fromClause"))
      for (const auto& item : *from) s.from.push_back(table_ref(item, p));
    if (auto* w = child(f, "whereClause")) s.where = expr(*w, p);
    if (auto* g = child(f, "groupClause"))
      for (const auto& e : *g) s.group_by.push_back(grouping(e, p));
    if (auto* h = child(f, "havingClause")) s.having = expr(*h, p);
    return s;
  }

  GroupingElement grouping(const J& j, SourcePosition p) {
    Node n = node_of(j);
    GroupingElement g;
    if (n.type == "GroupingSet") {
      const J& f = *n.fields;
      g.pos = pos(location(f), p);
      std::string kind = str(f, "kind");
      g.kind = kind == "GROUPING_SET_EMPTY"    ? GroupingElement::Kind::Empty
               : kind == "GROUPING_SET_ROLLUP" ? GroupingElement::Kind::Rollup
               : kind == "GROUPING_SET_CUBE"   ? GroupingElement::Kind::Cube
                                               : GroupingElement::Kind::Sets;
      if (kind == "GROUPING_SET_SIMPLE") g.kind = GroupingElement::Kind::Row;
      if (auto* content = child(f, "content"))
        for (const auto& c : *content) g.children.push_back(grouping(c, g.pos));
      return g;
    }
    if (n.type == "RowExpr" && str(*n.fields, "row_format") == "COERCE_IMPLICIT_CAST") {
      g.kind = GroupingElement::Kind::Row;
      g.pos = pos(location(*n.fields), p);
      if (auto* args = child(*n.fields, "args"))
        for (const auto& a : *args) g.children.push_back(grouping(a, g.pos));
      return g;
    }
    g.expr = expr(j, p);
    g.pos = g.expr->pos;
    return g;
  }

  void apply_alias(TableRef& ref, const J& f) {
    if (auto* a = child(f, "alias")) {
      ref.alias = str(*a, "aliasname");
      if (auto* cols = child(*a, "colnames"))
        for (const auto& c : *cols) ref.column_aliases.push_back(string_node(c));
    }
  }

  TableRefPtr table_ref(const J& j, SourcePosition p) {
    Node n = node_of(j);
    const J& f = *n.fields;
    auto ref = std::make_shared<TableRef>();
    if (n.type == "RangeVar") {
      ref->pos = pos(location(f), p);
      std::vector<std::string> name;
      for (const char* key : {"catalogname", "schemaname", "relname"})
        if (f.contains(key)) name.push_back(str(f, key));
      name = spelled(location(f), name);
      if (name.size() == 1 && starts_with(name[0], "__clink_tvf_")) {
        *ref = ctx_.placeholders.table_functions.at(std::stoul(name[0].substr(12)));
      } else {
        NamedTable t;
        t.name = std::move(name);
        auto it = location(f) >= 0 ? ctx_.placeholders.hints.find(origin(location(f))) : ctx_.placeholders.hints.end();
        if (it != ctx_.placeholders.hints.end()) t.hints = it->second;
        ref->node = std::move(t);
      }
      apply_alias(*ref, f);
      return ref;
    }
    if (n.type == "RangeSubselect") {
      if (f.value("lateral", false)) unsupported(p, "LATERAL subqueries are not supported yet");
      QueryPtr q = query(f.at("subquery"), p);
      ref->pos = q->pos;
      ref->node = DerivedTable{q};
      apply_alias(*ref, f);
      return ref;
    }
    if (n.type == "JoinExpr") {
      Join join;
      std::string type = str(f, "jointype");
      join.left = table_ref(f.at("larg"), p);
      join.right = table_ref(f.at("rarg"), p);
      join.natural = f.value("isNatural", false);
      if (auto* q = child(f, "quals")) join.on = expr(*q, p);
      if (auto* u = child(f, "usingClause"))
        for (const auto& c : *u) join.using_columns.push_back(string_node(c));
      join.type = type == "JOIN_LEFT" ? Join::Type::Left
                  : type == "JOIN_RIGHT" ? Join::Type::Right
                  : type == "JOIN_FULL"  ? Join::Type::Full
                                         : Join::Type::Inner;
      if (type != "JOIN_INNER" && type != "JOIN_LEFT" && type != "JOIN_RIGHT" && type != "JOIN_FULL")
        unsupported(p, "join type " + type + " is not supported");
      if (join.type == Join::Type::Inner && !join.on && join.using_columns.empty() && !join.natural)
        join.type = Join::Type::Cross;
      if (f.contains("alias")) unsupported(join.left->pos, "an alias on a parenthesised join is not supported");
      ref->pos = join.left->pos;
      ref->node = std::move(join);
      return ref;
    }
    if (n.type == "RangeFunction")
      unsupported(pos(min_location(f), p), "table functions in FROM (UNNEST, user functions) are not supported yet");
    unsupported(p, n.type + " in FROM is not supported");
  }

 private:
  const PgContext& ctx_;
};

const J& first_statement(const J& root) {
  const J& stmts = root.at("stmts");
  return stmts.at(0).at("stmt");
}

}  // namespace

ast::QueryPtr build_query(const std::string& json, const PgContext& ctx) {
  J root = J::parse(json);
  if (root.at("stmts").size() != 1) throw ParseError(ctx.fallback, "expected one query");
  return Builder(ctx).query(first_statement(root), ctx.fallback);
}

ast::ExprPtr build_expression(const std::string& json, const PgContext& ctx) {
  J root = J::parse(json);
  const J& select = *node_of(first_statement(root)).fields;
  Builder b(ctx);
  const J* targets = child(select, "targetList");
  if (!targets) throw ParseError(ctx.fallback, "expected an expression");
  if (targets->size() != 1) {
    int loc = location(*node_of(targets->at(1)).fields);
    throw ParseError(b.pos(loc, ctx.fallback), "expected a single expression");
  }
  const J& target = *node_of(targets->at(0)).fields;
  if (target.contains("name")) throw ParseError(ctx.fallback, "expected a single expression, not an aliased one");
  for (auto it = select.begin(); it != select.end(); ++it)
    if (it.key() != "targetList" && it.key() != "limitOption" && it.key() != "op")
      throw ParseError(ctx.fallback, "expected a single expression");
  return b.expr(target.at("val"), ctx.fallback);
}

std::string statement_node_name(const std::string& json) {
  J root = J::parse(json);
  if (root.at("stmts").empty()) return "";
  return node_of(first_statement(root)).type;
}

}  // namespace clink::sql::detail
