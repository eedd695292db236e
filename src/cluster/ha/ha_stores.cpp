// The HA stores (job graphs, checkpoint pointers, catalog) over an HaStateBackend, the
// leader retriever's shared half, and BlobFiles: what both implementations share.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "clink/cluster/ha/ha_services.hpp"
#include "clink/core/durable_file.hpp"
#include "ha_state_backend.hpp"

namespace clink::cluster {

// ---- LeaderRetriever

std::optional<LeaderInfo> LeaderRetriever::current() const {
  std::lock_guard lock(mutex_);
  return current_;
}

int LeaderRetriever::subscribe(Listener listener) {
  std::optional<LeaderInfo> now;
  int id;
  {
    std::lock_guard lock(mutex_);
    id = next_id_++;
    listeners_.emplace(id, listener);
    now = current_;
  }
  listener(now);
  return id;
}

void LeaderRetriever::unsubscribe(int id) {
  std::lock_guard calling(calling_);  // waits for a listener call in progress
  std::lock_guard lock(mutex_);
  listeners_.erase(id);
}

std::optional<LeaderInfo> LeaderRetriever::wait_until(
    const std::function<bool(const std::optional<LeaderInfo>&)>& accept, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] { return accept(current_); });
  return current_;
}

std::optional<LeaderInfo> LeaderRetriever::wait_for_leader(std::chrono::milliseconds timeout) const {
  return wait_until([](const std::optional<LeaderInfo>& l) { return l.has_value(); }, timeout);
}

void LeaderRetriever::publish(std::optional<LeaderInfo> leader) {
  // Called on the single event thread, so listeners see the changes in order.
  std::lock_guard calling(calling_);
  std::vector<Listener> to_call;
  {
    std::lock_guard lock(mutex_);
    if (current_ == leader) return;
    current_ = leader;
    for (auto& [id, l] : listeners_) to_call.push_back(l);
  }
  changed_.notify_all();
  for (auto& l : to_call) l(leader);
}

// ---- node names

std::string encode_node_name(std::string_view name) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : name) {
    if (std::isalnum(c) || c == '.' || c == '_' || c == '-') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  // "." and ".." are no names for a znode or a file.
  if (out == "." || out == "..") out = out == "." ? "%2E" : "%2E%2E";
  return out;
}

std::string decode_node_name(std::string_view encoded) {
  std::string out;
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    if (encoded[i] == '%' && i + 2 < encoded.size()) {
      unsigned v = 0;
      std::from_chars(encoded.data() + i + 1, encoded.data() + i + 3, v, 16);
      out += static_cast<char>(v);
      i += 2;
    } else {
      out += encoded[i];
    }
  }
  return out;
}

namespace {

std::string checked_name(std::string_view what, std::string_view name) {
  if (name.empty()) throw ClinkError("HA store: empty " + std::string(what));
  return encode_node_name(name);
}

std::string random_suffix() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::ostringstream s;
  s << std::hex << rng();
  return s.str();
}

// Creates `path` or replaces its data; returns the data it had (empty when new).
std::optional<std::string> upsert(HaStateBackend& backend, const std::string& path, const std::string& data) {
  for (int attempt = 0;; ++attempt) {
    auto old = backend.get(path);
    try {
      if (old) {
        backend.commit({HaOp{HaOp::Kind::Set, path, data, old->version}});
        return old->data;
      }
      backend.commit({HaOp{HaOp::Kind::Create, path, data}});
      return std::nullopt;
    } catch (const HaVersionConflict&) {
      if (attempt >= 10) throw;
    }
  }
}

// Stores `blob` (a file when large), rolls the file back when the write is refused, and
// discards the file the node pointed to before.
void put_blob(HaStateBackend& backend, BlobFiles& files, std::string_view kind, const std::string& path,
              const std::string& key, std::string_view blob) {
  backend.require_leader();
  std::string data = files.store(kind, key, blob);
  std::optional<std::string> old;
  try {
    old = upsert(backend, path, data);
  } catch (...) {
    files.discard(data);
    throw;
  }
  if (old) files.discard(*old);
}

bool remove_blob(HaStateBackend& backend, BlobFiles& files, const std::string& path) {
  backend.require_leader();
  auto old = backend.get(path);
  if (!old) return false;
  backend.commit({HaOp{HaOp::Kind::Delete, path, "", old->version}});
  files.discard(old->data);
  return true;
}

// The blob of `path`. A file replaced (and deleted) by the leader between reading the node
// and opening the file is read again through the node's new data.
std::optional<std::string> get_blob(HaStateBackend& backend, const BlobFiles& files, const std::string& path) {
  for (int attempt = 0;; ++attempt) {
    auto node = backend.get(path);
    if (!node) return std::nullopt;
    try {
      return files.load(node->data);
    } catch (const ClinkError&) {
      auto again = backend.get(path);
      if (attempt >= 3 || !again || again->data == node->data) throw;
    }
  }
}

std::vector<std::string> decoded_children(HaStateBackend& backend, const std::string& path) {
  std::vector<std::string> out;
  for (auto& c : backend.children(path)) out.push_back(decode_node_name(c));
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

// ---- BlobFiles

BlobFiles::BlobFiles(std::filesystem::path dir, std::size_t max_inline_bytes)
    : dir_(std::move(dir)), max_inline_bytes_(max_inline_bytes) {}

std::string BlobFiles::store(std::string_view kind, std::string_view key, std::string_view blob) {
  if (dir_.empty() || blob.size() <= max_inline_bytes_) return "I" + std::string(blob);
  auto file = dir_ / std::string(kind) / (encode_node_name(key) + "-" + random_suffix());
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  if (ec) throw ClinkError("high-availability.storageDir: cannot create " + file.parent_path().string() + ": " + ec.message());
  write_file_durably(file, blob);
  return "F" + file.string();
}

std::string BlobFiles::load(std::string_view node_data) const {
  if (node_data.empty()) throw ClinkError("HA store: empty node data");
  if (node_data[0] == 'I') return std::string(node_data.substr(1));
  if (node_data[0] != 'F') throw ClinkError("HA store: unknown node data tag '" + std::string(1, node_data[0]) + "'");
  std::string path(node_data.substr(1));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ClinkError("HA store: the blob file " + path + " (high-availability.storageDir) cannot be read");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void BlobFiles::discard(std::string_view node_data) const {
  if (node_data.empty() || node_data[0] != 'F') return;
  std::error_code ec;
  std::filesystem::remove(std::string(node_data.substr(1)), ec);
}

void BlobFiles::remove_all() const {
  if (dir_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

// ---- JobGraphStore

JobGraphStore::JobGraphStore(std::shared_ptr<HaStateBackend> backend, std::shared_ptr<BlobFiles> files)
    : backend_(std::move(backend)), files_(std::move(files)) {}

void JobGraphStore::put(std::string_view job_id, std::string_view blob) {
  auto name = checked_name("job id", job_id);
  put_blob(*backend_, *files_, "execution-plans", "execution-plans/" + name, std::string(job_id), blob);
}

std::optional<std::string> JobGraphStore::get(std::string_view job_id) const {
  return get_blob(*backend_, *files_, "execution-plans/" + checked_name("job id", job_id));
}

bool JobGraphStore::remove(std::string_view job_id) {
  return remove_blob(*backend_, *files_, "execution-plans/" + checked_name("job id", job_id));
}

std::vector<std::string> JobGraphStore::job_ids() const { return decoded_children(*backend_, "execution-plans"); }

// ---- CatalogStore

CatalogStore::CatalogStore(std::shared_ptr<HaStateBackend> backend, std::shared_ptr<BlobFiles> files)
    : backend_(std::move(backend)), files_(std::move(files)) {}

void CatalogStore::put(std::string_view name, std::string_view blob) {
  auto n = checked_name("catalog object name", name);
  put_blob(*backend_, *files_, "catalog", "catalog/" + n, std::string(name), blob);
}

std::optional<std::string> CatalogStore::get(std::string_view name) const {
  return get_blob(*backend_, *files_, "catalog/" + checked_name("catalog object name", name));
}

bool CatalogStore::remove(std::string_view name) {
  return remove_blob(*backend_, *files_, "catalog/" + checked_name("catalog object name", name));
}

std::vector<std::string> CatalogStore::names() const { return decoded_children(*backend_, "catalog"); }

// ---- CheckpointPointerStore

namespace {

std::string job_path(std::string_view job_id) { return "jobs/" + checked_name("job id", job_id); }

// Flink's checkpointIdToPath: zero-padded so that names sort as ids do.
std::string checkpoint_node(std::int64_t id) {
  std::string digits = std::to_string(id);
  return std::string(digits.size() < 19 ? 19 - digits.size() : 0, '0') + digits;
}

std::int64_t parse_counter(const std::string& data, const std::string& where) {
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(data.data(), data.data() + data.size(), v);
  if (ec != std::errc() || p != data.data() + data.size())
    throw ClinkError("HA store: " + where + " holds '" + data + "', not a checkpoint id");
  return v;
}

}  // namespace

CheckpointPointerStore::CheckpointPointerStore(std::shared_ptr<HaStateBackend> backend)
    : backend_(std::move(backend)) {}

void CheckpointPointerStore::add_completed(std::string_view job_id, const CompletedCheckpointPointer& checkpoint) {
  if (checkpoint.checkpoint_id <= 0)
    throw ClinkError("HA store: checkpoint id " + std::to_string(checkpoint.checkpoint_id) + " of job " +
                     std::string(job_id) + " is not positive");
  backend_->require_leader();
  auto dir = job_path(job_id) + "/checkpoints";
  auto existing = backend_->children(dir);
  std::vector<HaOp> ops;
  nlohmann::json j = {{"checkpoint_id", checkpoint.checkpoint_id}, {"external_path", checkpoint.external_path}};
  ops.push_back(HaOp{HaOp::Kind::Create, dir + "/" + checkpoint_node(checkpoint.checkpoint_id), j.dump()});
  for (auto& name : existing) {
    if (name >= checkpoint_node(checkpoint.checkpoint_id))
      throw ClinkError("HA store: job " + std::string(job_id) + " already has checkpoint " + name +
                       ", not older than " + std::to_string(checkpoint.checkpoint_id));
    ops.push_back(HaOp{HaOp::Kind::Delete, dir + "/" + name, ""});
  }
  backend_->commit(ops);
}

std::optional<CompletedCheckpointPointer> CheckpointPointerStore::latest(std::string_view job_id) const {
  auto dir = job_path(job_id) + "/checkpoints";
  auto names = backend_->children(dir);
  // Newest first; a node deleted between the listing and the read (a newer one replaced
  // it) is skipped.
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    auto node = backend_->get(dir + "/" + *it);
    if (!node) continue;
    auto j = nlohmann::json::parse(node->data, nullptr, false);
    if (j.is_discarded() || !j.contains("checkpoint_id") || !j.contains("external_path"))
      throw ClinkError("HA store: " + backend_->describe() + " " + dir + "/" + *it + " is not a checkpoint pointer");
    return CompletedCheckpointPointer{j["checkpoint_id"].get<std::int64_t>(), j["external_path"].get<std::string>()};
  }
  return std::nullopt;
}

std::int64_t CheckpointPointerStore::next_checkpoint_id(std::string_view job_id) const {
  auto path = job_path(job_id) + "/checkpoint_id_counter";
  auto node = backend_->get(path);
  return node ? parse_counter(node->data, path) : 1;
}

std::int64_t CheckpointPointerStore::get_and_increment(std::string_view job_id) {
  backend_->require_leader();
  auto path = job_path(job_id) + "/checkpoint_id_counter";
  for (int attempt = 0;; ++attempt) {
    auto node = backend_->get(path);
    try {
      if (!node) {
        backend_->commit({HaOp{HaOp::Kind::Create, path, "2"}});
        return 1;
      }
      std::int64_t next = parse_counter(node->data, path);
      backend_->commit({HaOp{HaOp::Kind::Set, path, std::to_string(next + 1), node->version}});
      return next;
    } catch (const HaVersionConflict&) {
      if (attempt >= 10) throw;
    }
  }
}

void CheckpointPointerStore::set_next_checkpoint_id(std::string_view job_id, std::int64_t next_id) {
  backend_->require_leader();
  upsert(*backend_, job_path(job_id) + "/checkpoint_id_counter", std::to_string(next_id));
}

void CheckpointPointerStore::remove_job(std::string_view job_id) {
  backend_->require_leader();
  auto root = job_path(job_id);
  // Deepest first: a node with children cannot be deleted.
  std::vector<HaOp> ops;
  for (auto& name : backend_->children(root + "/checkpoints"))
    ops.push_back(HaOp{HaOp::Kind::Delete, root + "/checkpoints/" + name, ""});
  for (auto& name : backend_->children(root)) ops.push_back(HaOp{HaOp::Kind::Delete, root + "/" + name, ""});
  if (backend_->get(root)) ops.push_back(HaOp{HaOp::Kind::Delete, root, ""});
  if (!ops.empty()) backend_->commit(ops);
}

}  // namespace clink::cluster
