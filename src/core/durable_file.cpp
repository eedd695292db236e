#include "clink/core/durable_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "clink/core/error.hpp"

namespace clink {

namespace {

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& p) {
  throw ClinkError("cannot " + what + " " + p.string() + ": " + std::strerror(errno));
}

void fsync_path(const std::filesystem::path& p, int flags) {
  int fd = ::open(p.c_str(), flags);
  if (fd < 0) fail("open", p);
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("fsync", p);
  }
  ::close(fd);
}

}  // namespace

void write_file_durably(const std::filesystem::path& target, std::string_view content) {
  const std::filesystem::path tmp = target.string() + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("create", tmp);
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      fail("write", tmp);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("fsync", tmp);
  }
  ::close(fd);
  std::error_code ec;
  std::filesystem::rename(tmp, target, ec);
  if (ec) throw ClinkError("cannot rename " + tmp.string() + " to " + target.string() + ": " + ec.message());
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  fsync_path(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

}  // namespace clink
