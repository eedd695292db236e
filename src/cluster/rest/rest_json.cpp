#include "rest_json.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "clink/checkpoint/checkpoint_metadata.hpp"
#include "job_metrics.hpp"

namespace clink::cluster::rest {

const char* flink_state(JobStatus s) { return job_status_name(s); }  // Flink's names, same spelling

namespace {

// Flink's task (subtask) states, in the order its JSON lists them.
const char* const kTaskStates[] = {"FAILED",   "INITIALIZING", "CREATED",  "RECONCILING", "SCHEDULED",
                                   "DEPLOYING", "FINISHED",    "RUNNING",  "CANCELED",    "CANCELING"};

// Every subtask of a clink job is in its job's state (tasks start and end together).
const char* task_state(JobStatus s) {
  switch (s) {
    case JobStatus::kCreated: return "CREATED";
    case JobStatus::kRunning: return "RUNNING";
    case JobStatus::kFinished: return "FINISHED";
    case JobStatus::kFailed: return "FAILED";
    case JobStatus::kCanceled: return "CANCELED";
  }
  return "CREATED";
}

json task_counts(const char* state, int n) {
  json counts = json::object();
  for (const char* s : kTaskStates) counts[s] = std::string(s) == state ? n : 0;
  return counts;
}

int total_subtasks(const DispatchedJob& job) {
  int n = 0;
  for (const auto& v : job.vertices) n += v.parallelism;
  return n;
}

std::int64_t duration_of(const DispatchedJob& job, std::int64_t now) {
  std::int64_t end = job.end_time_ms();
  return (end > 0 ? end : now) - job.start_time_ms;
}

// A vertex's metrics summed over its subtasks: records entering the chain's head and
// leaving its tail towards other vertices (a sink's writes leave the job, not counted,
// as Flink's write-records), and the task's busy / backpressured / idle time.
struct VertexCounters {
  std::int64_t read_records = 0, write_records = 0;
  double busy_ms = 0, backpressured_ms = 0, idle_ms = 0;
};

std::map<int, VertexCounters> subtask_counters(const DispatchedJob& job, const JobVertex& v) {
  std::map<int, VertexCounters> out;
  const std::string& head = v.operators.front();
  const std::string& tail = v.operators.back();
  bool tail_has_outputs = !job.graph.outputs_of(tail).empty();
  for (int s = 0; s < v.parallelism; ++s) out[s];
  for (const auto& m : job.handle.metrics().snapshot()) {
    if (m.operator_id == head) {
      auto& c = out[m.subtask];
      c.read_records = m.records_in;
      c.busy_ms = static_cast<double>(m.busy_ns) / 1e6;
      c.backpressured_ms = static_cast<double>(m.backpressured_ns) / 1e6;
      c.idle_ms = static_cast<double>(m.idle_ns) / 1e6;
    }
    if (m.operator_id == tail && tail_has_outputs) out[m.subtask].write_records = m.records_out;
  }
  return out;
}

json io_metrics(const VertexCounters& c, bool complete) {
  return json{{"read-bytes", 0},
              {"read-bytes-complete", false},
              {"write-bytes", 0},
              {"write-bytes-complete", false},
              {"read-records", c.read_records},
              {"read-records-complete", complete},
              {"write-records", c.write_records},
              {"write-records-complete", complete},
              {"accumulated-backpressured-time", static_cast<std::int64_t>(c.backpressured_ms)},
              {"accumulated-idle-time", static_cast<std::int64_t>(c.idle_ms)},
              {"accumulated-busy-time", c.busy_ms}};
}

VertexCounters sum(const std::map<int, VertexCounters>& per_subtask) {
  VertexCounters t;
  for (const auto& [s, c] : per_subtask) {
    t.read_records += c.read_records;
    t.write_records += c.write_records;
    t.busy_ms += c.busy_ms;
    t.backpressured_ms += c.backpressured_ms;
    t.idle_ms += c.idle_ms;
  }
  return t;
}

std::string hash_hex(const std::string& text) {
  return vertex_id_for(JobNode{.id = text});
}

}  // namespace

json cluster_overview(const Dispatcher& d) {
  int running = 0, finished = 0, cancelled = 0, failed = 0;
  for (const auto& j : d.jobs()) {
    switch (j->status()) {
      case JobStatus::kCreated:
      case JobStatus::kRunning: ++running; break;
      case JobStatus::kFinished: ++finished; break;
      case JobStatus::kCanceled: ++cancelled; break;
      case JobStatus::kFailed: ++failed; break;
    }
  }
  int slots = 0, free_slots = 0;
  auto tms = d.task_managers();
  for (const auto& tm : tms) {
    slots += tm.slots;
    free_slots += tm.free_slots;
  }
  return json{{"taskmanagers", tms.size()}, {"slots-total", slots},       {"slots-available", free_slots},
              {"jobs-running", running},    {"jobs-finished", finished}, {"jobs-cancelled", cancelled},
              {"jobs-failed", failed},      {"flink-version", kFlinkVersion}, {"flink-commit", "clink-" CLINK_VERSION}};
}

json dashboard_config() {
  std::time_t t = std::time(nullptr);
  std::tm local{};
  localtime_r(&t, &local);
  return json{{"refresh-interval", 3000},
              {"timezone-name", local.tm_zone ? local.tm_zone : "UTC"},
              {"timezone-offset", local.tm_gmtoff * 1000},
              {"flink-version", kFlinkVersion},
              {"flink-revision", "clink " CLINK_VERSION},
              {"features", {{"web-submit", false}, {"web-cancel", true}, {"web-rescale", false}, {"web-history", false}}}};
}

json job_ids(const Dispatcher& d) {
  json jobs = json::array();
  for (const auto& j : d.jobs()) jobs.push_back({{"id", j->id}, {"status", flink_state(j->status())}});
  return json{{"jobs", jobs}};
}

json jobs_overview(const Dispatcher& d) {
  json jobs = json::array();
  std::int64_t now = now_ms();
  for (const auto& j : d.jobs()) {
    JobStatus s = j->status();
    int n = total_subtasks(*j);
    std::string ts = task_state(s);
    auto count = [&](const char* state) { return ts == state ? n : 0; };
    std::int64_t end = j->end_time_ms();
    jobs.push_back({{"jid", j->id},
                    {"name", j->name},
                    {"jobType", "STREAMING"},
                    {"schedulerType", "Default"},
                    {"start-time", j->start_time_ms},
                    {"end-time", end},
                    {"duration", duration_of(*j, now)},
                    {"state", flink_state(s)},
                    {"last-modification", end > 0 ? end : j->start_time_ms},
                    {"tasks",
                     {{"running", count("RUNNING")},
                      {"canceling", 0},
                      {"canceled", count("CANCELED")},
                      {"total", n},
                      {"created", count("CREATED")},
                      {"scheduled", 0},
                      {"deploying", 0},
                      {"reconciling", 0},
                      {"finished", count("FINISHED")},
                      {"initializing", 0},
                      {"failed", count("FAILED")}}},
                    {"pending-operators", 0}});
  }
  return json{{"jobs", jobs}};
}

json job_plan(const DispatchedJob& job) {
  json nodes = json::array();
  std::map<std::string, const JobVertex*> vertex_of;  // operator id -> its vertex
  for (const auto& v : job.vertices)
    for (const auto& op : v.operators) vertex_of[op] = &v;
  for (const auto& v : job.vertices) {
    std::string description;
    for (std::size_t i = 0; i < v.operators.size(); ++i) {
      const JobNode& n = job.graph.node(v.operators[i]);
      description += (i == 0 ? "" : "+- ") + (n.name.empty() ? n.id : n.name) + "<br/>";
    }
    json node = {{"id", v.id},
                 {"operator", ""},
                 {"parallelism", v.parallelism},
                 {"operator_strategy", ""},
                 {"description", description},
                 {"optimizer_properties", json::object()}};
    json inputs = json::array();
    int num = 0;
    for (const JobEdge* e : job.graph.inputs_of(v.operators.front())) {
      std::string strategy = partitioning_name(e->partitioning);
      std::transform(strategy.begin(), strategy.end(), strategy.begin(), ::toupper);
      inputs.push_back({{"id", vertex_of.at(e->from)->id},
                        {"num", num++},
                        {"exchange", "pipelined_bounded"},
                        {"ship_strategy", strategy}});
    }
    if (!inputs.empty()) node["inputs"] = inputs;
    nodes.push_back(node);
  }
  return json{{"jid", job.id}, {"name", job.name}, {"type", "STREAMING"}, {"nodes", nodes}};
}

json job_details(const DispatchedJob& job) {
  JobStatus s = job.status();
  std::int64_t now = now_ms(), end = job.end_time_ms();
  const char* ts = task_state(s);
  bool done = job.terminal();
  json timestamps = json::object();
  for (const char* st : {"RUNNING", "RESTARTING", "SUSPENDED", "RECONCILING", "FAILING", "CREATED", "FINISHED",
                         "CANCELED", "FAILED", "CANCELLING", "INITIALIZING"})
    timestamps[st] = 0;
  timestamps["INITIALIZING"] = timestamps["CREATED"] = job.start_time_ms;
  if (s != JobStatus::kCreated) timestamps["RUNNING"] = job.start_time_ms;
  if (done && end > 0) timestamps[flink_state(s)] = end;
  json vertices = json::array();
  std::string slot_group = hash_hex(job.id + "/slot-sharing-group");
  for (const auto& v : job.vertices) {
    vertices.push_back({{"id", v.id},
                        {"slotSharingGroupId", slot_group},
                        {"name", v.name},
                        {"maxParallelism", v.max_parallelism},
                        {"parallelism", v.parallelism},
                        {"status", ts},
                        {"start-time", job.start_time_ms},
                        {"end-time", done ? end : -1},
                        {"duration", duration_of(job, now)},
                        {"tasks", task_counts(ts, v.parallelism)},
                        {"metrics", io_metrics(sum(subtask_counters(job, v)), true)}});
  }
  json status_counts = task_counts(ts, static_cast<int>(job.vertices.size()));
  return json{{"jid", job.id},
              {"application-id", job.id},
              {"name", job.name},
              {"isStoppable", false},
              {"state", flink_state(s)},
              {"job-type", "STREAMING"},
              {"schedulerType", "Default"},
              {"start-time", job.start_time_ms},
              {"end-time", end},
              {"duration", duration_of(job, now)},
              {"maxParallelism", -1},
              {"now", now},
              {"timestamps", timestamps},
              {"vertices", vertices},
              {"status-counts", status_counts},
              {"plan", job_plan(job)},
              {"pending-operators", 0}};
}

json vertex_details(const Dispatcher& d, const DispatchedJob& job, const JobVertex& v) {
  std::int64_t now = now_ms(), end = job.end_time_ms();
  const char* ts = task_state(job.status());
  bool done = job.terminal();
  json subtasks = json::array();
  for (const auto& [index, c] : subtask_counters(job, v)) {
    // Flink's endpoint: the task manager's host and data port.
    const SubtaskLocation at = d.subtask_location(job, index);
    const std::string endpoint = at.data_port > 0 ? fmt::format("{}:{}", at.host, at.data_port) : at.host;
    subtasks.push_back({{"subtask", index},
                        {"status", ts},
                        {"attempt", static_cast<int>(job.handle.checkpoint_counts().restarts)},
                        {"endpoint", endpoint.empty() ? at.tm_id : endpoint},
                        {"start-time", job.start_time_ms},
                        {"end-time", done ? end : -1},
                        {"duration", duration_of(job, now)},
                        {"metrics", io_metrics(c, true)},
                        {"taskmanager-id", at.tm_id},
                        {"start_time", job.start_time_ms}});
  }
  return json{{"id", v.id},
              {"name", v.name},
              {"parallelism", v.parallelism},
              {"maxParallelism", v.max_parallelism},
              {"now", now},
              {"subtasks", subtasks}};
}

namespace {

const char* level_of(double ratio) { return ratio <= 0.10 ? "ok" : ratio <= 0.5 ? "low" : "high"; }

// A task-scope metric of one subtask by name (0 when absent).
double task_value(const metrics::SubtaskScope& s, const std::string& name) {
  for (const auto& m : s.task)
    if (m.name == name) return m.number();
  return 0;
}

}  // namespace

// As Flink's JobVertexBackPressureHandler: each subtask's ratios are its task's
// backPressuredTimeMsPerSecond, idleTimeMsPerSecond and busyTimeMsPerSecond over 1000.
json vertex_backpressure(const DispatchedJob& job, const JobVertex& v) {
  json subtasks = json::array();
  double worst = 0;
  for (const auto& s : metrics::vertex_level(job, v, now_ms())) {
    double ratio = task_value(s, "backPressuredTimeMsPerSecond") / 1000.0;
    double idle_ratio = task_value(s, "idleTimeMsPerSecond") / 1000.0;
    double busy_ratio = task_value(s, "busyTimeMsPerSecond") / 1000.0;
    worst = std::max(worst, ratio);
    subtasks.push_back({{"subtask", s.subtask},
                        {"backpressureLevel", level_of(ratio)},
                        {"ratio", ratio},
                        {"idleRatio", idle_ratio},
                        {"busyRatio", busy_ratio},
                        {"backpressure-level", level_of(ratio)}});
  }
  return json{{"status", "ok"},
              {"backpressureLevel", level_of(worst)},
              {"end-timestamp", now_ms()},
              {"subtasks", subtasks},
              {"backpressure-level", level_of(worst)}};
}

// clink's metrics do not track watermarks per subtask yet: none listed, as Flink lists
// none for a vertex without watermark metrics.
// Flink's per-subtask currentInputWatermark of a vertex: what its head operator's inputs
// delivered (a source vertex: what it emitted), as strings of the long.
json vertex_watermarks(const DispatchedJob& job, const JobVertex& v) {
  const std::string& head = v.operators.front();
  const bool source = job.graph.inputs_of(head).empty();
  std::map<int, std::int64_t> by_subtask;
  for (int s = 0; s < v.parallelism; ++s) by_subtask[s] = std::numeric_limits<std::int64_t>::min();
  for (const auto& m : job.handle.metrics().snapshot())
    if (m.operator_id == head) by_subtask[m.subtask] = source ? m.output_watermark : m.input_watermark;
  json out = json::array();
  for (const auto& [s, wm] : by_subtask)
    out.push_back({{"id", std::to_string(s) + ".currentInputWatermark"}, {"value", std::to_string(wm)}});
  return out;
}

json vertex_subtask_metrics(const DispatchedJob& job, const JobVertex& v, const std::string& get,
                            const std::string& agg) {
  // Each metric's value per subtask: the task's (metrics::vertex_level, what
  // /vertices/:vid/metrics answers) and each operator's, as "<operator name>.<metric>".
  std::map<std::string, std::map<int, double>> values;
  for (const auto& s : metrics::vertex_level(job, v, now_ms())) {
    for (const auto& m : s.task)
      if (m.kind != metrics::MetricValue::Kind::kString) values[m.name][s.subtask] = m.number();
    for (const auto& op : s.operators)
      for (const auto& m : op.values)
        if (m.kind != metrics::MetricValue::Kind::kString) values[op.name + "." + m.name][s.subtask] = m.number();
  }
  json out = json::array();
  if (get.empty()) {
    for (const auto& [name, per] : values) out.push_back({{"id", name}});
    return out;
  }
  std::set<std::string> aggs;
  std::stringstream as(agg);
  for (std::string a; std::getline(as, a, ',');)
    if (!a.empty()) {
      std::transform(a.begin(), a.end(), a.begin(), ::tolower);
      aggs.insert(a);
    }
  if (aggs.empty()) aggs = {"min", "max", "avg", "sum", "skew"};
  std::stringstream gs(get);
  for (std::string name; std::getline(gs, name, ',');) {
    auto it = values.find(name);
    if (it == values.end() || it->second.empty()) continue;  // unknown metrics are left out, as Flink
    double mn = std::numeric_limits<double>::max(), mx = std::numeric_limits<double>::lowest(), total = 0;
    for (const auto& [s, x] : it->second) {
      mn = std::min(mn, x);
      mx = std::max(mx, x);
      total += x;
    }
    double avg = total / static_cast<double>(it->second.size());
    double dev = 0;
    for (const auto& [s, x] : it->second) dev += std::abs(avg - x);
    double skew = avg == 0 ? 0 : std::min(dev / static_cast<double>(it->second.size()) / avg * 100.0, 100.0);
    json m = {{"id", name}};
    if (aggs.count("min")) m["min"] = mn;
    if (aggs.count("max")) m["max"] = mx;
    if (aggs.count("avg")) m["avg"] = avg;
    if (aggs.count("sum")) m["sum"] = total;
    if (aggs.count("skew")) m["skew"] = skew;
    out.push_back(m);
  }
  return out;
}

json job_exceptions(const DispatchedJob& job) {
  json entries = json::array();
  for (const auto& e : job.exceptions())
    entries.push_back({{"exceptionName", "clink.JobFailure"},
                       {"stacktrace", e.message},
                       {"timestamp", e.timestamp_ms},
                       {"failureLabels", json::object()},
                       {"concurrentExceptions", json::array()}});
  return json{{"exceptionHistory", {{"entries", entries}, {"truncated", false}}}};
}

json task_managers(const Dispatcher& d) {
  json tms = json::array();
  std::int64_t now = now_ms();
  for (const auto& tm : d.task_managers()) {
    auto resource = [](int cores) {
      return json{{"cpuCores", static_cast<double>(cores)}, {"taskHeapMemory", 0}, {"taskOffHeapMemory", 0},
                  {"managedMemory", 0}, {"networkMemory", 0}, {"extendedResources", json::object()}};
    };
    tms.push_back({{"id", tm.id},
                   {"path", tm.path},
                   {"dataPort", tm.data_port},
                   {"jmxPort", -1},
                   {"timeSinceLastHeartbeat", tm.last_heartbeat_ms > 0 ? now - tm.last_heartbeat_ms : 0},
                   {"slotsNumber", tm.slots},
                   {"freeSlots", tm.free_slots},
                   {"assignedTasks", tm.slots - tm.free_slots},
                   {"totalResource", resource(tm.slots)},
                   {"freeResource", resource(tm.free_slots)},
                   {"hardware",
                    {{"cpuCores", tm.cpu_cores},
                     {"physicalMemory", tm.physical_memory},
                     {"freeMemory", tm.free_memory},
                     {"managedMemory", 0}}}});
  }
  return json{{"taskmanagers", tms}};
}

json jobmanager_config(const Dispatcher& d) {
  json out = json::array();
  for (const auto& [k, v] : d.configuration()) out.push_back({{"key", k}, {"value", v}});
  return out;
}

json operation_status(const SavepointOperation& op) {
  switch (op.status) {
    case SavepointOperation::Status::kInProgress:
      return json{{"status", {{"id", "IN_PROGRESS"}}}, {"operation", nullptr}};
    case SavepointOperation::Status::kCompleted:
      return json{{"status", {{"id", "COMPLETED"}}}, {"operation", {{"location", op.location}}}};
    case SavepointOperation::Status::kFailed:
      return json{{"status", {{"id", "COMPLETED"}}},
                  {"operation",
                   {{"failure-cause", {{"class", "clink.SavepointFailure"}, {"stack-trace", op.failure}}}}}};
  }
  return json::object();
}

}  // namespace clink::cluster::rest
