#include "job_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "state_sizes.hpp"

namespace clink::cluster::metrics {

namespace {

constexpr std::int64_t kNoWatermark = std::numeric_limits<std::int64_t>::min();

bool running(JobStatus s) { return s == JobStatus::kRunning || s == JobStatus::kCreated; }

// Busy / idle / backpressured time per second of wall clock, as Flink's TimerGauge: the
// rate of the accumulated milliseconds, at most 1000.
double time_per_second(const MetricRegistry& r, const std::string& key, std::int64_t ns, std::int64_t now) {
  return std::clamp(r.rate(key, static_cast<double>(ns) / 1e6, now), 0.0, 1000.0);
}

// The newest completed checkpoint or savepoint (what the lastCheckpoint* metrics describe).
const CheckpointStats* last_completed(const std::vector<CheckpointStats>& history) {
  const CheckpointStats* last = nullptr;
  for (const auto& s : history)
    if (s.status == CheckpointStats::Status::kCompleted) last = &s;
  return last;
}

}  // namespace

MetricValue MetricValue::of_long(std::string name, std::int64_t v) {
  MetricValue m;
  m.name = std::move(name);
  m.long_value = v;
  return m;
}
MetricValue MetricValue::of_double(std::string name, double v) {
  MetricValue m;
  m.name = std::move(name);
  m.kind = Kind::kDouble;
  m.double_value = v;
  return m;
}
MetricValue MetricValue::of_string(std::string name, std::string v) {
  MetricValue m;
  m.name = std::move(name);
  m.kind = Kind::kString;
  m.string_value = std::move(v);
  return m;
}

double MetricValue::number() const {
  switch (kind) {
    case Kind::kLong: return static_cast<double>(long_value);
    case Kind::kDouble: return double_value;
    case Kind::kString: break;
  }
  return std::nan("");
}

std::string MetricValue::text() const {
  switch (kind) {
    case Kind::kLong: return std::to_string(long_value);
    case Kind::kDouble:
      if (std::isnan(double_value)) return "NaN";
      // Java's Double.toString keeps a ".0" on integral values.
      if (double_value == std::floor(double_value) && std::abs(double_value) < 1e15)
        return fmt::format("{:.1f}", double_value);
      return fmt::format("{}", double_value);
    case Kind::kString: return string_value;
  }
  return "";
}

std::string rest_component(const std::string& name) {
  std::string out = name;
  for (char& c : out)
    if (c == ' ' || c == '.' || c == ':' || c == ',') c = '_';
  return out;
}

std::vector<MetricValue> job_level(const DispatchedJob& job, std::int64_t now_ms) {
  std::vector<MetricValue> out;
  CheckpointCounts counts = job.handle.checkpoint_counts();
  auto history = job.handle.checkpoint_history();
  const CheckpointStats* last = last_completed(history);
  const bool live = running(job.status());
  out.push_back(MetricValue::of_long("numRestarts", counts.restarts));
  // Flink's uptime: milliseconds since the job started running, -1 once it ended.
  out.push_back(MetricValue::of_long("uptime", live ? now_ms - job.start_time_ms : -1));
  out.push_back(MetricValue::of_long("downtime", 0));
  out.push_back(MetricValue::of_long("numberOfCompletedCheckpoints", counts.completed));
  out.push_back(MetricValue::of_long("numberOfFailedCheckpoints", counts.failed));
  out.push_back(MetricValue::of_long("numberOfInProgressCheckpoints", counts.in_progress));
  out.push_back(MetricValue::of_long("totalNumberOfCheckpoints", counts.completed + counts.failed + counts.in_progress));
  out.push_back(MetricValue::of_long("lastCheckpointDuration", last ? last->duration_ms : -1));
  out.push_back(MetricValue::of_long("lastCheckpointSize", last ? last->size_bytes : -1));
  out.push_back(MetricValue::of_long("lastCheckpointFullSize", last ? last->size_bytes : -1));
  out.push_back(MetricValue::of_long("lastCompletedCheckpointId", last ? last->id : -1));
  out.push_back(MetricValue::of_string("lastCheckpointExternalPath", last ? last->path : "n/a"));
  return out;
}

std::vector<SubtaskScope> vertex_level(const DispatchedJob& job, const JobVertex& v, std::int64_t now_ms) {
  const MetricRegistry& r = job.handle.metrics();
  std::map<std::pair<std::string, int>, OperatorMetricsSnapshot> by_op;
  for (auto& m : r.snapshot()) {
    if (std::find(v.operators.begin(), v.operators.end(), m.operator_id) == v.operators.end()) continue;
    by_op[{m.operator_id, m.subtask}] = std::move(m);
  }
  const std::string& head = v.operators.front();
  const std::string& tail = v.operators.back();
  const bool tail_has_outputs = !job.graph.outputs_of(tail).empty();
  auto rate = [&](const std::string& op, int s, const char* what, std::int64_t value) {
    return r.rate(fmt::format("{}/{}/{}", op, s, what), static_cast<double>(value), now_ms);
  };

  // Each operator subtask's state in the last completed checkpoint (none before one).
  auto history = job.handle.checkpoint_history();
  const CheckpointStats* last = last_completed(history);
  auto state_sizes = last ? checkpoint_state_sizes(last->path) : std::make_shared<const StateSizes>();

  const std::string task_key = "task:" + v.id;
  std::vector<SubtaskScope> out;
  for (int s = 0; s < v.parallelism; ++s) {
    SubtaskScope scope;
    scope.vertex = &v;
    scope.subtask = s;
    OperatorMetricsSnapshot none;
    auto at = [&](const std::string& op) -> const OperatorMetricsSnapshot& {
      auto it = by_op.find({op, s});
      return it == by_op.end() ? none : it->second;
    };
    // The task: records entering the chain's head and leaving its tail towards other
    // vertices (a sink's writes leave the job and are not counted, as in Flink).
    const auto& h = at(head);
    const auto& t = at(tail);
    std::int64_t in = h.records_in, out_records = tail_has_outputs ? t.records_out : 0;
    auto& task = scope.task;
    task.push_back(MetricValue::of_long("numRecordsIn", in));
    task.push_back(MetricValue::of_long("numRecordsOut", out_records));
    task.push_back(MetricValue::of_double("numRecordsInPerSecond", rate(task_key, s, "in", in)));
    task.push_back(MetricValue::of_double("numRecordsOutPerSecond", rate(task_key, s, "out", out_records)));
    task.push_back(MetricValue::of_long("numBytesIn", h.bytes_in));
    task.push_back(MetricValue::of_long("numBytesOut", t.bytes_out));
    task.push_back(MetricValue::of_double("numBytesInPerSecond", rate(head, s, "bytesIn", h.bytes_in)));
    task.push_back(MetricValue::of_double("numBytesOutPerSecond", rate(tail, s, "bytesOut", t.bytes_out)));
    const std::string key = fmt::format("{}/{}/", head, s);
    task.push_back(MetricValue::of_double("busyTimeMsPerSecond", time_per_second(r, key + "busy", h.busy_ns, now_ms)));
    task.push_back(MetricValue::of_double("idleTimeMsPerSecond", time_per_second(r, key + "idle", h.idle_ns, now_ms)));
    task.push_back(MetricValue::of_double("backPressuredTimeMsPerSecond",
                                          time_per_second(r, key + "bp", h.backpressured_ns, now_ms)));
    task.push_back(MetricValue::of_long("accumulateBusyTimeMs", h.busy_ns / 1'000'000));
    task.push_back(MetricValue::of_long("accumulateIdleTimeMs", h.idle_ns / 1'000'000));
    task.push_back(MetricValue::of_long("accumulateBackPressuredTimeMs", h.backpressured_ns / 1'000'000));
    const bool source_task = job.graph.inputs_of(head).empty();
    task.push_back(MetricValue::of_long("currentInputWatermark", source_task ? h.output_watermark : h.input_watermark));
    // clink's: the subtask's part in the last completed checkpoint, as its REST details
    // (`checkpoint.sync` / `checkpoint.async`, ms); -1 before one.
    const CheckpointTaskStats* acked = nullptr;
    if (last)
      for (const auto& t : last->tasks)
        if (t.head == head && t.subtask == s) acked = &t;
    task.push_back(MetricValue::of_long("lastCheckpointSyncDuration", acked ? acked->sync_ms : -1));
    task.push_back(MetricValue::of_long("lastCheckpointAsyncDuration", acked ? acked->async_ms : -1));

    for (const auto& op : v.operators) {
      const JobNode& node = job.graph.node(op);
      const auto& m = at(op);
      OperatorScope o;
      o.id = op == head ? v.id : vertex_id_for(node);
      o.name = node.name.empty() ? node.id : node.name;
      auto& vals = o.values;
      vals.push_back(MetricValue::of_long("numRecordsIn", m.records_in));
      vals.push_back(MetricValue::of_long("numRecordsOut", m.records_out));
      vals.push_back(MetricValue::of_double("numRecordsInPerSecond", rate(op, s, "in", m.records_in)));
      vals.push_back(MetricValue::of_double("numRecordsOutPerSecond", rate(op, s, "out", m.records_out)));
      const bool source = job.graph.inputs_of(op).empty();
      if (!source) vals.push_back(MetricValue::of_long("currentInputWatermark", m.input_watermark));
      vals.push_back(MetricValue::of_long("currentOutputWatermark", m.output_watermark));
      vals.push_back(MetricValue::of_long("numLateRecordsDropped", m.late_records_dropped));
      if (source) {
        // FLIP-33's watermarkLag: wall clock minus the watermark the source emitted;
        // -1 before the first one and after the final one (end of a bounded input).
        std::int64_t wm = m.output_watermark;
        bool known = wm != kNoWatermark && wm != std::numeric_limits<std::int64_t>::max();
        vals.push_back(MetricValue::of_long("watermarkLag", known ? now_ms - wm : -1));
        if (m.pending_records >= 0) vals.push_back(MetricValue::of_long("pendingRecords", m.pending_records));
        if (m.pending_bytes >= 0) vals.push_back(MetricValue::of_long("pendingBytes", m.pending_bytes));
        if (m.records_lag_max >= 0)
          vals.push_back(MetricValue::of_long("KafkaSourceReader.KafkaConsumer.records-lag-max", m.records_lag_max));
      }
      // The operator subtask's share of the job's lastCheckpointSize / lastCheckpointFullSize:
      // bytes this checkpoint wrote for its state, and its whole state (-1 before one).
      auto size = state_sizes->find({node.uid, s});
      const bool sized = size != state_sizes->end();
      vals.push_back(MetricValue::of_long("lastCheckpointSize", sized ? size->second.checkpointed_size : -1));
      vals.push_back(MetricValue::of_long("lastCheckpointFullSize", sized ? size->second.state_size : -1));
      vals.push_back(MetricValue::of_long("numDeadLetters", m.dead_letters));
      for (const auto& [reason, n] : m.dead_letters_by_reason)
        vals.push_back(MetricValue::of_long("deadLetters." + reason, n));
      scope.operators.push_back(std::move(o));
    }
    out.push_back(std::move(scope));
  }
  return out;
}

JobMetrics collect(const DispatchedJob& job, std::int64_t now_ms) {
  JobMetrics out;
  out.job = job_level(job, now_ms);
  for (const auto& v : job.vertices)
    for (auto& s : vertex_level(job, v, now_ms)) out.subtasks.push_back(std::move(s));
  return out;
}

std::vector<MetricValue> jobmanager_level(const Dispatcher& d) {
  std::int64_t running_jobs = 0, slots = 0, free_slots = 0;
  for (const auto& j : d.jobs())
    if (running(j->status())) ++running_jobs;
  auto tms = d.task_managers();
  for (const auto& tm : tms) {
    slots += tm.slots;
    free_slots += tm.free_slots;
  }
  return {MetricValue::of_long("numRunningJobs", running_jobs),
          MetricValue::of_long("numRegisteredTaskManagers", static_cast<std::int64_t>(tms.size())),
          MetricValue::of_long("taskSlotsTotal", slots), MetricValue::of_long("taskSlotsAvailable", free_slots)};
}

}  // namespace clink::cluster::metrics
