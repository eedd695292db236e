#include "clink/sql/planner/explain.hpp"

#include <cmath>

#include <fmt/format.h>

#include "clink/sql/planner/cardinality.hpp"
#include "clink/sql/planner/plan_properties.hpp"

namespace clink::sql {

namespace {

void explain_node(const LogicalNode& n, int depth, PlanProperties& props, std::string& out) {
  double rows = estimate_rows(n);
  std::string stats;
  if (n.kind == LogicalKind::kScan && !static_cast<const LogicalScan&>(n).table.statistics().row_count)
    stats = ", no stats";
  out += fmt::format("{}{} [rows={}, changelog={}{}]\n", std::string(static_cast<std::size_t>(depth) * 2, ' '),
                     node_description(n, props), static_cast<long long>(std::llround(rows)),
                     props.changelog(n).to_string(), stats);
  for (const auto& in : printed_inputs(n)) explain_node(*in, depth + 1, props, out);
}

}  // namespace

std::string explain_plan(const LogicalNode& plan, PlanProperties* props) {
  PlanProperties own;
  std::string out;
  explain_node(plan, 0, props ? *props : own, out);
  return out;
}

std::string explain_plans(const std::vector<LogicalPtr>& plans, PlanProperties* props) {
  PlanProperties own;
  std::string out;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (i) out += "\n";
    out += explain_plan(*plans[i], props ? props : &own);
  }
  return out;
}

}  // namespace clink::sql
