#include "clink/cluster/rest/dispatcher.hpp"

#include <algorithm>
#include <random>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <xxhash.h>

#include "clink/checkpoint/checkpoint_metadata.hpp"
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

std::string option_string(const std::string& key, const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() || v.is_boolean()) return v.dump();
  throw BadRequestError(fmt::format("option '{}': expected a string, got {}", key, v.dump()));
}

std::int64_t option_int(const std::string& key, const nlohmann::json& v) {
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    std::size_t used = 0;
    try {
      std::int64_t n = std::stoll(s, &used);
      if (used == s.size()) return n;
    } catch (const std::exception&) {
    }
  }
  throw BadRequestError(fmt::format("option '{}': expected an integer, got {}", key, v.dump()));
}

bool option_bool(const std::string& key, const nlohmann::json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_string() && (v == "true" || v == "false")) return v == "true";
  throw BadRequestError(fmt::format("option '{}': expected true or false, got {}", key, v.dump()));
}

}  // namespace

std::int64_t parse_duration_ms(const std::string& key, const nlohmann::json& value) {
  if (value.is_number_integer()) return value.get<std::int64_t>();
  if (!value.is_string()) throw BadRequestError(fmt::format("option '{}': expected a duration, got {}", key, value.dump()));
  const std::string s = value.get<std::string>();
  std::size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0) throw BadRequestError(fmt::format("option '{}': '{}' is not a duration (e.g. 10 s, 500 ms)", key, s));
  std::int64_t n = std::stoll(s.substr(0, i));
  std::string unit = s.substr(i);
  unit.erase(std::remove(unit.begin(), unit.end(), ' '), unit.end());
  static const std::pair<const char*, std::int64_t> kUnits[] = {
      {"", 1},         {"ms", 1},     {"milli", 1},   {"millis", 1},   {"millisecond", 1}, {"milliseconds", 1},
      {"s", 1000},     {"sec", 1000}, {"secs", 1000}, {"second", 1000}, {"seconds", 1000},
      {"min", 60'000}, {"m", 60'000}, {"mins", 60'000}, {"minute", 60'000}, {"minutes", 60'000},
      {"h", 3'600'000}, {"hour", 3'600'000}, {"hours", 3'600'000}, {"d", 86'400'000}, {"day", 86'400'000},
      {"days", 86'400'000}};
  for (const auto& [name, factor] : kUnits)
    if (unit == name) return n * factor;
  throw BadRequestError(fmt::format("option '{}': unknown time unit in '{}'", key, s));
}

SubmitOptions parse_submit_options(const nlohmann::json& options) {
  SubmitOptions o;
  if (options.is_null()) return o;
  if (!options.is_object()) throw BadRequestError("\"options\": expected a JSON object");
  auto& cp = o.execution.checkpoints;
  std::string restart = "none";
  int attempts = -1;
  std::int64_t delay_ms = -1, max_delay_ms = 60'000;
  for (const auto& [key, v] : options.items()) {
    if (key == "parallelism.default") {
      auto p = option_int(key, v);
      if (p < 1 || p > (1 << 15)) throw BadRequestError(fmt::format("option '{}': {} is out of range 1..32768", key, p));
      o.parallelism = static_cast<int>(p);
    } else if (key == "execution.checkpointing.dir") {
      try {
        cp.directory = storage_path(option_string(key, v));
      } catch (const ClinkError& e) {
        throw BadRequestError(fmt::format("option '{}': {}", key, e.what()));
      }
      cp.state_backend.working_dir = cp.directory / "working";
    } else if (key == "execution.checkpointing.interval") {
      cp.interval_ms = parse_duration_ms(key, v);
    } else if (key == "execution.checkpointing.num-retained") {
      cp.retained = static_cast<int>(option_int(key, v));
      if (cp.retained < 1) throw BadRequestError(fmt::format("option '{}': must be at least 1", key));
    } else if (key == "execution.checkpointing.mode") {
      std::string m = option_string(key, v);
      if (m == "EXACTLY_ONCE") cp.mode = CheckpointingMode::kExactlyOnce;
      else if (m == "AT_LEAST_ONCE") cp.mode = CheckpointingMode::kAtLeastOnce;
      else throw BadRequestError(fmt::format("option '{}': '{}' is not EXACTLY_ONCE or AT_LEAST_ONCE", key, m));
    } else if (key == "state.backend.type") {
      std::string b = option_string(key, v);
      if (b == "hashmap" || b == "memory") cp.state_backend.kind = "memory";
      else if (b == "rocksdb") cp.state_backend.kind = "rocksdb";
      else throw BadRequestError(fmt::format("option '{}': '{}' is not hashmap or rocksdb", key, b));
    } else if (key == "execution.state-recovery.path") {
      std::string from = option_string(key, v);
      std::filesystem::path p;
      try {
        p = storage_path(from);
      } catch (const ClinkError& e) {
        throw BadRequestError(fmt::format("option '{}': {}", key, e.what()));
      }
      // A checkpoint directory (with chk-<n> inside) restores from its latest checkpoint.
      if (!std::filesystem::exists(p / kMetadataFile)) {
        auto latest = latest_checkpoint(p);
        if (!latest) throw BadRequestError(fmt::format("option '{}': no completed checkpoint or savepoint in {}", key, from));
        p = *latest;
      }
      bool allow = o.execution.restore ? o.execution.restore->allow_non_restored_state : false;
      o.execution.restore = RestoreSettings{p, allow};
    } else if (key == "execution.state-recovery.ignore-unclaimed-state") {
      bool allow = option_bool(key, v);
      if (!o.execution.restore) o.execution.restore = RestoreSettings{};
      o.execution.restore->allow_non_restored_state = allow;
    } else if (key == "restart-strategy.type") {
      restart = option_string(key, v);
      if (restart == "fixeddelay" || restart == "fixed-delay") restart = "fixed-delay";
      else if (restart == "exponentialdelay" || restart == "exponential-delay") restart = "exponential-delay";
      else if (restart == "none" || restart == "off" || restart == "disable") restart = "none";
      else throw BadRequestError(fmt::format("option '{}': '{}' is not none, fixed-delay or exponential-delay", key, restart));
    } else if (key == "restart-strategy.fixed-delay.attempts" ||
               key == "restart-strategy.exponential-delay.attempts-before-reset-backoff") {
      attempts = static_cast<int>(option_int(key, v));
    } else if (key == "restart-strategy.fixed-delay.delay" || key == "restart-strategy.exponential-delay.initial-backoff") {
      delay_ms = parse_duration_ms(key, v);
    } else if (key == "restart-strategy.exponential-delay.max-backoff") {
      max_delay_ms = parse_duration_ms(key, v);
    } else {
      throw BadRequestError(fmt::format("option '{}' is not known (see POST /api/v1/jobs/spec)", key));
    }
  }
  if (cp.interval_ms > 0 && cp.directory.empty())
    throw BadRequestError("option 'execution.checkpointing.interval' needs 'execution.checkpointing.dir'");
  if (o.execution.restore && o.execution.restore->path.empty())
    throw BadRequestError("option 'execution.state-recovery.ignore-unclaimed-state' needs 'execution.state-recovery.path'");
  if (restart == "fixed-delay")
    o.execution.restart = RestartStrategy::fixed_delay(attempts < 0 ? 1 : attempts, delay_ms < 0 ? 1000 : delay_ms);
  else if (restart == "exponential-delay")
    o.execution.restart = RestartStrategy::exponential_backoff(attempts < 0 ? 3 : attempts, delay_ms < 0 ? 1000 : delay_ms,
                                                               max_delay_ms);
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
  if (!options_.launcher) options_.launcher = [](const JobGraph& g, ExecutionOptions o) { return execute_async(g, std::move(o)); };
  if (!options_.cluster) options_.cluster = std::make_shared<LocalClusterInfo>(*this);
}

Dispatcher::~Dispatcher() { shutdown(); }

std::string Dispatcher::submit(const nlohmann::json& spec_in, const SubmitOptions& options) {
  if (!spec_in.is_object()) throw BadRequestError("\"spec\": expected a JobGraphSpec (a JSON object)");
  nlohmann::json spec = spec_in;
  if (options.parallelism > 0) spec["config"]["parallelism"] = options.parallelism;
  JobGraph graph;
  std::vector<JobVertex> vertices;
  try {
    graph = from_spec(spec, builtin_registry());
    vertices = job_vertices(graph);
  } catch (const ClinkError& e) {
    throw BadRequestError(fmt::format("job spec: {}", e.what()));
  }
  std::string id = random_hex_id();
  std::int64_t start = now_ms();
  {
    std::lock_guard lock(mu_);
    if (shut_down_) throw ClinkError("the coordinator is shutting down");
  }
  // Launched outside the lock: a cluster launcher deploys to workers, and the REST
  // API keeps answering meanwhile.
  JobHandle handle = options_.launcher(graph, options.execution);
  std::lock_guard lock(mu_);
  if (shut_down_) {
    handle.cancel();
    throw ClinkError("the coordinator is shutting down");
  }
  auto job = std::make_shared<DispatchedJob>(std::move(graph), std::move(handle));
  job->id = id;
  job->name = job->graph.name;
  job->spec = spec.dump();
  job->vertices = std::move(vertices);
  job->options = options.execution;
  job->start_time_ms = start;
  jobs_.push_back(job);
  // Records when the job restarted and ended (the handle knows that it did, not when).
  spawn([job] {
    while (!job->handle.wait_for(std::chrono::milliseconds(200))) job->exceptions();  // records restarts' times
    job->end_time_ms();  // records it
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
  auto j = job(id);
  // clink's stop does not advance event time to the end first; refusing says so
  // rather than stopping differently than asked.
  if (drain) throw BadRequestError(fmt::format("job {}: stop with drain is not supported (stop without --drain)", id));
  return start_operation(j, target_dir, true, true);
}

std::string Dispatcher::start_operation(const std::shared_ptr<DispatchedJob>& job, const std::string& target_dir,
                                        bool stop, bool finished) {
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
  spawn([job, trigger, path, stop, finished] {
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
        written = stop ? job->handle.stop_with_savepoint(path) : job->handle.savepoint(path);
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

std::map<std::string, std::string> Dispatcher::configuration() const {
  std::lock_guard lock(mu_);
  return options_.configuration;
}

void Dispatcher::set_configuration(const std::string& key, const std::string& value) {
  std::lock_guard lock(mu_);
  options_.configuration[key] = value;
}

}  // namespace clink::cluster
