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
}  // namespace

StagedFile::StagedFile(std::string final_path) : final_path_(std::move(final_path)) {
  fs::path p(final_path_);
  fs::path dir = p.parent_path();
  staging_path_ = (dir / ("." + p.filename().string() + ".inprogress")).string();
  if (!dir.empty()) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw ClinkError("file sink: cannot create directory " + dir.string() + ": " + ec.message());
  }
  fd_ = ::open(staging_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail("create", staging_path_);
}

StagedFile::~StagedFile() {
  if (!committed_) abort();
}

void StagedFile::append(std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("write", staging_path_);
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

void StagedFile::commit() {
  if (committed_) return;
  if (::fsync(fd_) != 0) fail("sync", staging_path_);
  close_fd();
  if (std::rename(staging_path_.c_str(), final_path_.c_str()) != 0) fail("rename " + staging_path_ + " to", final_path_);
  committed_ = true;
}

void StagedFile::abort() {
  close_fd();
  ::unlink(staging_path_.c_str());  // best effort: it may never have been created
}

void StagedFile::close_fd() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string file_sink_target(const std::string& path, int subtask, int parallelism, std::string_view extension) {
  std::error_code ec;
  bool single = parallelism == 1 && !path.empty() && path.back() != '/' && !fs::is_directory(path, ec);
  if (single) return path;
  std::string name = "part-" + std::to_string(subtask) + "-0." + std::string(extension);
  return (fs::path(path) / name).string();
}

}  // namespace clink
