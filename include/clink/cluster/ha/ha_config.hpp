#pragma once
// The high-availability settings the HA services run with, from the cluster's config
// (ClusterConfig reads Flink's high-availability.* keys with Flink's defaults and
// deprecated fallback keys):
//
//   high-availability.type                               NONE (default) | zookeeper
//   high-availability.zookeeper.quorum                   host:port[,host:port...] (required for zookeeper)
//   high-availability.zookeeper.path.root                default /clink (Flink: /flink; see below)
//   high-availability.cluster-id                         default /default
//   high-availability.storageDir                         file:///dir or /dir (required for zookeeper)
//   high-availability.zookeeper.client.session-timeout   default 60 s (Flink's)
//   high-availability.zookeeper.client.connection-timeout default 15 s (Flink's)
//   high-availability.zookeeper.client.tolerate-suspended-connections  default false (Flink's)
//
// The root differs from Flink's /flink on purpose: what clink keeps under it is not what a
// Flink JobManager can read (Flink stores Java-serialized state handles), so a clink and a
// Flink cluster sharing one ZooKeeper with the default cluster id must not meet there.
#include <chrono>
#include <cstddef>
#include <string>

namespace clink::cluster {

class ClusterConfig;
struct HighAvailabilityConfig;

enum class HaType { None, ZooKeeper };

struct HaConfig {
  HaType type = HaType::None;
  std::string quorum;
  std::string root = "/clink";       // normalized: starts with '/', no trailing '/'
  std::string cluster_id = "/default";  // likewise
  std::string storage_dir;           // a local path (file:// stripped); empty: none
  std::chrono::milliseconds session_timeout{60000};
  std::chrono::milliseconds connection_timeout{15000};
  // Flink revokes leadership when the connection is lost (SUSPENDED), not only when the
  // session expires; true keeps it until the session really expires.
  bool tolerate_suspended_connections = false;
  // Blobs larger than this go to a file under storage_dir; ZooKeeper keeps only its path.
  std::size_t max_inline_bytes = 512;
  // NONE only: the leader address a retriever reports when no election runs in this
  // process (Flink's non-HA mode reads jobmanager.rpc.address the same way).
  std::string standalone_leader_address;

  // The cluster's znode: root + cluster id, e.g. "/clink/default".
  std::string cluster_path() const { return root + cluster_id; }

  // From the cluster's config: ClusterConfig::high_availability() plus
  // tolerate-suspended-connections. Throws ClinkError naming the key when a value is
  // invalid or a required one is missing.
  static HaConfig from(const ClusterConfig& config);
  static HaConfig from(const HighAvailabilityConfig& ha);
};

}  // namespace clink::cluster
