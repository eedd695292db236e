#pragma once
// Working directories (a RocksDB backend's database, a task group's scratch state) that
// a process removes when it ends, and that a killed process leaves behind. Each one has
// a lock file beside it, "<dir>.clink-lock" (saying so inside), flock()ed by its owner for as long as it uses the
// directory: the kernel drops the lock when the owner dies (SIGKILL included), so a
// lock that can be taken marks an abandoned directory, whatever pid came since. A new
// owner sweeps its parent of abandoned ones (issue 16, item 8).
#include <filesystem>
#include <vector>

namespace clink {

class OwnedDirectory {
 public:
  OwnedDirectory() = default;
  // Locks "<dir>.clink-lock" (creating it; the directory itself is the caller's to create);
  // throws ClinkError naming the file when it cannot.
  explicit OwnedDirectory(std::filesystem::path dir);
  ~OwnedDirectory() { release(); }
  OwnedDirectory(OwnedDirectory&& o) noexcept : dir_(std::move(o.dir_)), fd_(o.fd_) { o.fd_ = -1; }
  OwnedDirectory& operator=(OwnedDirectory&& o) noexcept;
  OwnedDirectory(const OwnedDirectory&) = delete;
  OwnedDirectory& operator=(const OwnedDirectory&) = delete;
  // Removes the lock file and unlocks (the directory is removed by its owner first).
  void release();

 private:
  std::filesystem::path dir_;
  int fd_ = -1;
};

// Removes every "<name>" (and "<name>-*" beside it) under `parent` whose
// "<name>.clink-lock" no process holds, with the lock file; only lock files whose name
// starts with `prefix` and that clink wrote. Returns the directories removed. Errors are ignored (a sweep is best effort).
std::vector<std::filesystem::path> remove_abandoned_directories(const std::filesystem::path& parent,
                                                                const std::string& prefix = "");

}  // namespace clink
