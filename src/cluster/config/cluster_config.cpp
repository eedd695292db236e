#include "clink/cluster/config/cluster_config.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

#include <yaml-cpp/yaml.h>

#include "clink/cluster/config/flink_values.hpp"
#include "clink/core/error.hpp"

namespace clink::cluster {

namespace {

using std::chrono::milliseconds;

// Flink's deprecated and fallback keys for the keys clink reads, in Flink's lookup
// order (the key itself first, then these).
const std::map<std::string, std::vector<std::string>>& fallback_keys() {
  static const std::map<std::string, std::vector<std::string>> kFallbacks = {
      {"rest.address", {"jobmanager.rpc.address"}},
      {"rest.port", {"web.port"}},
      {"rest.bind-address", {"web.address", "jobmanager.web.address"}},
      {"rest.bind-port", {"rest.port", "web.port", "jobmanager.web.port"}},
      {"execution.checkpointing.dir", {"state.checkpoints.dir", "state.backend.fs.checkpointdir"}},
      {"execution.checkpointing.savepoint-dir", {"state.savepoints.dir", "savepoints.state.backend.fs.dir"}},
      {"execution.checkpointing.num-retained", {"state.checkpoints.num-retained"}},
      {"execution.checkpointing.incremental", {"state.backend.incremental"}},
      {"state.backend.type", {"state.backend"}},
      {"restart-strategy.type", {"restart-strategy"}},
      {"execution.state-recovery.path", {"execution.savepoint.path"}},
      {"execution.state-recovery.ignore-unclaimed-state", {"execution.savepoint.ignore-unclaimed-state"}},
      {"high-availability.type", {"high-availability", "recovery.mode"}},
      {"high-availability.zookeeper.quorum", {"recovery.zookeeper.quorum"}},
      {"high-availability.storageDir", {"high-availability.zookeeper.storageDir", "recovery.zookeeper.storageDir"}},
      {"high-availability.cluster-id",
       {"high-availability.zookeeper.path.namespace", "recovery.zookeeper.path.namespace"}},
      {"high-availability.zookeeper.path.root", {"recovery.zookeeper.path.root"}},
      {"high-availability.zookeeper.client.session-timeout", {"recovery.zookeeper.client.session-timeout"}},
      {"high-availability.zookeeper.client.connection-timeout", {"recovery.zookeeper.client.connection-timeout"}},
  };
  return kFallbacks;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trimmed(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// Flink's shipped config.yaml says localhost; clink means the IPv4 loopback (gRPC and
// the REST server would otherwise each pick ::1 or 127.0.0.1).
std::string loopback_if_localhost(std::string address) {
  return lower(address) == "localhost" ? "127.0.0.1" : address;
}

// Nested maps become dotted keys; a sequence keeps its flow form ("[a.jar, b.jar]", as
// Flink's Configuration prints a list); a null is an error, as in Flink.
void flatten(const YAML::Node& node, const std::string& key, const std::string& source,
             std::map<std::string, std::string>& out) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      // A key twice in one map is an error (as Flink's YAML reader says); the same key
      // spelled nested and dotted is not: the later one wins, as in Flink.
      std::set<std::string> names;
      for (const auto& entry : node) {
        if (!entry.first.IsScalar())
          throw ClinkError(source + ": a key under '" + key + "' is not a plain name");
        const std::string name = entry.first.Scalar();
        const std::string full = key.empty() ? name : key + "." + name;
        if (!names.insert(name).second)
          throw ClinkError(source + ":" + std::to_string(entry.first.Mark().line + 1) + ": duplicate key '" + full + "'");
        flatten(entry.second, full, source, out);
      }
      return;
    }
    case YAML::NodeType::Scalar:
      out[key] = node.Scalar();
      return;
    case YAML::NodeType::Sequence: {
      YAML::Emitter flow;
      flow << YAML::Flow << node;
      out[key] = flow.c_str();
      return;
    }
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      throw ClinkError(source + ": " + (key.empty() ? std::string("the document") : key) + " has no value");
  }
}

int to_int(const std::string& key, const std::string& value, std::int64_t v) {
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    throw ClinkError(key + ": '" + value + "' does not fit in a 32-bit integer");
  return static_cast<int>(v);
}

}  // namespace

ClusterConfig ClusterConfig::load(const std::filesystem::path& path) {
  std::filesystem::path file = std::filesystem::is_directory(path) ? path / "config.yaml" : path;
  std::ifstream in(file);
  if (!in) throw ClinkError("configuration " + file.string() + ": cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), file.string());
}

ClusterConfig ClusterConfig::parse(std::string_view yaml, const std::string& source) {
  ClusterConfig config;
  config.source_ = source;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    throw ClinkError(source + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                     ": not valid YAML: " + e.msg);
  }
  if (root.IsNull()) return config;  // an empty file: every default
  if (!root.IsMap()) throw ClinkError(source + ": a configuration is a map of keys to values");
  flatten(root, "", source, config.values_);
  return config;
}

void ClusterConfig::set(const std::string& key, const std::string& value) { values_[key] = value; }

void ClusterConfig::set_dynamic(std::string_view assignment) {
  auto eq = assignment.find('=');
  std::string key = trimmed(std::string(assignment.substr(0, eq)));
  if (eq == std::string_view::npos || key.empty())
    throw ClinkError("-D " + std::string(assignment) + ": expected key=value");
  set(key, trimmed(std::string(assignment.substr(eq + 1))));
}

std::optional<std::string> ClusterConfig::get(const std::string& key) const {
  auto found = lookup(key);
  return found ? std::optional<std::string>(found->second) : std::nullopt;
}

std::optional<std::pair<std::string, std::string>> ClusterConfig::lookup(const std::string& key) const {
  if (auto it = values_.find(key); it != values_.end()) return *it;
  if (auto f = fallback_keys().find(key); f != fallback_keys().end())
    for (const auto& old : f->second)
      if (auto it = values_.find(old); it != values_.end()) return *it;
  return std::nullopt;
}

std::string ClusterConfig::get_string(const std::string& key, const std::string& fallback) const {
  auto v = get(key);
  return v ? *v : fallback;
}

std::int64_t ClusterConfig::get_int(const std::string& key, std::int64_t fallback) const {
  auto found = lookup(key);
  return found ? parse_int(found->first, found->second) : fallback;
}

bool ClusterConfig::get_bool(const std::string& key, bool fallback) const {
  auto found = lookup(key);
  return found ? parse_bool(found->first, found->second) : fallback;
}

double ClusterConfig::get_double(const std::string& key, double fallback) const {
  auto found = lookup(key);
  return found ? parse_double(found->first, found->second) : fallback;
}

std::optional<milliseconds> ClusterConfig::get_duration(const std::string& key) const {
  auto found = lookup(key);
  if (!found) return std::nullopt;
  return parse_duration(found->first, found->second);
}

milliseconds ClusterConfig::get_duration(const std::string& key, milliseconds fallback) const {
  return get_duration(key).value_or(fallback);
}

std::int64_t ClusterConfig::get_memory_size(const std::string& key, std::int64_t fallback) const {
  auto found = lookup(key);
  return found ? parse_memory_size(found->first, found->second) : fallback;
}

int ClusterConfig::get_port(const std::string& key, int fallback) const {
  auto found = lookup(key);
  if (!found) return fallback;
  const auto& [name, value] = *found;
  std::int64_t port = parse_int(name, value);
  if (port < 0 || port > 65535) throw ClinkError(name + ": '" + value + "' is not a port (0 to 65535)");
  return static_cast<int>(port);
}

int ClusterConfig::get_positive_int(const std::string& key, int fallback) const {
  auto found = lookup(key);
  if (!found) return fallback;
  const auto& [name, value] = *found;
  int v = to_int(name, value, parse_int(name, value));
  if (v < 1) throw ClinkError(name + ": '" + value + "' must be at least 1");
  return v;
}

std::string ClusterConfig::rest_address() const {
  return loopback_if_localhost(get_string("rest.address", "127.0.0.1"));
}
int ClusterConfig::rest_port() const { return get_port("rest.port", 8081); }
std::string ClusterConfig::rest_bind_address() const {
  auto v = get("rest.bind-address");
  return v ? loopback_if_localhost(*v) : rest_address();
}
int ClusterConfig::rest_bind_port() const { return get_port("rest.bind-port", 8081); }
std::string ClusterConfig::rpc_address() const {
  auto v = get("jobmanager.rpc.address");
  return v ? loopback_if_localhost(*v) : rest_address();
}
std::string ClusterConfig::rpc_bind_address() const {
  auto v = get("jobmanager.bind-host");
  return v ? loopback_if_localhost(*v) : rpc_address();
}
int ClusterConfig::rpc_port() const { return get_port("jobmanager.rpc.port", 6123); }
int ClusterConfig::task_slots() const { return get_positive_int("taskmanager.numberOfTaskSlots", 1); }
std::string ClusterConfig::taskmanager_host() const {
  return loopback_if_localhost(get_string("taskmanager.host", "127.0.0.1"));
}
int ClusterConfig::data_port() const { return get_port("taskmanager.data.port", 0); }
int ClusterConfig::default_parallelism() const { return get_positive_int("parallelism.default", 1); }

milliseconds ClusterConfig::heartbeat_interval() const {
  auto v = get_duration("heartbeat.interval", std::chrono::seconds(10));
  if (v.count() <= 0) throw ClinkError("heartbeat.interval: '" + *get("heartbeat.interval") + "' must be positive");
  return v;
}

milliseconds ClusterConfig::heartbeat_timeout() const {
  auto v = get_duration("heartbeat.timeout", std::chrono::seconds(50));
  if (v < heartbeat_interval())
    throw ClinkError("heartbeat.timeout (" + std::to_string(v.count()) + " ms) must be at least heartbeat.interval (" +
                     std::to_string(heartbeat_interval().count()) + " ms)");
  return v;
}

HighAvailabilityConfig ClusterConfig::high_availability() const {
  HighAvailabilityConfig ha;
  const std::string type = get_string("high-availability.type", "none");
  ha.type = lower(type);
  if (ha.type != "none" && ha.type != "zookeeper")
    throw ClinkError("high-availability.type: '" + type + "' is not supported (none or zookeeper)");
  ha.zookeeper_quorum = get_string("high-availability.zookeeper.quorum", "");
  ha.storage_dir = get_string("high-availability.storageDir", "");
  ha.cluster_id = get_string("high-availability.cluster-id", ha.cluster_id);
  ha.zookeeper_root = get_string("high-availability.zookeeper.path.root", ha.zookeeper_root);
  ha.session_timeout = get_duration("high-availability.zookeeper.client.session-timeout", ha.session_timeout);
  ha.connection_timeout = get_duration("high-availability.zookeeper.client.connection-timeout", ha.connection_timeout);
  if (ha.enabled() && ha.zookeeper_quorum.empty())
    throw ClinkError("high-availability.type is zookeeper but high-availability.zookeeper.quorum is not set");
  if (ha.enabled() && ha.storage_dir.empty())
    throw ClinkError("high-availability.type is zookeeper but high-availability.storageDir is not set");
  return ha;
}

}  // namespace clink::cluster
