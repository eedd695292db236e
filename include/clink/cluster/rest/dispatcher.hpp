#pragma once
// The job table of a coordinator (Flink's Dispatcher): submitted jobs by their 32-hex
// id, each with its spec, graph, job vertices (one per chain), times, handle, the
// savepoint and stop-with-savepoint operations triggered on it, and its exceptions.
// The REST server (rest_server.hpp) reads and drives it; how a job runs is the
// `launcher` given in DispatcherOptions (in-process by default: a session cluster whose
// jobs run inside the coordinator; the cluster runtime swaps in one running on workers).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>  // SubmitOptions keeps its raw options

#include "clink/core/error.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/runtime/job_graph.hpp"
#include "clink/runtime/operator_registry.hpp"

namespace clink::cluster {

// An unknown job id or trigger id: REST answers 404.
class NotFoundError : public ClinkError {
 public:
  using ClinkError::ClinkError;
};
// A bad request (body, parameter, option): REST answers 400.
class BadRequestError : public ClinkError {
 public:
  using ClinkError::ClinkError;
};

// How one submitted job runs: the "options" of POST /api/v1/jobs/spec, Flink's
// configuration keys (a Flink user's settings carry over), read over the coordinator's
// own configuration by ClusterConfig (docs/cluster.md lists the keys). The ones a job
// sets most: parallelism.default, execution.checkpointing.dir / .interval /
// .num-retained / .mode, state.backend.type, execution.state-recovery.path (a
// savepoint, a chk-<n>, or a checkpoint directory: its newest) and
// .ignore-unclaimed-state, restart-strategy.*.
struct SubmitOptions {
  int parallelism = 0;  // 0: the spec's
  ExecutionOptions execution;
  nlohmann::json raw;  // the options as given (kept with the job for a new leader to read again)
};
// Parses the "options" object over `defaults` (the coordinator's configuration);
// throws BadRequestError naming the key.
SubmitOptions parse_submit_options(const nlohmann::json& options,
                                   const std::map<std::string, std::string>& defaults = {});

// One savepoint or stop-with-savepoint operation, by its trigger id.
struct SavepointOperation {
  enum class Status { kInProgress, kCompleted, kFailed };
  Status status = Status::kInProgress;
  std::string location;  // completed: the savepoint's directory
  std::string failure;   // failed: why
};

// A job vertex: one chain of operators (Flink's JobVertex), with its 32-hex id derived
// from the head operator's uid, so it is stable across submissions of the same job.
struct JobVertex {
  std::string id;
  std::string name;                     // "a -> b -> c", the chain's operator names
  std::vector<std::string> operators;   // operator ids, head first
  int parallelism = 1;
  int max_parallelism = 1;
};

// A failure of the job: a restart's cause or the final error.
struct JobException {
  std::string message;
  std::int64_t timestamp_ms = 0;
};

// What a job was made from, for the REST API and the web UI: the JobGraphSpec (JSON
// text) and, for a SQL job, its statement and optimised plan (EXPLAIN's text).
struct JobTexts {
  std::string spec;
  std::string sql;
  std::string plan;
};

// One submitted job. Immutable fields are set at submission; the rest is read through
// the handle or under the job's own lock.
class DispatchedJob {
 public:
  std::string id;     // 32 hex
  std::string name;
  std::string spec;   // the JobGraphSpec as submitted (JSON text), with options applied
  std::string sql;    // a SQL job's statement (empty otherwise)
  std::string plan;   // a SQL job's optimised plan
  JobGraph graph;
  std::vector<JobVertex> vertices;
  ExecutionOptions options;
  std::int64_t start_time_ms = 0;
  JobHandle handle;

  DispatchedJob(JobGraph g, JobHandle h) : graph(std::move(g)), handle(std::move(h)) {}
  JobStatus status() const;
  // -1 while running; the first time it was seen ended after that.
  std::int64_t end_time_ms() const;
  bool terminal() const;
  std::vector<JobException> exceptions() const;
  std::optional<SavepointOperation> operation(const std::string& trigger_id) const;
  const JobVertex* vertex(const std::string& vertex_id) const;

 private:
  friend class Dispatcher;
  mutable std::mutex mu_;
  mutable std::int64_t end_time_ms_ = -1;  // set when the end is first seen
  bool stopped_ = false;  // ended by a stop with savepoint: FINISHED, as in Flink
  std::map<std::string, SavepointOperation> operations_;
  mutable std::vector<std::int64_t> restart_times_ms_;  // when each restart cause was first seen
};

// A worker's slots, for /overview and /taskmanagers.
struct TaskManagerInfo {
  std::string id;
  std::string path;     // its address
  int data_port = -1;
  int slots = 0;
  int free_slots = 0;
  std::int64_t last_heartbeat_ms = 0;
  int cpu_cores = 0;
  std::int64_t physical_memory = 0;
  std::int64_t free_memory = 0;
};

// The task manager running one subtask (Flink's subtask "taskmanager-id" and
// "endpoint", the Prometheus label tm_id).
struct SubtaskLocation {
  std::string tm_id;
  std::string host;
  int data_port = -1;
};

// What the cluster has. The cluster runtime implements it from its registered workers.
class ClusterInfo {
 public:
  virtual ~ClusterInfo() = default;
  virtual std::vector<TaskManagerInfo> task_managers() const = 0;
  // Where each subtask index of the job runs, by subtask index; empty when unknown (not
  // placed yet). Default: every subtask on the one task manager there is.
  virtual std::vector<SubtaskLocation> subtask_locations(const std::string& job_id) const;
};

// Starts a job; `job_id` is its 32-hex id (ClusterRuntime::launch names the job with it
// on the control plane).
using JobLauncher = std::function<JobHandle(const std::string& job_id, const JobGraph&, ExecutionOptions)>;

struct DispatcherOptions {
  JobLauncher launcher;                  // default: execute_async (jobs in this process)
  // What submitted specs are built with (default: builtin_registry(); the coordinator's
  // adds the SQL gateway's collect sink).
  const OperatorRegistry* registry = nullptr;
  // Called once a job was launched, with the options it was submitted with (a highly
  // available coordinator stores the job here), and when it ended (and removes it).
  std::function<void(const DispatchedJob&, const nlohmann::json& options)> on_submitted;
  std::function<void(const DispatchedJob&)> on_ended;
  std::shared_ptr<ClusterInfo> cluster;  // default: this process as one task manager
  // Where a savepoint goes when a request names no directory
  // (execution.checkpointing.savepoint-dir); empty: such a request fails.
  std::string default_savepoint_dir;
  // The coordinator's configuration as /jobmanager/config lists it (key -> value).
  std::map<std::string, std::string> configuration;
};

class Dispatcher {
 public:
  explicit Dispatcher(DispatcherOptions options = {});
  ~Dispatcher();  // cancels the jobs still running and waits for them
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // Builds the spec's graph with the registry (the built-in one) and launches it; returns the
  // job id. Throws BadRequestError when the spec or options are bad.
  // `job_id`: the id a recovered job had (empty: a new random one); `texts`: a SQL job's
  // statement and plan (its spec is the one given).
  std::string submit(const nlohmann::json& spec, const SubmitOptions& options, const std::string& job_id = {},
                     JobTexts texts = {});
  // Launches a graph built elsewhere (`clink run` builds its jobs with the CLI's
  // registry) with the launcher, as given (no per-job checkpoint subdirectory), and
  // registers it; returns the job id.
  std::string launch(JobGraph graph, const ExecutionOptions& execution, JobTexts texts,
                     const std::string& job_id = {}, const nlohmann::json& raw_options = nlohmann::json::object());
  // Newest first, as Flink lists them.
  std::vector<std::shared_ptr<DispatchedJob>> jobs() const;
  // Throws NotFoundError naming the id.
  std::shared_ptr<DispatchedJob> job(const std::string& id) const;

  void cancel(const std::string& id);
  // Start a savepoint (cancel_job: then cancel) or a stop-with-savepoint in `target_dir`
  // (empty: the default savepoint dir); return the trigger id. The savepoint goes to a
  // new directory savepoint-<first 6 of the job id>-<12 hex> inside it, as Flink's.
  std::string trigger_savepoint(const std::string& id, const std::string& target_dir, bool cancel_job);
  std::string trigger_stop(const std::string& id, const std::string& target_dir, bool drain);

  // Cancels every running job and waits for them (the coordinator shutting down).
  void shutdown();

  std::vector<TaskManagerInfo> task_managers() const;
  // Where subtask `subtask` of the job runs (the task manager's id and host); with
  // no placement known, the only task manager, or tm_id "cluster" when there are several.
  SubtaskLocation subtask_location(const DispatchedJob& job, int subtask) const;
  // The configuration /jobmanager/config lists; set adds or replaces one key.
  std::map<std::string, std::string> configuration() const;
  void set_configuration(const std::string& key, const std::string& value);

 private:
  // stop: cancel the job after the savepoint; finished: then report it FINISHED (a stop)
  // rather than CANCELED (a savepoint with cancel-job).
  // drain: sources emit MAX_WATERMARK before the savepoint (stop --drain).
  std::string start_operation(const std::shared_ptr<DispatchedJob>& job, const std::string& target_dir, bool stop,
                              bool finished, bool drain = false);

  DispatcherOptions options_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<DispatchedJob>> jobs_;  // submission order
  // Starts `fn` on a thread of its own (a job's watcher, a savepoint operation); joins
  // those that ended first, so a long-lived coordinator keeps no dead threads. Call
  // with mu_ held.
  void spawn(std::function<void()> fn);
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<Worker> threads_;
  bool shut_down_ = false;
};

// 32 random lowercase hex digits (Flink's JobID / TriggerId format).
std::string random_hex_id();
// The vertex id of a chain: 32 hex digits hashed from its head operator's uid (its id
// when it has none).
std::string vertex_id_for(const JobNode& head);
// Milliseconds since the epoch.
std::int64_t now_ms();

}  // namespace clink::cluster
