#include "clink/checkpoint/checkpoint_metadata.hpp"

#include "clink/core/durable_file.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <xxhash.h>

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
  json j = {{"version", 1},         {"checkpoint_id", checkpoint_id}, {"timestamp_ms", timestamp_ms},
            {"is_savepoint", is_savepoint}, {"job_name", job_name},          {"operators", ops}};
  if (!files.empty()) {
    json f = json::object();
    for (const auto& [name, d] : files) f[name] = {{"size", d.size}, {"xxh64", fmt::format("{:016x}", d.xxh64)}};
    j["files"] = std::move(f);
  }
  return j;
}

namespace {

// The metadata's checksum: xxh64 of its compact JSON without the "checksum" field (a
// parse and dump of the same JSON gives the same bytes: keys are sorted).
std::string checksum_of(const json& j) {
  const std::string text = j.dump();
  return fmt::format("{:016x}", XXH64(text.data(), text.size(), 0));
}

std::uint64_t parse_hex64(const std::string& s) {
  if (s.size() != 16 || s.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw ClinkError("not an xxh64: '" + s + "'");
  return std::stoull(s, nullptr, 16);
}

}  // namespace

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
  if (j.contains("files"))
    for (const auto& [name, d] : j.at("files").items())
      m.files[name] = {d.at("size").get<std::uint64_t>(), parse_hex64(d.at("xxh64").get<std::string>())};
  return m;
}

void CheckpointMetadata::write(const std::filesystem::path& dir) const {
  // Atomic and durable: once `_metadata` exists the checkpoint is complete, also after a
  // power loss.
  json j = to_json();
  j["checksum"] = checksum_of(j);
  write_file_durably(dir / kMetadataFile, j.dump(1));
}

CheckpointMetadata CheckpointMetadata::read(const std::filesystem::path& dir) {
  std::ifstream f(dir / kMetadataFile);
  if (!f)
    throw CorruptCheckpointError("no checkpoint metadata in " + dir.string() +
                                 " (not a completed checkpoint or savepoint)");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  const std::string where = (dir / kMetadataFile).string();
  if (text.empty())
    throw CorruptCheckpointError("checkpoint " + dir.string() + " is incomplete: " + where + " is empty");
  try {
    json j = json::parse(text);
    if (j.is_object() && j.contains("checksum")) {
      const std::string recorded = j.at("checksum").get<std::string>();
      j.erase("checksum");
      const std::string actual = checksum_of(j);
      if (actual != recorded)
        throw CorruptCheckpointError("checkpoint " + dir.string() + " is corrupt: " + where +
                                     " fails its checksum (xxh64 " + actual + ", recorded " + recorded + ")");
    }
    return from_json(j);
  } catch (const json::exception& e) {
    throw CorruptCheckpointError("checkpoint " + dir.string() + " is corrupt: " + where + " is not valid metadata (" +
                                 e.what() + ")");
  } catch (const CorruptCheckpointError&) {
    throw;
  } catch (const ClinkError& e) {
    throw CorruptCheckpointError("checkpoint " + dir.string() + " is corrupt: " + where + ": " + e.what());
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
