#include "clink/connectors/staged_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "clink/core/error.hpp"

namespace clink {

namespace fs = std::filesystem;

namespace {
[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw ClinkError("file sink: cannot " + what + " " + path + ": " + std::strerror(errno));
}

// Makes a rename in `dir` durable; best effort (some file systems refuse fsync on directories).
void sync_directory(const fs::path& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}
}  // namespace

std::string staging_path_for(const std::string& final_path) {
  fs::path p(final_path);
  return (p.parent_path() / ("." + p.filename().string() + ".inprogress")).string();
}

StagedFile::StagedFile(std::string final_path)
    : final_path_(std::move(final_path)), staging_path_(staging_path_for(final_path_)) {
  fs::path dir = fs::path(final_path_).parent_path();
  if (!dir.empty()) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw ClinkError("file sink: cannot create directory " + dir.string() + ": " + ec.message());
  }
  fd_ = ::open(staging_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail("create", staging_path_);
}

StagedFile::~StagedFile() {
  if (!committed_ && !persisted_) abort();
  close_fd();
}

void StagedFile::append(std::string_view data) {
  if (fd_ < 0) throw ClinkError("file sink: " + staging_path_ + " is closed");
  while (!data.empty()) {
    ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("write", staging_path_);
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

void StagedFile::persist() {
  if (persisted_ || committed_) return;
  if (::fsync(fd_) != 0) fail("sync", staging_path_);
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("close", staging_path_);
  persisted_ = true;
}

void StagedFile::commit() {
  if (committed_) return;
  persist();
  commit_staged_file(staging_path_, final_path_);
  committed_ = true;
}

void StagedFile::abort() {
  close_fd();
  if (committed_) return;
  ::unlink(staging_path_.c_str());  // best effort: it may never have been created
  persisted_ = false;
}

void StagedFile::close_fd() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void commit_staged_file(const std::string& staging_path, const std::string& final_path) {
  if (std::rename(staging_path.c_str(), final_path.c_str()) == 0) {
    sync_directory(fs::path(final_path).parent_path());
    return;
  }
  if (errno == ENOENT) {
    std::error_code ec;
    if (fs::exists(final_path, ec)) return;  // committed before (a restore commits again)
    throw ClinkError("file sink: cannot commit " + final_path + ": neither it nor its staging file " + staging_path +
                     " exists");
  }
  fail("rename " + staging_path + " to", final_path);
}

bool file_sink_single_file(const std::string& path, int parallelism) {
  std::error_code ec;
  return parallelism == 1 && !path.empty() && path.back() != '/' && !fs::is_directory(path, ec);
}

std::string file_sink_target(const std::string& path, int subtask, int parallelism, std::string_view extension,
                             std::int64_t part) {
  if (file_sink_single_file(path, parallelism)) return path;
  std::string name = "part-" + std::to_string(subtask) + "-" + std::to_string(part) + "." + std::string(extension);
  return (fs::path(path) / name).string();
}

}  // namespace clink
