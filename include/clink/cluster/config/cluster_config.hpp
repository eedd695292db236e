#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clink/checkpoint/checkpoint_config.hpp"
#include "clink/runtime/executor.hpp"

namespace clink::cluster {

// ZooKeeper high availability as Flink configures it (high-availability.*). Read here,
// used by the HA service.
struct HighAvailabilityConfig {
  std::string type = "none";     // high-availability.type: none | zookeeper
  std::string zookeeper_quorum;  // high-availability.zookeeper.quorum: "host:2181,host2:2181"
  std::string storage_dir;       // high-availability.storageDir: job graphs, checkpoint pointers' payloads
  std::string cluster_id = "/default";   // high-availability.cluster-id
  // high-availability.zookeeper.path.root: /clink, not Flink's /flink: clink's znodes
  // are not what a Flink JobManager reads, so the two must not meet in one ZooKeeper.
  std::string zookeeper_root = "/clink";
  std::chrono::milliseconds session_timeout{60'000};     // high-availability.zookeeper.client.session-timeout
  std::chrono::milliseconds connection_timeout{15'000};  // high-availability.zookeeper.client.connection-timeout
  bool enabled() const { return type == "zookeeper"; }
};

// A Flink configuration (config.yaml plus -D overrides) as a flat key -> value map, with
// typed getters in Flink's value syntax and the keys the cluster reads, with Flink's
// defaults and deprecated fallback keys. Nested maps and dotted keys are the same key
// (`rest: {port: 8081}` is `rest.port: 8081`). Unknown keys are kept and ignored (a
// Flink config has many clink has no use for); a key clink reads with a bad value is
// an error naming the key, the value and where it came from.
class ClusterConfig {
 public:
  ClusterConfig() = default;

  // Reads a Flink 2.x config.yaml (standard YAML). A directory means its config.yaml,
  // as Flink's --configDir.
  static ClusterConfig load(const std::filesystem::path& file);
  // Parses YAML text; `source` names it in errors.
  static ClusterConfig parse(std::string_view yaml, const std::string& source = "config.yaml");

  // An override (`-D key=value`, a command-line flag): wins over the file.
  void set(const std::string& key, const std::string& value);
  // "key=value", as after -D; an error naming the text when there is no '='.
  void set_dynamic(std::string_view assignment);

  bool contains(const std::string& key) const { return values_.count(key) != 0; }
  // The value of `key`, else of its first deprecated fallback key that is set.
  std::optional<std::string> get(const std::string& key) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  std::int64_t get_int(const std::string& key, std::int64_t fallback) const;
  bool get_bool(const std::string& key, bool fallback) const;
  double get_double(const std::string& key, double fallback) const;
  std::chrono::milliseconds get_duration(const std::string& key, std::chrono::milliseconds fallback) const;
  std::optional<std::chrono::milliseconds> get_duration(const std::string& key) const;
  std::int64_t get_memory_size(const std::string& key, std::int64_t fallback) const;

  const std::map<std::string, std::string>& entries() const { return values_; }
  // Where the values came from ("config.yaml", a path), for error messages.
  const std::string& source() const { return source_; }

  // The keys the cluster reads (Flink's defaults in brackets).
  std::string rest_address() const;       // rest.address, else jobmanager.rpc.address [127.0.0.1]
  int rest_port() const;                  // rest.port [8081]
  std::string rest_bind_address() const;  // rest.bind-address [rest_address()]
  int rest_bind_port() const;             // rest.bind-port, else rest.port [8081]
  std::string rpc_address() const;        // jobmanager.rpc.address [rest_address()]
  // jobmanager.bind-host [rpc_address()]: where the control plane listens when the
  // advertised address is not this host's own (a Kubernetes Service name: 0.0.0.0).
  std::string rpc_bind_address() const;
  int rpc_port() const;                   // jobmanager.rpc.port [6123]
  int task_slots() const;                 // taskmanager.numberOfTaskSlots [1]
  std::string taskmanager_host() const;   // taskmanager.host [127.0.0.1] (Flink: detected)
  int data_port() const;                  // taskmanager.data.port [0: any free port]
  int default_parallelism() const;        // parallelism.default [1]
  std::chrono::milliseconds heartbeat_interval() const;  // heartbeat.interval [10 s]
  std::chrono::milliseconds heartbeat_timeout() const;   // heartbeat.timeout [50 s]
  HighAvailabilityConfig high_availability() const;      // high-availability.*
  // execution.checkpointing.savepoint-dir (state.savepoints.dir): the default target of
  // stop-with-savepoint and savepoint triggers without a directory.
  std::optional<std::filesystem::path> savepoint_dir() const;
  // execution.checkpointing.* and state.backend.*.
  CheckpointConfig checkpoint_config() const;
  // restart-strategy.*; without restart-strategy.type: none, or Flink's exponential-delay
  // defaults when checkpointing is on.
  RestartStrategy restart_strategy(bool checkpointing_enabled) const;
  // execution.state-recovery.path (execution.savepoint.path) and
  // execution.state-recovery.ignore-unclaimed-state.
  std::optional<RestoreSettings> restore_settings() const;

 private:
  // The (key, value) that answers `key`: the key itself, else a deprecated fallback.
  std::optional<std::pair<std::string, std::string>> lookup(const std::string& key) const;
  int get_port(const std::string& key, int fallback) const;
  int get_positive_int(const std::string& key, int fallback) const;

  std::map<std::string, std::string> values_;
  std::string source_ = "configuration";
};

// The embedded runtime's options for a job on this cluster: checkpointing, the restart
// strategy and the savepoint to start from, all from the configuration.
ExecutionOptions execution_options(const ClusterConfig& config);

}  // namespace clink::cluster
