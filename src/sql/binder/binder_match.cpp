// Binder: MATCH_RECOGNIZE, as Flink's streaming planner accepts it (StreamExecMatch,
// MatchCodeGenerator): ORDER BY a time attribute (event or processing time) ascending;
// PATTERN a concatenation of unique variables with quantifiers; DEFINE conditions and
// MEASURES over the current row / the match's rows through navigations (A.x = LAST(A.x),
// FIRST(A.x, n), LAST(A.x, n), PREV(A.x, n)), MATCH_ROWTIME(), MATCH_PROCTIME(),
// CLASSIFIER(). Each navigation becomes a slot of the extended row (LogicalMatch), so the
// expressions compile with the ordinary expression compiler. ALL ROWS PER MATCH (SQL:2016,
// a clink extension) evaluates the measures per row of the match: RUNNING (over the rows
// up to the current one) unless written FINAL.
#include <algorithm>
#include <set>

#include "binder_internal.hpp"

namespace clink::sql {

Bound Binder::Impl::bind_match_recognize(const ast::MatchRecognize& m, const ast::TableRef& ref) {
  Bound in = bind_table_ref(*m.input);
  const Schema& input = in.plan->schema;
  const std::size_t n = input.size();
  auto node = std::make_shared<LogicalMatch>();
  node->pos = ref.pos;
  node->all_rows = m.all_rows;
  Scope input_scope = Scope::of(input, "");

  for (const auto& p : m.partition_by) {
    ExprPtr e = bind_expr(*p, ExprContext{&input_scope, nullptr, "PARTITION BY"});
    if (e->kind != ExprKind::kColumnRef) fail(p->pos, "PARTITION BY of MATCH_RECOGNIZE takes input columns");
    node->partition_keys.push_back(e->column_index);
  }
  if (m.order_by.empty()) fail(ref.pos, "You must specify either rowtime or proctime for order by.");
  {
    const auto& o = m.order_by[0];
    ExprPtr e = bind_expr(*o.expr, ExprContext{&input_scope, nullptr, "ORDER BY"});
    bool rowtime = e->kind == ExprKind::kColumnRef && is_time_attribute(*in.plan, e->column_index);
    bool proctime = e->kind == ExprKind::kColumnRef && is_proctime_attribute(*in.plan, e->column_index);
    if (!rowtime && !proctime) fail(o.pos, "You must specify either rowtime or proctime for order by as the first one.");
    if (o.descending) fail(o.pos, "Primary sort order of a streaming table must be ascending on time.");
    node->order_column = e->column_index;
    node->proctime = proctime;
    if (m.order_by.size() > 1)
      fail(m.order_by[1].pos, "MATCH_RECOGNIZE: sorting on columns after the time attribute is not supported");
  }

  // PATTERN (StreamExecMatch.translatePattern's rules).
  std::set<std::string> variables;
  bool previous_greedy = false;
  for (const auto& t : m.pattern) {
    if (!variables.insert(t.variable).second)
      fail(t.pos, "Pattern variables must be unique. That might change in the future.");
    bool optional = t.min == 0 && t.max == 1;
    if (optional && t.reluctant) fail(t.pos, "Reluctant optional variables are not supported yet.");
    // Flink's Pattern.optional() (also behind * and {0,n}) after a greedy quantifier.
    if (t.min == 0 && previous_greedy) fail(t.pos, "Optional pattern cannot be preceded by greedy pattern");
    previous_greedy = !t.reluctant && !optional && t.min != t.max;
    node->pattern.push_back(MatchStep{t.variable, t.min, t.max, t.reluctant, t.quantifier});
  }
  if (std::all_of(m.pattern.begin(), m.pattern.end(), [](const auto& t) { return t.min == 0; }))
    fail(m.pattern_pos,
         "Patterns that can produce empty matches are not supported. There must be at least one non-optional state.");
  {
    const auto& last = m.pattern.back();
    bool greedy = !last.reluctant && !(last.min == 0 && last.max == 1) && last.min != last.max;
    if (greedy)
      fail(last.pos, "Greedy quantifiers are not allowed as the last element of a Pattern yet. Finish your pattern "
                     "with either a simple variable or reluctant quantifier.");
  }
  if (m.within) node->within_ms = interval_literal_ms(*m.within, "WITHIN");
  node->skip = static_cast<LogicalMatch::Skip>(static_cast<int>(m.skip));
  node->skip_variable = m.skip_variable;
  if (!m.skip_variable.empty() && !variables.count(m.skip_variable))
    fail(m.skip_pos, fmt::format("AFTER MATCH SKIP TO {}: '{}' is not a pattern variable",
                                 m.skip == ast::MatchRecognize::Skip::ToFirst ? "FIRST" : "LAST", m.skip_variable));

  const LogicalType rowtime_type = node->proctime ? LogicalType::timestamp(3).not_null()
                                                  : input.type(node->order_column).with_nullable(false);
  // Binds expressions over the extended row. First every navigation and aggregate of the
  // expressions becomes a slot (its AST text -> a target), then the layout is fixed and
  // the expressions bind with the targets substituted.
  using Substitutions = std::map<std::string, ExprPtr>;
  struct SubstitutionScope {  // binds with `map` substituted, restoring the previous one
    const Substitutions*& slot;
    const Substitutions* saved;
    SubstitutionScope(const Substitutions*& s, const Substitutions* map) : slot(s), saved(s) { slot = map; }
    ~SubstitutionScope() { slot = saved; }
  };
  // The column references of an argument (FIRST(A.price + A.tax), SUM(B.price * B.rate)):
  // they must name one variable (or none: every row); text -> input column.
  struct ArgumentRefs {
    std::string variable;
    std::map<std::string, std::size_t> columns;
  };
  auto argument_refs = [&](const ast::Expr& arg, const std::string& fn) {
    ArgumentRefs out;
    std::optional<std::string> var;
    std::function<void(const ast::Expr&)> refs = [&](const ast::Expr& a) {
      if (const auto* c = a.as<ast::ColumnRef>()) {
        if (c->names.size() > 2) fail(a.pos, "field access on a pattern variable's column is not supported");
        std::string v = c->names.size() == 2 ? c->names[0] : "";
        if (!v.empty() && !variables.count(v)) fail(a.pos, fmt::format("'{}' is not a pattern variable", v));
        if (var && *var != v) fail(a.pos, fmt::format("{}: the argument must reference a single pattern variable", fn));
        var = v;
        ast::ColumnRef head;
        head.names = {c->names.back()};
        out.columns[ast_text(a)] = resolve_column(head, input_scope, a.pos);
        return;
      }
      walk_children(a, [&](const ast::ExprPtr& ch) {
        if (ch) refs(*ch);
      });
    };
    refs(arg);
    out.variable = var.value_or("");
    return out;
  };
  auto column_substitutions = [&](const ArgumentRefs& refs, std::size_t base, const Scope& scope) {
    Substitutions out;
    for (const auto& [text, col] : refs.columns) {
      const auto& c = scope.columns[base + col];
      out[text] = expr::column(base + col, c.type, c.name);
    }
    return out;
  };

  struct Target {
    enum Kind { kColumn, kNav, kAggregate } kind;
    std::size_t index;                // kColumn: extended column; kNav / kAggregate: slot
    const ast::Expr* arg = nullptr;   // kNav: the navigated expression
    ArgumentRefs refs;                // kNav
    bool current_row = false;         // kNav that reads the current row (DEFINE: LAST(V.x))
  };
  auto bind_over_match = [&](const std::vector<const ast::Expr*>& exprs, const std::string& defining,
                             std::vector<MatchNav>& navs, std::vector<MatchAggregate>& aggs,
                             const char* clause) -> std::vector<ExprPtr> {
    const bool define = !defining.empty();
    // Inside FINAL(x) (MEASURES): over the whole match. ONE ROW PER MATCH evaluates at the
    // match's last row, where RUNNING and FINAL agree: every measure is final there.
    bool final = !m.all_rows;
    std::map<std::string, Target> targets;
    std::vector<std::string> agg_texts;
    auto slot_of = [&](MatchNav nav) {
      auto it = std::find(navs.begin(), navs.end(), nav);
      if (it != navs.end()) return static_cast<std::size_t>(it - navs.begin());
      navs.push_back(std::move(nav));
      return navs.size() - 1;
    };
    // An aggregate over one variable's rows: its arguments bind over one input row.
    auto aggregate = [&](const ast::FunctionCall& f, const ast::Expr& x) {
      std::string fn = upper_name(f.name.back());
      ArgumentRefs refs;
      for (const auto& a : f.args) {
        ArgumentRefs r = argument_refs(*a, fn);
        if (!refs.columns.empty() && !r.columns.empty() && r.variable != refs.variable)
          fail(a->pos, fmt::format("{}: the argument must reference a single pattern variable", fn));
        if (!r.columns.empty()) refs.variable = r.variable;
        refs.columns.insert(r.columns.begin(), r.columns.end());
      }
      MatchAggregate agg;
      agg.variable = refs.variable;
      agg.final = final;
      Substitutions arg_columns = column_substitutions(refs, 0, input_scope);
      SubstitutionScope scope(match_substitutions, &arg_columns);
      std::vector<std::string> names;
      agg.call = bind_aggregate_call(f, x, input_scope, agg.args, names);
      if (agg.call.distinct || agg.call.filter)
        fail(x.pos, "DISTINCT and FILTER are not supported in aggregates over pattern variables");
      std::string text = ast_text(x);
      const std::string key = text + (agg.final ? " FINAL" : "");  // FINAL COUNT(*) and COUNT(*) differ
      auto it = std::find(agg_texts.begin(), agg_texts.end(), key);
      std::size_t slot = static_cast<std::size_t>(it - agg_texts.begin());
      if (it == agg_texts.end()) {
        agg_texts.push_back(key);
        aggs.push_back(std::move(agg));
      }
      targets[text] = Target{Target::kAggregate, slot, nullptr, {}, false};
    };
    // What FINAL qualifies: a navigation, an aggregate or a pattern column (A.price);
    // not CLASSIFIER() or MATCH_ROWTIME(), which read the current row / the match.
    auto final_operand = [&](const ast::Expr& x) {
      if (const auto* c = x.as<ast::ColumnRef>()) return c->names.size() >= 2;
      const auto* f = x.as<ast::FunctionCall>();
      if (!f) return false;
      std::string name = upper_name(f->name.back());
      return name == "FIRST" || name == "LAST" || name == "PREV" || (is_aggregate_name(name, registry) && !f->over);
    };
    std::function<void(const ast::Expr&)> collect = [&](const ast::Expr& x) {
      if (const auto* c = x.as<ast::ColumnRef>(); c && c->names.size() >= 2 && variables.count(c->names[0])) {
        // A.x: the current row in A's own DEFINE, else LAST(A.x).
        ArgumentRefs refs = argument_refs(x, "a column reference");
        if (define && c->names[0] == defining) {
          targets[ast_text(x)] = Target{Target::kNav, 0, &x, std::move(refs), true};
        } else {
          std::size_t slot = slot_of(MatchNav{MatchNav::Kind::kLast, c->names[0], 0, final});
          targets[ast_text(x)] = Target{Target::kNav, slot, &x, std::move(refs), false};
        }
        return;
      }
      if (const auto* f = x.as<ast::FunctionCall>()) {
        std::string name = upper_name(f->name.back());
        if (name == "FINAL" && f->name.size() == 1) {
          // FINAL x (the clause parser's call): x over the whole match.
          if (define) fail(x.pos, "Cannot use RUNNING/FINAL in DEFINE");
          if (f->args.size() != 1 || final != !m.all_rows || !final_operand(*f->args[0]))
            fail(x.pos, "FINAL applies to a navigation (FIRST, LAST, PREV), an aggregate or a pattern column such as "
                        "A.price");
          // The operand's text keeps its RUNNING target (LAST(A.x) next to FINAL LAST(A.x)).
          const std::string operand = ast_text(*f->args[0]);
          auto saved = targets.find(operand);
          std::optional<Target> running = saved == targets.end() ? std::nullopt : std::optional<Target>(saved->second);
          final = true;
          collect(*f->args[0]);
          final = !m.all_rows;
          targets[ast_text(x)] = targets.at(operand);
          if (running) targets.insert_or_assign(operand, *running);
          else targets.erase(operand);
          return;
        }
        if (name == "MATCH_NUMBER")
          fail(x.pos, "MATCH_NUMBER() is not supported: Flink 2.3 has no MATCH_NUMBER either (a match is told apart "
                      "by MATCH_ROWTIME() or a FINAL measure)");
        if (name == "MATCH_ROWTIME" || name == "MATCH_PROCTIME" || name == "CLASSIFIER") {
          if (!f->args.empty()) fail(x.pos, name + "() takes no arguments");
          std::size_t special = name == "MATCH_ROWTIME" ? 0 : name == "MATCH_PROCTIME" ? 1 : 2;
          targets[ast_text(x)] = Target{Target::kColumn, n + special, nullptr, {}, false};
          return;
        }
        if (name == "FIRST" || name == "LAST" || name == "PREV" || name == "NEXT") {
          if (name == "NEXT") fail(x.pos, "NEXT is not supported in MATCH_RECOGNIZE (Flink supports PREV only)");
          if (f->args.empty() || f->args.size() > 2)
            fail(x.pos, name + " takes an expression over one pattern variable and an optional offset: " + name +
                            "(A.price[, 1])");
          ArgumentRefs refs = argument_refs(*f->args[0], name);
          if (refs.columns.empty()) fail(f->args[0]->pos, name + " needs a column reference such as A.price");
          int offset = name == "PREV" ? 1 : 0;
          if (f->args.size() == 2) {
            const auto* lit = f->args[1]->as<ast::Literal>();
            if (!lit || lit->kind != ast::Literal::Kind::Integer || lit->text.find('-') != std::string::npos ||
                lit->text.size() > 9)
              fail(f->args[1]->pos, name + ": the offset must be a non-negative integer literal");
            offset = std::stoi(lit->text);
          }
          MatchNav::Kind kind = name == "FIRST" ? MatchNav::Kind::kFirst
                                : name == "LAST" ? MatchNav::Kind::kLast
                                                 : MatchNav::Kind::kPrev;
          const std::string var = refs.variable;
          if (define && kind == MatchNav::Kind::kLast && offset == 0 && (var.empty() || var == defining)) {
            targets[ast_text(x)] = Target{Target::kNav, 0, f->args[0].get(), std::move(refs), true};
          } else {
            std::size_t slot = slot_of(MatchNav{kind, var, offset, final});
            targets[ast_text(x)] = Target{Target::kNav, slot, f->args[0].get(), std::move(refs), false};
          }
          return;
        }
        if (is_aggregate_name(name, registry) && !f->over) return aggregate(*f, x);
      }
      walk_children(x, [&](const ast::ExprPtr& child) {
        if (child) collect(*child);
      });
    };
    for (const ast::Expr* e : exprs) collect(*e);
    std::vector<LogicalType> agg_types;
    for (const auto& a : aggs) agg_types.push_back(a.call.type);
    Scope scope = Scope::of(match_extended_schema(input, navs.size(), rowtime_type, agg_types), "");
    for (std::size_t i = n; i < scope.columns.size(); ++i) scope.columns[i].qualifier = "$";
    Substitutions substitutions;
    for (const auto& [text, t] : targets) {
      if (t.kind == Target::kNav) {
        // The navigated expression over the row the slot selects.
        Substitutions columns = column_substitutions(t.refs, t.current_row ? 0 : n + 3 + n * t.index, scope);
        SubstitutionScope sub(match_substitutions, &columns);
        substitutions[text] = bind_expr(*t.arg, ExprContext{&scope, nullptr, clause});
        continue;
      }
      std::size_t col = t.kind == Target::kColumn ? t.index : n + 3 + n * navs.size() + t.index;
      substitutions[text] = expr::column(col, scope.columns[col].type, scope.columns[col].name);
    }
    SubstitutionScope sub(match_substitutions, &substitutions);
    std::vector<ExprPtr> out;
    for (const ast::Expr* e : exprs) out.push_back(bind_expr(*e, ExprContext{&scope, nullptr, clause}));
    return out;
  };

  std::set<std::string> defined;
  for (const auto& d : m.define) {
    if (!variables.count(d.variable))
      fail(d.pos, fmt::format("DEFINE {}: '{}' is not a variable of the PATTERN", d.variable, d.variable));
    if (!defined.insert(d.variable).second) fail(d.pos, fmt::format("DEFINE {} is written twice", d.variable));
    MatchDefinition def;
    def.variable = d.variable;
    def.condition = bind_over_match({d.condition.get()}, d.variable, def.navs, def.aggregates, "DEFINE")[0];
    if (def.condition->type.kind() != TypeKind::kBoolean)
      fail(d.condition->pos, fmt::format("DEFINE {}: the condition must be BOOLEAN, not {}", d.variable,
                                         def.condition->type.to_string()));
    def.text = ast_text(*d.condition);
    node->defines.push_back(std::move(def));
  }

  // ONE ROW PER MATCH: the partition columns then the measures; ALL ROWS PER MATCH: the
  // input columns (of the current row) then the measures, Calcite's order.
  std::vector<RowField> fields;
  std::vector<std::size_t> leading = node->partition_keys;
  if (m.all_rows) {
    leading.clear();
    for (std::size_t c = 0; c < n; ++c) leading.push_back(c);
  }
  for (auto k : leading) {
    node->outputs.push_back(expr::column(k, input.type(k), input.name(k)));
    fields.push_back({input.name(k), input.type(k)});
  }
  std::set<std::string> names;
  for (const auto& f : fields) names.insert(f.name);
  std::vector<const ast::Expr*> measure_exprs;
  for (const auto& item : m.measures) measure_exprs.push_back(item.expr.get());
  std::vector<ExprPtr> measures =
      bind_over_match(measure_exprs, "", node->measure_navs, node->measure_aggregates, "MEASURES");
  for (std::size_t i = 0; i < m.measures.size(); ++i) {
    const auto& item = m.measures[i];
    const ExprPtr& e = measures[i];
    const std::string& alias = *item.alias;
    if (!names.insert(alias).second)
      fail(item.pos, fmt::format("MEASURES: duplicate output column name '{}'{}", alias,
                                 m.all_rows ? " (ALL ROWS PER MATCH outputs the input columns, then the measures)" : ""));
    if (const auto* f = item.expr->as<ast::FunctionCall>(); f && upper_name(f->name.back()) == "MATCH_ROWTIME")
      node->rowtime_output = fields.size();
    if (const auto* f = item.expr->as<ast::FunctionCall>(); f && upper_name(f->name.back()) == "MATCH_PROCTIME")
      node->proctime_output = fields.size();
    fields.push_back({alias, e->type});
    node->outputs.push_back(e);
    node->measure_texts.push_back(ast_text(*item.expr));
  }
  node->schema = Schema(std::move(fields));
  node->inputs = {in.plan};
  Bound out;
  out.plan = node;
  out.scope = Scope::of(node->schema, "");
  return out;
}

}  // namespace clink::sql
