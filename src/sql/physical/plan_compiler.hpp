#pragma once
// The physical planner's walk over a logical plan, emitting the job's ops (the JobGraphSpec
// JSON, docs/sql-runtime-contract.md). Private to src/sql/physical: the operators are
// compiled in physical_plan.cpp, the sources and sinks (scans and their push-downs,
// VALUES, sinks, the dead-letter sink) in physical_sources_sinks.cpp.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "clink/sql/physical/physical_plan.hpp"
#include "clink/sql/planner/plan_properties.hpp"
#include "exec_options.hpp"

namespace clink::sql::physical {

using json = nlohmann::json;

[[noreturn]] inline void fail(SourcePosition pos, const std::string& message) { throw TranslationError(pos, message); }

struct Compiler {
  const Catalog& catalog;
  const SessionConfig& session;
  PlanProperties& props;  // changelog modes and join / rank analyses, each derived once
  const bool batch = batch_mode(session);  // 'execution.runtime-mode' = 'batch'
  json ops = json::array();
  std::vector<std::string> dead_letter_producers;
  // Ops at parallelism 1 (global aggregates, sorts, limits): forward ops after them stay
  // at parallelism 1 too, so no downstream subtask waits on an input that never comes.
  std::set<std::string> single_ops;
  std::vector<std::size_t> dead_letter_sources;  // ops that get `dead_letter: true` when wired
  bool reads_current_watermark = false;  // a CURRENT_WATERMARK call in the job: 'on-event' emits per row
  std::map<std::string, std::string> reused_scans;  // a scan's source params -> its op id
  std::map<std::string, std::string> reused_ops;    // add_reusable(): an op's key -> its id

  std::string next_id(const std::string& factory) {
    std::string base = factory.rfind("sql_", 0) == 0 ? factory.substr(4) : factory;
    return fmt::format("{}_{}", base, ops.size() + 1);
  }

  json session_json() const {
    json s = json::object();
    for (const char* key : {"table.local-time-zone"}) {
      auto it = session.find(key);
      if (it != session.end()) s[key] = it->second;
    }
    return s;
  }

  // Adds an op; `inputs` are the upstream ids (several: a union), partitioned as given:
  // `hash_keys` makes a keyed op (hash-partitioned by those columns; none: by the empty key).
  std::string add(const std::string& factory, const std::vector<std::string>& inputs, json params,
                  const std::vector<std::size_t>* hash_keys = nullptr, bool single = false,
                  const Schema* input_schema = nullptr);

  // Sub-plan reuse (Flink's table.optimizer.reuse-sub-plan-enabled), for the row-local
  // ops above a shared scan (scan_reuse.cpp makes their subtrees equal: q7's computed
  // columns and WATERMARK over the one Nexmark source): an op equal to one compiled before
  // (factory, params, inputs) is that op. Only for ops whose expressions are deterministic
  // (`deterministic` false: a new op), so both consumers see the same rows.
  std::string add_reusable(const std::string& factory, const std::vector<std::string>& inputs, json params,
                           const Schema& input_schema, bool deterministic);

  int parallelism() const {
    auto it = session.find("parallelism.default");
    if (it == session.end()) return 1;
    try {
      return std::max(1, std::stoi(it->second));
    } catch (const std::exception&) {
      return 1;
    }
  }

  // The table's options the connector takes (the planner's own ones left out).
  static json connector_params(const TableDef& t) {
    json p = json::object();
    for (const auto& [k, v] : t.options)
      if (!is_planner_option(k)) p[k] = v;
    return p;
  }

  // The op(s) computing node `n` (its inputs compiled first); their ids.
  std::vector<std::string> compile(const LogicalNode& n);

  // Hash on the keys every grouping set shares (a set without them would be split).
  static std::vector<std::size_t> partition_keys(const std::vector<std::size_t>& keys,
                                                 const std::vector<std::vector<std::size_t>>& sets);

  // Two-phase group aggregation (mini-batch on, 'table.optimizer.agg-phase-strategy' not
  // ONE_PHASE, every call mergeable and none DISTINCT): sql_local_group_aggregate chained
  // to the input, then sql_group_aggregate merging its accumulators after the exchange.
  // `global` holds the one-phase params; returns the global op's id.
  static bool two_phase(const LogicalAggregate& a, AggPhaseStrategy strategy);
  std::string two_phase_aggregate(const LogicalAggregate& a, const std::vector<std::string>& in, json global);

  // A process table function: set semantics hash each table argument (input i) by its
  // PARTITION BY columns (none: one partition at parallelism 1); row semantics: forward.
  std::string process_table_function(const LogicalProcessTableFunction& f);

  // A regular, semi / anti or interval join: each input hash-partitioned by its key
  // columns (input 0 left, 1 right); without equi-join keys the join runs at parallelism 1.
  std::string join(const LogicalJoin& j);

  // A lookup join: row-local (each input row looks its rows up), so a forward edge at the
  // input's parallelism, as Flink's LookupJoin without the 'shuffle' hint.
  std::string lookup_join(const LogicalLookupJoin& j);

  // VECTOR_SEARCH: row-local (each input row searches the whole vector table), so a forward
  // edge at the input's parallelism. The vector table's source (factory and params, as its
  // scan would have) rides in the params: each subtask reads it whole into its index.
  std::string vector_search(const LogicalVectorSearch& v);

  // A projection and / or filter: one sql_calc (a scan right below it gets the filter too,
  // for the push-downs its connector takes).
  std::string calc(const LogicalNode& n);

  // The partition columns of a filesystem table (PARTITIONED BY, or the older
  // 'partition_by' option: a comma-separated list).
  static std::vector<std::string> partition_columns(const TableDef& t);

  // Watermark push-down: a WATERMARK right above a scan (or above the projection of its
  // computed columns) of a connector that takes it (or bounds the assigner by it: only the
  // expression), without alignment. The expressions are over the scan's row: the
  // computed columns inlined.
  json pushed_down_watermark(const LogicalWatermarkAssigner& w) const;
  json scan_watermark;  // set while compiling the scan a watermark was pushed into

  std::string scan(const LogicalScan& s, const ExprPtr& filter = nullptr);

  // Partition pushdown: partition_keys (indices into the physical schema) and partition_filter: the
  // deterministic conjuncts of `filter` (over the scan's output) on partition columns only.
  void add_partitions(const LogicalScan& s, const ExprPtr& filter, json& p);

  // Filter pushdown: the deterministic conjuncts of the filter above the scan.
  void add_filter(const ExprPtr& filter, json& p);

  // VALUES: a bounded source at parallelism 1 (Flink's Values node is single too).
  std::string values(const LogicalValues& v);

  // An INSERT's sink: its changelog mode, partitions, metadata columns and parallelism.
  std::string sink(const LogicalSink& s);

  // The 'sql.dead-letter' sink, fed by the side output of every source that has one.
  void wire_dead_letters();
};

}  // namespace clink::sql::physical
