// Flink's checkpoint statistics (/jobs/:jobid/checkpoints, /config, /details/:id) from a
// job's checkpoint history.
#include <algorithm>
#include <limits>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "clink/checkpoint/checkpoint_metadata.hpp"
#include "rest_json.hpp"
#include "state_sizes.hpp"

namespace clink::cluster::rest {
namespace {

bool is_savepoint(const DispatchedJob& job, const CheckpointStats& s) {
  std::filesystem::path p(s.path);
  return p.parent_path() != job.options.checkpoints.directory || p.filename() != fmt::format("chk-{}", s.id);
}

// When each checkpoint completed, from its metadata (read once: a retained checkpoint
// is removed later); the time it was first seen when that is gone.
std::int64_t completed_at(const DispatchedJob& job, const CheckpointStats& s) {
  static std::mutex mu;
  static std::map<std::string, std::int64_t> cache;
  std::string key = job.id + "/" + s.path;
  std::lock_guard lock(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  std::int64_t ts = now_ms();
  if (s.status == CheckpointStats::Status::kCompleted) {
    try {
      ts = CheckpointMetadata::read(s.path).timestamp_ms;
    } catch (const std::exception&) {
    }
  }
  return cache[key] = ts;
}

// A task's acknowledgement of checkpoint `s`: the subtask `subtask` of the chain headed
// by `head` (CheckpointStats::tasks); for a checkpoint without them, one at its end.
CheckpointTaskStats task_ack(const CheckpointStats& s, const std::string& head, int subtask) {
  for (const auto& t : s.tasks)
    if (t.subtask == subtask && t.head == head) return t;
  return {head, subtask, s.duration_ms, 0, 0, 0};
}

json task_statistics(const DispatchedJob& job, const CheckpointStats& s, std::int64_t ack) {
  json tasks = json::object();
  const std::int64_t trigger = ack - s.duration_ms;
  bool done = s.status == CheckpointStats::Status::kCompleted;
  // A vertex's sizes: its operators' state over its subtasks, from the checkpoint's metadata.
  auto sizes = done ? checkpoint_state_sizes(s.path) : std::make_shared<const StateSizes>();
  for (const auto& v : job.vertices) {
    SubtaskStateSize total;
    for (const auto& op : v.operators)
      for (int i = 0; i < v.parallelism; ++i)
        if (auto it = sizes->find({job.graph.node(op).uid, i}); it != sizes->end()) {
          total.state_size += it->second.state_size;
          total.checkpointed_size += it->second.checkpointed_size;
        }
    // Flink's: the vertex's last acknowledgement, and its time after the trigger.
    std::int64_t last_ack_ms = 0;
    for (int i = 0; i < v.parallelism; ++i) last_ack_ms = std::max(last_ack_ms, task_ack(s, v.operators.front(), i).ack_ms);
    tasks[v.id] = {{"id", s.id},
                   {"status", done ? "COMPLETED" : "FAILED"},
                   {"latest_ack_timestamp", done ? trigger + last_ack_ms : -1},
                   {"checkpointed_size", total.checkpointed_size},
                   {"state_size", total.state_size},
                   {"end_to_end_duration", done ? last_ack_ms : s.duration_ms},
                   {"alignment_buffered", 0},
                   {"processed_data", 0},
                   {"persisted_data", 0},
                   {"num_subtasks", v.parallelism},
                   {"num_acknowledged_subtasks", done ? v.parallelism : 0}};
  }
  return tasks;
}

json checkpoint_entry(const DispatchedJob& job, const CheckpointStats& s, bool with_tasks) {
  bool savepoint = is_savepoint(job, s);
  bool done = s.status == CheckpointStats::Status::kCompleted;
  std::int64_t ack = completed_at(job, s);
  int subtasks = 0;
  for (const auto& v : job.vertices) subtasks += v.parallelism;
  json e = {{"className", done ? "completed" : "failed"},
            {"id", s.id},
            {"status", done ? "COMPLETED" : "FAILED"},
            {"is_savepoint", savepoint},
            {"savepointFormat", savepoint ? json("CANONICAL") : json(nullptr)},
            {"trigger_timestamp", ack - s.duration_ms},
            {"latest_ack_timestamp", done ? ack : -1},
            {"checkpointed_size", s.size_bytes},
            {"state_size", s.size_bytes},
            {"end_to_end_duration", s.duration_ms},
            {"alignment_buffered", 0},
            {"processed_data", 0},
            {"persisted_data", 0},  // aligned checkpoints persist no in-flight data
            // clink's: the longest time a task held its inputs back for this barrier, in ms
            // (Flink shows alignment per subtask only).
            {"alignment_duration", s.alignment_ms},
            {"num_subtasks", subtasks},
            {"num_acknowledged_subtasks", done ? subtasks : 0},
            {"checkpoint_type", savepoint ? "SAVEPOINT" : "CHECKPOINT"},
            {"tasks", with_tasks ? task_statistics(job, s, ack) : json::object()}};
  if (done) {
    e["external_path"] = s.path;
    std::error_code ec;
    e["discarded"] = !std::filesystem::exists(std::filesystem::path(s.path) / kMetadataFile, ec);
  } else {
    e["failure_timestamp"] = ack;
    e["failure_message"] = s.failure;
  }
  return e;
}

// Flink's StatsSummaryDto: min, max, avg and percentiles ("NaN" when there is nothing).
json summary(std::vector<std::int64_t> values) {
  if (values.empty())
    return json{{"min", 0},       {"max", 0},       {"avg", 0},       {"p50", "NaN"},
                {"p90", "NaN"},   {"p95", "NaN"},   {"p99", "NaN"},   {"p999", "NaN"}};
  std::sort(values.begin(), values.end());
  std::int64_t total = 0;
  for (auto v : values) total += v;
  auto pct = [&](double q) {
    // Flink's percentiles (Apache Commons' default estimation): position q * (n + 1).
    double pos = q * static_cast<double>(values.size() + 1);
    if (pos < 1) return static_cast<double>(values.front());
    if (pos >= static_cast<double>(values.size())) return static_cast<double>(values.back());
    auto lo = static_cast<std::size_t>(pos);
    double frac = pos - static_cast<double>(lo);
    return static_cast<double>(values[lo - 1]) + frac * static_cast<double>(values[lo] - values[lo - 1]);
  };
  return json{{"min", values.front()},
              {"max", values.back()},
              {"avg", total / static_cast<std::int64_t>(values.size())},
              {"p50", pct(0.5)},
              {"p90", pct(0.9)},
              {"p95", pct(0.95)},
              {"p99", pct(0.99)},
              {"p999", pct(0.999)}};
}

}  // namespace

// Every job has statistics, as every Flink streaming job has a checkpoint coordinator:
// without periodic checkpoints they list its savepoints.
json checkpoint_statistics(const DispatchedJob& job) {
  auto history = job.handle.checkpoint_history();
  std::reverse(history.begin(), history.end());  // newest first
  std::int64_t completed = 0, failed = 0;
  std::vector<std::int64_t> sizes, durations, zeros;
  json latest_completed = nullptr, latest_savepoint = nullptr, latest_failed = nullptr;
  json entries = json::array();
  for (const auto& s : history) {
    json e = checkpoint_entry(job, s, false);
    if (s.status == CheckpointStats::Status::kCompleted) {
      ++completed;
      sizes.push_back(s.size_bytes);
      durations.push_back(s.duration_ms);
      zeros.push_back(0);
      if (e["is_savepoint"].get<bool>()) {
        if (latest_savepoint.is_null()) latest_savepoint = e;
      } else if (latest_completed.is_null()) {
        latest_completed = e;
      }
    } else {
      ++failed;
      if (latest_failed.is_null()) latest_failed = e;
    }
    entries.push_back(std::move(e));
  }
  json restored = nullptr;
  if (job.options.restore) {
    const auto& path = job.options.restore->path;
    std::int64_t id = 0;
    bool savepoint = true;
    try {
      auto meta = CheckpointMetadata::read(path);
      id = meta.checkpoint_id;
      savepoint = meta.is_savepoint;
    } catch (const std::exception&) {
    }
    restored = {{"id", id}, {"restore_timestamp", job.start_time_ms}, {"is_savepoint", savepoint},
                {"external_path", path.string()}};
  }
  return json{{"counts",
               {{"restored", job.options.restore ? 1 : 0},
                {"total", completed + failed},
                {"in_progress", 0},
                {"completed", completed},
                {"failed", failed}}},
              {"summary",
               {{"checkpointed_size", summary(sizes)},
                {"state_size", summary(sizes)},
                {"end_to_end_duration", summary(durations)},
                {"alignment_buffered", summary(zeros)},
                {"processed_data", summary(zeros)},
                {"persisted_data", summary(zeros)}}},
              {"latest",
               {{"completed", latest_completed},
                {"savepoint", latest_savepoint},
                {"failed", latest_failed},
                {"restored", restored}}},
              {"history", entries}};
}

json checkpoint_details(const DispatchedJob& job, std::int64_t checkpoint_id) {
  for (const auto& s : job.handle.checkpoint_history())
    if (s.id == checkpoint_id) return checkpoint_entry(job, s, true);
  throw NotFoundError(fmt::format("Could not find checkpointing statistics for checkpoint {} of job {}", checkpoint_id,
                                  job.id));
}

json checkpoint_subtask_details(const DispatchedJob& job, std::int64_t checkpoint_id, const JobVertex& v) {
  auto history = job.handle.checkpoint_history();
  auto s = std::find_if(history.begin(), history.end(), [&](const CheckpointStats& c) { return c.id == checkpoint_id; });
  if (s == history.end())
    throw NotFoundError(fmt::format("Could not find checkpointing statistics for checkpoint {} of job {}", checkpoint_id,
                                    job.id));
  const bool done = s->status == CheckpointStats::Status::kCompleted;
  const std::int64_t ack = completed_at(job, *s);
  json task = task_statistics(job, *s, ack)[v.id];
  auto sizes = done ? checkpoint_state_sizes(s->path) : std::make_shared<const StateSizes>();
  std::vector<std::int64_t> checkpointed, full, durations, alignments, syncs, asyncs, zeros;
  json subtasks = json::array();
  for (int i = 0; i < v.parallelism; ++i) {
    if (!done) {
      subtasks.push_back({{"index", i}, {"status", "pending_or_failed"}});
      continue;
    }
    SubtaskStateSize size;  // the subtask's operators' state
    for (const auto& op : v.operators)
      if (auto it = sizes->find({job.graph.node(op).uid, i}); it != sizes->end()) {
        size.state_size += it->second.state_size;
        size.checkpointed_size += it->second.checkpointed_size;
      }
    // The subtask's acknowledgement (ms after the trigger) and alignment: from the first
    // barrier its inputs delivered to the last (0 with one input, and for sources).
    const CheckpointTaskStats acked = task_ack(*s, v.operators.front(), i);
    const std::int64_t alignment_ms = acked.alignment_ns / 1'000'000;
    checkpointed.push_back(size.checkpointed_size);
    full.push_back(size.state_size);
    durations.push_back(acked.ack_ms);
    alignments.push_back(alignment_ms);
    syncs.push_back(acked.sync_ms);
    asyncs.push_back(acked.async_ms);
    zeros.push_back(0);
    // Not measured per subtask: the bytes processed during alignment (aligned
    // checkpoints buffer and persist nothing), start delay.
    subtasks.push_back({{"index", i},
                        {"status", "completed"},
                        {"ack_timestamp", ack - s->duration_ms + acked.ack_ms},
                        {"end_to_end_duration", acked.ack_ms},
                        {"state_size", size.state_size},
                        {"checkpointed_size", size.checkpointed_size},
                        // The task stopped for the first, and wrote its state meanwhile in the second (ms).
                        {"checkpoint", {{"sync", acked.sync_ms}, {"async", acked.async_ms}}},
                        {"alignment", {{"buffered", 0}, {"processed", 0}, {"persisted", 0}, {"duration", alignment_ms}}},
                        {"start_delay", 0},
                        {"unaligned_checkpoint", false},
                        {"aborted", false}});
  }
  task["summary"] = {{"checkpointed_size", summary(checkpointed)},
                     {"state_size", summary(full)},
                     {"end_to_end_duration", summary(durations)},
                     {"checkpoint_duration", {{"sync", summary(syncs)}, {"async", summary(asyncs)}}},
                     {"alignment",
                      {{"buffered", summary(zeros)}, {"processed", summary(zeros)}, {"persisted", summary(zeros)},
                       {"duration", summary(alignments)}}},
                     {"start_delay", summary(zeros)}};
  task["subtasks"] = std::move(subtasks);
  return task;
}

json checkpoint_config(const DispatchedJob& job) {
  const auto& cp = job.options.checkpoints;
  // Without periodic checkpoints Flink reports the interval as Long.MAX_VALUE.
  std::int64_t interval = cp.enabled() ? cp.interval_ms : std::numeric_limits<std::int64_t>::max();
  return json{{"mode", cp.mode == CheckpointingMode::kExactlyOnce ? "exactly_once" : "at_least_once"},
              {"interval", interval},
              {"timeout", cp.timeout_ms},
              {"min_pause", cp.min_pause_ms},
              {"max_concurrent", 1},
              // clink keeps the retained checkpoints when a job is cancelled.
              {"externalization", {{"enabled", true}, {"delete_on_cancellation", false}}},
              {"state_backend", cp.state_backend.kind == "rocksdb" ? "EmbeddedRocksDBStateBackend" : "HashMapStateBackend"},
              {"checkpoint_storage", "FileSystemCheckpointStorage"},
              {"unaligned_checkpoints", false},
              {"tolerable_failed_checkpoints", 0},
              {"aligned_checkpoint_timeout", 0},
              {"checkpoints_after_tasks_finish", true},
              {"state_changelog_enabled", false},
              {"changelog_periodic_materialization_interval", 600000},
              {"changelog_storage", "memory"}};
}

}  // namespace clink::cluster::rest
