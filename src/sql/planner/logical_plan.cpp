#include "clink/sql/planner/logical_plan.hpp"

#include <set>

#include <fmt/format.h>

#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/planner/correlate_plan.hpp"
#include "clink/sql/planner/join_analysis.hpp"
#include "clink/sql/planner/lookup_join_plan.hpp"
#include "clink/sql/planner/plan_properties.hpp"
#include "clink/sql/planner/rank_plan.hpp"
#include "ptf_plan.hpp"

namespace clink::sql {

namespace {

template <class T>
std::shared_ptr<T> copy_as(const LogicalNode& n) {
  return std::make_shared<T>(static_cast<const T&>(n));
}

std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + names[i];
  return s;
}

std::string column_names(const Schema& s) {
  std::vector<std::string> names;
  for (const auto& f : s.fields()) names.push_back(f.name);
  return join_names(names);
}

std::string agg_text(const AggregateCall& a, const Schema& input) {
  std::string args;
  if (a.distinct) args = "DISTINCT ";
  for (std::size_t i = 0; i < a.args.size(); ++i) args += (i ? ", " : "") + input.name(a.args[i]);
  // The $OVER_ variants (binder_over.cpp, rank_plan.cpp) print as the function the query
  // called; a call without arguments prints with *, as Flink's COUNT(*) and ROW_NUMBER(*).
  std::string_view fn = a.function;
  if (fn.starts_with("$OVER_")) fn.remove_prefix(6);
  if (a.args.empty() && (fn == "COUNT" || fn != a.function)) args += "*";
  std::string s = fmt::format("{}({})", fn, args);
  if (a.filter) s += fmt::format(" FILTER {}", input.name(*a.filter));
  return s + " AS " + a.name;
}

std::string grouping_text(const std::vector<std::size_t>& keys, const std::vector<std::vector<std::size_t>>& sets,
                          const Schema& input) {
  std::vector<std::string> names;
  for (auto k : keys) names.push_back(input.name(k));
  std::string s = fmt::format("groupBy=[{}]", join_names(names));
  if (sets.size() > 1) {
    std::vector<std::string> set_texts;
    for (const auto& set : sets) {
      std::vector<std::string> n;
      for (auto i : set) n.push_back(input.name(keys[i]));
      set_texts.push_back("{" + join_names(n) + "}");
    }
    s += fmt::format(", groupingSets=[{}]", join_names(set_texts));
  }
  return s;
}

}  // namespace

std::string format_duration_ms(std::int64_t ms) {
  if (ms != 0 && ms % 86400000 == 0) return fmt::format("{} d", ms / 86400000);
  if (ms != 0 && ms % 3600000 == 0) return fmt::format("{} h", ms / 3600000);
  if (ms != 0 && ms % 60000 == 0) return fmt::format("{} min", ms / 60000);
  if (ms != 0 && ms % 1000 == 0) return fmt::format("{} s", ms / 1000);
  return fmt::format("{} ms", ms);
}

std::string window_kind_name(WindowSpec::Kind kind) {
  switch (kind) {
    case WindowSpec::Kind::kTumble: return "tumble";
    case WindowSpec::Kind::kHop: return "hop";
    case WindowSpec::Kind::kCumulate: return "cumulate";
    case WindowSpec::Kind::kSession: return "session";
  }
  return "?";
}

std::string WindowSpec::describe(const Schema& input) const {
  // As Flink prints a window attached to its input's window_start / window_end columns.
  std::string time = attached_start ? fmt::format("win_start=[{}], win_end=[{}]", input.name(*attached_start),
                                                  input.name(time_column))
                                    : fmt::format("time_col=[{}]", input.name(time_column));
  std::string s;
  switch (kind) {
    case Kind::kTumble: s = fmt::format("TUMBLE({}, size=[{}]", time, format_duration_ms(size_ms)); break;
    case Kind::kHop:
      s = fmt::format("HOP({}, size=[{}], slide=[{}]", time, format_duration_ms(size_ms), format_duration_ms(slide_ms));
      break;
    case Kind::kCumulate:
      s = fmt::format("CUMULATE({}, max_size=[{}], step=[{}]", time, format_duration_ms(size_ms),
                      format_duration_ms(step_ms));
      break;
    case Kind::kSession: {
      s = fmt::format("SESSION({}, gap=[{}]", time, format_duration_ms(gap_ms));
      if (!partition_keys.empty()) {
        std::vector<std::string> names;
        for (auto k : partition_keys) names.push_back(input.name(k));
        s += fmt::format(", partition keys=[{}]", join_names(names));
      }
      break;
    }
  }
  if (offset_ms != 0) s += fmt::format(", offset=[{}]", format_duration_ms(offset_ms));
  return s + ")";
}

std::string join_type_name(LogicalJoin::Type t) {
  switch (t) {
    case LogicalJoin::Type::kInner: return "InnerJoin";
    case LogicalJoin::Type::kLeft: return "LeftOuterJoin";
    case LogicalJoin::Type::kRight: return "RightOuterJoin";
    case LogicalJoin::Type::kFull: return "FullOuterJoin";
    case LogicalJoin::Type::kSemi: return "LeftSemiJoin";
    case LogicalJoin::Type::kAnti: return "LeftAntiJoin";
  }
  return "?";
}

std::vector<std::string> unique_names(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  std::set<std::string> used;
  for (const auto& n : names) {
    std::string candidate = n;
    for (int i = 0; used.count(candidate); ++i) candidate = n + std::to_string(i);
    used.insert(candidate);
    out.push_back(candidate);
  }
  return out;
}

LogicalPtr make_semi_anti_join(LogicalPtr left, LogicalPtr right, ExprPtr condition, bool anti, SourcePosition pos) {
  auto j = std::make_shared<LogicalJoin>();
  j->type = anti ? LogicalJoin::Type::kAnti : LogicalJoin::Type::kSemi;
  j->schema = left->schema;
  j->condition = std::move(condition);
  j->inputs = {std::move(left), std::move(right)};
  j->pos = pos;
  return j;
}

std::string expr_text(const ExprPtr& e, const Schema& input) {
  auto joined = [&](std::size_t from) {
    std::string s;
    for (std::size_t i = from; i < e->args.size(); ++i) s += (i > from ? ", " : "") + expr_text(e->args[i], input);
    return s;
  };
  switch (e->kind) {
    case ExprKind::kColumnRef:
      return e->column_index < input.size() ? input.name(e->column_index) : fmt::format("${}", e->column_index);
    case ExprKind::kLiteral: return e->to_string();
    case ExprKind::kCall: return fmt::format("{}({})", e->name, joined(0));
    case ExprKind::kCast:
      return fmt::format("{}({} AS {})", e->try_cast ? "TRY_CAST" : "CAST", expr_text(e->args[0], input),
                         e->type.with_nullable(true).to_string());
    case ExprKind::kCase: return fmt::format("CASE({})", joined(0));
    case ExprKind::kAnd: return fmt::format("AND({})", joined(0));
    case ExprKind::kOr: return fmt::format("OR({})", joined(0));
    case ExprKind::kCoalesce: return fmt::format("COALESCE({})", joined(0));
    case ExprKind::kInList:
      return fmt::format("{}({}, {})", e->negated ? "NOT IN" : "IN", expr_text(e->args[0], input), joined(1));
  }
  return "?";
}

LogicalPtr make_project(LogicalPtr input, std::vector<ExprPtr> exprs, std::vector<std::string> names,
                        SourcePosition pos) {
  auto p = std::make_shared<LogicalProject>();
  std::vector<RowField> fields;
  for (std::size_t i = 0; i < exprs.size(); ++i) fields.push_back({names[i], exprs[i]->type});
  p->schema = Schema(std::move(fields));
  p->exprs = std::move(exprs);
  p->inputs = {std::move(input)};
  p->pos = pos;
  return p;
}

LogicalPtr make_filter(LogicalPtr input, ExprPtr condition, SourcePosition pos) {
  auto f = std::make_shared<LogicalFilter>();
  f->schema = input->schema;
  f->condition = std::move(condition);
  f->inputs = {std::move(input)};
  f->pos = pos;
  return f;
}

LogicalPtr make_column_project(LogicalPtr input, const std::vector<std::size_t>& columns, SourcePosition pos) {
  std::vector<ExprPtr> exprs;
  std::vector<std::string> names;
  for (auto c : columns) {
    exprs.push_back(expr::column(c, input->schema.type(c), input->schema.name(c)));
    names.push_back(input->schema.name(c));
  }
  return make_project(std::move(input), std::move(exprs), std::move(names), pos);
}

Schema aggregate_schema(const Schema& input, const std::vector<std::size_t>& keys, bool nullable_keys,
                        const std::vector<AggregateCall>& aggregates) {
  std::vector<RowField> fields;
  for (auto k : keys) {
    LogicalType t = input.type(k);
    fields.push_back({input.name(k), nullable_keys ? t.with_nullable(true) : t});
  }
  for (const auto& a : aggregates) fields.push_back({a.name, a.type});
  return Schema(std::move(fields));
}

Schema over_aggregate_schema(const Schema& input, const std::vector<AggregateCall>& aggregates) {
  std::vector<RowField> fields = input.fields();
  for (const auto& a : aggregates) fields.push_back({a.name, a.type});
  return Schema(std::move(fields));
}

std::string OverWindow::frame_text() const {
  std::string lower = preceding ? std::to_string(*preceding) + " PRECEDING" : std::string("UNBOUNDED PRECEDING");
  return fmt::format("{} BETWEEN {} AND CURRENT ROW", rows ? "ROWS" : "RANGE", lower);
}

static LogicalType window_time_type(const Schema& input, const WindowSpec& w) {
  const LogicalType& t = input.type(w.time_column);
  return t.is(TypeKind::kTimestampLtz) ? LogicalType::timestamp_ltz(3) : LogicalType::timestamp(3);
}

Schema window_aggregate_schema(const Schema& input, const WindowSpec& window, const std::vector<std::size_t>& keys,
                               bool nullable_keys, const std::vector<AggregateCall>& aggregates) {
  std::vector<RowField> fields;
  for (auto k : keys) {
    LogicalType t = input.type(k);
    fields.push_back({input.name(k), nullable_keys ? t.with_nullable(true) : t});
  }
  fields.push_back({"window_start", LogicalType::timestamp(3).not_null()});
  fields.push_back({"window_end", LogicalType::timestamp(3).not_null()});
  fields.push_back({"window_time", window_time_type(input, window).not_null()});
  for (const auto& a : aggregates) fields.push_back({a.name, a.type});
  return Schema(std::move(fields));
}

Schema window_tvf_schema(const Schema& input, const WindowSpec& window) {
  std::vector<RowField> fields = input.fields();
  fields.push_back({"window_start", LogicalType::timestamp(3).not_null()});
  fields.push_back({"window_end", LogicalType::timestamp(3).not_null()});
  fields.push_back({"window_time", window_time_type(input, window).not_null()});
  return Schema(std::move(fields));
}


LogicalPtr with_inputs(const LogicalNode& node, std::vector<LogicalPtr> inputs) {
  std::shared_ptr<LogicalNode> n;
  switch (node.kind) {
    case LogicalKind::kScan: n = copy_as<LogicalScan>(node); break;
    case LogicalKind::kValues: n = copy_as<LogicalValues>(node); break;
    case LogicalKind::kWatermarkAssigner: n = copy_as<LogicalWatermarkAssigner>(node); break;
    case LogicalKind::kProject: n = copy_as<LogicalProject>(node); break;
    case LogicalKind::kFilter: n = copy_as<LogicalFilter>(node); break;
    case LogicalKind::kAggregate: n = copy_as<LogicalAggregate>(node); break;
    case LogicalKind::kWindowTvf: n = copy_as<LogicalWindowTvf>(node); break;
    case LogicalKind::kWindowAggregate: n = copy_as<LogicalWindowAggregate>(node); break;
    case LogicalKind::kUnion: n = copy_as<LogicalUnion>(node); break;
    case LogicalKind::kSort: n = copy_as<LogicalSort>(node); break;
    case LogicalKind::kLimit: n = copy_as<LogicalLimit>(node); break;
    case LogicalKind::kJoin: n = copy_as<LogicalJoin>(node); break;
    case LogicalKind::kRank: n = copy_as<LogicalRank>(node); break;
    case LogicalKind::kOverAggregate: n = copy_as<LogicalOverAggregate>(node); break;
    case LogicalKind::kCorrelate: n = copy_as<LogicalCorrelate>(node); break;
    case LogicalKind::kMatch: n = copy_as<LogicalMatch>(node); break;
    case LogicalKind::kLookupJoin: n = copy_as<LogicalLookupJoin>(node); break;
    case LogicalKind::kVectorSearch: n = copy_as<LogicalVectorSearch>(node); break;
    case LogicalKind::kSink: n = copy_as<LogicalSink>(node); break;
    case LogicalKind::kProcessTableFunction: n = copy_as<LogicalProcessTableFunction>(node); break;
  }
  n->inputs = std::move(inputs);
  return n;
}

std::string node_description(const LogicalNode& node) {
  PlanProperties props;
  return node_description(node, props);
}

std::string node_description(const LogicalNode& node, PlanProperties& props) {
  switch (node.kind) {
    case LogicalKind::kScan: {
      const auto& s = static_cast<const LogicalScan&>(node);
      return fmt::format("TableSourceScan(table=[{}], fields=[{}])", s.table.name, column_names(s.schema));
    }
    case LogicalKind::kValues: {
      const auto& v = static_cast<const LogicalValues&>(node);
      std::vector<std::string> rows;
      for (const auto& r : v.rows) {
        std::vector<std::string> cells;
        for (const auto& c : r) cells.push_back(c->to_string());
        rows.push_back("{ " + join_names(cells) + " }");
      }
      return fmt::format("Values(tuples=[[{}]], values=[{}])", join_names(rows), column_names(v.schema));
    }
    case LogicalKind::kWatermarkAssigner: {
      const auto& w = static_cast<const LogicalWatermarkAssigner&>(node);
      return fmt::format("WatermarkAssigner(rowtime=[{}], watermark=[{}])", node.input().schema.name(w.rowtime),
                         expr_text(w.watermark, node.input().schema));
    }
    case LogicalKind::kProject: {
      const auto& p = static_cast<const LogicalProject&>(node);
      std::vector<std::string> items;
      for (std::size_t i = 0; i < p.exprs.size(); ++i) {
        std::string t = expr_text(p.exprs[i], node.input().schema);
        if (t != p.schema.name(i)) t += " AS " + p.schema.name(i);
        items.push_back(t);
      }
      if (fuses_with_input(node))
        return fmt::format("Calc(select=[{}], where=[{}])", join_names(items),
                           expr_text(static_cast<const LogicalFilter&>(node.input()).condition, node.input().schema));
      return fmt::format("Calc(select=[{}])", join_names(items));
    }
    case LogicalKind::kFilter: {
      const auto& f = static_cast<const LogicalFilter&>(node);
      return fmt::format("Calc(select=[{}], where=[{}])", column_names(f.schema),
                         expr_text(f.condition, node.input().schema));
    }
    case LogicalKind::kAggregate: {
      const auto& a = static_cast<const LogicalAggregate&>(node);
      const Schema& in = node.input().schema;
      std::vector<std::string> sel;
      for (auto k : a.keys) sel.push_back(in.name(k));
      for (const auto& c : a.aggregates) sel.push_back(agg_text(c, in));
      return fmt::format("GroupAggregate({}, select=[{}])", grouping_text(a.keys, a.grouping_sets, in),
                         join_names(sel));
    }
    case LogicalKind::kWindowTvf: {
      const auto& w = static_cast<const LogicalWindowTvf&>(node);
      return fmt::format("WindowTableFunction(window=[{}])", w.window.describe(node.input().schema));
    }
    case LogicalKind::kWindowAggregate: {
      const auto& a = static_cast<const LogicalWindowAggregate&>(node);
      const Schema& in = node.input().schema;
      std::vector<std::string> sel;
      for (auto k : a.keys) sel.push_back(in.name(k));
      sel.insert(sel.end(), {"window_start", "window_end", "window_time"});
      for (const auto& c : a.aggregates) sel.push_back(agg_text(c, in));
      return fmt::format("WindowAggregate({}, window=[{}], select=[{}])", grouping_text(a.keys, a.grouping_sets, in),
                         a.window.describe(in), join_names(sel));
    }
    case LogicalKind::kUnion: return fmt::format("Union(all=[true], union=[{}])", column_names(node.schema));
    case LogicalKind::kSort: {
      const auto& s = static_cast<const LogicalSort&>(node);
      std::vector<std::string> keys;
      for (const auto& k : s.keys)
        keys.push_back(fmt::format("{} {}{}", node.schema.name(k.column), k.descending ? "DESC" : "ASC",
                                   k.nulls_first == k.descending ? (k.nulls_first ? "-nulls_first" : "-nulls_last") : ""));
      if (s.limit)
        return fmt::format("SortLimit(orderBy=[{}], offset=[{}], fetch=[{}])", join_names(keys), s.offset, *s.limit);
      return fmt::format("Sort(orderBy=[{}])", join_names(keys));
    }
    case LogicalKind::kLimit: {
      const auto& l = static_cast<const LogicalLimit&>(node);
      return fmt::format("Limit(offset=[{}], fetch=[{}])", l.offset,
                         l.limit < 0 ? std::string("unlimited") : std::to_string(l.limit));
    }
    case LogicalKind::kJoin: {
      const auto& j = static_cast<const LogicalJoin&>(node);
      std::vector<RowField> both = node.input(0).schema.fields();
      for (const auto& f : node.input(1).schema.fields()) both.push_back(f);
      if (j.semi_or_anti()) {
        // The right columns are not in the output: Flink names them apart in the condition
        // (`=(a, a0)`) as it does a join's output columns.
        std::vector<std::string> names;
        for (const auto& f : both) names.push_back(f.name);
        names = unique_names(names);
        for (std::size_t i = 0; i < both.size(); ++i) both[i].name = names[i];
      }
      // The keys (and an interval join's bounds) the physical join runs with.
      const JoinAnalysis& a = props.join(j);
      auto key_names = [](const Schema& s, const std::vector<std::size_t>& cols) {
        std::vector<std::string> names;
        for (auto c : cols) names.push_back(s.name(c));
        return join_names(names);
      };
      std::string keys = fmt::format("leftKeys=[{}], rightKeys=[{}]", key_names(node.input(0).schema, a.left_keys),
                                     key_names(node.input(1).schema, a.right_keys));
      std::string where = j.condition ? expr_text(j.condition, Schema(both)) : "true";
      if (a.temporal)  // Flink's form: the condition over the output's (unique) names
        return fmt::format("TemporalJoin(joinType=[{}], where=[{}], select=[{}])", join_type_name(j.type),
                           expr_text(j.condition, node.schema), column_names(node.schema));
      if (a.interval)
        return fmt::format("IntervalJoin(joinType=[{}], windowBounds=[isRowTime=true, leftLowerBound={}, "
                           "leftUpperBound={}, leftTimeIndex={}, rightTimeIndex={}], where=[{}], select=[{}], {})",
                           join_type_name(j.type), a.interval->lower_ms, a.interval->upper_ms, a.interval->left_time,
                           a.interval->right_time, where, column_names(node.schema), keys);
      if (a.window)
        return fmt::format("WindowJoin(joinType=[{}], leftWindowEnd=[{}], rightWindowEnd=[{}], where=[{}], select=[{}], {})",
                           join_type_name(j.type), node.input(0).schema.name(a.window->left_end),
                           node.input(1).schema.name(a.window->right_end), where, column_names(node.schema), keys);
      return fmt::format("Join(joinType=[{}], where=[{}], select=[{}], {})", join_type_name(j.type), where,
                         column_names(node.schema), keys);
    }
    case LogicalKind::kRank: return describe_rank(static_cast<const LogicalRank&>(node), props);
    case LogicalKind::kOverAggregate: {
      const auto& o = static_cast<const LogicalOverAggregate&>(node);
      const Schema& in = node.input().schema;
      std::vector<std::string> keys, sel;
      for (auto k : o.window.partition_keys) keys.push_back(in.name(k));
      for (const auto& f : in.fields()) sel.push_back(f.name);
      for (const auto& c : o.aggregates) sel.push_back(agg_text(c, in));
      return fmt::format("OverAggregate({}orderBy=[{} ASC], window=[{}], select=[{}])",
                         keys.empty() ? std::string() : fmt::format("partitionBy=[{}], ", join_names(keys)),
                         in.name(o.window.order_column), o.window.frame_text(), join_names(sel));
    }
    case LogicalKind::kCorrelate: return describe_correlate(static_cast<const LogicalCorrelate&>(node));
    case LogicalKind::kMatch: {
      const auto& m = static_cast<const LogicalMatch&>(node);
      const Schema& in = node.input().schema;
      std::vector<std::string> keys, measures, pattern, define;
      for (auto k : m.partition_keys) keys.push_back(in.name(k));
      for (std::size_t i = 0; i < m.measure_texts.size(); ++i)
        measures.push_back(m.measure_texts[i] + " AS " + node.schema.name(node.schema.size() - m.measure_texts.size() + i));
      for (const auto& st : m.pattern) pattern.push_back(st.variable + st.quantifier);
      for (const auto& d : m.defines) define.push_back(d.variable + " AS " + d.text);
      static const char* kSkip[] = {"SKIP PAST LAST ROW", "SKIP TO NEXT ROW", "SKIP TO FIRST ", "SKIP TO LAST "};
      std::string pattern_text = "(";
      for (std::size_t i = 0; i < pattern.size(); ++i) pattern_text += (i ? " " : "") + pattern[i];
      pattern_text += ")";
      if (m.within_ms) pattern_text += " WITHIN " + format_duration_ms(*m.within_ms);
      return fmt::format("Match(partitionBy=[{}], orderBy=[{} ASC], measures=[{}], rowsPerMatch=[{}], "
                         "after=[{}{}], pattern=[{}], define=[{}])",
                         join_names(keys), in.name(m.order_column), join_names(measures),
                         m.all_rows ? "ALL ROWS PER MATCH" : "ONE ROW PER MATCH",
                         kSkip[static_cast<int>(m.skip)], m.skip_variable, pattern_text, join_names(define));
    }
    case LogicalKind::kLookupJoin: return describe_lookup_join(static_cast<const LogicalLookupJoin&>(node));
    case LogicalKind::kVectorSearch: {
      const auto& v = static_cast<const LogicalVectorSearch&>(node);
      return fmt::format("VectorSearch(table=[{}], column=[{}], topK=[{}], metric=[{}])", v.table.name,
                         v.table.physical_schema().name(v.index_column), v.top_k, v.metric);
    }
    case LogicalKind::kProcessTableFunction: return describe_process_table_function(node);
    case LogicalKind::kSink: {
      const auto& s = static_cast<const LogicalSink&>(node);
      return fmt::format("Sink(table=[{}], fields=[{}])", s.table.name, column_names(node.input().schema));
    }
  }
  return "?";
}

bool fuses_with_input(const LogicalNode& node) {
  return node.kind == LogicalKind::kProject && node.input().kind == LogicalKind::kFilter;
}

const std::vector<LogicalPtr>& printed_inputs(const LogicalNode& node) {
  return fuses_with_input(node) ? node.input().inputs : node.inputs;
}

static void print_tree(const LogicalNode& n, int depth, PlanProperties& props, std::string& out) {
  out += std::string(static_cast<std::size_t>(depth) * 2, ' ') + node_description(n, props) + "\n";
  for (const auto& in : printed_inputs(n)) print_tree(*in, depth + 1, props, out);
}

std::string to_string(const LogicalNode& plan) {
  std::string out;
  PlanProperties props;
  print_tree(plan, 0, props, out);
  return out;
}

bool is_time_attribute(const LogicalNode& n, std::size_t col) {
  switch (n.kind) {
    case LogicalKind::kWatermarkAssigner:
      return static_cast<const LogicalWatermarkAssigner&>(n).rowtime == col;
    case LogicalKind::kFilter: return is_time_attribute(n.input(), col);
    case LogicalKind::kProject: {
      const auto& e = static_cast<const LogicalProject&>(n).exprs[col];
      return e->kind == ExprKind::kColumnRef && is_time_attribute(n.input(), e->column_index);
    }
    case LogicalKind::kWindowTvf: {
      std::size_t in = n.input().schema.size();
      return col == in + 2 || (col < in && is_time_attribute(n.input(), col));
    }
    case LogicalKind::kWindowAggregate: {
      const auto& w = static_cast<const LogicalWindowAggregate&>(n);
      return col == w.keys.size() + 2;
    }
    case LogicalKind::kOverAggregate:  // input columns pass through with their time attributes
    case LogicalKind::kCorrelate:
    case LogicalKind::kLookupJoin:
    case LogicalKind::kVectorSearch:
      return col < n.input().schema.size() && is_time_attribute(n.input(), col);
    case LogicalKind::kMatch: return static_cast<const LogicalMatch&>(n).rowtime_output == col;
    // A PTF's `rowtime` (last, with on_time) is the output's event-time attribute.
    case LogicalKind::kProcessTableFunction:
      return static_cast<const LogicalProcessTableFunction&>(n).has_rowtime() && col + 1 == n.schema.size();
    case LogicalKind::kUnion:
      return std::all_of(n.inputs.begin(), n.inputs.end(), [&](const auto& i) { return is_time_attribute(*i, col); });
    case LogicalKind::kJoin: {
      // As Flink: interval and window joins keep the time attributes of both inputs, a
      // regular join materialises them.
      const JoinAnalysis a = analyze_join(static_cast<const LogicalJoin&>(n));
      std::size_t nl = n.input(0).schema.size();
      // A temporal join keeps the left's (the output rows are timed by it), not the versions'.
      if (a.temporal) return col < nl && is_time_attribute(n.input(0), col);
      if (!a.interval && !a.window) return false;
      return col < nl ? is_time_attribute(n.input(0), col) : is_time_attribute(n.input(1), col - nl);
    }
    default: return false;
  }
}

bool is_proctime_attribute(const LogicalNode& n, std::size_t col) {
  switch (n.kind) {
    case LogicalKind::kWatermarkAssigner:
    case LogicalKind::kFilter: return is_proctime_attribute(n.input(), col);
    case LogicalKind::kProject: {
      const auto& e = static_cast<const LogicalProject&>(n).exprs[col];
      if (e->kind == ExprKind::kCall) return e->function && e->function->name == "PROCTIME";
      return e->kind == ExprKind::kColumnRef && is_proctime_attribute(n.input(), e->column_index);
    }
    case LogicalKind::kWindowTvf: {
      std::size_t in = n.input().schema.size();
      const auto& w = static_cast<const LogicalWindowTvf&>(n).window;
      return (col == in + 2 && w.proctime) || (col < in && is_proctime_attribute(n.input(), col));
    }
    case LogicalKind::kWindowAggregate: {
      const auto& w = static_cast<const LogicalWindowAggregate&>(n);
      return w.window.proctime && col == w.keys.size() + 2;
    }
    case LogicalKind::kOverAggregate:
    case LogicalKind::kCorrelate:
    case LogicalKind::kLookupJoin:
    case LogicalKind::kVectorSearch:
      return col < n.input().schema.size() && is_proctime_attribute(n.input(), col);
    case LogicalKind::kMatch: return static_cast<const LogicalMatch&>(n).proctime_output == col;
    case LogicalKind::kUnion:
      return std::all_of(n.inputs.begin(), n.inputs.end(), [&](const auto& i) { return is_proctime_attribute(*i, col); });
    default: return false;
  }
}

}  // namespace clink::sql
