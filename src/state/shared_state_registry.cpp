#include "clink/state/shared_state_registry.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace clink {

namespace fs = std::filesystem;

std::vector<fs::path> shared_state_files(const KeyedStateHandle& handle) {
  std::vector<fs::path> out;
  auto it = handle.description->find("shared");
  if (it == handle.description->end() || !it->is_array()) return out;
  for (const auto& s : *it) out.emplace_back(s.at("path").get<std::string>());
  return out;
}

void SharedStateRegistry::register_checkpoint(std::int64_t checkpoint_id, const std::vector<KeyedStateHandle>& handles) {
  auto& files = by_checkpoint_[checkpoint_id];
  for (const auto& h : handles)
    for (auto& f : shared_state_files(h)) {
      if (std::find(files.begin(), files.end(), f) != files.end()) continue;  // count once per checkpoint
      ++refs_[f];
      files.push_back(std::move(f));
    }
}

std::vector<fs::path> SharedStateRegistry::release_checkpoint(std::int64_t checkpoint_id) {
  std::vector<fs::path> deleted;
  auto it = by_checkpoint_.find(checkpoint_id);
  if (it == by_checkpoint_.end()) return deleted;
  for (const auto& f : it->second) {
    auto r = refs_.find(f);
    if (r == refs_.end()) continue;
    if (--r->second == 0) {
      refs_.erase(r);
      std::error_code ec;
      fs::remove(f, ec);
      deleted.push_back(f);
    }
  }
  by_checkpoint_.erase(it);
  return deleted;
}

std::vector<fs::path> SharedStateRegistry::discard_unregistered(const std::vector<KeyedStateHandle>& handles) {
  std::vector<fs::path> deleted;
  for (const auto& h : handles)
    for (auto& f : shared_state_files(h)) {
      if (refs_.count(f)) continue;
      std::error_code ec;
      if (fs::remove(f, ec)) deleted.push_back(std::move(f));
    }
  return deleted;
}

std::size_t SharedStateRegistry::reference_count(const fs::path& file) const {
  auto it = refs_.find(file);
  return it == refs_.end() ? 0 : it->second;
}

}  // namespace clink
