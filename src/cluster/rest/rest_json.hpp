#pragma once
// The bodies of Flink's REST responses, built from the Dispatcher's jobs. Field names
// and shapes are Flink 2.3's (checked against a running Flink's answers); values that
// clink does not measure are Flink's "unknown" values (0, -1, false).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "clink/cluster/rest/dispatcher.hpp"

namespace clink::cluster::rest {

using json = nlohmann::ordered_json;

inline constexpr const char* kFlinkVersion = "2.3.0";  // the REST API version clink follows

const char* flink_state(JobStatus s);

json cluster_overview(const Dispatcher& d);           // GET /overview
json dashboard_config();                              // GET /config
json job_ids(const Dispatcher& d);                    // GET /jobs
json jobs_overview(const Dispatcher& d);              // GET /jobs/overview
json job_details(const DispatchedJob& job);           // GET /jobs/:jobid
json job_plan(const DispatchedJob& job);              // the "plan" of /jobs/:jobid and /jobs/:jobid/plan
json vertex_details(const Dispatcher& d, const DispatchedJob& job, const JobVertex& v);  // GET .../vertices/:vid
json vertex_backpressure(const DispatchedJob& job, const JobVertex& v);  // GET .../backpressure
json vertex_watermarks(const DispatchedJob& job, const JobVertex& v);    // GET .../watermarks
// GET .../subtasks/metrics: without `get` the metric names; with it the aggregates
// `agg` (min,max,avg,sum,skew; all when empty) of each named metric over the subtasks.
json vertex_subtask_metrics(const DispatchedJob& job, const JobVertex& v, const std::string& get,
                            const std::string& agg);
json checkpoint_statistics(const DispatchedJob& job);  // GET /jobs/:jobid/checkpoints
json checkpoint_config(const DispatchedJob& job);      // GET .../checkpoints/config
// GET .../checkpoints/details/:id; throws NotFoundError.
json checkpoint_details(const DispatchedJob& job, std::int64_t checkpoint_id);
// GET .../checkpoints/details/:id/subtasks/:vertexid: the vertex's subtasks' state sizes
// (Flink's TaskCheckpointStatisticsWithSubtaskDetails); throws NotFoundError.
json checkpoint_subtask_details(const DispatchedJob& job, std::int64_t checkpoint_id, const JobVertex& v);
json job_exceptions(const DispatchedJob& job);         // GET /jobs/:jobid/exceptions
json task_managers(const Dispatcher& d);               // GET /taskmanagers
json jobmanager_config(const Dispatcher& d);           // GET /jobmanager/config
json operation_status(const SavepointOperation& op);   // GET /jobs/:jobid/savepoints/:triggerid

}  // namespace clink::cluster::rest
