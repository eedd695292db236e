// Binder: SELECT items calling ROW_NUMBER / RANK / DENSE_RANK OVER (PARTITION BY ... ORDER BY
// ...), Flink's Top-N and deduplication shape. The call binds to the rank column of a
// LogicalRank over the FROM/WHERE input (partition and order expressions that are not plain
// columns are computed below it by a projection, as Calcite's ProjectToWindowRule does);
// the rank gets its range when an enclosing query filters on it (absorb_rank_filter). A
// rank left without a range is an OVER aggregation, rejected when the plan is checked.
#include "binder_internal.hpp"
#include "clink/sql/planner/changelog_mode.hpp"
#include "clink/sql/planner/rank_plan.hpp"
#include "clink/sql/spec/connector_table.hpp"

namespace clink::sql {

namespace {

std::optional<RankType> ranking_function(const ast::FunctionCall& f) {
  const std::string name = upper_name(f.name.back());
  if (name == "ROW_NUMBER") return RankType::kRowNumber;
  if (name == "RANK") return RankType::kRank;
  if (name == "DENSE_RANK") return RankType::kDenseRank;
  return std::nullopt;
}

}  // namespace

std::optional<Bound> Binder::Impl::bind_rank_select(const ast::Select& s, const Bound& in, SourcePosition pos) {
  std::vector<const ast::Expr*> overs;
  for (const auto& item : s.items) collect_over_calls(item.expr.get(), overs);
  const ast::Expr* rank_call = nullptr;
  for (const ast::Expr* e : overs) {
    if (!ranking_function(*e->as<ast::FunctionCall>())) continue;
    if (rank_call && ast_text(*rank_call) != ast_text(*e))
      fail(e->pos, "only one ranking function (ROW_NUMBER, RANK or DENSE_RANK) per SELECT is supported");
    rank_call = e;
  }
  if (!rank_call) return std::nullopt;
  for (const ast::Expr* e : overs)
    if (!ranking_function(*e->as<ast::FunctionCall>()))
      fail(e->pos, "an OVER aggregate next to a ranking function is not supported");
  const auto& f = *rank_call->as<ast::FunctionCall>();
  const ast::WindowSpec& over = resolve_window(s, *f.over, rank_call->pos);
  const RankType type = *ranking_function(f);
  const std::string fname = rank_type_name(type);
  if (!f.args.empty() || f.star || f.distinct) fail(rank_call->pos, fmt::format("{}() takes no arguments", fname));
  if (f.filter) fail(rank_call->pos, fmt::format("{}() does not take FILTER", fname));
  if (over.frame) fail(rank_call->pos, "ROW/RANGE not allowed with RANK, DENSE_RANK or ROW_NUMBER functions");
  if (over.order_by.empty())
    fail(rank_call->pos, fmt::format("{}() OVER needs an ORDER BY (the order that ranks each partition)", fname));

  // Partition and order keys: input columns, or expressions computed below the rank.
  ExprContext ctx;
  ctx.scope = &in.scope;
  ctx.clause = "OVER";
  const std::size_t n_in = in.scope.columns.size();
  std::vector<ExprPtr> extra;
  auto key_column = [&](const ast::ExprPtr& ast_e) -> std::size_t {
    std::vector<const ast::Expr*> aggs;
    collect_aggregates(ast_e.get(), registry, aggs);
    if (!aggs.empty()) fail(aggs[0]->pos, "aggregate functions are not allowed in OVER");
    ExprPtr e = bind_expr(*ast_e, ctx);
    if (e->kind == ExprKind::kColumnRef) return e->column_index;
    extra.push_back(e);
    return n_in + extra.size() - 1;
  };
  auto rank = std::make_shared<LogicalRank>();
  rank->rank_type = type;
  rank->function_pos = rank_call->pos;
  rank->pos = rank_call->pos;
  for (const auto& p : over.partition_by) rank->partition_keys.push_back(key_column(p));
  for (const auto& o : over.order_by) {
    SortKey k;
    k.column = key_column(o.expr);
    k.descending = o.descending;
    k.nulls_first = o.nulls_first.value_or(!o.descending);
    rank->order_keys.push_back(k);
  }
  LogicalPtr input = in.plan;
  if (!extra.empty()) {
    std::vector<ExprPtr> exprs;
    std::vector<std::string> names;
    for (std::size_t c = 0; c < n_in; ++c) {
      exprs.push_back(expr::column(c, in.plan->schema.type(c), in.plan->schema.name(c)));
      names.push_back(in.plan->schema.name(c));
    }
    for (std::size_t i = 0; i < extra.size(); ++i) {
      exprs.push_back(extra[i]);
      names.push_back(fmt::format("$over{}", i));
    }
    input = make_project(input, std::move(exprs), std::move(names), rank_call->pos);
  }
  // The rank column takes the alias of a select item that is just the call, as Flink's plan shows it.
  rank->rank_name = "w0$o0";
  for (const auto& item : s.items)
    if (item.expr.get() == rank_call && item.alias) rank->rank_name = *item.alias;
  rank->inputs = {input};
  rank->schema = rank_schema(input->schema, *rank);
  const std::size_t rank_col = rank->schema.size() - 1;

  // The items over the rank's output: the FROM columns keep their indices (the scope is the
  // input's, so `*` expands to them only); the call reads the rank column.
  return project_over_items(s.items, Bound{rank, in.scope},
                            {{ast_text(*rank_call), {rank_col, LogicalType::bigint().not_null()}}}, pos);
}

namespace {

bool plan_is_updating(const LogicalNode& n) {
  try {
    return changelog_mode(n).updating();
  } catch (const TranslationError&) {
    return false;  // the plan is rejected for its own reason when it is checked
  }
}

}  // namespace

LogicalPtr stream_sort(const LogicalSort& sort) {
  const LogicalNode& in = sort.input();
  if (plan_is_bounded(in) && !plan_is_updating(in)) return nullptr;
  const SortKey& first = sort.keys[0];
  // Without a LIMIT over updates the changelog check rejects the sort, naming what produces them.
  if (!sort.limit && plan_is_updating(in)) return nullptr;
  if (!sort.limit && sort.offset > 0)
    throw TranslationError(sort.pos, "ORDER BY with OFFSET but no LIMIT on an unbounded input (Flink's SortLimit with "
                                     "fetch=[unlimited]) is not supported; add a LIMIT");
  if (!sort.limit) {
    // Flink's StreamPhysicalSortRule: without a fetch only a temporal sort (ascending on a
    // time attribute first) runs on a stream.
    if (is_temporal_sort(sort)) return nullptr;  // the sort emits per watermark (sql_sort's time mode)
    throw TranslationError(sort.pos, fmt::format("Sort on a non-time-attribute field is not supported. ORDER BY {} "
                                                 "without LIMIT needs a bounded input",
                                                 in.schema.name(first.column)));
  }
  // LIMIT 0 returns nothing whatever the input; the plain sort does that (Flink prunes it to
  // an empty Values).
  if (*sort.limit == 0) return nullptr;
  auto rank = std::make_shared<LogicalRank>();
  rank->rank_type = RankType::kRowNumber;
  rank->order_keys = sort.keys;
  rank->rank_start = sort.offset + 1;
  rank->rank_end = sort.offset + *sort.limit;
  rank->output_rank_number = false;
  rank->sort_limit = true;
  rank->rank_name = "w0$o0";
  rank->function_pos = sort.pos;
  rank->pos = sort.pos;
  rank->inputs = sort.inputs;
  rank->schema = rank_schema(in.schema, *rank);
  return rank;
}

}  // namespace clink::sql
