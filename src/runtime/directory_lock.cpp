#include "directory_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "clink/core/error.hpp"
#include "clink/core/private_directory.hpp"

namespace clink::detail {

DirectoryLock::DirectoryLock(const std::filesystem::path& dir, const std::string& what) {
  create_private_directories(dir);
  const std::filesystem::path file = dir / ".lock";
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) throw ClinkError("cannot open " + file.string() + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char holder[32] = {0};
    [[maybe_unused]] auto n = ::pread(fd_, holder, sizeof holder - 1, 0);
    ::close(fd_);
    fd_ = -1;
    if (err != EWOULDBLOCK) throw ClinkError("cannot lock " + file.string() + ": " + std::strerror(err));
    throw ClinkError("the " + what + " " + dir.string() + " is in use by another running job" +
                     (holder[0] ? " (process " + std::string(holder) + ")" : std::string()) +
                     ": give each job its own directory");
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd_, 0) == 0) [[maybe_unused]] auto n = ::pwrite(fd_, pid.data(), pid.size(), 0);
}

void DirectoryLock::release() {
  if (fd_ < 0) return;
  ::close(fd_);  // drops the flock
  fd_ = -1;
}

}  // namespace clink::detail
