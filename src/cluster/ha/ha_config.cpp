// Reading Flink's high-availability.* keys, and choosing the implementation.
#include <algorithm>
#include <cctype>
#include <optional>

#include "clink/cluster/ha/ha_config.hpp"
#include "clink/core/duration.hpp"
#include "clink/core/error.hpp"
#include "ha_implementations.hpp"

namespace clink {

namespace {

std::optional<std::string> option(const std::map<std::string, std::string>& options, const std::string& key) {
  auto it = options.find(key);
  if (it == options.end()) return std::nullopt;
  return it->second;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// "/clink", "clink", "/clink/" -> "/clink"; Flink's ZooKeeperUtils.generateZookeeperPath
// likewise tolerates a missing or extra slash.
std::string znode_path(const std::string& key, const std::string& value) {
  std::string p = value;
  while (!p.empty() && p.back() == '/') p.pop_back();
  if (p.empty()) throw ClinkError(key + ": '" + value + "' is no ZooKeeper path");
  if (p.front() != '/') p.insert(p.begin(), '/');
  if (p.find("//") != std::string::npos) throw ClinkError(key + ": '" + value + "' has an empty path element");
  return p;
}

std::chrono::milliseconds duration(const std::map<std::string, std::string>& options, const std::string& key,
                                   std::chrono::milliseconds fallback) {
  auto v = option(options, key);
  if (!v) return fallback;
  auto ms = parse_duration_ms(*v);
  if (!ms || *ms <= 0) throw ClinkError(key + ": '" + *v + "' is not a positive duration (e.g. 60000, 60 s)");
  return std::chrono::milliseconds(*ms);
}

}  // namespace

HaConfig HaConfig::from_options(const std::map<std::string, std::string>& options) {
  HaConfig c;
  // high-availability.type; Flink 1.x called it high-availability (and high-availability.mode).
  auto type = option(options, "high-availability.type");
  if (!type) type = option(options, "high-availability");
  if (type) {
    auto t = lower(*type);
    if (t == "none") c.type = HaType::None;
    else if (t == "zookeeper") c.type = HaType::ZooKeeper;
    else
      throw ClinkError("high-availability.type: '" + *type + "' is not supported (NONE or zookeeper)");
  }
  if (auto v = option(options, "high-availability.zookeeper.quorum")) c.quorum = *v;
  if (auto v = option(options, "high-availability.zookeeper.path.root"))
    c.root = znode_path("high-availability.zookeeper.path.root", *v);
  if (auto v = option(options, "high-availability.cluster-id"))
    c.cluster_id = znode_path("high-availability.cluster-id", *v);
  if (auto v = option(options, "high-availability.storageDir")) {
    std::string dir = *v;
    if (dir.starts_with("file://")) dir = dir.substr(7);
    else if (dir.find("://") != std::string::npos)
      throw ClinkError("high-availability.storageDir: '" + *v + "': only local paths (file:// or /path) are supported");
    c.storage_dir = dir;
  }
  c.session_timeout = duration(options, "high-availability.zookeeper.client.session-timeout", c.session_timeout);
  c.connection_timeout = duration(options, "high-availability.zookeeper.client.connection-timeout", c.connection_timeout);
  if (auto v = option(options, "high-availability.zookeeper.client.tolerate-suspended-connections")) {
    auto t = lower(*v);
    if (t != "true" && t != "false")
      throw ClinkError("high-availability.zookeeper.client.tolerate-suspended-connections: '" + *v + "' is not true or false");
    c.tolerate_suspended_connections = t == "true";
  }
  if (c.type == HaType::ZooKeeper) {
    if (c.quorum.empty())
      throw ClinkError("high-availability.zookeeper.quorum must be set when high-availability.type is zookeeper");
    if (c.storage_dir.empty())
      throw ClinkError("high-availability.storageDir must be set when high-availability.type is zookeeper");
  }
  return c;
}

std::unique_ptr<HaServices> make_ha_services(const HaConfig& config) {
  if (config.type == HaType::ZooKeeper) return make_zookeeper_ha_services(config);
  return make_standalone_ha_services(config);
}

}  // namespace clink
