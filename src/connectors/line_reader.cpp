#include "clink/connectors/line_reader.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "clink/core/error.hpp"
#include "clink/formats/json_codec.hpp"

namespace clink {

LineReader::LineReader(std::vector<std::string> files, std::size_t buffer_bytes)
    : files_(std::move(files)), cap_(std::max<std::size_t>(buffer_bytes, 64)) {
  // Value-initialised: the padding after the data is never uninitialised memory.
  buf_ = std::make_unique<char[]>(cap_ + kJsonPadding);
  for (const auto& f : files_) {
    std::error_code ec;
    auto size = std::filesystem::file_size(f, ec);
    if (!ec) bytes_total_ += static_cast<std::int64_t>(size);
  }
}

LineReader::~LineReader() { close_file(); }

const std::string& LineReader::current_file() const {
  static const std::string none;
  return file_index_ == 0 ? none : files_[file_index_ - 1];
}

bool LineReader::open_next_file() {
  if (file_index_ >= files_.size()) return false;
  const std::string& path = files_[file_index_++];
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw ClinkError("cannot open " + path + ": " + std::strerror(errno));
  ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  eof_ = false;
  pos_ = scan_ = end_ = 0;
  line_number_ = 0;
  return true;
}

void LineReader::close_file() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void LineReader::fill() {
  char* base = buf_.get();
  if (pos_ > 0) {  // keep the partial line, drop what was consumed
    std::memmove(base, base + pos_, end_ - pos_);
    end_ -= pos_;
    scan_ -= pos_;
    pos_ = 0;
  }
  if (end_ == cap_) {  // one line fills the buffer: grow it
    std::size_t cap = cap_ * 2;
    auto grown = std::make_unique<char[]>(cap + kJsonPadding);
    std::memcpy(grown.get(), base, end_);
    buf_ = std::move(grown);
    cap_ = cap;
    base = buf_.get();
  }
  for (;;) {
    ssize_t n = ::read(fd_, base + end_, cap_ - end_);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw ClinkError("cannot read " + current_file() + ": " + std::strerror(errno));
    if (n == 0) eof_ = true;
    end_ += static_cast<std::size_t>(n);
    return;
  }
}

bool LineReader::next(Line& line) {
  for (;;) {
    if (fd_ < 0 && !open_next_file()) return false;
    char* base = buf_.get();
    const char* stop = nullptr;
    auto* nl = static_cast<const char*>(std::memchr(base + scan_, '\n', end_ - scan_));
    if (nl) {
      stop = nl;
    } else if (eof_ && pos_ < end_) {
      stop = base + end_;  // last line without a newline
    } else if (eof_) {
      close_file();
      continue;
    } else {
      scan_ = end_;
      fill();
      continue;
    }
    const char* start = base + pos_;
    std::size_t len = static_cast<std::size_t>(stop - start);
    if (len > 0 && start[len - 1] == '\r') --len;
    line.text = std::string_view(start, len);
    line.readable = static_cast<std::size_t>(base + cap_ + kJsonPadding - start);
    line.number = ++line_number_;
    const std::size_t next = std::min(end_, static_cast<std::size_t>(stop - base) + 1);
    bytes_read_ += static_cast<std::int64_t>(next - pos_);
    pos_ = scan_ = next;
    return true;
  }
}

}  // namespace clink
