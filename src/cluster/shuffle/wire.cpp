#include "wire.hpp"

#include <cerrno>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

namespace clink::cluster::wire {

const char* kind_name(FrameKind kind) {
  switch (kind) {
    case FrameKind::kHello: return "hello";
    case FrameKind::kCredit: return "credit";
    case FrameKind::kError: return "error";
    case FrameKind::kCodec: return "codec";
    case FrameKind::kMeta: return "meta";
    case FrameKind::kBatch: return "batch";
    case FrameKind::kWatermark: return "watermark";
    case FrameKind::kBarrier: return "barrier";
    case FrameKind::kEndOfInput: return "end-of-input";
  }
  return "unknown";
}

FrameReader::Fill FrameReader::fill(int fd) {
  if (begin_ == end_) begin_ = end_ = 0;
  std::size_t want = 64 * 1024;  // room for at least this much, or the whole frame in progress
  if (end_ - begin_ >= 4) {
    std::uint32_t len;
    std::memcpy(&len, buf_.data() + begin_, 4);
    if (len > kMaxFrameBytes) throw ClinkError("shuffle: a frame announces " + std::to_string(len) + " bytes (over the 1 GiB limit)");
    want = std::max<std::size_t>(want, 4 + static_cast<std::size_t>(len) - (end_ - begin_));
  }
  if (buf_.size() - end_ < want) {
    // Move the partial frame to the front, then grow if that is still not enough room.
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
    if (buf_.size() - end_ < want) buf_.resize(std::max(buf_.size() * 2, end_ + want));
  }
  for (;;) {
    ssize_t n = ::recv(fd, buf_.data() + end_, buf_.size() - end_, 0);
    if (n > 0) {
      end_ += static_cast<std::size_t>(n);
      return Fill::kData;
    }
    if (n == 0) return Fill::kEof;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Fill::kWouldBlock;
    throw ClinkError("shuffle: recv failed: " + errno_text(errno));
  }
}

bool FrameReader::next(FrameKind& kind, std::string_view& payload) {
  if (end_ - begin_ < kHeaderBytes) return false;
  std::uint32_t len;
  std::memcpy(&len, buf_.data() + begin_, 4);
  if (len < 1) throw ClinkError("shuffle: a frame without a kind byte");
  if (end_ - begin_ < 4 + static_cast<std::size_t>(len)) return false;
  kind = static_cast<FrameKind>(buf_[begin_ + 4]);
  payload = std::string_view(buf_.data() + begin_ + kHeaderBytes, len - 1);
  begin_ += 4 + static_cast<std::size_t>(len);
  return true;
}

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = o.release();
  }
  return *this;
}

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string errno_text(int err) {
  char buf[256];
  // GNU strerror_r returns the message (maybe not in buf).
  return ::strerror_r(err, buf, sizeof buf);
}

bool send_all_blocking(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

void set_no_delay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void set_non_blocking(int fd, bool on) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  ::fcntl(fd, F_SETFL, on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK));
}

}  // namespace clink::cluster::wire
