#pragma once
// An exclusive lock on a directory for as long as a job uses it: two runs sharing a
// checkpoint directory would sweep and overwrite each other's chk-<n> (and a later
// restore would take the other job's checkpoint). The lock is flock() on "<dir>/.lock",
// so the kernel releases it when the holder exits, SIGKILL included, and a restarted run
// is never locked out by a dead one.
#include <filesystem>
#include <string>

namespace clink::detail {

class DirectoryLock {
 public:
  DirectoryLock() = default;
  // Creates `dir` when missing and locks it; throws ClinkError naming `what` ("checkpoint
  // directory") and the holder's pid when another process (or job) holds it.
  DirectoryLock(const std::filesystem::path& dir, const std::string& what);
  ~DirectoryLock() { release(); }
  DirectoryLock(DirectoryLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  DirectoryLock& operator=(DirectoryLock&& o) noexcept {
    if (this != &o) {
      release();
      fd_ = o.fd_;
      o.fd_ = -1;
    }
    return *this;
  }
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

  void release();

 private:
  int fd_ = -1;
};

}  // namespace clink::detail
