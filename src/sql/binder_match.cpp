// Binder: MATCH_RECOGNIZE, as Flink's streaming planner accepts it (StreamExecMatch,
// MatchCodeGenerator): ORDER BY a time attribute (event or processing time) ascending;
// PATTERN a concatenation of unique variables with quantifiers; DEFINE conditions and
// MEASURES over the current row / the match's rows through navigations (A.x = LAST(A.x),
// FIRST(A.x, n), LAST(A.x, n), PREV(A.x, n)), MATCH_ROWTIME(), MATCH_PROCTIME(),
// CLASSIFIER(). Each navigation becomes a slot of the extended row (LogicalMatch), so the
// expressions compile with the ordinary expression compiler.
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
  for (const auto& t : m.pattern) {
    if (!variables.insert(t.variable).second)
      fail(t.pos, "Pattern variables must be unique. That might change in the future.");
    bool optional = t.min == 0 && t.max == 1;
    if (optional && t.reluctant) fail(t.pos, "Reluctant optional variables are not supported yet.");
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
  // the expressions bind with the targets as columns.
  struct Target {
    enum Kind { kColumn, kNav, kAggregate } kind;
    std::size_t index;   // kColumn: extended column; kNav / kAggregate: slot
    std::size_t column;  // kNav: input column
  };
  auto bind_over_match = [&](const std::vector<const ast::Expr*>& exprs, const std::string& defining,
                             std::vector<MatchNav>& navs, std::vector<MatchAggregate>& aggs,
                             const char* clause) -> std::vector<ExprPtr> {
    const bool define = !defining.empty();
    std::map<std::string, Target> targets;
    std::vector<std::string> agg_texts;
    auto slot_of = [&](MatchNav nav) {
      auto it = std::find(navs.begin(), navs.end(), nav);
      if (it != navs.end()) return static_cast<std::size_t>(it - navs.begin());
      navs.push_back(std::move(nav));
      return navs.size() - 1;
    };
    auto input_column = [&](const std::string& name, SourcePosition pos) {
      ast::ColumnRef head;
      head.names = {name};
      return resolve_column(head, input_scope, pos);
    };
    auto check_variable = [&](const std::string& var, SourcePosition pos) {
      if (!var.empty() && !variables.count(var)) fail(pos, fmt::format("'{}' is not a pattern variable", var));
    };
    // An aggregate over one variable's rows: its arguments bind over one input row.
    auto aggregate = [&](const ast::FunctionCall& f, const ast::Expr& x) {
      std::optional<std::string> var;
      std::map<std::string, std::size_t> arg_columns;
      std::function<void(const ast::Expr&)> refs = [&](const ast::Expr& a) {
        if (const auto* c = a.as<ast::ColumnRef>()) {
          std::string v = c->names.size() >= 2 && variables.count(c->names[0]) ? c->names[0] : "";
          if (c->names.size() >= 2 && v.empty() && c->names.size() == 2)
            fail(a.pos, fmt::format("'{}' is not a pattern variable", c->names[0]));
          if (var && *var != v)
            fail(a.pos, fmt::format("{}: an aggregate must be applied to a single pattern variable", upper_name(f.name.back())));
          var = v;
          if (!v.empty()) arg_columns[ast_text(a)] = input_column(c->names[1], a.pos);
          return;
        }
        walk_children(a, [&](const ast::ExprPtr& ch) {
          if (ch) refs(*ch);
        });
      };
      for (const auto& a : f.args) refs(*a);
      MatchAggregate agg;
      agg.variable = var.value_or("");
      struct Restore {
        const std::map<std::string, std::size_t>*& slot;
        const std::map<std::string, std::size_t>* saved;
        ~Restore() { slot = saved; }
      } restore{match_substitutions, match_substitutions};
      match_substitutions = &arg_columns;
      std::vector<std::string> names;
      agg.call = bind_aggregate_call(f, x, input_scope, agg.args, names);
      if (agg.call.distinct || agg.call.filter)
        fail(x.pos, "DISTINCT and FILTER are not supported in aggregates over pattern variables");
      std::string text = ast_text(x);
      auto it = std::find(agg_texts.begin(), agg_texts.end(), text);
      std::size_t slot = static_cast<std::size_t>(it - agg_texts.begin());
      if (it == agg_texts.end()) {
        agg_texts.push_back(text);
        aggs.push_back(std::move(agg));
      }
      targets[text] = Target{Target::kAggregate, slot, 0};
    };
    std::function<void(const ast::Expr&)> collect = [&](const ast::Expr& x) {
      if (const auto* c = x.as<ast::ColumnRef>(); c && c->names.size() >= 2 && variables.count(c->names[0])) {
        if (c->names.size() > 2) fail(x.pos, "field access on a pattern variable's column is not supported");
        std::size_t col = input_column(c->names[1], x.pos);
        if (define && c->names[0] == defining) {
          targets[ast_text(x)] = Target{Target::kColumn, col, 0};
        } else {
          targets[ast_text(x)] = Target{Target::kNav, slot_of(MatchNav{MatchNav::Kind::kLast, c->names[0], 0}), col};
        }
        return;
      }
      if (const auto* f = x.as<ast::FunctionCall>()) {
        std::string name = upper_name(f->name.back());
        if (name == "MATCH_ROWTIME" || name == "MATCH_PROCTIME" || name == "CLASSIFIER") {
          if (!f->args.empty()) fail(x.pos, name + "() takes no arguments");
          std::size_t special = name == "MATCH_ROWTIME" ? 0 : name == "MATCH_PROCTIME" ? 1 : 2;
          targets[ast_text(x)] = Target{Target::kColumn, n + special, 0};
          return;
        }
        if (name == "FIRST" || name == "LAST" || name == "PREV" || name == "NEXT") {
          if (name == "NEXT") fail(x.pos, "NEXT is not supported in MATCH_RECOGNIZE (Flink supports PREV only)");
          if (f->args.empty() || f->args.size() > 2)
            fail(x.pos, name + " takes a column reference and an optional offset: " + name + "(A.price[, 1])");
          const auto* c = f->args[0]->as<ast::ColumnRef>();
          if (!c || c->names.empty() || c->names.size() > 2)
            fail(f->args[0]->pos, name + " takes a column reference such as A.price");
          std::string var = c->names.size() == 2 ? c->names[0] : "";
          check_variable(var, f->args[0]->pos);
          std::size_t col = input_column(c->names.back(), f->args[0]->pos);
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
          if (define && kind == MatchNav::Kind::kLast && offset == 0 && (var.empty() || var == defining)) {
            targets[ast_text(x)] = Target{Target::kColumn, col, 0};  // the current row
          } else {
            targets[ast_text(x)] = Target{Target::kNav, slot_of(MatchNav{kind, var, offset}), col};
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
    std::map<std::string, std::size_t> substitutions;
    for (const auto& [text, t] : targets)
      substitutions[text] = t.kind == Target::kColumn ? t.index
                            : t.kind == Target::kNav  ? n + 3 + n * t.index + t.column
                                                      : n + 3 + n * navs.size() + t.index;
    struct Restore {
      const std::map<std::string, std::size_t>*& slot;
      ~Restore() { slot = nullptr; }
    } restore{match_substitutions};
    match_substitutions = &substitutions;
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

  std::vector<RowField> fields;
  for (auto k : node->partition_keys) {
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
    if (!names.insert(alias).second) fail(item.pos, fmt::format("MEASURES: duplicate output column name '{}'", alias));
    if (const auto* f = item.expr->as<ast::FunctionCall>(); f && upper_name(f->name.back()) == "MATCH_ROWTIME")
      node->rowtime_output = fields.size();
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
