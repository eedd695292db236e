// libpg_query JSON -> clink AST: queries, FROM items and the entry points. Window
// table functions (__clink_tvf_N) and table hints are restored here.
#include "ast_builder_impl.hpp"

namespace clink::sql::detail {

namespace pg {

std::vector<OrderItem> Builder::order_items(const J& list, SourcePosition p) {
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

int Builder::query_start(int first_node) const {
  if (first_node < 0) return first_node;
  // PostgreSQL gives a query no position: its first node follows SELECT [DISTINCT | ALL],
  // VALUES or WITH, which the rewritten text recorded.
  const auto& sp = ctx_.rewritten.spellings;
  auto it = sp.lower_bound(static_cast<uint32_t>(first_node));
  int start = first_node;
  while (it != sp.begin()) {
    --it;
    std::string w = upper(it->second);
    if (w == "DISTINCT" || w == "ALL") continue;
    if (w == "SELECT" || w == "VALUES" || w == "WITH") start = static_cast<int>(it->first);
    break;
  }
  return start;
}

// `j` is {"SelectStmt": {...}} or, for set-operation arms, the bare fields.
QueryPtr Builder::query(const J& j, SourcePosition fallback) {
  Node n = node_of(j);
  const J& f = n.type == "SelectStmt" ? *n.fields : j;
  if (!n.type.empty() && n.type != "SelectStmt") unsupported(fallback, n.type + " is not a query");
  int loc = query_start(min_location(f));
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
      cte.name = spelled(location(cf), {str(cf, "ctename")}).at(0);
      cte.pos = pos(cf);
      if (auto* cols = child(cf, "aliascolnames"))
        for (const auto& col : *cols) cte.columns.push_back(string_node(col));
      cte.columns = names_after(location(cf), 1, std::move(cte.columns), 2);
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
    q->body = set_operation(f, op, p);
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

// A set operation. A chain of one UNION [ALL] (left-deep, as the grammar builds
// `a UNION ALL b UNION ALL c ...`) is walked without recursion and rebuilt balanced: UNION
// is associative and the first branch, which names the columns, stays leftmost, so a
// 10 000-branch UNION ALL nests 14 deep for every later stage instead of 10 000.
SetOperation Builder::set_operation(const J& f, const std::string& op, SourcePosition p) {
  SetOperation s;
  s.op = op == "SETOP_UNION" ? SetOperation::Op::Union
         : op == "SETOP_INTERSECT" ? SetOperation::Op::Intersect : SetOperation::Op::Except;
  s.all = f.value("all", false);
  if (s.op != SetOperation::Op::Union) {
    s.left = query(f.at("larg"), p);
    s.right = query(f.at("rarg"), p);
    return s;
  }
  std::vector<const J*> rights;  // last branch first
  const J* arm = &f;
  for (;;) {
    rights.push_back(&arm->at("rarg"));
    const J& left = arm->at("larg");
    const bool same_union = str(left, "op") == op && left.value("all", false) == s.all && !child(left, "sortClause") &&
                            !child(left, "limitCount") && !child(left, "limitOffset") && !child(left, "withClause");
    if (!same_union) {
      rights.push_back(&left);
      break;
    }
    arm = &left;
  }
  std::vector<QueryPtr> branches;
  for (auto it = rights.rbegin(); it != rights.rend(); ++it) branches.push_back(query(**it, p));
  // Branches [lo, hi) as one query: a branch, or the union of both halves.
  auto balanced = [&](auto& self, std::size_t lo, std::size_t hi) -> QueryPtr {
    if (hi - lo == 1) return branches[lo];
    const std::size_t mid = lo + (hi - lo) / 2;
    auto q = std::make_shared<Query>();
    q->pos = branches[lo]->pos;
    q->body = SetOperation{s.op, s.all, self(self, lo, mid), self(self, mid, hi)};
    return q;
  };
  const std::size_t mid = branches.size() / 2;
  s.left = balanced(balanced, 0, mid);
  s.right = balanced(balanced, mid, branches.size());
  return s;
}

Select Builder::select(const J& f, SourcePosition p) {
  Select s;
  if (auto* d = child(f, "distinctClause")) {
    for (const auto& e : *d)
      if (!e.empty()) unsupported(p, "DISTINCT ON is not supported");
    s.distinct = true;
  }
  if (auto* w = child(f, "windowClause")) {
    for (const auto& def : *w) {
      const J& wf = *node_of(def).fields;
      NamedWindow nw;
      nw.name = str(wf, "name");
      nw.pos = pos(location(wf), p);
      nw.spec = window(wf, nw.pos, true);
      s.windows.push_back(std::move(nw));
    }
  }
  if (auto* targets = child(f, "targetList")) {
    for (size_t i = 0; i < targets->size(); ++i) {
      const J& tf = *node_of(targets->at(i)).fields;
      SelectItem item;
      item.expr = expr(tf.at("val"), pos(tf));
      item.pos = item.expr->pos;
      if (tf.contains("name")) {
        // The alias is the last name of the target: recover its spelling from there.
        int next = i + 1 < targets->size() ? location(*node_of(targets->at(i + 1)).fields) : -1;
        item.alias = alias_spelling(location(tf), next, str(tf, "name"));
      }
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

GroupingElement Builder::grouping(const J& j, SourcePosition p) {
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

std::string Builder::alias_spelling(int from, int to, const std::string& pg) const {
  if (from < 0) return pg;
  const auto& sp = ctx_.rewritten.spellings;
  std::string found = pg;
  for (auto it = sp.lower_bound(static_cast<uint32_t>(from)); it != sp.end(); ++it) {
    if (to >= 0 && it->first >= static_cast<uint32_t>(to)) break;
    if (same_name(it->second, pg)) found = it->second;
  }
  return found;
}

std::vector<std::string> Builder::names_after(int start, size_t skip, std::vector<std::string> names,
                                              size_t first_window) const {
  if (start < 0) return names;
  const auto& sp = ctx_.rewritten.spellings;
  auto it = sp.lower_bound(static_cast<uint32_t>(start));
  for (size_t i = 0; i < skip && it != sp.end(); ++i) ++it;
  for (size_t n = 0; n < names.size(); ++n) {
    size_t window = n == 0 ? first_window : 2;
    auto probe = it;
    for (size_t i = 0; i < window && probe != sp.end(); ++i, ++probe)
      if (same_name(probe->second, names[n])) {
        names[n] = probe->second;
        it = std::next(probe);
        break;
      }
  }
  return names;
}

// `start`: where to look for the alias's spelling (PostgreSQL gives aliases no position),
// `skip`: names written before it (the table name's parts), `window`: how far to look.
void Builder::apply_alias(TableRef& ref, const J& f, int start, size_t skip, size_t window) {
  if (auto* a = child(f, "alias")) {
    std::vector<std::string> names{str(*a, "aliasname")};
    if (auto* cols = child(*a, "colnames"))
      for (const auto& c : *cols) names.push_back(string_node(c));
    names = names_after(start, skip, std::move(names), window);
    if (starts_with(names[0], "__clink_anon_")) return;  // added for PostgreSQL: there is none
    ref.alias = names[0];
    ref.column_aliases.assign(names.begin() + 1, names.end());
  }
}

// `input "__clink_mr_N"`: the preparse shim cut `MATCH_RECOGNIZE (...) [AS] alias` out
// and left the placeholder as the input's alias.
std::shared_ptr<TableRef> Builder::with_match_recognize(std::shared_ptr<TableRef> ref) {
  if (!ref->alias || !starts_with(*ref->alias, "__clink_mr_")) return ref;
  const auto& mr = ctx_.placeholders.match_recognize.at(std::stoul(ref->alias->substr(11)));
  if (!ref->column_aliases.empty()) unsupported(mr.pos, "column aliases are not allowed on the input of MATCH_RECOGNIZE");
  ref->alias.reset();
  auto out = std::make_shared<TableRef>();
  out->pos = ref->pos;
  ast::MatchRecognize clause = mr.clause;
  clause.input = std::move(ref);
  out->node = std::move(clause);
  out->alias = mr.alias;
  return out;
}

TableRefPtr Builder::table_ref(const J& j, SourcePosition p) {
  Node n = node_of(j);
  const J& f = *n.fields;
  auto ref = std::make_shared<TableRef>();
  if (n.type == "RangeVar") {
    ref->pos = pos(location(f), p);
    std::vector<std::string> name;
    for (const char* key : {"catalogname", "schemaname", "relname"})
      if (f.contains(key)) name.push_back(str(f, key));
    name = spelled(location(f), name);
    bool tvf = name.size() == 1 && starts_with(name[0], "__clink_tvf_");
    size_t name_parts = tvf ? 0 : name.size();  // the placeholder has no recorded spelling
    if (tvf) {
      *ref = ctx_.placeholders.table_functions.at(std::stoul(name[0].substr(12)));
    } else {
      NamedTable t;
      t.name = std::move(name);
      auto it = location(f) >= 0 ? ctx_.placeholders.hints.find(origin(location(f))) : ctx_.placeholders.hints.end();
      if (it != ctx_.placeholders.hints.end()) {
        t.hints = it->second;
        for (uint32_t h : ctx_.placeholders.hint_tokens.at(it->first)) ctx_.placeholders.used_hints.insert(h);
      }
      if (location(f) >= 0) {
        auto st = ctx_.placeholders.system_time.find(origin(location(f)));
        if (st != ctx_.placeholders.system_time.end()) {
          t.system_time = st->second;
          ctx_.placeholders.used_system_time.insert(st->first);
        }
      }
      ref->node = std::move(t);
    }
    apply_alias(*ref, f, location(f), name_parts, 2);  // [AS] alias
    return with_match_recognize(std::move(ref));
  }
  if (n.type == "RangeSubselect") {
    QueryPtr q = query(f.at("subquery"), p);
    ref->pos = q->pos;
    ref->node = DerivedTable{q, f.value("lateral", false)};
    // The alias follows the subquery's last token (and ORDER BY ... DESC NULLS LAST, AS).
    int last = max_location(f.at("subquery"));
    apply_alias(*ref, f, last < 0 ? -1 : last + 1, 0, 6);
    return with_match_recognize(std::move(ref));
  }
  if (n.type == "JoinExpr") {
    Join join;
    std::string type = str(f, "jointype");
    join.left = table_ref(f.at("larg"), p);
    join.right = table_ref(f.at("rarg"), p);
    join.natural = f.value("isNatural", false);
    if (auto* q = child(f, "quals")) join.on = expr(*q, p);
    if (auto* u = child(f, "usingClause")) {
      for (const auto& c : *u) join.using_columns.push_back(string_node(c));
      // The USING names follow the right side (its alias, USING): recover their spelling.
      int right_end = max_location(f.at("rarg"));
      if (right_end >= 0) join.using_columns = names_after(right_end + 1, 0, std::move(join.using_columns), 8);
    }
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
  if (n.type == "RangeFunction") return table_function(f, p);
  unsupported(p, n.type + " in FROM is not supported");
}

// UNNEST(x) [WITH ORDINALITY] / LATERAL f(args) (LATERAL TABLE(f(args)) before the
// rewrite) in FROM: {"functions": [{"List": {"items": [FuncCall, coldeflist]}}], ...}.
TableRefPtr Builder::table_function(const J& f, SourcePosition p) {
  SourcePosition at = pos(min_location(f), p);
  if (f.value("is_rowsfrom", false)) unsupported(at, "ROWS FROM (...) is not supported");
  const J& functions = f.at("functions");
  if (functions.size() != 1) unsupported(at, "only one table function per FROM item is supported");
  const J& items = node_of(functions.at(0)).fields->at("items");
  if (items.size() > 1 && !items.at(1).empty())
    unsupported(at, "a column definition list on a table function is not supported");
  ExprPtr call = expr(items.at(0), at);
  const auto* fc = call->as<FunctionCall>();
  if (!fc) unsupported(call->pos, "a table function in FROM must be a function call");
  if (fc->over || fc->filter || fc->distinct || fc->star || !fc->arg_names.empty())
    unsupported(call->pos, "a table function call takes plain arguments (no OVER, FILTER, DISTINCT, * or names)");
  TableFunction tf;
  tf.name = fc->name;
  tf.args = fc->args;
  tf.with_ordinality = f.value("ordinality", false);
  tf.lateral_table = f.value("lateral", false);
  auto ref = std::make_shared<TableRef>();
  ref->pos = call->pos;
  ref->node = std::move(tf);
  // The alias follows the call's closing parenthesis (and WITH ORDINALITY, AS).
  int last = max_location(functions);
  apply_alias(*ref, f, last < 0 ? -1 : last + 1, 0, 6);
  return ref;
}

namespace {

const J& first_statement(const J& root) {
  const J& stmts = root.at("stmts");
  return stmts.at(0).at("stmt");
}

}  // namespace

}  // namespace pg

using pg::Builder;
using pg::J;
using pg::child;
using pg::first_statement;
using pg::location;
using pg::node_of;

ast::ExprPtr build_expression_tree(const std::string& json, const PgContext& ctx);

namespace {
// A parse-tree shape the builder does not expect is a construct clink does not support:
// report it with the fragment's position rather than as a JSON error.
template <class F>
auto translating_tree_errors(const PgContext& ctx, F&& f) {
  try {
    return f();
  } catch (const nlohmann::json::exception& e) {
    throw TranslationError(ctx.fallback, std::string("unsupported SQL construct (") + e.what() + ")");
  }
}
}  // namespace

ast::QueryPtr build_query(const std::string& json, const PgContext& ctx) {
  return translating_tree_errors(ctx, [&] {
    J root = J::parse(json);
    if (root.at("stmts").size() != 1) throw ParseError(ctx.fallback, "expected one query");
    return Builder(ctx).query(first_statement(root), ctx.fallback);
  });
}

ast::ExprPtr build_expression(const std::string& json, const PgContext& ctx) {
  return translating_tree_errors(ctx, [&] { return build_expression_tree(json, ctx); });
}

ast::ExprPtr build_expression_tree(const std::string& json, const PgContext& ctx) {
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
