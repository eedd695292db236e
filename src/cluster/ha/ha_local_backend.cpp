// The standalone (high-availability.type: NONE) HA state: a tree of nodes in memory,
// optionally saved whole to one file after every commit (small: large blobs live in their
// own files through BlobFiles), so a restarted coordinator finds its jobs again.
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "clink/cluster/ha/ha_services.hpp"
#include "clink/core/durable_file.hpp"
#include "ha_state_backend.hpp"

namespace clink::cluster {

namespace {

using Tree = std::map<std::string, HaNode>;

std::string parent_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

bool has_children(const Tree& tree, const std::string& path) {
  auto it = tree.lower_bound(path + "/");
  return it != tree.end() && it->first.starts_with(path + "/");
}

class LocalHaBackend final : public HaStateBackend {
 public:
  LocalHaBackend(std::filesystem::path file, std::function<bool()> is_leader)
      : file_(std::move(file)), is_leader_(std::move(is_leader)) {
    if (!file_.empty()) load();
  }

  std::optional<HaNode> get(const std::string& path) override {
    std::lock_guard lock(mutex_);
    auto it = tree_.find(path);
    if (it == tree_.end()) return std::nullopt;
    return it->second;
  }

  std::vector<std::string> children(const std::string& path) override {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    std::string prefix = path + "/";
    for (auto it = tree_.lower_bound(prefix); it != tree_.end() && it->first.starts_with(prefix); ++it) {
      auto rest = it->first.substr(prefix.size());
      if (rest.find('/') == std::string::npos) out.push_back(rest);
    }
    return out;
  }

  void require_leader() override {
    if (!is_leader_()) throw NotLeaderError("HA store (" + describe() + "): this coordinator is not the leader");
  }

  void commit(const std::vector<HaOp>& ops) override {
    require_leader();
    std::lock_guard lock(mutex_);
    Tree next = tree_;
    for (auto& op : ops) apply(next, op);
    if (!file_.empty()) save(next);
    tree_ = std::move(next);
  }

  void remove_tree(const std::string& path) override {
    std::lock_guard lock(mutex_);
    for (auto it = tree_.lower_bound(path); it != tree_.end() && (it->first == path || it->first.starts_with(path + "/"));)
      it = tree_.erase(it);
    if (!file_.empty()) save(tree_);
  }

  std::string describe() const override { return file_.empty() ? "standalone, in memory" : "standalone, " + file_.string(); }

 private:
  void apply(Tree& tree, const HaOp& op) {
    auto it = tree.find(op.path);
    switch (op.kind) {
      case HaOp::Kind::Create: {
        if (it != tree.end()) throw ClinkError("HA store (" + describe() + "): " + op.path + " already exists");
        for (auto p = parent_of(op.path); !p.empty(); p = parent_of(p)) tree.try_emplace(p);
        tree.emplace(op.path, HaNode{op.data, 0});
        break;
      }
      case HaOp::Kind::Set:
        if (it == tree.end()) throw ClinkError("HA store (" + describe() + "): " + op.path + " does not exist");
        if (op.version != -1 && op.version != it->second.version)
          throw HaVersionConflict("HA store (" + describe() + "): " + op.path + " changed concurrently");
        it->second.data = op.data;
        ++it->second.version;
        break;
      case HaOp::Kind::Delete:
        if (it == tree.end()) throw ClinkError("HA store (" + describe() + "): " + op.path + " does not exist");
        if (op.version != -1 && op.version != it->second.version)
          throw HaVersionConflict("HA store (" + describe() + "): " + op.path + " changed concurrently");
        if (has_children(tree, op.path))
          throw ClinkError("HA store (" + describe() + "): " + op.path + " has children");
        tree.erase(it);
        break;
    }
  }

  // Format: per node "<path length> <version> <data length>\n<path><data>".
  void save(const Tree& tree) {
    std::ostringstream out;
    for (auto& [path, node] : tree) {
      out << path.size() << ' ' << node.version << ' ' << node.data.size() << '\n' << path << node.data;
    }
    write_file_durably(file_, out.str());
  }

  void load() {
    std::ifstream in(file_, std::ios::binary);
    if (!in) return;  // a fresh directory
    std::size_t path_len = 0, data_len = 0;
    std::int32_t version = 0;
    while (in >> path_len >> version >> data_len) {
      in.get();  // '\n'
      std::string path(path_len, '\0'), data(data_len, '\0');
      in.read(path.data(), static_cast<std::streamsize>(path_len));
      in.read(data.data(), static_cast<std::streamsize>(data_len));
      if (!in) throw ClinkError("HA store: " + file_.string() + " is truncated");
      tree_[path] = HaNode{std::move(data), version};
    }
  }

  std::filesystem::path file_;
  std::function<bool()> is_leader_;
  std::mutex mutex_;
  Tree tree_;
};

}  // namespace

std::shared_ptr<HaStateBackend> make_memory_ha_backend(std::function<bool()> is_leader) {
  return std::make_shared<LocalHaBackend>(std::filesystem::path(), std::move(is_leader));
}

std::shared_ptr<HaStateBackend> make_directory_ha_backend(std::filesystem::path dir, std::function<bool()> is_leader) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw ClinkError("high-availability.storageDir: cannot create " + dir.string() + ": " + ec.message());
  return std::make_shared<LocalHaBackend>(dir / "ha-state", std::move(is_leader));
}

}  // namespace clink::cluster
