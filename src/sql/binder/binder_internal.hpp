#pragma once
// Binder internals shared by binder.cpp (queries, FROM), binder_expr.cpp (expressions)
// and binder_aggregate.cpp (GROUP BY, windows).
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "clink/sql/binder/binder.hpp"

namespace clink::sql {

[[noreturn]] inline void fail(SourcePosition pos, const std::string& message) { throw TranslationError(pos, message); }

struct ScopeColumn {
  std::string qualifier;  // table name or alias ("" for derived columns)
  std::string name;
  LogicalType type;
  // Reachable only as qualifier.name (not by an unqualified name, not by `*`): the outer
  // columns a decorrelated subquery's value generator adds to its FROM.
  bool qualified_only = false;
};

struct Scope {
  std::vector<ScopeColumn> columns;
  Schema schema() const {
    std::vector<RowField> f;
    for (const auto& c : columns) f.push_back({c.name, c.type});
    return Schema(std::move(f));
  }
  static Scope of(const Schema& s, const std::string& qualifier) {
    Scope sc;
    for (const auto& f : s.fields()) sc.columns.push_back({qualifier, f.name, f.type});
    return sc;
  }
};

struct Bound {
  LogicalPtr plan;
  Scope scope;
};

// How expressions after GROUP BY see the aggregate's output.
struct AggContext {
  const Scope* input = nullptr;                       // the scope the keys were bound over
  std::vector<std::string> key_texts;                  // AST text of each non-window key
  std::vector<std::optional<std::size_t>> key_columns;  // input column of plain-column keys
  std::map<std::string, std::size_t> agg_outputs;      // AST text of an aggregate call -> output column
  std::optional<std::size_t> window_input_start;       // TVF: input index of window_start
  std::map<std::size_t, std::size_t> attached_window;  // cascaded: input column -> 0 window_start, 1 window_end
  std::size_t window_output = 0;                       // output index of window_start (then end, time)
  bool has_window = false;
  std::string legacy_window_text;                      // GROUP BY TUMBLE(ts, ...): the call's args text
  std::string legacy_window_function;                  // TUMBLE / HOP / SESSION
  bool legacy_window_proctime = false;                 // over a processing-time attribute
  std::vector<std::vector<std::size_t>> grouping_sets;  // per grouping set: its keys (indices into key_texts)
  std::optional<std::size_t> grouping_set_column;      // output column of the row's set index (GROUPING calls)
  Schema output;
};

struct ExprContext {
  const Scope* scope = nullptr;
  const AggContext* agg = nullptr;  // set after GROUP BY
  std::string clause;               // for messages: "WHERE", "GROUP BY", ...
  // A correlated subquery's WHERE: columns not in `scope` resolve here, as column
  // scope->columns.size() + i (the expression reads inner ++ outer).
  const Scope* outer = nullptr;
};

// The canonical text of an AST expression (for matching GROUP BY keys and aggregates).
inline std::string ast_text(const ast::Expr& e) { return ast::to_string(e); }

std::string upper_name(std::string_view s);
// Calls `f` on each direct sub-expression of `e` (a null child too).
void walk_children(const ast::Expr& e, const std::function<void(const ast::ExprPtr&)>& f);
std::string qualified_text(const ast::QualifiedName& n);
bool is_aggregate_name(const std::string& upper, const FunctionRegistry& registry);
// Whether a select item calls an aggregate function OVER a window (binder_over.cpp).
bool has_over_aggregate(const ast::Select& s, const FunctionRegistry& registry);
// The aggregate calls inside `e` (not descending into them), in order.
void collect_aggregates(const ast::Expr* e, const FunctionRegistry& registry, std::vector<const ast::Expr*>& out);
// The calls with an OVER clause inside `e` (not descending into them), in order.
void collect_over_calls(const ast::Expr* e, std::vector<const ast::Expr*>& out);
// ORDER BY over an unbounded or updating input, as Flink's streaming planner runs it: with a
// LIMIT, a global Top-N (LogicalRank with sort_limit); without one, an error. Null when the
// input is bounded and insert-only: the sort then runs once at the end of input (sql_sort).
LogicalPtr stream_sort(const LogicalSort& sort);
// Processing-time windows are aligned in UTC: fails at `pos` for another session time zone.
void check_proctime_window_zone(const SessionConfig& session, SourcePosition pos);
std::int64_t interval_literal_ms(const ast::Expr& e, const char* what);
// Adds `e` to a pre-aggregation projection (reusing an identical column); its index.
std::size_t pre_column(std::vector<ExprPtr>& exprs, std::vector<std::string>& names, const ExprPtr& e,
                       const std::string& name);

// A subquery whose WHERE reads the outer query's columns through equalities (Calcite's
// decorrelation handles those): binder_subquery_expr.cpp.
struct SubqueryCorrelation {
  const ast::Select* select = nullptr;
  std::vector<ast::ExprPtr> inner_keys;  // the subquery's side of each correlating equality
  std::vector<ExprPtr> outer_keys;       // the outer side, over the outer scope
  std::vector<ast::ExprPtr> local;       // the other WHERE conjuncts
  // Correlating conditions that are not such equalities (`inner.v > outer.v`), and the
  // outer columns they read (sorted): decorrelated with a value generator.
  std::vector<ast::ExprPtr> general;
  std::vector<std::size_t> general_outer;
};

// The qualifier of the columns a subquery join appends to a scope (hidden from `*`).
inline constexpr const char* kSubqueryQualifier = "$subquery";

struct Binder::Impl {
  const Catalog& catalog;
  const FunctionRegistry& registry;
  SessionConfig session;
  std::vector<std::map<std::string, Bound>> ctes;  // innermost last
  std::vector<std::string> expanding_views;        // cycle check, and the depth bound
  bool views_too_deep = false;                     // that error passes the enclosing views unwrapped
  bool reuse_bound_views = false;                  // bind_view_query: views as their ViewDef::bound
  std::size_t deepest_views = 0;                   // the most views nested so far (bind_view_query)
  // The one way an OVER call binds (ranking functions and OVER aggregates alike): its node
  // (LogicalRank / LogicalOverAggregate) computes it as a column; while the select list binds
  // over that node, the call's AST text maps to the column (over_columns, set by
  // project_over_items), read by bind_call; anywhere else an OVER call is an error
  // (bind_over_reference).
  std::map<std::string, std::pair<std::size_t, LogicalType>> over_columns;
  Bound project_over_items(const std::vector<ast::SelectItem>& items, const Bound& over,
                           std::map<std::string, std::pair<std::size_t, LogicalType>> columns, SourcePosition pos);
  // The window an OVER clause names: its own, or `OVER w` resolved through the WINDOW clause.
  const ast::WindowSpec& resolve_window(const ast::Select& s, const ast::WindowSpec& spec, SourcePosition at);
  // While a subquery of a shape that cannot be correlated binds: the outer query's scope,
  // so that a reference to its columns fails saying so rather than "not found".
  const Scope* uncorrelated_outer = nullptr;
  // The right side of the join being bound when it is written `t FOR SYSTEM_TIME AS OF ...`
  // (the only place that clause is accepted).
  const ast::NamedTable* temporal_right = nullptr;
  // The uid of each process table function call bound so far -> the call's text: a uid
  // names one call (Flink: "Duplicate unique identifier ...").
  std::map<std::string, std::string> ptf_uids;

  Impl(const Catalog& c, const FunctionRegistry& r, SessionConfig s) : catalog(c), registry(r), session(std::move(s)) {}

  // Queries (binder.cpp)
  Bound bind_query(const ast::Query& q);
  Bound bind_query_body(const ast::Query& q);
  Bound bind_select(const ast::Select& s, SourcePosition pos);
  Bound bind_values(const ast::Values& v, SourcePosition pos);
  Bound bind_set_operation(const ast::SetOperation& op, SourcePosition pos);
  // Subqueries (binder_subquery.cpp): a WHERE clause over `in`, its [NOT] IN / [NOT]
  // EXISTS conjuncts as semi / anti joins (Flink's SubQueryRemoveRule); INTERSECT and
  // EXCEPT of two inputs already cast to common types (ReplaceIntersectWithSemiJoinRule,
  // ReplaceMinusWithAntiJoinRule).
  Bound bind_where(const ast::Expr& where, Bound in);
  Bound bind_intersect_except(const ast::SetOperation& op, Bound l, Bound r, SourcePosition pos);
  // Subqueries inside expressions (binder_subquery_expr.cpp): scalar subqueries anywhere,
  // [NOT] IN / EXISTS under OR and NOT. Each joins `in` with the subquery's relation (a
  // LEFT join, decorrelated on the correlating equalities when `outer` is set), appends
  // the join's columns (qualifier kSubqueryQualifier) and records the expression that
  // stands for the subquery in subquery_values, which bind_expr reads.
  std::map<const ast::Expr*, ExprPtr> subquery_values;
  static bool has_subquery(const ast::Expr& e);
  // `agg`: the expressions are over an aggregate's output (HAVING, its select list).
  Bound join_expr_subqueries(const std::vector<const ast::Expr*>& exprs, Bound in, bool correlate,
                             const AggContext* agg = nullptr);
  Bound with_item_subqueries(const ast::Select& s, Bound in);  // the select list's
  std::optional<SubqueryCorrelation> correlate_subquery(const ast::Query& q, const Scope& outer);
  // Drops the columns join_expr_subqueries appended.
  static Bound drop_subquery_columns(Bound b, SourcePosition pos);
  // FROM t, LATERAL (SELECT ...) (binder_subquery_lateral.cpp): the subquery decorrelated
  // into a join with `left`.
  Bound bind_lateral(Bound left, const ast::TableRef& ref, bool left_outer, const ast::Expr* on);
  Bound bind_intersect_except_all(const ast::SetOperation& op, Bound l, Bound r, SourcePosition pos);
  Bound bind_order_limit(const ast::Query& q, Bound body);
  Bound bind_from(const std::vector<ast::TableRefPtr>& from, SourcePosition pos);
  Bound bind_table_ref(const ast::TableRef& t);
  Bound bind_named_table(const ast::NamedTable& t, const ast::TableRef& ref);
  Bound bind_table_def(const TableDef& def, const std::string& qualifier, SourcePosition pos);
  Bound bind_view(const ViewDef& view, const std::string& qualifier, SourcePosition pos);
  Bound bind_window_tvf(const ast::WindowTvf& tvf, const ast::TableRef& ref);
  // VECTOR_SEARCH (binder_vector_search.cpp): the seed's form names its input table;
  // Flink's form (LATERAL TABLE(VECTOR_SEARCH(TABLE vt, ...))) searches for each row of
  // `left`, the FROM items on its left (null: none).
  static bool is_vector_search(const ast::TableRef& ref);
  Bound bind_vector_search(const ast::WindowTvf& tvf, const ast::TableRef& ref, const Bound* left);
  // `TABLE t` of a window TVF or a process table function: the table, view or CTE t; or
  // `TABLE (SELECT ...)`, a subquery (the parser keeps it as the argument's expr).
  Bound bind_table_argument(const ast::TvfArg& table);
  // f(TABLE t PARTITION BY k, ...): a process table function (binder_ptf.cpp).
  Bound bind_process_table_function(const ast::WindowTvf& call, const ast::TableRef& ref);
  PtfTableArgument bind_table_clauses(const ast::TvfArg& table, const Bound& in, const LogicalProcessTableFunction& node,
                                      const std::string& name, const std::string& fname);
  void check_copartitioned(const LogicalProcessTableFunction& node, const std::vector<Bound>& ins,
                           const std::vector<const ast::TvfArg*>& args);
  void bind_on_time(LogicalProcessTableFunction& node, const std::vector<Bound>& ins, const ast::TvfArg* on_time,
                    const std::vector<std::string>& table_names, bool required, SourcePosition call_pos,
                    const std::string& fname);
  // ML_PREDICT(TABLE t, MODEL m, DESCRIPTOR(...) [, config]) (binder_ml_predict.cpp).
  Bound bind_ml_predict(const ast::WindowTvf& tvf, const ast::TableRef& ref);
  // MATCH_RECOGNIZE (binder_match.cpp); while its expressions bind, the AST text of each
  // navigation (A.x, FIRST(A.x), MATCH_ROWTIME(), ...) -> its extended-row column.
  Bound bind_match_recognize(const ast::MatchRecognize& m, const ast::TableRef& ref);
  const std::map<std::string, ExprPtr>* match_substitutions = nullptr;
  Bound bind_join(const ast::Join& j, const ast::TableRef& ref);
  // Table functions in FROM (binder_correlate.cpp): `ref` (a TableFunction) over each row
  // of `left`; a join whose right side is one; one with nothing on its left.
  Bound bind_correlate(Bound left, const ast::TableRef& ref, bool left_outer);
  Bound bind_correlate_join(const ast::Join& j, const ast::TableRef& ref);
  Bound bind_uncorrelated_table_function(const ast::TableRef& ref);
  // Event-time temporal joins (binder_temporal.cpp): validates as Flink and adds the
  // __TEMPORAL_JOIN_CONDITION marker to the join's condition.
  void bind_temporal_join(LogicalJoin& join, const Bound& left, const Bound& right, const ast::Join& j,
                          const ast::NamedTable& versioned);
  // Processing-time lookup joins (binder_lookup.cpp): nullopt when the AS OF is not the
  // left's processing-time attribute (an event-time temporal join); fails when the right
  // table cannot be looked up.
  std::optional<Bound> bind_lookup_join(const ast::Join& j, const ast::TableRef& ref, const Bound& left,
                                        const ast::NamedTable& dim);
  Bound project_items(const std::vector<ast::SelectItem>& items, const Bound& in, const AggContext* agg,
                      SourcePosition pos);
  Bound distinct(const Bound& in, SourcePosition pos);
  Bound with_aliases(Bound b, const std::vector<std::string>& aliases, const std::string& qualifier,
                     SourcePosition pos);

  // Top-N and deduplication (binder_rank.cpp): a SELECT whose items call ROW_NUMBER /
  // RANK / DENSE_RANK OVER (...) binds onto a LogicalRank; nullopt when it calls none.
  std::optional<Bound> bind_rank_select(const ast::Select& s, const Bound& in, SourcePosition pos);

  // Aggregation (binder_aggregate.cpp)
  Bound bind_aggregate(const ast::Select& s, Bound in, SourcePosition pos);

  // Expressions (binder_expr.cpp)
  ExprPtr bind_expr(const ast::Expr& e, const ExprContext& ctx);
  std::size_t resolve_column(const ast::ColumnRef& ref, const Scope& scope, SourcePosition pos) const;
  // The columns of `scope` that `ref` (qualifier.name or name) names; no error.
  std::vector<std::size_t> find_columns(const ast::ColumnRef& ref, const Scope& scope) const;
  ExprPtr bind_literal(const ast::Literal& l, SourcePosition pos);
  ExprPtr bind_call(const ast::FunctionCall& f, const ast::Expr& e, const ExprContext& ctx);
  // GROUPING(k, ...) / GROUPING_ID(k, ...) over the grouping sets of ctx.agg.
  ExprPtr bind_grouping(const ast::FunctionCall& f, const ast::Expr& e, const ExprContext& ctx);
  ExprPtr call(std::string_view name, std::vector<ExprPtr> args, SourcePosition pos);
  // binder_special_forms.cpp: TIMESTAMPADD/DIFF units and SQL/JSON clauses (nullptr when `f`
  // needs no lowering), IS [NOT] JSON.
  ExprPtr bind_special_call(const std::string& name, const ast::FunctionCall& f, const ast::Expr& e,
                            const ExprContext& ctx);
  ExprPtr bind_is_json(const ast::IsTest& t, const ExprContext& ctx, SourcePosition pos);
  ExprPtr bind_json_constructor(const std::string& name, const ast::FunctionCall& f, const ast::Expr& e,
                                const ExprContext& ctx);
  ExprPtr bind_post_aggregate_column(const ast::Expr& e, const ExprContext& ctx);
  // FIELD(...) for ref.names[from..]: the ROW field accesses after the column.
  ExprPtr field_accesses(ExprPtr base, const ast::ColumnRef& ref, std::size_t from, SourcePosition pos);
  // OVER aggregates (binder_over.cpp): the select list of a query without GROUP BY whose
  // items call aggregates OVER a window; references to those calls in expressions.
  Bound bind_over(const ast::Select& s, Bound in, SourcePosition pos);
  [[noreturn]] void bind_over_reference(const ast::FunctionCall& f, const ast::Expr& e, const ExprContext& ctx);

  AggregateCall bind_aggregate_call(const ast::FunctionCall& f, const ast::Expr& e, const Scope& scope,
                                    std::vector<ExprPtr>& pre_exprs, std::vector<std::string>& pre_names);
};

// Converts an SqlTypeError / ClinkError from a builder into a TranslationError at pos.
template <class F>
auto at(SourcePosition pos, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const SqlError&) {
    throw;
  } catch (const ClinkError& e) {
    throw TranslationError(pos, e.what());
  }
}

}  // namespace clink::sql
