// The job-facing part of ClusterConfig: checkpointing, state backend, restart strategy
// and the savepoint to start from, with Flink's keys and defaults.
#include <cctype>
#include <limits>

#include "clink/checkpoint/restart_tracker.hpp"
#include "clink/cluster/config/cluster_config.hpp"
#include "clink/core/error.hpp"

namespace clink::cluster {

namespace {

using std::chrono::milliseconds;

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A directory or file:// location; other schemes are an error naming the key.
std::filesystem::path location(const std::string& key, const std::string& value) {
  try {
    return storage_path(value);
  } catch (const ClinkError& e) {
    throw ClinkError(key + ": " + e.what());
  }
}

int int_setting(const ClusterConfig& config, const std::string& key, int fallback) {
  const std::int64_t v = config.get_int(key, fallback);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    throw ClinkError(key + ": '" + *config.get(key) + "' does not fit in a 32-bit integer");
  return static_cast<int>(v);
}

}  // namespace

std::optional<std::filesystem::path> ClusterConfig::savepoint_dir() const {
  auto v = get("execution.checkpointing.savepoint-dir");
  if (!v) return std::nullopt;
  return location("execution.checkpointing.savepoint-dir", *v);
}

CheckpointConfig ClusterConfig::checkpoint_config() const {
  CheckpointConfig c;
  c.interval_ms = get_duration("execution.checkpointing.interval", milliseconds(0)).count();
  c.timeout_ms = get_duration("execution.checkpointing.timeout", std::chrono::minutes(10)).count();
  if (c.timeout_ms <= 0)
    throw ClinkError("execution.checkpointing.timeout: '" + *get("execution.checkpointing.timeout") +
                     "' must be positive");
  c.min_pause_ms = get_duration("execution.checkpointing.min-pause", milliseconds(0)).count();
  c.retained = int_setting(*this, "execution.checkpointing.num-retained", 1);
  if (c.retained < 1)
    throw ClinkError("execution.checkpointing.num-retained: '" + *get("execution.checkpointing.num-retained") +
                     "' must be at least 1");
  if (auto dir = get("execution.checkpointing.dir")) c.directory = location("execution.checkpointing.dir", *dir);
  if (c.interval_ms > 0 && c.directory.empty())
    throw ClinkError("execution.checkpointing.interval is set (" + *get("execution.checkpointing.interval") +
                     ") but execution.checkpointing.dir is not: a cluster's checkpoints go to a directory "
                     "every coordinator and worker can reach");

  const std::string mode = get_string("execution.checkpointing.mode", "EXACTLY_ONCE");
  if (lower(mode) == "exactly_once") c.mode = CheckpointingMode::kExactlyOnce;
  else if (lower(mode) == "at_least_once") c.mode = CheckpointingMode::kAtLeastOnce;
  else throw ClinkError("execution.checkpointing.mode: '" + mode + "' is not EXACTLY_ONCE or AT_LEAST_ONCE");

  // Flink's hashmap backend keeps state on the heap, as clink's memory backend does.
  const std::string backend = get_string("state.backend.type", "hashmap");
  if (lower(backend) == "hashmap") c.state_backend.kind = "memory";
  else if (lower(backend) == "rocksdb") c.state_backend.kind = "rocksdb";
  else throw ClinkError("state.backend.type: '" + backend + "' is not supported (hashmap or rocksdb)");
  if (auto dir = get("state.backend.rocksdb.localdir")) c.state_backend.working_dir = *dir;
  c.state_backend.incremental = get_bool("execution.checkpointing.incremental", false);
  return c;
}

RestartStrategy ClusterConfig::restart_strategy(bool checkpointing_enabled) const {
  const auto type = get("restart-strategy.type");
  const std::string name = type ? lower(*type) : (checkpointing_enabled ? "exponential-delay" : "none");
  RestartStrategy s;
  if (name == "none" || name == "off" || name == "disable") {
    s = RestartStrategy::none();
  } else if (name == "fixed-delay" || name == "fixeddelay") {
    const std::string p = "restart-strategy.fixed-delay.";
    s = RestartStrategy::fixed_delay(int_setting(*this, p + "attempts", 1),
                                     get_duration(p + "delay", std::chrono::seconds(1)).count());
  } else if (name == "failure-rate" || name == "failurerate") {
    const std::string p = "restart-strategy.failure-rate.";
    s = RestartStrategy::failure_rate(int_setting(*this, p + "max-failures-per-interval", 1),
                                      get_duration(p + "failure-rate-interval", std::chrono::minutes(1)).count(),
                                      get_duration(p + "delay", std::chrono::seconds(1)).count());
  } else if (name == "exponential-delay" || name == "exponentialdelay") {
    // Flink 2.x defaults; attempts-before-reset-backoff defaults to "infinite".
    const std::string p = "restart-strategy.exponential-delay.";
    s = RestartStrategy::exponential_delay(
        get_duration(p + "initial-backoff", std::chrono::seconds(1)).count(),
        get_duration(p + "max-backoff", std::chrono::minutes(1)).count(), get_double(p + "backoff-multiplier", 1.5),
        get_duration(p + "reset-backoff-threshold", std::chrono::hours(1)).count(),
        get_double(p + "jitter-factor", 0.1),
        int_setting(*this, p + "attempts-before-reset-backoff", RestartStrategy::kUnlimitedAttempts));
  } else {
    throw ClinkError("restart-strategy.type: '" + *type +
                     "' is not a restart strategy (none|off|disable, fixed-delay|fixeddelay, "
                     "failure-rate|failurerate, exponential-delay|exponentialdelay)");
  }
  validate(s);  // names the key of a setting out of range
  return s;
}

std::optional<RestoreSettings> ClusterConfig::restore_settings() const {
  auto path = get("execution.state-recovery.path");
  if (!path) return std::nullopt;
  RestoreSettings r;
  r.path = location("execution.state-recovery.path", *path);
  r.allow_non_restored_state = get_bool("execution.state-recovery.ignore-unclaimed-state", false);
  const std::string mode = get_string("execution.state-recovery.claim-mode", "NO_CLAIM");
  if (mode != "CLAIM" && mode != "NO_CLAIM")
    throw ClinkError("execution.state-recovery.claim-mode: '" + mode + "' is not CLAIM or NO_CLAIM");
  r.claim = mode == "CLAIM";
  return r;
}

ExecutionOptions execution_options(const ClusterConfig& config) {
  ExecutionOptions options;
  options.checkpoints = config.checkpoint_config();
  options.restart = config.restart_strategy(options.checkpoints.enabled());
  options.restore = config.restore_settings();
  const std::string failover = config.get_string("jobmanager.execution.failover-strategy", "region");
  if (lower(failover) == "region") options.failover = FailoverStrategy::kRegion;
  else if (lower(failover) == "full") options.failover = FailoverStrategy::kFull;
  else throw ClinkError("jobmanager.execution.failover-strategy: '" + failover + "' is not region or full");
  return options;
}

}  // namespace clink::cluster
