#pragma once
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "clink/runtime/job_graph.hpp"
#include "clink/runtime/operator_registry.hpp"

namespace clink {

// The serialisable form of a JobGraph: what the SQL planner emits, `clink explain`
// prints and a coordinator ships to workers.
//
// {"name": "...", "config": {"parallelism": 1, "max_parallelism": 128, ...},
//  "ops": [{"id": "...", "type": "<factory>", "name": "...", "uid": "...",
//           "params": {...}, "parallelism": 2,
//           "inputs": [{"from": "<op id>", "partitioning": "forward|hash|rebalance|broadcast",
//                       "key": "<key selector>", "side_output": "<tag>", "input": 0}]}]}
nlohmann::json to_spec(const JobGraph& graph);
// Rebuilds a runnable graph through the registry; errors name the op and the field.
JobGraph from_spec(const nlohmann::json& spec, const OperatorRegistry& registry);
JobGraph load_spec_file(const std::string& path, const OperatorRegistry& registry);

}  // namespace clink
