#include "clink/checkpoint/checkpoint_integrity.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include <fmt/format.h>
#include <xxhash.h>

#include "clink/state/shared_state_registry.hpp"

namespace clink {

namespace fs = std::filesystem;

FileDigest digest_file(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw ClinkError("cannot read " + file.string() + ": " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  std::unique_ptr<XXH64_state_t, decltype(&XXH64_freeState)> state(XXH64_createState(), &XXH64_freeState);
  XXH64_reset(state.get(), 0);
  std::vector<char> buffer(1 << 20);
  FileDigest d;
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw ClinkError("cannot read " + file.string() + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    XXH64_update(state.get(), buffer.data(), static_cast<std::size_t>(n));
    d.size += static_cast<std::uint64_t>(n);
  }
  d.xxh64 = XXH64_digest(state.get());
  return d;
}

std::map<std::string, FileDigest> digest_checkpoint_files(const fs::path& dir, const CheckpointMetadata& meta,
                                                          std::map<std::string, FileDigest>& shared_cache) {
  std::map<std::string, FileDigest> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
    const std::string name = it->path().lexically_relative(dir).generic_string();
    if (name == kMetadataFile || name == std::string(kMetadataFile) + ".tmp") continue;
    files[name] = digest_file(it->path());
  }
  if (ec) throw ClinkError("cannot list checkpoint " + dir.string() + ": " + ec.message());
  for (const auto& [uid, op] : meta.operators)
    for (const auto& st : op.subtasks)
      for (const auto& h : st.keyed)
        for (const auto& shared : shared_state_files(h)) {
          const std::string name = fs::absolute(shared).lexically_normal().string();
          auto cached = shared_cache.find(name);
          if (cached == shared_cache.end()) cached = shared_cache.emplace(name, digest_file(shared)).first;
          files[name] = cached->second;
        }
  return files;
}

void verify_checkpoint_files(const fs::path& dir, const CheckpointMetadata& meta) {
  for (const auto& [name, recorded] : meta.files) {
    const fs::path file = fs::path(name).is_absolute() ? fs::path(name) : dir / name;
    const std::string what = "checkpoint " + dir.string() + " is corrupt: file " + file.string();
    std::error_code ec;
    if (fs::is_symlink(file, ec) && !fs::path(name).is_absolute())
      throw CorruptCheckpointError(what + " is a symbolic link (clink writes none)");
    if (!fs::is_regular_file(file, ec)) throw CorruptCheckpointError(what + " is missing");
    FileDigest actual;
    try {
      actual = digest_file(file);
    } catch (const ClinkError& e) {
      throw CorruptCheckpointError(what + " cannot be read (" + e.what() + ")");
    }
    if (actual.size != recorded.size)
      throw CorruptCheckpointError(fmt::format("{} has {} bytes, the checkpoint recorded {}{}", what, actual.size,
                                               recorded.size, actual.size < recorded.size ? " (truncated)" : ""));
    if (actual.xxh64 != recorded.xxh64)
      throw CorruptCheckpointError(fmt::format("{} fails its checksum (xxh64 {:016x}, recorded {:016x})", what,
                                               actual.xxh64, recorded.xxh64));
  }
}

CheckpointMetadata read_verified_checkpoint(const fs::path& dir) {
  CheckpointMetadata meta = CheckpointMetadata::read(dir);
  verify_checkpoint_files(dir, meta);
  return meta;
}

std::optional<fs::path> latest_intact_checkpoint(const fs::path& directory, std::vector<std::string>* passed_over,
                                                 std::optional<std::int64_t> below) {
  std::vector<std::pair<std::int64_t, fs::path>> candidates;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(directory, ec)) {
    auto id = checkpoint_id_of(entry.path().filename().string());
    // Not followed: a symlinked chk-<n> is not one clink wrote. A directory without
    // `_metadata` is in progress or was aborted: not a completed checkpoint.
    if (!id || entry.is_symlink(ec) || !entry.is_directory(ec) || (below && *id >= *below)) continue;
    if (!fs::exists(entry.path() / kMetadataFile, ec)) continue;
    candidates.emplace_back(*id, entry.path());
  }
  std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [id, path] : candidates) {
    try {
      read_verified_checkpoint(path);
      return path;
    } catch (const CorruptCheckpointError& e) {
      if (passed_over) passed_over->push_back(e.what());
    }
  }
  return std::nullopt;
}

std::optional<fs::path> intact_checkpoint_or_older(const fs::path& chk, std::vector<std::string>* passed_over) {
  try {
    read_verified_checkpoint(chk);
    return chk;
  } catch (const CorruptCheckpointError& e) {
    if (passed_over) passed_over->push_back(e.what());
  }
  auto id = checkpoint_id_of(chk.filename().string());
  if (!id) return std::nullopt;
  return latest_intact_checkpoint(chk.parent_path(), passed_over, *id);
}

}  // namespace clink
