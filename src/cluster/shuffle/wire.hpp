#pragma once
// The data plane's framing (private to src/cluster/shuffle). Every message is a frame:
//   u32 length (of what follows) | u8 kind | payload          (little-endian)
// A connection carries one channel. The sender opens it with kHello, then sends elements
// (kBatch, kWatermark, kBarrier, kEndOfInput; one credit each) and, before a batch of a
// new type or schema, kCodec / kMeta. The receiver answers with kCredit (the gate slots
// freed since the last one; the first grants the channel's capacity) or kError.
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "clink/core/error.hpp"

namespace clink::cluster::wire {

static_assert(std::endian::native == std::endian::little, "the shuffle framing is little-endian");

enum class FrameKind : std::uint8_t {
  kHello = 1,       // "CLSH" u16 version | u32 n, job id | i64 attempt | i32 task | u32 channel
  kCredit = 2,      // u32 credits
  kError = 3,       // message (then the receiver closes)
  kCodec = 4,       // u8 slot | codec name: later batches of `slot` use this codec
  kMeta = 5,        // u8 slot | codec metadata (e.g. a schema)
  kBatch = 6,       // u8 slot | encoded batch
  kWatermark = 7,   // i64 timestamp | u8 idle
  kBarrier = 8,     // i64 checkpoint id | i64 timestamp | u8 flags (1 savepoint, 2 stops sources)
  kEndOfInput = 9,  // nothing
};

inline constexpr char kMagic[4] = {'C', 'L', 'S', 'H'};
inline constexpr std::uint16_t kVersion = 1;
inline constexpr std::uint32_t kMaxFrameBytes = 1u << 30;
inline constexpr std::size_t kHeaderBytes = 5;
inline constexpr std::uint32_t kMaxHelloBytes = 64 * 1024;

const char* kind_name(FrameKind kind);

template <class T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Appends a frame header whose length end_frame fills in; returns where it starts.
inline std::size_t begin_frame(std::string& out, FrameKind kind) {
  std::size_t at = out.size();
  put<std::uint32_t>(out, 0);
  out.push_back(static_cast<char>(kind));
  return at;
}
inline void end_frame(std::string& out, std::size_t at) {
  std::size_t n = out.size() - at - 4;
  if (n > kMaxFrameBytes) throw ClinkError("shuffle: a frame of " + std::to_string(n) + " bytes exceeds the 1 GiB limit");
  auto len = static_cast<std::uint32_t>(n);
  std::memcpy(out.data() + at, &len, 4);
}

// Reads fields from a frame's payload; throws ClinkError naming the frame kind.
struct PayloadReader {
  std::string_view in;
  FrameKind kind;
  const char* take(std::size_t n) {
    if (in.size() < n) throw ClinkError(std::string("shuffle: truncated ") + kind_name(kind) + " frame");
    const char* p = in.data();
    in.remove_prefix(n);
    return p;
  }
  template <class T>
  T get() {
    T v;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
};

// Buffers what a socket delivers and cuts it into frames, without copying payloads.
class FrameReader {
 public:
  enum class Fill { kData, kEof, kWouldBlock };
  // One recv() into the buffer (grown to hold the frame in progress). Throws ClinkError
  // on a socket error or a frame over the limit.
  Fill fill(int fd);
  // The next complete frame; the payload stays valid until the next fill().
  bool next(FrameKind& kind, std::string_view& payload);
  bool empty() const { return begin_ == end_; }
  // The header of the frame in progress, once its 5 bytes are in.
  bool peek_header(std::uint32_t& length, FrameKind& kind) const {
    if (end_ - begin_ < kHeaderBytes) return false;
    std::memcpy(&length, buf_.data() + begin_, 4);
    kind = static_cast<FrameKind>(buf_[begin_ + 4]);
    return true;
  }

 private:
  std::vector<char> buf_ = std::vector<char>(256 * 1024);
  std::size_t begin_ = 0, end_ = 0;
};

// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset();
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

std::string errno_text(int err);
// Sends all of `data` on a blocking socket (MSG_NOSIGNAL); false on an error (errno set).
bool send_all_blocking(int fd, std::string_view data);
void set_no_delay(int fd);
void set_non_blocking(int fd, bool on);

}  // namespace clink::cluster::wire
