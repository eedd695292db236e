#include "clink/cluster/rest/dispatcher.hpp"

#include <algorithm>
#include <cstdio>
#include <random>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <xxhash.h>

#include "clink/checkpoint/checkpoint_integrity.hpp"
#include "clink/checkpoint/checkpoint_metadata.hpp"
#include "clink/cluster/config/cluster_config.hpp"
#include "clink/core/log.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/job_graph_spec.hpp"

namespace clink::cluster {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string random_hex_id() {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  std::lock_guard lock(mu);
  return fmt::format("{:016x}{:016x}", rng(), rng());
}

std::string vertex_id_for(const JobNode& head) {
  const std::string& key = head.uid.empty() ? head.id : head.uid;
  XXH128_hash_t h = XXH3_128bits(key.data(), key.size());
  return fmt::format("{:016x}{:016x}", h.high64, h.low64);
}

namespace {

// The job vertices: one per chain, as the executor builds its tasks.
std::vector<JobVertex> job_vertices(const JobGraph& graph) {
  std::vector<JobVertex> out;
  for (const auto& task : plan_tasks(graph)) {
    JobVertex v;
    const JobNode& head = graph.node(task.chain.front());
    v.id = vertex_id_for(head);
    v.operators = task.chain;
    v.parallelism = task.parallelism;
    v.max_parallelism = graph.max_parallelism_of(head);
    for (const auto& op : task.chain) {
      if (!v.name.empty()) v.name += " -> ";
      const JobNode& n = graph.node(op);
      v.name += n.name.empty() ? n.id : n.name;
    }
    out.push_back(std::move(v));
  }
  return out;
}

// The coordinator itself as the one task manager: its jobs run in this process. Its
// slots are the machine's cores; a job takes as many as its widest vertex (Flink's
// slot sharing).
class LocalClusterInfo final : public ClusterInfo {
 public:
  explicit LocalClusterInfo(const Dispatcher& d) : dispatcher_(d) {}
  std::vector<TaskManagerInfo> task_managers() const override {
    TaskManagerInfo tm;
    tm.id = "coordinator";
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    tm.path = fmt::format("{}/{}", host, getpid());
    tm.cpu_cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    tm.slots = tm.cpu_cores;
    int used = 0;
    for (const auto& job : dispatcher_.jobs()) {
      if (job->terminal()) continue;
      int widest = 0;
      for (const auto& v : job->vertices) widest = std::max(widest, v.parallelism);
      used += widest;
    }
    tm.free_slots = std::max(0, tm.slots - used);
    tm.last_heartbeat_ms = now_ms();
    long pages = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    tm.physical_memory = static_cast<std::int64_t>(pages) * page;
    tm.free_memory = static_cast<std::int64_t>(avail) * page;
    return {tm};
  }

 private:
  const Dispatcher& dispatcher_;
};

}  // namespace

SubmitOptions parse_submit_options(const nlohmann::json& options, const std::map<std::string, std::string>& defaults) {
  if (!options.is_null() && !options.is_object()) throw BadRequestError("\"options\": expected a JSON object");
  // The coordinator's configuration, then the job's options over it: Flink's keys,
  // values and defaults, read by the same ClusterConfig the coordinator reads.
  ClusterConfig config;
  for (const auto& [k, v] : defaults) config.set(k, v);
  if (options.is_object()) {
    for (const auto& [key, v] : options.items()) {
      if (v.is_object() || v.is_array() || v.is_null())
        throw BadRequestError(fmt::format("option '{}': expected a string, number or boolean, got {}", key, v.dump()));
      config.set(key, v.is_string() ? v.get<std::string>() : v.dump());
    }
  }
  SubmitOptions o;
  o.raw = options.is_object() ? options : nlohmann::json::object();
  try {
    o.execution = execution_options(config);
    // Only the job's own: the coordinator's parallelism.default (1 in Flink's shipped
    // config) must not override what the spec says.
    if (options.is_object() && options.contains("parallelism.default")) o.parallelism = config.default_parallelism();
  } catch (const ClinkError& e) {
    throw BadRequestError(fmt::format("options: {}", e.what()));
  }
  auto& cp = o.execution.checkpoints;
  if (cp.state_backend.working_dir.empty() && !cp.directory.empty()) cp.state_backend.working_dir = cp.directory / "working";
  // A checkpoint directory (with chk-<n> inside) restores from its latest checkpoint.
  if (o.execution.restore && !std::filesystem::exists(o.execution.restore->path / kMetadataFile)) {
    // The newest intact one: a corrupt or incomplete newer checkpoint is passed over.
    std::vector<std::string> passed_over;
    auto latest = latest_intact_checkpoint(o.execution.restore->path, &passed_over);
    for (const auto& why : passed_over) log::warn("{}; passed over", why);
    if (!latest)
      throw BadRequestError(fmt::format("options: execution.state-recovery.path: no intact completed checkpoint or savepoint in {}",
                                        o.execution.restore->path.string()));
    o.execution.restore->path = *latest;
  }
  return o;
}

JobStatus DispatchedJob::status() const {
  JobStatus s = handle.status();
  if (s == JobStatus::kCanceled) {
    std::lock_guard lock(mu_);
    if (stopped_) return JobStatus::kFinished;
  }
  return s;
}

bool DispatchedJob::terminal() const {
  JobStatus s = status();
  return s == JobStatus::kFinished || s == JobStatus::kFailed || s == JobStatus::kCanceled;
}

std::int64_t DispatchedJob::end_time_ms() const {
  bool ended = terminal();
  std::lock_guard lock(mu_);
  if (end_time_ms_ < 0 && ended) end_time_ms_ = now_ms();
  return end_time_ms_;
}

std::vector<JobException> DispatchedJob::exceptions() const {
  std::vector<JobException> out;
  auto causes = handle.restart_causes();
  std::lock_guard lock(mu_);
  auto& times = restart_times_ms_;
  // A restart's time is when it was first seen (the job's watcher looks every 200 ms),
  // never after the job's end.
  while (times.size() < causes.size()) times.push_back(end_time_ms_ > 0 ? std::min(now_ms(), end_time_ms_) : now_ms());
  for (std::size_t i = 0; i < causes.size(); ++i) out.push_back({causes[i], times[i]});
  if (handle.status() == JobStatus::kFailed) out.push_back({handle.error(), end_time_ms_ > 0 ? end_time_ms_ : now_ms()});
  std::reverse(out.begin(), out.end());  // newest first, as Flink's exception history
  return out;
}

std::optional<SavepointOperation> DispatchedJob::operation(const std::string& trigger_id) const {
  std::lock_guard lock(mu_);
  auto it = operations_.find(trigger_id);
  if (it == operations_.end()) return std::nullopt;
  return it->second;
}

const JobVertex* DispatchedJob::vertex(const std::string& vertex_id) const {
  for (const auto& v : vertices)
    if (v.id == vertex_id) return &v;
  return nullptr;
}

Dispatcher::Dispatcher(DispatcherOptions options) : options_(std::move(options)) {
  if (!options_.launcher)
    options_.launcher = [](const std::string&, const JobGraph& g, ExecutionOptions o) { return execute_async(g, std::move(o)); };
  if (!options_.cluster) options_.cluster = std::make_shared<LocalClusterInfo>(*this);
}

Dispatcher::~Dispatcher() { shutdown(); }

std::string Dispatcher::submit(const nlohmann::json& spec_in, const SubmitOptions& options, const std::string& job_id,
                               JobTexts texts) {
  if (!spec_in.is_object()) throw BadRequestError("\"spec\": expected a JobGraphSpec (a JSON object)");
  nlohmann::json spec = spec_in;
  if (options.parallelism > 0) spec["config"]["parallelism"] = options.parallelism;
  JobGraph graph;
  try {
    graph = from_spec(spec, options_.registry ? *options_.registry : builtin_registry());
  } catch (const ClinkError& e) {
    throw BadRequestError(fmt::format("job spec: {}", e.what()));
  }
  // Each job checkpoints into <execution.checkpointing.dir>/<job id>, as Flink's.
  std::string id = job_id.empty() ? random_hex_id() : job_id;
  ExecutionOptions execution = options.execution;
  if (!execution.checkpoints.directory.empty()) execution.checkpoints.directory /= id;
  texts.spec = spec.dump();
  return launch(std::move(graph), execution, std::move(texts), id, options.raw);
}

std::string Dispatcher::launch(JobGraph graph, const ExecutionOptions& execution, JobTexts texts,
                               const std::string& job_id, const nlohmann::json& raw_options) {
  std::vector<JobVertex> vertices = job_vertices(graph);
  std::string id = job_id.empty() ? random_hex_id() : job_id;
  std::int64_t start = now_ms();
  {
    std::lock_guard lock(mu_);
    if (shut_down_) throw ClinkError("the coordinator is shutting down");
  }
  // Launched outside the lock: a cluster launcher deploys to workers, and the REST
  // API keeps answering meanwhile.
  // The job's threads log as this job (JobRun takes the launching thread's context).
  log::ScopedContext in_job({id});
  log::debug("submitted job '{}'", graph.name);
  JobHandle handle = options_.launcher(id, graph, execution);
  std::lock_guard lock(mu_);
  if (shut_down_) {
    handle.cancel();
    throw ClinkError("the coordinator is shutting down");
  }
  auto job = std::make_shared<DispatchedJob>(std::move(graph), std::move(handle));
  job->id = id;
  job->name = job->graph.name;
  job->spec = std::move(texts.spec);
  job->sql = std::move(texts.sql);
  job->plan = std::move(texts.plan);
  job->vertices = std::move(vertices);
  job->options = execution;
  job->start_time_ms = start;
  jobs_.push_back(job);
  // Records when the job restarted and ended (the handle knows that it did, not when).
  if (options_.on_submitted) options_.on_submitted(*job, raw_options);
  spawn([job, on_ended = options_.on_ended] {
    while (!job->handle.wait_for(std::chrono::milliseconds(200))) job->exceptions();  // records restarts' times
    job->end_time_ms();  // records it
    if (on_ended) on_ended(*job);
  });
  return id;
}

std::vector<std::shared_ptr<DispatchedJob>> Dispatcher::jobs() const {
  std::lock_guard lock(mu_);
  return {jobs_.rbegin(), jobs_.rend()};
}

std::shared_ptr<DispatchedJob> Dispatcher::job(const std::string& id) const {
  std::lock_guard lock(mu_);
  for (const auto& j : jobs_)
    if (j->id == id) return j;
  throw NotFoundError(fmt::format("Job {} not found", id));
}

void Dispatcher::cancel(const std::string& id) { job(id)->handle.cancel(); }

std::string Dispatcher::trigger_savepoint(const std::string& id, const std::string& target_dir, bool cancel_job) {
  return start_operation(job(id), target_dir, cancel_job, false);
}

std::string Dispatcher::trigger_stop(const std::string& id, const std::string& target_dir, bool drain) {
  return start_operation(job(id), target_dir, true, true, drain);
}

std::string Dispatcher::start_operation(const std::shared_ptr<DispatchedJob>& job, const std::string& target_dir,
                                        bool stop, bool finished, bool drain) {
  // Refused at once rather than failed later: Flink's client cannot read a failure
  // cause that is not a serialized Java exception, and would wait for its timeout.
  if (job->terminal())
    throw BadRequestError(fmt::format("job {} is {}: a savepoint needs a running job", job->id,
                                      job_status_name(job->status())));
  std::string dir = target_dir.empty() ? options_.default_savepoint_dir : target_dir;
  if (dir.empty())
    throw BadRequestError(fmt::format(
        "job {}: no savepoint directory given and none configured (execution.checkpointing.savepoint-dir)", job->id));
  std::filesystem::path base;
  try {
    base = storage_path(dir);
  } catch (const ClinkError& e) {
    throw BadRequestError(fmt::format("job {}: savepoint directory: {}", job->id, e.what()));
  }
  std::filesystem::path path = base / fmt::format("savepoint-{}-{}", job->id.substr(0, 6), random_hex_id().substr(0, 12));
  std::string trigger = random_hex_id();
  {
    std::lock_guard jl(job->mu_);
    job->operations_[trigger] = SavepointOperation{};
  }
  std::lock_guard lock(mu_);
  if (shut_down_) throw ClinkError("the coordinator is shutting down");
  spawn([job, trigger, path, stop, finished, drain] {
    SavepointOperation result;
    try {
      std::error_code ec;
      std::filesystem::create_directories(path.parent_path(), ec);
      if (finished) {
        // Marked first: the job reads as FINISHED from the moment its cancel lands.
        std::lock_guard jl(job->mu_);
        job->stopped_ = true;
      }
      std::filesystem::path written;
      try {
        written = stop ? job->handle.stop_with_savepoint(path, std::chrono::seconds(60), drain)
                       : job->handle.savepoint(path);
      } catch (...) {
        std::lock_guard jl(job->mu_);
        job->stopped_ = false;
        throw;
      }
      result.status = SavepointOperation::Status::kCompleted;
      result.location = written.string();
    } catch (const std::exception& e) {
      result.status = SavepointOperation::Status::kFailed;
      result.failure = fmt::format("savepoint of job {} into {}: {}", job->id, path.parent_path().string(), e.what());
    }
    std::lock_guard jl(job->mu_);
    job->operations_[trigger] = result;
  });
  return trigger;
}

void Dispatcher::spawn(std::function<void()> fn) {
  for (auto it = threads_.begin(); it != threads_.end();) {
    if (it->done->load()) {
      it->thread.join();
      it = threads_.erase(it);
    } else {
      ++it;
    }
  }
  auto done = std::make_shared<std::atomic<bool>>(false);
  threads_.push_back(Worker{std::thread([fn = std::move(fn), done] {
                              fn();
                              done->store(true);
                            }),
                            done});
}

void Dispatcher::shutdown() {
  std::vector<Worker> threads;
  {
    std::lock_guard lock(mu_);
    shut_down_ = true;
    for (const auto& j : jobs_) j->handle.cancel();
    threads.swap(threads_);
  }
  for (auto& t : threads)
    if (t.thread.joinable()) t.thread.join();
}

std::vector<TaskManagerInfo> Dispatcher::task_managers() const { return options_.cluster->task_managers(); }

std::vector<SubtaskLocation> ClusterInfo::subtask_locations(const std::string&) const { return {}; }

SubtaskLocation Dispatcher::subtask_location(const DispatchedJob& job, int subtask) const {
  auto placed = options_.cluster->subtask_locations(job.id);
  if (subtask >= 0 && static_cast<std::size_t>(subtask) < placed.size() && !placed[subtask].tm_id.empty())
    return placed[subtask];
  auto tms = task_managers();
  if (tms.size() != 1) return {"cluster", "", -1};
  const std::string& path = tms.front().path;  // host:port, or host/pid for this process
  return {tms.front().id, path.substr(0, path.find_first_of(":/")), tms.front().data_port};
}

std::map<std::string, std::string> Dispatcher::configuration() const {
  std::lock_guard lock(mu_);
  return options_.configuration;
}

void Dispatcher::set_configuration(const std::string& key, const std::string& value) {
  std::lock_guard lock(mu_);
  options_.configuration[key] = value;
}

}  // namespace clink::cluster
