#include "clink/core/owned_directory.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "clink/core/error.hpp"

namespace clink {

namespace fs = std::filesystem;

namespace {
constexpr std::string_view kLockSuffix = ".clink-lock";
// The lock file's content: a sweep removes only what a file saying so marks (never a
// user's directory beside a lock file of its own).
constexpr std::string_view kMarker = "clink working directory\n";
fs::path lock_file_of(const fs::path& dir) { return dir.string() + std::string(kLockSuffix); }

bool is_marker(int fd) {
  char buf[64];
  const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  return n == static_cast<ssize_t>(kMarker.size()) && std::string_view(buf, kMarker.size()) == kMarker;
}
}  // namespace

OwnedDirectory::OwnedDirectory(fs::path dir) : dir_(std::move(dir)) {
  const fs::path lock = lock_file_of(dir_);
  fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) throw ClinkError("cannot create " + lock.string() + ": " + std::strerror(errno));
  // Blocking: the name is this owner's alone (a pid and counter, or a random instance);
  // only a sweeper looking at the fresh, still unmarked file may hold it for a moment.
  if (::flock(fd_, LOCK_EX) != 0 || ::ftruncate(fd_, 0) != 0 ||
      ::pwrite(fd_, kMarker.data(), kMarker.size(), 0) != static_cast<ssize_t>(kMarker.size())) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    throw ClinkError("cannot lock " + lock.string() + ": " + std::strerror(err));
  }
}

OwnedDirectory& OwnedDirectory::operator=(OwnedDirectory&& o) noexcept {
  if (this != &o) {
    release();
    dir_ = std::move(o.dir_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

void OwnedDirectory::release() {
  if (fd_ < 0) return;
  std::error_code ec;
  fs::remove(lock_file_of(dir_), ec);  // while still locked: no sweeper takes it meanwhile
  ::close(fd_);
  fd_ = -1;
}

std::vector<fs::path> remove_abandoned_directories(const fs::path& parent, const std::string& prefix) {
  std::vector<fs::path> removed;
  std::error_code ec;
  std::vector<fs::path> locks;
  for (const auto& e : fs::directory_iterator(parent, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > kLockSuffix.size() && name.ends_with(kLockSuffix) && name.starts_with(prefix) &&
        e.is_regular_file(ec) && !e.is_symlink(ec))
      locks.push_back(e.path());
  }
  for (const auto& lock : locks) {
    const int fd = ::open(lock.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0 && is_marker(fd)) {
      // Nobody holds it: its owner died. The directory and its "<name>-*" companions go,
      // then the lock file (while locked, so no second sweeper works on it meanwhile).
      const std::string stem = lock.filename().string().substr(0, lock.filename().string().size() - kLockSuffix.size());
      for (const auto& e : fs::directory_iterator(parent, ec)) {
        const std::string name = e.path().filename().string();
        if ((name == stem || name.starts_with(stem + "-")) && !name.ends_with(kLockSuffix)) {
          fs::remove_all(e.path(), ec);
          removed.push_back(e.path());
        }
      }
      fs::remove(lock, ec);
    }
    ::close(fd);
  }
  return removed;
}

}  // namespace clink
