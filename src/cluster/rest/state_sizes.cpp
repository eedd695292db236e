#include "state_sizes.hpp"

#include <deque>
#include <filesystem>
#include <mutex>

#include <nlohmann/json.hpp>

#include "clink/checkpoint/checkpoint_metadata.hpp"

namespace clink::cluster {

namespace fs = std::filesystem;

namespace {

// The recorded size of `file` (absolute) in the checkpoint `dir`: metadata names files
// inside it relative to it, shared files absolutely. 0 when not recorded.
std::int64_t recorded_size(const CheckpointMetadata& meta, const fs::path& dir, const fs::path& file) {
  const fs::path normal = file.lexically_normal();
  auto it = meta.files.find(normal.lexically_relative(dir).generic_string());
  if (it == meta.files.end()) it = meta.files.find(normal.string());
  return it == meta.files.end() ? 0 : static_cast<std::int64_t>(it->second.size);
}

SubtaskStateSize size_of(const CheckpointMetadata& meta, const fs::path& dir, const OperatorSubtaskState& st) {
  SubtaskStateSize out;
  auto own = [&](const fs::path& file) {
    std::int64_t n = recorded_size(meta, dir, file);
    out.state_size += n;
    out.checkpointed_size += n;
  };
  for (const auto& h : st.keyed) {
    const nlohmann::json& d = *h.description;
    const fs::path base = d.value("dir", dir.string());
    if (d.contains("file")) own(base / d.at("file").get<std::string>());  // a full snapshot
    if (d.contains("files"))                                              // RocksDB's private files
      for (const auto& f : d.at("files")) own(base / f.get<std::string>());
    if (d.contains("shared"))  // incremental RocksDB: SSTs under shared/, kept across checkpoints
      for (const auto& s : d.at("shared")) {
        std::int64_t n = recorded_size(meta, dir, fs::absolute(s.at("path").get<std::string>()));
        out.state_size += n;
        if (s.value("new", true)) out.checkpointed_size += n;
      }
  }
  if (!st.timers_file.empty()) own(dir / st.timers_file);
  if (!st.operator_state_file.empty()) own(dir / st.operator_state_file);
  return out;
}

}  // namespace

std::shared_ptr<const StateSizes> checkpoint_state_sizes(const std::string& checkpoint_dir) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const StateSizes>> cache;
  static std::deque<std::string> order;  // oldest first: a long-running job's old ones go
  {
    std::lock_guard lock(mu);
    if (auto it = cache.find(checkpoint_dir); it != cache.end()) return it->second;
  }
  auto sizes = std::make_shared<StateSizes>();
  const fs::path dir = fs::absolute(checkpoint_dir).lexically_normal();
  try {
    CheckpointMetadata meta = CheckpointMetadata::read(dir);
    for (const auto& [uid, op] : meta.operators)
      for (const auto& st : op.subtasks) (*sizes)[{uid, st.subtask}] = size_of(meta, dir, st);
  } catch (const std::exception&) {
    return sizes;  // not cached: a checkpoint being completed may be readable on the next ask
  }
  std::lock_guard lock(mu);
  auto [it, added] = cache.emplace(checkpoint_dir, std::move(sizes));
  if (added) order.push_back(checkpoint_dir);
  constexpr std::size_t kKept = 1024;
  while (order.size() > kKept) {
    cache.erase(order.front());
    order.pop_front();
  }
  return it->second;
}

}  // namespace clink::cluster
