#pragma once
// A job's metrics with Flink's names and scopes, read from its MetricRegistry and
// checkpoint history when asked (rates are computed here, from sampled counters, never on
// the hot path). The REST routes (rest_metrics.cpp) and the Prometheus exposition
// (prometheus.cpp) both answer from it, so they always agree. docs/metrics.md lists them.
#include <cstdint>
#include <string>
#include <vector>

#include "clink/cluster/rest/dispatcher.hpp"

namespace clink::cluster::metrics {

// One metric's value: a number (integral or not) or, for a few job metrics, a string
// (lastCheckpointExternalPath), which Prometheus leaves out as Flink's reporter does.
struct MetricValue {
  enum class Kind { kLong, kDouble, kString };
  std::string name;  // Flink's, e.g. "numRecordsIn"; a user-scope group joins with '.'
  Kind kind = Kind::kLong;
  std::int64_t long_value = 0;
  double double_value = 0;
  std::string string_value;

  static MetricValue of_long(std::string name, std::int64_t v);
  static MetricValue of_double(std::string name, double v);
  static MetricValue of_string(std::string name, std::string v);
  double number() const;       // Prometheus' sample value
  std::string text() const;    // Flink REST's "value" string ("1100", "6.73...", "NaN")
};

// The metrics of one operator inside one subtask of a vertex.
struct OperatorScope {
  std::string id;    // Flink's operator_id: the vertex id for the head, else hashed from the uid
  std::string name;  // the operator's name as the job graph has it
  std::vector<MetricValue> values;
};

// One subtask of a vertex (Flink's task scope) and the operators chained in it.
struct SubtaskScope {
  const JobVertex* vertex = nullptr;
  int subtask = 0;
  std::vector<MetricValue> task;
  std::vector<OperatorScope> operators;
};

struct JobMetrics {
  std::vector<MetricValue> job;            // Flink's jobmanager.job scope
  std::vector<SubtaskScope> subtasks;      // Flink's taskmanager.job.task(.operator) scopes
};

// Reads the job's metrics now (`now_ms`: the wall clock, for rates, uptime, watermarkLag).
JobMetrics collect(const DispatchedJob& job, std::int64_t now_ms);
// The job-level metrics only (cheaper: no operator snapshot).
std::vector<MetricValue> job_level(const DispatchedJob& job, std::int64_t now_ms);
// The subtasks of one vertex only.
std::vector<SubtaskScope> vertex_level(const DispatchedJob& job, const JobVertex& v, std::int64_t now_ms);

// The coordinator's own (Flink's jobmanager scope): jobs running, task managers, slots.
std::vector<MetricValue> jobmanager_level(const Dispatcher& d);

// Flink's metric-query name filter for a scope component inside a REST metric id:
// ' ', '.', ':' and ',' become '_' ("Source: src[1]" -> "Source__src[1]").
std::string rest_component(const std::string& name);

}  // namespace clink::cluster::metrics
