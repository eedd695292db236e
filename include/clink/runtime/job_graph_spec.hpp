#pragma once
#include <functional>
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
// A top-level section of a spec besides name / config / ops, loaded before the ops are
// built by whoever registered it (the SQL layer's "udfs": the WebAssembly functions its
// ops call, so a worker needs no module file), and written again by to_spec from the
// ops (`save`, given the spec so far; null or empty: no section), so a coordinator that
// re-serialises a graph for its workers keeps it. Register at startup, before any from_spec.
void register_spec_section(const std::string& key, std::function<void(const nlohmann::json&)> load,
                           std::function<nlohmann::json(const nlohmann::json& spec)> save = nullptr);
JobGraph load_spec_file(const std::string& path, const OperatorRegistry& registry);

}  // namespace clink
