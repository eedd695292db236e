#pragma once
// The storage under the HA stores: a tree of small nodes addressed by relative paths
// ("execution-plans/<id>"), with versions and atomic, fenced multi-node writes. ZooKeeper's
// znodes in HA mode; memory or a directory of files in standalone mode. The stores
// (ha_stores.cpp) are written once against this.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clink/core/error.hpp"

namespace clink::cluster {

struct HaNode {
  std::string data;
  std::int32_t version = 0;  // bumped by every set
};

struct HaOp {
  enum class Kind { Create, Set, Delete };
  Kind kind;
  std::string path;
  std::string data;
  std::int32_t version = -1;  // Set / Delete: the expected version, -1 any
};

// A Set or Delete whose expected version did not match (another write came first).
class HaVersionConflict : public ClinkError {
 public:
  using ClinkError::ClinkError;
};

class HaStateBackend {
 public:
  virtual ~HaStateBackend() = default;
  virtual std::optional<HaNode> get(const std::string& path) = 0;
  // Child names, sorted; empty when the node does not exist.
  virtual std::vector<std::string> children(const std::string& path) = 0;
  // Applies `ops` atomically, only while this process leads (NotLeaderError otherwise).
  // Creates missing parent nodes of Create ops first. A Create of an existing node, a Set
  // or Delete of a missing one throws ClinkError naming the path; a version mismatch
  // throws HaVersionConflict.
  virtual void commit(const std::vector<HaOp>& ops) = 0;
  // Throws NotLeaderError unless this process believes it leads: writes call it before
  // they read anything, so a process that lost its connection fails fast, not after a
  // read timed out. (commit still checks on ZooKeeper's side.)
  virtual void require_leader() = 0;
  // Deletes `path` and everything below it, unfenced (cleanup of a finished cluster).
  virtual void remove_tree(const std::string& path) = 0;
  // Where the store is, for messages ("zookeeper 127.0.0.1:2181 /clink/default").
  virtual std::string describe() const = 0;
};

// Large blobs as files under storageDir/<cluster id>/<kind>/; the node keeps the path.
// Node data is a tagged value: "I" + the blob inline, or "F" + the file's path.
class BlobFiles {
 public:
  // `dir` empty: every blob stays inline.
  BlobFiles(std::filesystem::path dir, std::size_t max_inline_bytes);
  // The node data for `blob`: inline, or a new file under kind/ named after `key`.
  std::string store(std::string_view kind, std::string_view key, std::string_view blob);
  // The blob a node data stands for; throws ClinkError when its file is missing.
  std::string load(std::string_view node_data) const;
  // Deletes the file a node data points to, if any (after it was replaced or removed).
  void discard(std::string_view node_data) const;
  void remove_all() const;

 private:
  std::filesystem::path dir_;
  std::size_t max_inline_bytes_;
};

// A name as one path element: bytes outside [A-Za-z0-9._-] as %XX (so '/' and '%' cannot
// escape the node), and back.
std::string encode_node_name(std::string_view name);
std::string decode_node_name(std::string_view encoded);

// Backends.
std::shared_ptr<HaStateBackend> make_memory_ha_backend(std::function<bool()> is_leader);
std::shared_ptr<HaStateBackend> make_directory_ha_backend(std::filesystem::path dir,
                                                          std::function<bool()> is_leader);

}  // namespace clink::cluster
