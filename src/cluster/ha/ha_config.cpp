// The HA services' settings from the cluster's config, and choosing the implementation.
#include <string>

#include "clink/cluster/ha/ha_config.hpp"
#include "clink/cluster/config/cluster_config.hpp"
#include "clink/core/error.hpp"
#include "ha_implementations.hpp"

namespace clink::cluster {

namespace {

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

}  // namespace

HaConfig HaConfig::from(const HighAvailabilityConfig& ha) {
  HaConfig c;
  c.type = ha.enabled() ? HaType::ZooKeeper : HaType::None;
  c.quorum = ha.zookeeper_quorum;
  c.root = znode_path("high-availability.zookeeper.path.root", ha.zookeeper_root);
  c.cluster_id = znode_path("high-availability.cluster-id", ha.cluster_id);
  if (!ha.storage_dir.empty()) {
    std::string dir = ha.storage_dir;
    if (dir.starts_with("file://")) dir = dir.substr(7);
    else if (dir.find("://") != std::string::npos)
      throw ClinkError("high-availability.storageDir: '" + ha.storage_dir +
                       "': only local paths (file:// or /path) are supported");
    c.storage_dir = dir;
  }
  c.session_timeout = ha.session_timeout;
  c.connection_timeout = ha.connection_timeout;
  if (c.session_timeout.count() <= 0)
    throw ClinkError("high-availability.zookeeper.client.session-timeout must be positive");
  if (c.type == HaType::ZooKeeper && c.quorum.empty())
    throw ClinkError("high-availability.type is zookeeper but high-availability.zookeeper.quorum is not set");
  if (c.type == HaType::ZooKeeper && c.storage_dir.empty())
    throw ClinkError("high-availability.type is zookeeper but high-availability.storageDir is not set");
  return c;
}

HaConfig HaConfig::from(const ClusterConfig& config) {
  HaConfig c = from(config.high_availability());
  c.tolerate_suspended_connections =
      config.get_bool("high-availability.zookeeper.client.tolerate-suspended-connections", false);
  return c;
}

std::unique_ptr<HaServices> make_ha_services(const HaConfig& config) {
  if (config.type == HaType::ZooKeeper) return make_zookeeper_ha_services(config);
  return make_standalone_ha_services(config);
}

}  // namespace clink::cluster
