#pragma once
// PhysicalPlanner::compile: optimised LogicalPlan(s) -> JobGraphSpec JSON (the job file
// format of docs/job-graph-spec.md) using exactly the factories and params of
// docs/sql-runtime-contract.md:
//   scans      the connector's source factory (spec/connector_table.hpp)
//   sinks      the connector's sink factory, params from its row's hook
//   watermark  sql_watermark_assigner      project/filter  sql_calc (fused)
//   GROUP BY   sql_group_aggregate         windows   sql_window_aggregate / sql_window_assign
//   ORDER BY   sql_sort (+ sql_limit for OFFSET)       LIMIT  sql_limit
//   UNION ALL  several input edges into the next op
//   JOIN       sql_join / sql_interval_join / sql_window_join (join_analysis.hpp), inputs 0 and 1
//              hashed on their keys
// Keyed ops get hash edges `sql_columns:<i>,...`; global aggregates, sorts and limits
// run at parallelism 1; the job's parallelism is SET 'parallelism.default'. Dead letters
// (sources, late window records) go to the table or file of SET 'sql.dead-letter'.
// VALUES has no operator yet: TranslationError at its position.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/common/session_config.hpp"
#include "clink/sql/planner/logical_plan.hpp"

namespace clink::sql {

class PhysicalPlanner {
 public:
  PhysicalPlanner(const Catalog& catalog, const SessionConfig& session) : catalog_(catalog), session_(session) {}

  // One job for one sink, or several (a statement set); each plan is rooted in a
  // LogicalSink. Checks every sink's changelog mode first. `props`: the plans' derived
  // properties when the caller has them (EXPLAIN of the same plans), else derived here.
  nlohmann::json compile(const std::vector<LogicalPtr>& sinks, const std::string& job_name,
                         PlanProperties* props = nullptr) const;
  nlohmann::json compile(const LogicalPtr& sink) const;

 private:
  const Catalog& catalog_;
  const SessionConfig& session_;
};

// The contract's JSON forms (schemas: schema_to_json in ops/sql_op_spec.hpp; expressions:
// expr_to_json in expr_json.hpp, the serialiser the operators load with).
nlohmann::json window_to_json(const WindowSpec& w);
nlohmann::json aggregate_to_json(const AggregateCall& a);

// Options the planner consumes itself (not passed to connectors).
bool is_planner_option(const std::string& key);

}  // namespace clink::sql
