#pragma once
// How a gateway SELECT's rows reach the coordinator from whichever worker runs its sink
// (Flink's CollectSinkFunction and its coordinator): the planner's result sink becomes a
// `gateway_collect_sink`, which POSTs each batch, in clink's binary batch encoding
// (column_serde), to the coordinator's gateway at /clink/v1/collect/<result id>; the
// gateway decodes it into the rows its operation serves (SqlGateway::open_collect). A
// POST returns once the rows are stored, so a slow client backpressures the job only
// through the gateway's buffer, never by losing rows.
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "clink/cluster/gateway/sql_gateway.hpp"
#include "clink/runtime/operator_registry.hpp"

namespace clink::cluster::gateway {

// The submit option marking a gateway SELECT's job (its value: the result id). Such a job
// lives only as long as the session that reads it: a highly available coordinator does
// not keep it for the next leader, whose gateway would have no one to send its rows to.
inline constexpr const char* kCollectJobOption = "$internal.sql-gateway.collect";

// The built-in registry plus `gateway_collect_sink` (params: url, result, schema): what
// the coordinator's Dispatcher and every worker build jobs with.
const OperatorRegistry& registry_with_collect_sink();

// A SELECT's spec: its sql_collect_sink (named select_<n>) becomes a gateway_collect_sink
// posting to `url` ("http://host:port") under `result_id`. The query's columns and its
// session time zone (table.local-time-zone).
struct CollectTarget {
  std::vector<ResultColumn> columns;
  std::string time_zone = "UTC";
};
CollectTarget route_select_to_gateway(nlohmann::json& spec, const std::string& url, const std::string& result_id);

}  // namespace clink::cluster::gateway
