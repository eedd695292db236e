#include "clink/checkpoint/checkpoint_metadata.hpp"

#include "clink/core/durable_file.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "clink/checkpoint/checkpoint_config.hpp"
#include "clink/core/error.hpp"

namespace clink {

using nlohmann::json;

std::filesystem::path storage_path(const std::string& location) {
  constexpr std::string_view kFile = "file://";
  if (location.rfind(kFile, 0) == 0) return std::filesystem::path(location.substr(kFile.size()));
  auto scheme = location.find("://");
  if (scheme != std::string::npos)
    throw ClinkError("checkpoint storage '" + location + "': only directories and file:// are supported");
  return std::filesystem::path(location);
}

json to_json(const OperatorSubtaskState& s) {
  json keyed = json::array();
  for (const auto& h : s.keyed)
    keyed.push_back({{"key_groups", {h.key_groups.first, h.key_groups.last}}, {"handle", *h.description}});
  json j = {{"subtask", s.subtask}, {"keyed", keyed}};
  if (!s.timers_file.empty()) j["timers"] = s.timers_file;
  if (!s.operator_state_file.empty()) j["operator_state"] = s.operator_state_file;
  if (s.finished) j["finished"] = true;
  return j;
}

OperatorSubtaskState subtask_state_from_json(const json& j) {
  OperatorSubtaskState s;
  s.subtask = j.at("subtask").get<int>();
  for (const auto& k : j.at("keyed")) {
    KeyedStateHandle h;
    h.key_groups = {k.at("key_groups").at(0).get<int>(), k.at("key_groups").at(1).get<int>()};
    h.description = k.at("handle");
    s.keyed.push_back(std::move(h));
  }
  s.timers_file = j.value("timers", "");
  s.operator_state_file = j.value("operator_state", "");
  s.finished = j.value("finished", false);
  return s;
}

bool OperatorCheckpointState::fully_finished() const {
  return !subtasks.empty() && static_cast<int>(subtasks.size()) == parallelism &&
         std::all_of(subtasks.begin(), subtasks.end(), [](const OperatorSubtaskState& s) { return s.finished; });
}

json CheckpointMetadata::to_json() const {
  json ops = json::object();
  for (const auto& [uid, op] : operators) {
    json subtasks = json::array();
    for (const auto& s : op.subtasks) subtasks.push_back(clink::to_json(s));
    ops[uid] = {{"parallelism", op.parallelism}, {"max_parallelism", op.max_parallelism}, {"subtasks", subtasks}};
  }
  return {{"version", 1},         {"checkpoint_id", checkpoint_id}, {"timestamp_ms", timestamp_ms},
          {"is_savepoint", is_savepoint}, {"job_name", job_name},          {"operators", ops}};
}

CheckpointMetadata CheckpointMetadata::from_json(const json& j) {
  CheckpointMetadata m;
  if (j.value("version", 0) != 1) throw ClinkError("unsupported checkpoint metadata version");
  m.checkpoint_id = j.at("checkpoint_id").get<std::int64_t>();
  m.timestamp_ms = j.at("timestamp_ms").get<std::int64_t>();
  m.is_savepoint = j.value("is_savepoint", false);
  m.job_name = j.value("job_name", "");
  for (const auto& [uid, op] : j.at("operators").items()) {
    OperatorCheckpointState s;
    s.parallelism = op.at("parallelism").get<int>();
    s.max_parallelism = op.at("max_parallelism").get<int>();
    for (const auto& st : op.at("subtasks")) s.subtasks.push_back(subtask_state_from_json(st));
    m.operators[uid] = std::move(s);
  }
  return m;
}

void CheckpointMetadata::write(const std::filesystem::path& dir) const {
  // Atomic and durable: once `_metadata` exists the checkpoint is complete, also after a
  // power loss.
  write_file_durably(dir / kMetadataFile, to_json().dump(1));
}

CheckpointMetadata CheckpointMetadata::read(const std::filesystem::path& dir) {
  std::ifstream f(dir / kMetadataFile);
  if (!f) throw ClinkError("no checkpoint metadata in " + dir.string() + " (not a completed checkpoint or savepoint)");
  std::stringstream ss;
  ss << f.rdbuf();
  try {
    return from_json(json::parse(ss.str()));
  } catch (const json::exception& e) {
    throw ClinkError("corrupt checkpoint metadata in " + dir.string() + ": " + e.what());
  }
}

std::optional<std::int64_t> checkpoint_id_of(std::string_view name) {
  if (!name.starts_with("chk-") || name.size() == 4 || name.size() > 4 + 18) return std::nullopt;
  std::int64_t id = 0;
  for (char c : name.substr(4)) {
    if (c < '0' || c > '9') return std::nullopt;
    id = id * 10 + (c - '0');
  }
  return id;
}

std::optional<std::filesystem::path> latest_checkpoint(const std::filesystem::path& directory) {
  std::optional<std::filesystem::path> best;
  std::int64_t best_id = -1;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(directory, ec)) {
    auto name = entry.path().filename().string();
    auto id = checkpoint_id_of(name);
    // A symlinked chk-<n> is not one clink wrote: it is not followed.
    if (!id || entry.is_symlink() || !std::filesystem::exists(entry.path() / kMetadataFile)) continue;
    if (*id > best_id) {
      best_id = *id;
      best = entry.path();
    }
  }
  return best;
}

}  // namespace clink
