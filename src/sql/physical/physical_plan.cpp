#include "clink/sql/physical/physical_plan.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "clink/metrics/sql_metrics.hpp"
#include "../optimizer/nested_projection.hpp"
#include "../planner/plan_rewrite.hpp"
#include "plan_compiler.hpp"
#include "ptf_params.hpp"
#include "clink/connectors/sql/sql_dead_letters.hpp"
#include "clink/core/duration.hpp"
#include "clink/sql/optimizer/optimizer.hpp"
#include "clink/sql/planner/lookup_join_plan.hpp"
#include "clink/sql/planner/plan_properties.hpp"
#include "clink/sql/planner/rank_plan.hpp"
#include "clink/sql/spec/connector_table.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "clink/sql/spec/lookup_join_spec.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"

namespace clink::sql {

using json = nlohmann::json;

namespace physical {

namespace {

std::string keys_text(const std::vector<std::size_t>& cols) {
  std::string s = "sql_columns:";
  for (std::size_t i = 0; i < cols.size(); ++i) s += (i ? "," : "") + std::to_string(cols[i]);
  return s;
}

// The scan a watermark assigner's input comes from (through the projection of computed
// columns and filters) reads a bounded source.
bool reads_bounded_source(const LogicalNode& n) {
  const LogicalNode* at = &n;
  while (at->kind == LogicalKind::kProject || at->kind == LogicalKind::kFilter) at = &at->input();
  if (at->kind != LogicalKind::kScan) return false;
  const TableDef& t = static_cast<const LogicalScan&>(*at).table;
  return sql_source_bounded(t.connector(), t.options);
}

}  // namespace

std::string Compiler::add(const std::string& factory, const std::vector<std::string>& inputs, json params,
                          const std::vector<std::size_t>* hash_keys, bool single,
                          const Schema* input_schema) {
  std::string id = next_id(factory);
  json op = {{"id", id}, {"type", factory}};
  bool keyed = hash_keys && !hash_keys->empty();
  bool after_single = !inputs.empty() && std::all_of(inputs.begin(), inputs.end(), [&](const auto& i) { return single_ops.count(i) > 0; });
  if (after_single && !keyed) single = true;
  if (input_schema) {
    params["input_schemas"] = json::array({schema_to_json(*input_schema)});
    json s = session_json();
    if (!s.empty()) params["session"] = s;
  }
  op["params"] = std::move(params);
  if (single) op["parallelism"] = 1;
  if (!inputs.empty()) {
    json in = json::array();
    for (const auto& from : inputs) {
      json edge = {{"from", from}};
      if (hash_keys) {
        // A keyed op; without key columns (a global aggregate, rank, ...) every row has
        // the empty key, at parallelism 1, as Flink's singleton distribution with an
        // empty-key selector: its state is keyed state, which checkpoints hold.
        edge["partitioning"] = "hash";
        edge["key"] = keys_text(*hash_keys);
      } else if (single && parallelism() > 1 && !single_ops.count(from)) {
        edge["partitioning"] = "rebalance";  // every subtask feeds the single one
      }
      in.push_back(edge);
    }
    op["inputs"] = in;
  }
  ops.push_back(std::move(op));
  if (single) single_ops.insert(id);
  return id;
}

std::string Compiler::add_reusable(const std::string& factory, const std::vector<std::string>& inputs, json params,
                                   const Schema& input_schema, bool deterministic) {
  if (!deterministic) return add(factory, inputs, std::move(params), nullptr, false, &input_schema);
  std::string key = factory;
  for (const auto& i : inputs) key += "|" + i;
  key += "|" + params.dump() + "|" + schema_to_json(input_schema).dump();
  if (auto it = reused_ops.find(key); it != reused_ops.end()) return it->second;
  std::string id = add(factory, inputs, std::move(params), nullptr, false, &input_schema);
  reused_ops.emplace(std::move(key), id);
  return id;
}

// Flink's two-phase aggregation applies when every call can merge accumulators and none is
// DISTINCT (Flink keeps a DISTINCT's values in the local accumulator; clink keeps them in
// the global phase's map state, so such an aggregation stays in one phase), over one
// grouping set (Flink expands grouping sets first).
bool Compiler::two_phase(const LogicalAggregate& a, AggPhaseStrategy strategy) {
  if (strategy == AggPhaseStrategy::kOnePhase || a.grouping_sets.size() > 1) return false;
  if (a.grouping_sets.size() == 1 && a.grouping_sets[0].size() != a.keys.size()) return false;
  return std::all_of(a.aggregates.begin(), a.aggregates.end(),
                     [](const AggregateCall& c) { return c.mergeable && !c.distinct; });
}

std::string Compiler::two_phase_aggregate(const LogicalAggregate& a, const std::vector<std::string>& in,
                                          json global) {
  const Schema& input = a.input().schema;
  std::vector<RowField> fields;
  std::vector<std::size_t> global_keys;
  for (std::size_t i = 0; i < a.keys.size(); ++i) {
    fields.push_back(input.field(a.keys[i]));
    global_keys.push_back(i);
  }
  fields.push_back({"acc$", LogicalType::bytes()});
  const Schema local_schema(fields);
  json local = {{"schema", schema_to_json(local_schema)},
                {"keys", a.keys},
                {"aggregates", global["aggregates"]},
                {"input_retracts", global["input_retracts"]},
                {"mini_batch_size", global["mini_batch_size"]},
                {"mini_batch_latency_ms", global["mini_batch_latency_ms"]}};
  const std::string local_id = add("sql_local_group_aggregate", in, local, nullptr, false, &input);
  global["keys"] = global_keys;
  global.erase("grouping_sets");
  global["merge_accumulators"] = schema_to_json(input);
  return add("sql_group_aggregate", {local_id}, global, &global_keys, global_keys.empty(), &local_schema);
}

std::vector<std::string> Compiler::compile(const LogicalNode& n) {
  switch (n.kind) {
    case LogicalKind::kScan: return {scan(static_cast<const LogicalScan&>(n))};
    case LogicalKind::kValues: return {values(static_cast<const LogicalValues&>(n))};
    case LogicalKind::kJoin: return {join(static_cast<const LogicalJoin&>(n))};
    case LogicalKind::kWatermarkAssigner: {
      const auto& w = static_cast<const LogicalWatermarkAssigner&>(n);
      // Batch mode: no watermark before the end of the input (nothing is late; every
      // window fires at the end), from a NULL watermark expression.
      const ExprPtr watermark = batch ? expr::null_literal(w.watermark->type) : w.watermark;
      scan_watermark = batch ? nullptr : pushed_down_watermark(w);  // the scan below takes it
      const bool bounds = scan_watermark.contains("bounds_assigner"), generated = !scan_watermark.is_null() && !bounds;
      auto in = compile(n.input());
      scan_watermark = nullptr;
      if (generated) return in;  // the source generates the watermark per split: no assigner after it
      json alignment = nullptr;
      if (!w.alignment_group.empty())
        alignment = {{"group", w.alignment_group}, {"max_drift_ms", w.alignment_max_drift_ms},
                     {"update_interval_ms", w.alignment_update_interval_ms}};
      json p = {{"schema", schema_to_json(w.schema)}, {"rowtime", w.rowtime}, {"watermark", expr_to_json(*watermark)},
                {"emit", w.emit}, {"idle_timeout_ms", w.idle_timeout_ms}, {"alignment", alignment}};
      if (bounds) p["source_bounded"] = true;
      // Over a bounded source the watermarks go by the rows only (no processing-time
      // emission), so the same input gives the same output on every run.
      if (w.emit == "on-periodic" && reads_bounded_source(n.input())) p["data_driven"] = true;
      // The assigner rejects an interval for 'on-event' emission (every advance goes out).
      if (w.emit == "on-periodic") p["interval_ms"] = w.interval_ms;
      else if (reads_current_watermark) p["per_row"] = true;
      return {add_reusable("sql_watermark_assigner", in, p, n.input().schema, rewrite::is_deterministic(watermark))};
    }
    case LogicalKind::kProject:
    case LogicalKind::kFilter: return {calc(n)};
    // A column past the aggregates: the binder asked for each row's grouping set index
    // (GROUPING / GROUPING_ID over several sets).
    case LogicalKind::kAggregate: {
      const auto& a = static_cast<const LogicalAggregate&>(n);
      auto in = compile(n.input());
      json aggs = json::array();
      for (const auto& c : a.aggregates) aggs.push_back(aggregate_to_json(c));
      // Over insert-only input MIN / MAX keep one value, not a multiset of them.
      json p = {{"schema", schema_to_json(a.schema)}, {"keys", a.keys}, {"grouping_sets", a.grouping_sets},
                {"aggregates", aggs}, {"input_retracts", props.changelog(n.input()).updating()}};
      if (const std::int64_t ttl = state_ttl_ms(session, n.pos); ttl > 0) p["state_ttl_ms"] = ttl;  // as Flink's GroupAggFunction
      const auto mb = mini_batch(session, n.pos);
      if (mb) {
        p["mini_batch_size"] = mb->size;
        p["mini_batch_latency_ms"] = mb->latency_ms;
      }
      if (mb && !batch && two_phase(a, agg_phase_strategy(session, n.pos))) return {two_phase_aggregate(a, in, p)};
      if (a.schema.size() > a.keys.size() + a.aggregates.size()) p["grouping_set_column"] = true;
      auto hash = partition_keys(a.keys, a.grouping_sets);
      return {add("sql_group_aggregate", in, p, &hash, hash.empty(), &n.input().schema)};
    }
    case LogicalKind::kWindowAggregate: {
      const auto& a = static_cast<const LogicalWindowAggregate&>(n);
      if (a.window.kind == WindowSpec::Kind::kSession)
        for (const auto& c : a.aggregates)
          if (!c.mergeable)
            fail(n.pos, fmt::format("the aggregate function {} cannot merge accumulators, which a SESSION window "
                                    "needs",
                                    c.function));
      auto in = compile(n.input());
      json aggs = json::array();
      for (const auto& c : a.aggregates) aggs.push_back(aggregate_to_json(c));
      json p = {{"schema", schema_to_json(a.schema)},  {"window", window_to_json(a.window)},
                {"keys", a.keys},                      {"grouping_sets", a.grouping_sets},
                {"aggregates", aggs},                  {"allowed_lateness_ms", a.allowed_lateness_ms},
                {"late_records_to_dlq", a.late_records_to_dlq}};
      if (a.schema.size() > a.keys.size() + 3 + a.aggregates.size()) p["grouping_set_column"] = true;
      auto hash = partition_keys(a.keys, a.grouping_sets);
      std::string id = add("sql_window_aggregate", in, p, &hash, hash.empty(), &n.input().schema);
      if (a.late_records_to_dlq) dead_letter_producers.push_back(id);
      return {id};
    }
    case LogicalKind::kOverAggregate: {
      const auto& o = static_cast<const LogicalOverAggregate&>(n);
      auto in = compile(n.input());
      json aggs = json::array();
      for (const auto& c : o.aggregates) aggs.push_back(aggregate_to_json(c));
      const auto& keys = o.window.partition_keys;
      json p = {{"schema", schema_to_json(o.schema)}, {"partition_keys", keys}, {"order_column", o.window.order_column},
                {"rows", o.window.rows},              {"aggregates", aggs}};
      const bool nontime = over_is_nontime(o);  // Flink 2.1+'s updating OVER aggregate
      if (nontime && state_ttl_ms(session, n.pos) > 0)
        fail(n.pos, "'table.exec.state.ttl' is not supported yet for an OVER aggregate ordered by a column that is "
                    "not a time attribute (its rows would be kept without expiry); RESET it for this query");
      if (!nontime)
        p.update({{"proctime", o.window.proctime}, {"state_ttl_ms", state_ttl_ms(session, n.pos)},
                  {"preceding", o.window.preceding ? json(*o.window.preceding) : json()}});
      return {add(nontime ? "sql_over_nontime" : "sql_over_aggregate", in, p, &keys, keys.empty(), &n.input().schema)};
    }
    case LogicalKind::kCorrelate: {
      // Stateless and row-local: a forward edge, at the input's parallelism.
      const auto& c = static_cast<const LogicalCorrelate&>(n);
      auto in = compile(n.input());
      json args = json::array();
      for (const auto& a : c.args) args.push_back(expr_to_json(*a));
      json p = {{"schema", schema_to_json(c.schema)},
                {"function", c.function == LogicalCorrelate::Function::kUnnest ? "UNNEST" : c.function_name},
                {"args", args},                 {"with_ordinality", c.with_ordinality},
                {"join_type", c.left_outer ? "LEFT" : "INNER"}};
      if (c.condition) p["condition"] = expr_to_json(*c.condition);
      return {add("sql_correlate", in, p, nullptr, false, &n.input().schema)};
    }
    case LogicalKind::kLookupJoin: return {lookup_join(static_cast<const LogicalLookupJoin&>(n))};
    case LogicalKind::kVectorSearch: return {vector_search(static_cast<const LogicalVectorSearch&>(n))};
    case LogicalKind::kMatch: {
      const auto& m = static_cast<const LogicalMatch&>(n);
      auto in = compile(n.input());
      auto navs_json = [](const std::vector<MatchNav>& navs) {
        static const char* kKind[] = {"LAST", "FIRST", "PREV"};
        json out = json::array();
        for (const auto& v : navs)
          out.push_back({{"kind", kKind[static_cast<int>(v.kind)]}, {"variable", v.variable},
                         {"offset", v.offset}, {"final", v.final}});
        return out;
      };
      auto aggs_json = [](const std::vector<MatchAggregate>& aggs) {
        json out = json::array();
        for (const auto& a : aggs) {
          json args = json::array();
          for (const auto& e : a.args) args.push_back(expr_to_json(*e));
          out.push_back({{"variable", a.variable}, {"final", a.final}, {"args", args}, {"call", aggregate_to_json(a.call)}});
        }
        return out;
      };
      json pattern = json::array();
      for (const auto& s : m.pattern)
        pattern.push_back({{"variable", s.variable}, {"min", s.min}, {"max", s.max}, {"reluctant", s.reluctant}});
      json defines = json::array();
      for (const auto& d : m.defines)
        defines.push_back({{"variable", d.variable},
                           {"condition", expr_to_json(*d.condition)},
                           {"navs", navs_json(d.navs)},
                           {"aggregates", aggs_json(d.aggregates)}});
      json outputs = json::array();
      for (const auto& e : m.outputs) outputs.push_back(expr_to_json(*e));
      static const char* kSkip[] = {"PAST_LAST_ROW", "TO_NEXT_ROW", "TO_FIRST", "TO_LAST"};
      json p = {{"schema", schema_to_json(m.schema)},
                {"partition_keys", m.partition_keys},
                {"order_column", m.order_column},
                {"proctime", m.proctime}, {"all_rows", m.all_rows},
                {"pattern", pattern},
                {"within_ms", m.within_ms ? json(*m.within_ms) : json()},
                {"skip", kSkip[static_cast<int>(m.skip)]},
                {"skip_variable", m.skip_variable},
                {"defines", defines},
                {"measure_navs", navs_json(m.measure_navs)},
                {"measure_aggregates", aggs_json(m.measure_aggregates)},
                {"outputs", outputs},
                {"rowtime_output", m.rowtime_output ? json(*m.rowtime_output) : json()}};
      const auto& keys = m.partition_keys;
      return {add("sql_match_recognize", in, p, &keys, keys.empty(), &n.input().schema)};
    }
    case LogicalKind::kWindowTvf: {
      const auto& t = static_cast<const LogicalWindowTvf&>(n);
      if (t.window.proctime)
        fail(n.pos, "a processing-time window TVF is only supported under a window aggregate (GROUP BY window_start, "
                    "window_end), as in Flink");
      auto in = compile(n.input());
      json p = {{"schema", schema_to_json(t.schema)}, {"window", window_to_json(t.window)}};
      if (t.window.kind != WindowSpec::Kind::kSession)  // a session is final once the watermark closes it
        return {add("sql_window_assign", in, p, nullptr, false, &n.input().schema)};
      const auto& keys = p["keys"] = t.window.partition_keys;  // none: one partition
      return {add("sql_window_session", in, p, &t.window.partition_keys, keys.empty(), &n.input().schema)};
    }
    case LogicalKind::kUnion: {
      std::vector<std::string> out;
      for (const auto& i : n.inputs) {
        auto ids = compile(*i);
        out.insert(out.end(), ids.begin(), ids.end());
      }
      return out;
    }
    case LogicalKind::kSort: {
      const auto& s = static_cast<const LogicalSort&>(n);
      auto in = compile(n.input());
      json keys = json::array();
      for (const auto& k : s.keys)
        keys.push_back({{"column", k.column}, {"descending", k.descending}, {"nulls_first", k.nulls_first}});
      json limit = nullptr;
      if (s.limit) limit = *s.limit + s.offset;
      json p = {{"schema", schema_to_json(s.schema)}, {"keys", keys}, {"limit", limit}};
      if (is_temporal_sort(s))
        p["temporal"] = is_proctime_attribute(n.input(), s.keys[0].column) ? "proctime" : "rowtime";
      std::string id = add("sql_sort", in, p, nullptr, true, &n.input().schema);
      if (s.offset == 0) return {id};
      json lp = {{"schema", schema_to_json(s.schema)}, {"limit", s.limit ? json(*s.limit) : json(-1)},
                 {"offset", s.offset}};
      return {add("sql_limit", {id}, lp, nullptr, true, &s.schema)};
    }
    case LogicalKind::kLimit: {
      const auto& l = static_cast<const LogicalLimit&>(n);
      auto in = compile(n.input());
      json p = {{"schema", schema_to_json(l.schema)}, {"limit", l.limit}, {"offset", l.offset}};
      return {add("sql_limit", in, p, nullptr, true, &n.input().schema)};
    }
    case LogicalKind::kRank: {
      const auto& rank = static_cast<const LogicalRank&>(n);
      RankOp op = rank_op(rank, props.rank(rank), session);
      auto in = compile(n.input());
      op.params["schema"] = schema_to_json(n.schema);
      return {add(op.factory, in, op.params, &op.hash_keys, op.hash_keys.empty(), &n.input().schema)};
    }
    case LogicalKind::kSink: return {sink(static_cast<const LogicalSink&>(n))};
    case LogicalKind::kProcessTableFunction: return {process_table_function(static_cast<const LogicalProcessTableFunction&>(n))};
  }
  fail(n.pos, "unsupported plan node");
}

std::vector<std::size_t> Compiler::partition_keys(const std::vector<std::size_t>& keys,
                                                         const std::vector<std::vector<std::size_t>>& sets) {
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    bool in_all = std::all_of(sets.begin(), sets.end(),
                              [&](const auto& s) { return std::find(s.begin(), s.end(), k) != s.end(); });
    if (in_all) out.push_back(keys[k]);
  }
  return out;
}

std::string Compiler::process_table_function(const LogicalProcessTableFunction& f) {
  json p = process_table_function_params(f, session), schemas = json::array(), in = json::array();
  const auto& keys = f.tables[0].partition_keys;
  if (f.tables.size() == 1)
    return add("sql_process_table_function", compile(f.input()), p, f.set_semantics ? &keys : nullptr,
               f.set_semantics && keys.empty(), &f.input().schema);
  for (std::size_t t = 0; t < f.tables.size(); ++t) {
    schemas.push_back(schema_to_json(f.input(t).schema));
    for (const auto& from : compile(f.input(t)))
      in.push_back({{"from", from}, {"input", t}, {"partitioning", "hash"}, {"key", keys_text(f.tables[t].partition_keys)}});
  }
  p["input_schemas"] = schemas;
  if (json s = session_json(); !s.empty()) p["session"] = s;
  std::string id = next_id("sql_process_table_function");
  json op = {{"id", id}, {"type", "sql_process_table_function"}, {"params", std::move(p)}, {"inputs", std::move(in)}};
  if (keys.empty()) op["parallelism"] = 1, single_ops.insert(id);
  ops.push_back(std::move(op));
  return id;
}

std::string Compiler::join(const LogicalJoin& j) {
  const JoinAnalysis& a = props.join(j);
  auto left = compile(j.input(0));
  auto right = compile(j.input(1));
  std::vector<bool> filter_nulls = a.filter_nulls;
  json p = {{"schema", schema_to_json(j.schema)},
            {"input_schemas", json::array({schema_to_json(j.input(0).schema), schema_to_json(j.input(1).schema)})},
            {"join_type", join_type_param(j.type)},
            {"left_keys", a.left_keys},
            {"right_keys", a.right_keys},
            {"filter_nulls", filter_nulls},
            {"condition", a.residual ? expr_to_json(*a.residual) : json(nullptr)}};
  json s = session_json();
  if (!s.empty()) p["session"] = s;
  std::string factory = j.semi_or_anti() ? "sql_semi_anti_join" : "sql_join";
  if (a.temporal) {
    factory = "sql_temporal_join";
    p["left_time"] = a.temporal->left_time;
    p["right_time"] = a.temporal->right_time;
  } else if (a.interval) {
    factory = "sql_interval_join";
    p["left_time"] = a.interval->left_time;
    p["right_time"] = a.interval->right_time;
    p["lower_ms"] = a.interval->lower_ms;
    p["upper_ms"] = a.interval->upper_ms;
  } else if (a.window) {
    factory = "sql_window_join";
    p["left_window_end"] = a.window->left_end;
    p["right_window_end"] = a.window->right_end;
  } else if (const std::int64_t ttl = state_ttl_ms(session, j.pos); ttl > 0) {
    p["state_ttl_ms"] = ttl;
  }
  // A regular join keeps an insert-only input's rows as a list (no per-row counts).
  if (factory == "sql_join")
    for (int side = 0; side < 2; ++side)
      if (!props.changelog(j.input(side)).updating()) p[side == 0 ? "left_insert_only" : "right_insert_only"] = true;
  // With mini-batch a regular join folds each input's rows per mini-batch, as Flink's
  // StreamExecJoin runs MiniBatchStreamingJoinOperator (whatever the inputs' changelogs).
  if (factory == "sql_join" && !batch)
    if (const auto mb = mini_batch(session, j.pos)) {
      p["mini_batch_size"] = mb->size;
      p["mini_batch_latency_ms"] = mb->latency_ms;
    }
  const bool single = a.left_keys.empty();
  std::string id = next_id(factory);
  json op = {{"id", id}, {"type", factory}, {"params", std::move(p)}};
  if (single) op["parallelism"] = 1;
  json in = json::array();
  for (int side = 0; side < 2; ++side)
    for (const auto& from : side == 0 ? left : right)
      in.push_back({{"from", from}, {"input", side}, {"partitioning", "hash"},
                    {"key", keys_text(side == 0 ? a.left_keys : a.right_keys)}});
  op["inputs"] = std::move(in);
  ops.push_back(std::move(op));
  if (single) single_ops.insert(id);
  return id;
}

std::string Compiler::lookup_join(const LogicalLookupJoin& j) {
  const ConnectorDescriptor* d = find_sql_connector(j.table.connector());
  if (!d || !d->is_lookup()) fail(j.pos, fmt::format("table `{}` cannot be looked up", j.table.name));
  const LookupJoinAnalysis a = analyze_lookup_join(j);
  auto in = compile(j.input());
  json keys = json::array();
  for (const auto& k : a.keys) keys.push_back({{"column", k.column}, {"value", expr_to_json(*k.value)}});
  json options = json::object();
  for (const auto& [k, v] : j.table.options)
    if (k != "connector") options[k] = v;
  json p = {{"schema", schema_to_json(j.schema)},
            {"join_type", j.left_outer ? "left" : "inner"},
            {"table", j.table.name},
            {"lookup", d->lookup_factory},
            {"options", options},
            {"dim_schema", schema_to_json(j.table.physical_schema())},
            {"dim_columns", j.columns},
            {"keys", keys},
            {"pre_filter", a.pre_filter ? expr_to_json(*a.pre_filter) : json(nullptr)},
            {"dim_filter", a.dim_filter ? expr_to_json(*a.dim_filter) : json(nullptr)},
            {"condition", a.residual ? expr_to_json(*a.residual) : json(nullptr)},
            {"async", {{"capacity", j.async.capacity},
                       {"output_mode", j.async.ordered ? "ORDERED" : "ALLOW_UNORDERED"},
                       {"timeout_ms", j.async.timeout_ms}}}};
  return add(kSqlLookupJoin, in, p, nullptr, false, &j.input().schema);
}

std::string Compiler::vector_search(const LogicalVectorSearch& v) {
  const ConnectorDescriptor* d = find_sql_connector(v.table.connector());
  if (!d || !d->is_source())
    fail(v.pos, fmt::format("table `{}` cannot be read as a vector table (connector '{}' is not a source)",
                            v.table.name, v.table.connector()));
  // Each subtask reads the table to its end at open(): an unbounded one never ends.
  if (v.table.option("source.monitor-interval") ||
      (v.table.connector() == "datagen" && !v.table.option("number-of-rows")))
    fail(v.pos, fmt::format("VECTOR_SEARCH: the vector table `{}` is unbounded; it must be a bounded table", v.table.name));
  auto in = compile(v.input());
  json source = connector_params(v.table);
  const Schema physical = v.table.physical_schema();
  source["schema"] = schema_to_json(physical);
  std::vector<std::size_t> all(physical.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  if (d->projection_pushdown) source["projected"] = all;
  json options = json::object();
  for (const auto& [k, val] : v.options) options[k] = val;
  json p = {{"schema", schema_to_json(v.schema)},
            {"query", expr_to_json(*v.query)},
            {"top_k", v.top_k},
            {"metric", v.metric},
            {"index_column", v.index_column},
            {"options", options},
            {"table", v.table.name},
            {"source_factory", d->source_factory},
            {"source", source}};
  return add("sql_vector_search", in, p, nullptr, false, &v.input().schema);
}

std::string Compiler::calc(const LogicalNode& n) {
  const LogicalNode* input = &n.input();
  ExprPtr filter;
  std::vector<ExprPtr> projections;
  if (n.kind == LogicalKind::kProject) {
    projections = static_cast<const LogicalProject&>(n).exprs;
    if (input->kind == LogicalKind::kFilter) {
      filter = static_cast<const LogicalFilter&>(*input).condition;
      input = &input->input();
    }
  } else {
    filter = static_cast<const LogicalFilter&>(n).condition;
    for (std::size_t i = 0; i < n.schema.size(); ++i) projections.push_back(expr::column(i, n.schema.type(i), n.schema.name(i)));
  }
  // A filter right above a partitioned filesystem scan: its conjuncts over partition
  // columns only prune the partitions the source reads (they stay in the filter too).
  auto in = input->kind == LogicalKind::kScan ? std::vector<std::string>{scan(static_cast<const LogicalScan&>(*input), filter)}
                                              : compile(*input);
  json proj = json::array();
  for (const auto& e : projections) proj.push_back(expr_to_json(*e));
  json p = {{"schema", schema_to_json(n.schema)}, {"projections", proj},
            {"filter", filter ? expr_to_json(*filter) : json(nullptr)}};
  bool deterministic = !filter || rewrite::is_deterministic(filter);
  for (const auto& e : projections) deterministic = deterministic && rewrite::is_deterministic(e);
  return add_reusable("sql_calc", in, p, input->schema, deterministic);
}

}  // namespace physical

namespace {

bool calls_current_watermark(const ExprPtr& e) {
  if (!e) return false;
  if (e->kind == ExprKind::kCall && e->name == "CURRENT_WATERMARK") return true;
  return std::any_of(e->args.begin(), e->args.end(), calls_current_watermark);
}

bool calls_current_watermark(const LogicalNode& n) {
  if (n.kind == LogicalKind::kProject) {
    const auto& exprs = static_cast<const LogicalProject&>(n).exprs;
    if (std::any_of(exprs.begin(), exprs.end(), [](const ExprPtr& e) { return calls_current_watermark(e); })) return true;
  }
  if (n.kind == LogicalKind::kFilter && calls_current_watermark(static_cast<const LogicalFilter&>(n).condition))
    return true;
  return std::any_of(n.inputs.begin(), n.inputs.end(), [](const LogicalPtr& i) { return calls_current_watermark(*i); });
}

}  // namespace

json PhysicalPlanner::compile(const std::vector<LogicalPtr>& sinks, const std::string& job_name,
                              PlanProperties* props) const {
  metrics::sql::StageTimer timer(metrics::sql::counters().physical_plan);
  PlanProperties own;
  physical::Compiler c{catalog_, session_, props ? *props : own};
  for (const auto& s : sinks) {
    if (s->kind != LogicalKind::kSink) physical::fail(s->pos, "a job plan must end in a sink");
    if (!c.batch) check_sink_changelog(static_cast<const LogicalSink&>(*s), c.props);  // batch: inserts only
  }
  for (const auto& s : sinks) c.reads_current_watermark = c.reads_current_watermark || calls_current_watermark(*s);
  for (const auto& s : sinks) c.compile(*s);
  c.wire_dead_letters();
  return {{"name", job_name}, {"config", {{"parallelism", c.parallelism()}}}, {"ops", c.ops}};
}

json PhysicalPlanner::compile(const LogicalPtr& sink) const {
  std::string name = sink->kind == LogicalKind::kSink ? static_cast<const LogicalSink&>(*sink).table.name : "query";
  return compile(std::vector<LogicalPtr>{sink}, "insert-into_" + name);
}

}  // namespace clink::sql

