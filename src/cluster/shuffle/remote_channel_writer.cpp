#include "clink/cluster/shuffle/remote_channel_writer.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>
#include <vector>

#include "clink/cluster/shuffle/batch_codec.hpp"
#include "clink/core/error.hpp"
#include "clink/core/type_name.hpp"
#include "wire.hpp"

namespace clink::cluster {
namespace {

using Clock = std::chrono::steady_clock;
using wire::FrameKind;

std::int64_t ns_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

// One attempt to connect to `ai` before `deadline`, polling `cancelled`.
wire::Fd try_connect(const addrinfo* ai, Clock::time_point deadline, const std::function<bool()>& cancelled,
                     std::chrono::milliseconds poll_interval, int& err) {
  wire::Fd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol));
  if (!fd) {
    err = errno;
    return {};
  }
  if (::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) == 0) return fd;
  if (errno != EINPROGRESS) {
    err = errno;
    return {};
  }
  for (;;) {
    if (cancelled && cancelled()) throw TaskCancelled();
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd p{fd.get(), POLLOUT, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::clamp(left, std::chrono::milliseconds(0), poll_interval).count()));
    if (r < 0 && errno != EINTR) {
      err = errno;
      return {};
    }
    if (r > 0) break;
    if (left.count() <= 0) {
      err = ETIMEDOUT;
      return {};
    }
  }
  socklen_t len = sizeof err;
  ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) return {};
  return fd;
}

class RemoteChannelWriter final : public ChannelWriter {
 public:
  RemoteChannelWriter(wire::Fd fd, std::string where, std::function<bool()> cancelled, ChannelConnectOptions options)
      : fd_(std::move(fd)), where_(std::move(where)), cancelled_(std::move(cancelled)), options_(options) {}

  ~RemoteChannelWriter() override { close_connection(); }

  void send_hello(const std::string& job_id, std::int64_t attempt, std::int32_t task, std::uint32_t channel) {
    out_.clear();
    std::size_t at = wire::begin_frame(out_, FrameKind::kHello);
    out_.append(wire::kMagic, 4);
    wire::put<std::uint16_t>(out_, wire::kVersion);
    wire::put<std::uint32_t>(out_, static_cast<std::uint32_t>(job_id.size()));
    out_ += job_id;
    wire::put<std::int64_t>(out_, attempt);
    wire::put<std::int32_t>(out_, task);
    wire::put<std::uint32_t>(out_, channel);
    wire::end_frame(out_, at);
    std::int64_t ignored = 0;
    send_out(ignored);
  }

  std::int64_t push(StreamElement element) override {
    if (!failure_.empty()) throw ClinkError(failure_);
    try {
      std::int64_t blocked_ns = wait_for_credit();
      out_.clear();
      encode(element);
      send_out(blocked_ns);
      --credits_;
      if (std::holds_alternative<EndOfInput>(element)) end_sent_ = true;
      return blocked_ns;
    } catch (const ClinkError& e) {
      failure_ = e.what();
      throw;
    } catch (const TaskCancelled&) {
      // Part of a frame may be out: the stream cannot go on.
      failure_ = "shuffle: the channel to " + where_ + " was cancelled";
      throw;
    }
  }
  void count_bytes_into(std::atomic<std::int64_t>* counter) override { bytes_counter_ = counter; }

 private:
  std::atomic<std::int64_t>* bytes_counter_ = nullptr;
  struct Slot {
    std::type_index type;
    const BatchCodec* codec;
    std::unique_ptr<BatchEncoder> encoder;
  };

  bool is_cancelled() const { return cancelled_ && cancelled_(); }

  // Slot of the batch's codec on this channel, declaring it to the receiver (kCodec)
  // the first time.
  Slot& slot_for(const BatchBase& batch, std::uint8_t& id) {
    const std::type_index type = batch.type();
    for (std::size_t i = 0; i < slots_.size(); ++i)
      if (slots_[i].type == type) {
        id = static_cast<std::uint8_t>(i);
        return slots_[i];
      }
    const BatchCodec* codec = find_batch_codec(type);
    if (!codec)
      throw ClinkError("shuffle: no codec for batch type " + demangle(type.name()) + " on the channel to " + where_ +
                       " (register one with clink::cluster::register_batch_codec)");
    if (slots_.size() > 255) throw ClinkError("shuffle: more than 256 batch types on the channel to " + where_);
    id = static_cast<std::uint8_t>(slots_.size());
    std::size_t at = wire::begin_frame(out_, FrameKind::kCodec);
    out_.push_back(static_cast<char>(id));
    out_ += codec->name;
    wire::end_frame(out_, at);
    slots_.push_back(Slot{type, codec, codec->make_encoder()});
    return slots_.back();
  }

  void encode(const StreamElement& element) {
    if (const auto* batch = std::get_if<BatchPtr>(&element)) {
      std::uint8_t id = 0;
      Slot& slot = slot_for(**batch, id);
      std::size_t at = wire::begin_frame(out_, FrameKind::kMeta);
      out_.push_back(static_cast<char>(id));
      if (slot.encoder->encode_meta(**batch, out_)) wire::end_frame(out_, at);
      else out_.resize(at);
      at = wire::begin_frame(out_, FrameKind::kBatch);
      out_.push_back(static_cast<char>(id));
      slot.encoder->encode(**batch, out_);
      wire::end_frame(out_, at);
      // The batch frame (header and payload), as the receiving gate counts it.
      if (bytes_counter_) bytes_counter_->fetch_add(static_cast<std::int64_t>(out_.size() - at), std::memory_order_relaxed);
    } else if (const auto* wm = std::get_if<Watermark>(&element)) {
      std::size_t at = wire::begin_frame(out_, FrameKind::kWatermark);
      wire::put<std::int64_t>(out_, wm->timestamp);
      out_.push_back(wm->idle ? 1 : 0);
      wire::end_frame(out_, at);
    } else if (const auto* b = std::get_if<CheckpointBarrier>(&element)) {
      std::size_t at = wire::begin_frame(out_, FrameKind::kBarrier);
      wire::put<std::int64_t>(out_, b->checkpoint_id);
      wire::put<std::int64_t>(out_, b->timestamp_ms);
      out_.push_back(static_cast<char>((b->is_savepoint ? 1 : 0) | (b->stops_sources ? 2 : 0)));
      wire::end_frame(out_, at);
    } else {
      std::size_t at = wire::begin_frame(out_, FrameKind::kEndOfInput);
      wire::end_frame(out_, at);
    }
  }

  // Blocks until a credit is available; returns how long it waited (0 when it did not).
  std::int64_t wait_for_credit() {
    if (credits_ > 0) return 0;
    read_incoming();
    if (credits_ > 0) return 0;
    auto start = Clock::now();
    while (credits_ == 0) {
      if (is_cancelled()) throw TaskCancelled();
      pollfd p{fd_.get(), POLLIN, 0};
      int r = ::poll(&p, 1, static_cast<int>(options_.poll_interval.count()));
      if (r < 0 && errno != EINTR) throw ClinkError("shuffle: poll on the channel to " + where_ + " failed: " + wire::errno_text(errno));
      if (r > 0) read_incoming();
    }
    return ns_since(start);
  }

  // Takes in whatever the receiver sent (credits, an error), without blocking.
  void read_incoming() {
    for (;;) {
      wire::FrameReader::Fill f;
      try {
        f = in_.fill(fd_.get());
      } catch (const ClinkError& e) {
        if (is_cancelled()) throw TaskCancelled();
        throw ClinkError("shuffle: the channel to " + where_ + " broke: " + e.what());
      }
      FrameKind kind;
      std::string_view payload;
      while (in_.next(kind, payload)) {
        wire::PayloadReader r{payload, kind};
        if (kind == FrameKind::kCredit) {
          credits_ += r.get<std::uint32_t>();
        } else if (kind == FrameKind::kError) {
          throw ClinkError("shuffle: the receiver at " + where_ + " rejected the channel: " + std::string(payload));
        } else {
          throw ClinkError(std::string("shuffle: unexpected ") + wire::kind_name(kind) + " frame from the receiver at " + where_);
        }
      }
      if (f == wire::FrameReader::Fill::kWouldBlock) return;
      if (f == wire::FrameReader::Fill::kEof) {
        if (is_cancelled()) throw TaskCancelled();
        throw ClinkError("shuffle: the receiver at " + where_ + " closed the channel");
      }
    }
  }

  // Sends out_ whole; waiting for room in the socket counts as blocked time.
  void send_out(std::int64_t& blocked_ns) {
    std::string_view data(out_);
    while (!data.empty()) {
      ssize_t n = ::send(fd_.get(), data.data(), data.size(), MSG_NOSIGNAL);
      if (n > 0) {
        data.remove_prefix(static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        auto start = Clock::now();
        if (is_cancelled()) throw TaskCancelled();
        pollfd p{fd_.get(), POLLOUT | POLLIN, 0};
        int r = ::poll(&p, 1, static_cast<int>(options_.poll_interval.count()));
        if (r > 0 && (p.revents & POLLIN)) read_incoming();
        blocked_ns += ns_since(start);
        continue;
      }
      int err = errno;
      read_incoming();  // the receiver's error message, when it sent one before closing
      if (is_cancelled()) throw TaskCancelled();
      throw ClinkError("shuffle: sending on the channel to " + where_ + " failed: " + wire::errno_text(err));
    }
  }

  // After end of input: half-close and wait for the receiver to read everything and
  // close (closing with unread credits in our buffer would reset the connection, and a
  // reset may discard what the receiver has not read yet). Otherwise: reset at once, so
  // the receiver sees an aborted channel.
  void close_connection() {
    if (!fd_) return;
    if (end_sent_ && failure_.empty() && !is_cancelled()) {
      ::shutdown(fd_.get(), SHUT_WR);
      auto deadline = Clock::now() + options_.close_timeout;
      char scratch[4096];
      while (Clock::now() < deadline && !is_cancelled()) {
        pollfd p{fd_.get(), POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(options_.poll_interval.count())) <= 0) continue;
        ssize_t n = ::recv(fd_.get(), scratch, sizeof scratch, 0);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) break;
      }
    } else {
      linger l{1, 0};
      ::setsockopt(fd_.get(), SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }
    fd_.reset();
  }

  wire::Fd fd_;
  std::string where_;
  std::function<bool()> cancelled_;
  ChannelConnectOptions options_;
  std::vector<Slot> slots_;
  std::string out_;
  wire::FrameReader in_;
  std::int64_t credits_ = 0;
  bool end_sent_ = false;
  std::string failure_;  // once the channel failed, every later push throws this again
};

class LazyChannelWriter final : public ChannelWriter {
 public:
  LazyChannelWriter(std::string host, int port, std::string job_id, std::int64_t attempt, std::int32_t task,
                    std::uint32_t channel, std::function<bool()> cancelled, ChannelConnectOptions options)
      : host_(std::move(host)), job_id_(std::move(job_id)), port_(port), attempt_(attempt), task_(task),
        channel_(channel), cancelled_(std::move(cancelled)), options_(options) {}

  std::int64_t push(StreamElement element) override {
    if (!writer_) {
      auto start = Clock::now();
      writer_ = connect_channel(host_, port_, job_id_, attempt_, task_, channel_, cancelled_, options_);
      writer_->count_bytes_into(bytes_counter_);
      return ns_since(start) + writer_->push(std::move(element));  // connecting is waiting too
    }
    return writer_->push(std::move(element));
  }
  void count_bytes_into(std::atomic<std::int64_t>* counter) override {
    bytes_counter_ = counter;
    if (writer_) writer_->count_bytes_into(counter);
  }

 private:
  std::atomic<std::int64_t>* bytes_counter_ = nullptr;
  std::string host_, job_id_;
  int port_;
  std::int64_t attempt_;
  std::int32_t task_;
  std::uint32_t channel_;
  std::function<bool()> cancelled_;
  ChannelConnectOptions options_;
  std::unique_ptr<ChannelWriter> writer_;
};

}  // namespace

std::unique_ptr<ChannelWriter> connect_channel_lazily(std::string host, int port, std::string job_id,
                                                      std::int64_t attempt, std::int32_t task, std::uint32_t channel,
                                                      std::function<bool()> cancelled, ChannelConnectOptions options) {
  return std::make_unique<LazyChannelWriter>(std::move(host), port, std::move(job_id), attempt, task, channel,
                                             std::move(cancelled), options);
}

std::unique_ptr<ChannelWriter> connect_channel(const std::string& host, int port, const std::string& job_id,
                                               std::int64_t attempt, std::int32_t task, std::uint32_t channel,
                                               std::function<bool()> cancelled, ChannelConnectOptions options) {
  register_builtin_batch_codecs();
  const std::string address = host + ":" + std::to_string(port);
  const std::string where = address + " (job " + job_id + ", attempt " + std::to_string(attempt) + ", task " +
                            std::to_string(task) + ", channel " + std::to_string(channel) + ")";
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  const auto deadline = Clock::now() + options.connect_timeout;
  auto backoff = std::chrono::milliseconds(10);
  std::string last_error = "no attempt";
  for (;;) {
    if (cancelled && cancelled()) throw TaskCancelled();
    addrinfo* found = nullptr;
    int gai = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
    if (gai != 0) {
      last_error = std::string("cannot resolve the host: ") + ::gai_strerror(gai);
    } else {
      for (addrinfo* ai = found; ai; ai = ai->ai_next) {
        int err = 0;
        wire::Fd fd = try_connect(ai, deadline, cancelled, options.poll_interval, err);
        if (fd) {
          ::freeaddrinfo(found);
          wire::set_no_delay(fd.get());
          if (options.send_buffer_bytes > 0) {
            int bytes = options.send_buffer_bytes;
            ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
          }
          auto writer = std::make_unique<RemoteChannelWriter>(std::move(fd), where, std::move(cancelled), options);
          writer->send_hello(job_id, attempt, task, channel);
          return writer;
        }
        last_error = wire::errno_text(err);
      }
      ::freeaddrinfo(found);
    }
    auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) break;
    // Sleep in poll_interval slices, so a cancel is seen quickly.
    auto wake = Clock::now() + std::min<Clock::duration>(backoff, left);
    while (Clock::now() < wake) {
      if (cancelled && cancelled()) throw TaskCancelled();
      std::this_thread::sleep_for(std::min<Clock::duration>(options.poll_interval, wake - Clock::now()));
    }
    backoff = std::min(backoff * 2, std::chrono::milliseconds(500));
  }
  throw ClinkError("shuffle: cannot connect to " + address + " for job " + job_id + " attempt " + std::to_string(attempt) +
                   " task " + std::to_string(task) + " channel " + std::to_string(channel) + " within " +
                   std::to_string(options.connect_timeout.count()) + " ms: " + last_error);
}

}  // namespace clink::cluster
