#include "clink/sql/planner/rank_plan.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "clink/core/duration.hpp"
#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/spec/connector_table.hpp"
#include "clink/sql/planner/join_analysis.hpp"
#include "clink/sql/planner/plan_properties.hpp"
#include "plan_rewrite.hpp"

namespace clink::sql {

bool plan_is_bounded(const LogicalNode& n) {
  if (n.kind == LogicalKind::kValues) return true;
  if (n.kind == LogicalKind::kScan) {
    const TableDef& t = static_cast<const LogicalScan&>(n).table;
    return sql_source_bounded(t.connector(), t.options);
  }
  for (const auto& i : n.inputs)
    if (!plan_is_bounded(*i)) return false;
  return true;
}

bool is_temporal_sort(const LogicalSort& sort) {
  const LogicalNode& in = sort.input();
  const SortKey& first = sort.keys[0];
  return !sort.limit && sort.offset == 0 && !first.descending &&
         (is_time_attribute(in, first.column) || is_proctime_attribute(in, first.column));
}

std::string rank_type_name(RankType t) {
  switch (t) {
    case RankType::kRowNumber: return "ROW_NUMBER";
    case RankType::kRank: return "RANK";
    case RankType::kDenseRank: return "DENSE_RANK";
  }
  return "?";
}

Schema rank_schema(const Schema& input, const LogicalRank& rank) {
  std::vector<RowField> fields = input.fields();
  if (rank.output_rank_number) fields.push_back({rank.rank_name, LogicalType::bigint().not_null()});
  return Schema(std::move(fields));
}

RankAnalysis analyze_rank(const LogicalRank& r) {
  PlanProperties props;
  return props.rank(r);
}

RankAnalysis analyze_rank(const LogicalRank& r, PlanProperties& props) {
  if (!r.rank_end)
    throw TranslationError(r.function_pos,
                           fmt::format("{}() OVER (...) without a filter on its result (WHERE rn <= N) is an OVER "
                                       "aggregation, which is not supported; a Top-N query filters on the rank",
                                       rank_type_name(r.rank_type)));
  RankAnalysis a;
  const LogicalNode& in = r.input();
  if (r.sort_limit) {
    a.retract = props.changelog(in).updating();
    return a;
  }
  // Window forms: the partition keys hold the input's window_start and window_end.
  if (auto w = window_bound_columns(in)) {
    auto has = [&](std::size_t c) { return std::find(r.partition_keys.begin(), r.partition_keys.end(), c) != r.partition_keys.end(); };
    if (has(w->first) && has(w->second)) {
      a.kind = RankAnalysis::Kind::kWindowTopN;
      a.window_start = w->first;
      a.window_end = w->second;
    }
  }
  // Deduplicate (RankUtil.canConvertToDeduplicate): ROW_NUMBER, range [1, 1], the rank not
  // output, ordered by one time attribute. The window form takes event time only.
  const bool top1 = r.rank_type == RankType::kRowNumber && r.rank_start == 1 && *r.rank_end == 1 &&
                    !r.output_rank_number && r.order_keys.size() == 1;
  if (top1) {
    const std::size_t c = r.order_keys[0].column;
    const bool rowtime = is_time_attribute(in, c);
    const bool proctime = !rowtime && is_proctime_attribute(in, c);
    const bool window = a.kind == RankAnalysis::Kind::kWindowTopN;
    if (rowtime || (proctime && !window)) {
      a.kind = window ? RankAnalysis::Kind::kWindowDeduplicate : RankAnalysis::Kind::kDeduplicate;
      a.rowtime = rowtime;
      a.keep_last = r.order_keys[0].descending;
      a.time_column = c;
    }
  }
  if (a.kind == RankAnalysis::Kind::kTopN) a.retract = props.changelog(in).updating();
  return a;
}

namespace {

std::string names_of(const Schema& s, const std::vector<std::size_t>& cols) {
  std::string out;
  for (std::size_t i = 0; i < cols.size(); ++i) out += (i ? ", " : "") + s.name(cols[i]);
  return out;
}

std::string order_text(const Schema& s, const std::vector<SortKey>& keys) {
  std::string out;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const SortKey& k = keys[i];
    out += (i ? ", " : "") + s.name(k.column) + (k.descending ? " DESC" : " ASC");
    if (k.nulls_first == k.descending) out += k.nulls_first ? "-nulls_first" : "-nulls_last";
  }
  return out;
}

std::string select_text(const Schema& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + s.name(i);
  return out;
}

// Flink's WindowAttachedWindowingStrategy summary: the input already carries the window.
std::string attached_window(const LogicalRank& r, const RankAnalysis& a) {
  const Schema& in = r.input().schema;
  return fmt::format("win_start=[{}], win_end=[{}]", in.name(a.window_start), in.name(a.window_end));
}

}  // namespace

std::string describe_rank(const LogicalRank& r, PlanProperties& props) {
  const Schema& in = r.input().schema;
  const std::string range =
      r.rank_end ? fmt::format("rankStart={}, rankEnd={}", r.rank_start, *r.rank_end) : fmt::format("rankStart={}", r.rank_start);
  if (!r.rank_end)
    return fmt::format("OverRank(rankType=[{}], partitionBy=[{}], orderBy=[{}], select=[{}])", rank_type_name(r.rank_type),
                       names_of(in, r.partition_keys), order_text(in, r.order_keys), select_text(r.schema));
  const RankAnalysis& a = props.rank(r);
  switch (a.kind) {
    case RankAnalysis::Kind::kDeduplicate:
      return fmt::format("Deduplicate(keep=[{}], key=[{}], order=[{}])", a.keep_last ? "LastRow" : "FirstRow",
                         names_of(in, r.partition_keys), a.rowtime ? "ROWTIME" : "PROCTIME");
    case RankAnalysis::Kind::kWindowDeduplicate: {
      std::vector<std::size_t> keys;
      for (auto k : r.partition_keys)
        if (k != a.window_start && k != a.window_end) keys.push_back(k);
      return fmt::format("WindowDeduplicate(window=[{}], keep=[{}], partitionKeys=[{}], orderKey=[{}], order=[ROWTIME])",
                         attached_window(r, a), a.keep_last ? "LastRow" : "FirstRow", names_of(in, keys),
                         in.name(a.time_column));
    }
    case RankAnalysis::Kind::kWindowTopN: {
      std::vector<std::size_t> keys;
      for (auto k : r.partition_keys)
        if (k != a.window_start && k != a.window_end) keys.push_back(k);
      return fmt::format("WindowRank(window=[{}], rankType=[{}], rankRange=[{}], partitionBy=[{}], orderBy=[{}], "
                         "select=[{}])",
                         attached_window(r, a), rank_type_name(r.rank_type), range, names_of(in, keys),
                         order_text(in, r.order_keys), select_text(r.schema));
    }
    case RankAnalysis::Kind::kTopN: break;
  }
  const char* strategy = a.retract ? "RetractStrategy" : "AppendFastStrategy";
  if (r.sort_limit)
    return fmt::format("SortLimit(orderBy=[{}], offset=[{}], fetch=[{}], strategy=[{}])", order_text(in, r.order_keys),
                       r.rank_start - 1, *r.rank_end - r.rank_start + 1, strategy);
  return fmt::format("Rank(strategy=[{}], rankType=[{}], rankRange=[{}], partitionBy=[{}], orderBy=[{}], select=[{}])",
                     strategy, rank_type_name(r.rank_type), range,
                     names_of(in, r.partition_keys), order_text(in, r.order_keys), select_text(r.schema));
}

// ------------------------------------------------------------------ the range from a filter

namespace {

// An integer constant (a literal, possibly under casts between numeric types).
std::optional<std::int64_t> int_constant(const ExprPtr& e) {
  if (e->kind == ExprKind::kCast && e->args.size() == 1) return int_constant(e->args[0]);
  if (!e->is_literal() || e->literal.is_null()) return std::nullopt;
  switch (e->type.kind()) {
    case TypeKind::kTinyInt:
    case TypeKind::kSmallInt:
    case TypeKind::kInt:
    case TypeKind::kBigInt: return e->literal.as_int();
    default: return std::nullopt;
  }
}

bool is_rank_column(const ExprPtr& e, std::size_t col) {
  if (e->kind == ExprKind::kCast && e->args.size() == 1 && e->type.is_integer()) return is_rank_column(e->args[0], col);
  return e->kind == ExprKind::kColumnRef && e->column_index == col;
}

struct Range {
  std::int64_t start = 1;
  std::optional<std::int64_t> end;
};

// Folds `c` into the range when it bounds the rank column; false when it does not.
bool fold_bound(const ExprPtr& c, std::size_t col, Range& range) {
  if (c->kind != ExprKind::kCall || c->args.size() != 2) return false;
  std::string op = c->name;
  std::optional<std::int64_t> v;
  if (is_rank_column(c->args[0], col)) {
    v = int_constant(c->args[1]);
  } else if (is_rank_column(c->args[1], col)) {
    v = int_constant(c->args[0]);
    // N >= rn is rn <= N.
    if (op == "<") op = ">";
    else if (op == ">") op = "<";
    else if (op == "<=") op = ">=";
    else if (op == ">=") op = "<=";
  }
  if (!v) return false;
  auto lower = [&](std::int64_t s) { range.start = std::max(range.start, s); };
  auto upper = [&](std::int64_t e) { range.end = range.end ? std::min(*range.end, e) : e; };
  if (op == "<=") upper(*v);
  else if (op == "<") upper(*v - 1);
  else if (op == ">=") lower(*v);
  else if (op == ">") lower(*v + 1);
  else if (op == "=") {
    lower(*v);
    upper(*v);
  } else {
    return false;
  }
  return true;
}

}  // namespace

LogicalPtr absorb_rank_filter(const LogicalPtr& filter) {
  if (filter->kind != LogicalKind::kFilter) return filter;
  // Down through projections to the rank; each projection must pass the rank column through.
  std::vector<const LogicalNode*> chain;
  const LogicalNode* cur = &filter->input();
  while (cur->kind == LogicalKind::kProject) {
    chain.push_back(cur);
    cur = &cur->input();
  }
  if (cur->kind != LogicalKind::kRank) return filter;
  const auto& rank = static_cast<const LogicalRank&>(*cur);
  if (rank.rank_end || !rank.output_rank_number) return filter;
  const std::size_t rank_col = rank.schema.size() - 1;
  // The filter input's columns that are the rank column.
  std::vector<std::size_t> cols;
  for (std::size_t c = 0; c < filter->input().schema.size(); ++c) {
    std::size_t at = c;
    bool ok = true;
    for (const LogicalNode* p : chain) {
      const ExprPtr& e = static_cast<const LogicalProject&>(*p).exprs[at];
      if (e->kind != ExprKind::kColumnRef) {
        ok = false;
        break;
      }
      at = e->column_index;
    }
    if (ok && at == rank_col) cols.push_back(c);
  }
  if (cols.empty()) return filter;
  Range range;
  bool bounded = false;
  std::vector<ExprPtr> rest;
  for (const auto& c : rewrite::conjuncts(static_cast<const LogicalFilter&>(*filter).condition)) {
    bool folded = false;
    for (std::size_t col : cols) folded = folded || fold_bound(c, col, range);
    bounded = bounded || folded;
    if (!folded) rest.push_back(c);
  }
  if (!bounded) return filter;
  if (!range.end)
    throw TranslationError(filter->pos, "Rank end is not specified. Currently rank only support TopN, which means the "
                                        "rank end must be specified.");
  auto ranked = std::make_shared<LogicalRank>(rank);
  ranked->rank_start = range.start;
  ranked->rank_end = range.end;
  LogicalPtr plan = ranked;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) plan = with_inputs(**it, {plan});
  if (!rest.empty()) plan = make_filter(plan, rewrite::conjunction(std::move(rest)), filter->pos);
  return plan;
}

LogicalPtr plan_unfiltered_ranks(const LogicalPtr& plan) {
  std::vector<LogicalPtr> inputs;
  bool changed = false;
  for (const auto& i : plan->inputs) {
    inputs.push_back(plan_unfiltered_ranks(i));
    changed = changed || inputs.back() != i;
  }
  LogicalPtr node = changed ? with_inputs(*plan, inputs) : plan;
  if (node->kind != LogicalKind::kRank) return node;
  const auto& r = static_cast<const LogicalRank&>(*node);
  if (r.rank_end || r.sort_limit || !r.output_rank_number || r.order_keys.empty()) return node;
  const LogicalNode& in = r.input();
  const SortKey& k = r.order_keys[0];
  const bool rowtime = is_time_attribute(in, k.column), proctime = is_proctime_attribute(in, k.column);
  if ((rowtime || proctime) && r.rank_type != RankType::kRowNumber) return node;
  if (r.order_keys.size() > 1)
    throw TranslationError(r.function_pos, "The window can only be ordered by a single time column.");
  if (k.descending) throw TranslationError(r.function_pos, "The window can only be ordered in ASCENDING mode.");
  auto over = std::make_shared<LogicalOverAggregate>();
  over->window.partition_keys = r.partition_keys;
  over->window.order_column = k.column;
  over->window.proctime = proctime;
  over->window.rows = r.rank_type == RankType::kRowNumber;
  AggregateCall count;
  count.function = "$OVER_" + rank_type_name(r.rank_type);  // COUNT(*) by another name
  count.type = LogicalType::bigint().not_null();
  count.name = r.rank_name;
  over->aggregates = {count};
  over->schema = over_aggregate_schema(in.schema, over->aggregates);
  over->inputs = r.inputs;
  over->pos = r.function_pos;
  return over;
}

bool over_is_nontime(const LogicalOverAggregate& over) {
  return !over.window.proctime && !is_time_attribute(over.input(), over.window.order_column);
}

// ------------------------------------------------------------------ the operator

RankOp rank_op(const LogicalRank& r, const RankAnalysis& a, const SessionConfig& session) {
  const bool window = a.kind == RankAnalysis::Kind::kWindowTopN || a.kind == RankAnalysis::Kind::kWindowDeduplicate;
  // Flink's StreamExecRank / StreamExecWindowRank translate ROW_NUMBER only.
  if (r.rank_type != RankType::kRowNumber) {
    const std::string name = rank_type_name(r.rank_type);
    throw TranslationError(r.function_pos, window ? fmt::format("{}() function is not supported on Window TopN currently, "
                                                                "only ROW_NUMBER() is supported.",
                                                                name)
                                                  : fmt::format("{}() on streaming table is not supported currently", name));
  }
  std::int64_t ttl_ms = 0;
  if (auto ttl = session.find("table.exec.state.ttl"); ttl != session.end() && !window) {
    auto ms = parse_duration_ms(ttl->second);
    if (!ms) throw TranslationError(r.pos, fmt::format("'table.exec.state.ttl' is not a duration: '{}'", ttl->second));
    ttl_ms = *ms;
  }
  nlohmann::json order = nlohmann::json::array();
  for (const auto& k : r.order_keys)
    order.push_back({{"column", k.column}, {"descending", k.descending}, {"nulls_first", k.nulls_first}});
  RankOp op;
  op.hash_keys = r.partition_keys;
  op.params = {{"keys", r.partition_keys}};
  switch (a.kind) {
    case RankAnalysis::Kind::kDeduplicate:
      op.factory = "sql_deduplicate";
      op.params["time_column"] = a.time_column;
      op.params["keep_last"] = a.keep_last;
      op.params["rowtime"] = a.rowtime;
      op.params["state_ttl_ms"] = ttl_ms;
      return op;
    case RankAnalysis::Kind::kTopN:
      op.factory = "sql_rank";
      op.params["strategy"] = a.retract ? "retract" : "append";
      op.params["state_ttl_ms"] = ttl_ms;
      break;
    case RankAnalysis::Kind::kWindowTopN:
    case RankAnalysis::Kind::kWindowDeduplicate:
      op.factory = "sql_window_rank";
      op.params["window_end"] = a.window_end;
      if (a.kind == RankAnalysis::Kind::kWindowDeduplicate)
        op.params["deduplicate"] = {{"time_column", a.time_column}, {"keep_last", a.keep_last}};
      break;
  }
  op.params["order"] = order;
  op.params["rank_start"] = r.rank_start;
  op.params["rank_end"] = *r.rank_end;
  op.params["output_rank_number"] = r.output_rank_number;
  return op;
}

}  // namespace clink::sql
