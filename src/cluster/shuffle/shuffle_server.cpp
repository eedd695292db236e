#include "clink/core/log.hpp"
#include "clink/cluster/shuffle/shuffle_server.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>
#include <vector>

#include "clink/cluster/shuffle/batch_codec.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/input_gate.hpp"
#include "wire.hpp"

namespace clink::cluster {
namespace {

using Clock = std::chrono::steady_clock;
using wire::FrameKind;

// A failure that is reported to the sender (kError) and to on_channel_failure.
struct ChannelError : ClinkError {
  using ClinkError::ClinkError;
};

std::string peer_of(int fd) {
  sockaddr_storage sa{};
  socklen_t len = sizeof sa;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) return "?";
  char host[NI_MAXHOST], port[NI_MAXSERV];
  if (::getnameinfo(reinterpret_cast<sockaddr*>(&sa), len, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "?";
  return std::string(host) + ":" + port;
}

}  // namespace

// One accepted connection: one channel.
struct Connection {
  explicit Connection(wire::Fd f) : fd(std::move(f)), peer(peer_of(fd.get())) {}

  wire::Fd fd;
  std::string peer;
  std::thread thread;
  std::atomic<bool> done{false};
  bool unregistered = false;  // under Impl::mu: closed by unregister_attempt or shutdown

  // Identity, set once the handshake is read (under Impl::mu).
  bool identified = false;
  std::string job_id;
  std::int64_t attempt = -1;
  std::int32_t task = -1;
  std::uint32_t channel = 0;

  // Credits granted to the sender and not yet used by an element it sent.
  std::atomic<std::int64_t> available{0};
  // Pops not yet returned as credits.
  std::atomic<std::uint32_t> pending{0};

  std::mutex write_mu;  // frames to the sender: credits from the popping task, errors
  bool closed = false;  // under write_mu: the fd is shut down, write nothing more

  void send_frame(const std::string& frame) {
    std::lock_guard lock(write_mu);
    if (!closed) wire::send_all_blocking(fd.get(), frame);
  }
  void grant(std::uint32_t n) {
    available.fetch_add(n);
    std::string frame;
    std::size_t at = wire::begin_frame(frame, FrameKind::kCredit);
    wire::put<std::uint32_t>(frame, n);
    wire::end_frame(frame, at);
    send_frame(frame);
  }
  void send_error(const std::string& message) {
    std::string frame;
    std::size_t at = wire::begin_frame(frame, FrameKind::kError);
    frame += message;
    wire::end_frame(frame, at);
    send_frame(frame);
  }
  // Wakes a reader blocked in recv; the fd itself is closed by the reader's thread.
  void shut_down() {
    std::lock_guard lock(write_mu);
    if (!closed) ::shutdown(fd.get(), SHUT_RDWR);
    closed = true;
  }
};

// A registered gate and the connections of its channels.
struct Route {
  InputGate* gate = nullptr;
  std::uint32_t credit_batch = 1;  // credits go back in messages of at least this many
  std::mutex mu;
  std::vector<std::shared_ptr<Connection>> channels;  // the remote ones; null: local or gone
  std::vector<bool> used;                              // a connection came for it (only one may)

  // Called by the gate after each pop, on the consuming task's thread.
  void on_pop(std::size_t channel) {
    std::shared_ptr<Connection> c;
    {
      std::lock_guard lock(mu);
      if (channel < channels.size()) c = channels[channel];
    }
    if (!c) return;
    if (c->pending.fetch_add(1) + 1 < credit_batch) return;
    if (std::uint32_t n = c->pending.exchange(0)) c->grant(n);
  }
};

struct ShuffleServer::Impl {
  std::string host;
  int port = 0;
  ShuffleServerOptions options;
  wire::Fd listen_fd;
  std::thread acceptor;

  mutable std::mutex mu;
  std::condition_variable route_added;
  std::map<std::tuple<std::string, std::int64_t, std::int32_t>, std::shared_ptr<Route>> routes;
  std::set<std::pair<std::string, std::int64_t>> dead_attempts;
  std::vector<std::shared_ptr<Connection>> connections;  // not joined yet
  bool stopping = false;

  void report(const Connection& c, const std::string& message) {
    ChannelFailure f;
    if (c.identified) {
      f.job_id = c.job_id;
      f.attempt = c.attempt;
      f.task = c.task;
      f.channel = c.channel;
    }
    f.peer = c.peer;
    f.message = message;
    if (options.on_channel_failure) options.on_channel_failure(f);
    else log::warn("shuffle: {}", message);
  }

  void accept_loop();
  void serve(const std::shared_ptr<Connection>& c);
  void read_hello(Connection& c, wire::FrameReader& in);
  std::shared_ptr<Route> wait_for_route(Connection& c);
  void stream(Connection& c, Route& route, wire::FrameReader& in, bool& ended);
  void reap_finished();
};

void ShuffleServer::Impl::accept_loop() {
  for (;;) {
    int fd = ::accept4(listen_fd.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      {
        std::lock_guard lock(mu);
        if (stopping) return;
      }
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;  // EINTR, ECONNABORTED, ...
    }
    wire::set_no_delay(fd);
    auto c = std::make_shared<Connection>(wire::Fd(fd));
    reap_finished();
    std::lock_guard lock(mu);
    if (stopping) return;  // c closes its fd
    connections.push_back(c);
    c->thread = std::thread([this, c] { serve(c); });
  }
}

void ShuffleServer::Impl::reap_finished() {
  std::vector<std::shared_ptr<Connection>> finished;
  {
    std::lock_guard lock(mu);
    auto it = std::stable_partition(connections.begin(), connections.end(), [](const auto& c) { return !c->done.load(); });
    finished.assign(std::make_move_iterator(it), std::make_move_iterator(connections.end()));
    connections.erase(it, connections.end());
  }
  for (auto& c : finished) c->thread.join();
}

void ShuffleServer::Impl::read_hello(Connection& c, wire::FrameReader& in) {
  const auto deadline = Clock::now() + options.hello_timeout;
  FrameKind kind;
  std::string_view payload;
  const std::string not_shuffle = "the connection from " + c.peer + " is not a clink shuffle channel (no handshake)";
  while (!in.next(kind, payload)) {
    std::uint32_t length;
    if (in.peek_header(length, kind) && (kind != FrameKind::kHello || length > wire::kMaxHelloBytes))
      throw ChannelError(not_shuffle);
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{c.fd.get(), POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) == 0)
      throw ChannelError("no handshake from " + c.peer + " within " + std::to_string(options.hello_timeout.count()) + " ms");
    if (in.fill(c.fd.get()) == wire::FrameReader::Fill::kEof)
      throw ChannelError("the connection from " + c.peer + " closed before its handshake");
  }
  wire::PayloadReader r{payload, kind};
  if (kind != FrameKind::kHello || std::string_view(r.take(4), 4) != std::string_view(wire::kMagic, 4))
    throw ChannelError(not_shuffle);
  if (auto v = r.get<std::uint16_t>(); v != wire::kVersion)
    throw ChannelError("the connection from " + c.peer + " speaks shuffle version " + std::to_string(v) +
                       ", this worker version " + std::to_string(wire::kVersion));
  auto n = r.get<std::uint32_t>();
  std::string job(r.take(n), n);
  auto attempt = r.get<std::int64_t>();
  auto task = r.get<std::int32_t>();
  auto channel = r.get<std::uint32_t>();
  std::lock_guard lock(mu);
  c.job_id = std::move(job);
  c.attempt = attempt;
  c.task = task;
  c.channel = channel;
  c.identified = true;
  if (c.unregistered) throw TaskCancelled();
}

std::shared_ptr<Route> ShuffleServer::Impl::wait_for_route(Connection& c) {
  const std::string what = "channel " + std::to_string(c.channel) + " of task " + std::to_string(c.task) + " (job " +
                           c.job_id + ", attempt " + std::to_string(c.attempt) + ") from " + c.peer;
  std::unique_lock lock(mu);
  const auto key = std::make_tuple(c.job_id, c.attempt, c.task);
  std::shared_ptr<Route> route;
  const bool found = route_added.wait_for(lock, options.gate_wait, [&] {
    if (stopping || c.unregistered || dead_attempts.count({c.job_id, c.attempt})) return true;
    auto it = routes.find(key);
    if (it != routes.end()) route = it->second;
    return route != nullptr;
  });
  if (stopping || c.unregistered) throw TaskCancelled();
  if (dead_attempts.count({c.job_id, c.attempt}))
    throw ChannelError(what + ": attempt " + std::to_string(c.attempt) + " of job " + c.job_id + " no longer runs on this worker");
  if (!found)
    throw ChannelError(what + ": no such task registered on this worker within " + std::to_string(options.gate_wait.count()) + " ms");
  std::lock_guard route_lock(route->mu);
  if (c.channel >= route->channels.size())
    throw ChannelError(what + ": the task's input has " + std::to_string(route->channels.size()) + " channels");
  if (route->used[c.channel]) throw ChannelError(what + ": the channel is already connected");
  route->used[c.channel] = true;
  route->channels[c.channel] = nullptr;  // set by the caller once the handshake is answered
  return route;
}

void ShuffleServer::Impl::stream(Connection& c, Route& route, wire::FrameReader& in, bool& ended) {
  struct Slot {
    const BatchCodec* codec = nullptr;
    std::unique_ptr<BatchDecoder> decoder;
  };
  std::vector<Slot> slots;
  auto slot = [&](wire::PayloadReader& r) -> Slot& {
    auto id = r.get<std::uint8_t>();
    if (id >= slots.size() || !slots[id].decoder) throw ChannelError("a batch frame names the undeclared codec slot " + std::to_string(id));
    return slots[id];
  };
  InputGate& gate = *route.gate;
  for (;;) {
    FrameKind kind;
    std::string_view payload;
    while (in.next(kind, payload)) {
      wire::PayloadReader r{payload, kind};
      const bool element = kind == FrameKind::kBatch || kind == FrameKind::kWatermark || kind == FrameKind::kBarrier ||
                           kind == FrameKind::kEndOfInput;
      if (element && c.available.fetch_sub(1) <= 0)
        throw ChannelError(std::string("the sender sent a ") + wire::kind_name(kind) + " without a credit");
      if (element && ended) throw ChannelError(std::string("a ") + wire::kind_name(kind) + " after the end of input");
      switch (kind) {
        case FrameKind::kCodec: {
          auto id = r.get<std::uint8_t>();
          const BatchCodec* codec = find_batch_codec(r.in);
          if (!codec) throw ChannelError("no batch codec named '" + std::string(r.in) + "' on this worker");
          if (slots.size() <= id) slots.resize(id + 1);
          slots[id] = Slot{codec, codec->make_decoder()};
          break;
        }
        case FrameKind::kMeta: {
          Slot& s = slot(r);
          try {
            s.decoder->decode_meta(r.in);
          } catch (const ClinkError& e) {
            throw ChannelError(s.codec->name + " metadata: " + e.what());
          }
          break;
        }
        case FrameKind::kBatch: {
          Slot& s = slot(r);
          BatchPtr batch;
          try {
            batch = s.decoder->decode(r.in);
          } catch (const ClinkError& e) {
            throw ChannelError(s.codec->name + " batch: " + e.what());
          }
          gate.count_bytes(static_cast<std::int64_t>(payload.size() + wire::kHeaderBytes));
          gate.push(c.channel, std::move(batch));
          break;
        }
        case FrameKind::kWatermark: {
          Watermark wm;
          wm.timestamp = r.get<std::int64_t>();
          wm.idle = r.get<std::uint8_t>() != 0;
          gate.push(c.channel, wm);
          break;
        }
        case FrameKind::kBarrier: {
          CheckpointBarrier b;
          b.checkpoint_id = r.get<std::int64_t>();
          b.timestamp_ms = r.get<std::int64_t>();
          auto flags = r.get<std::uint8_t>();
          b.is_savepoint = (flags & 1) != 0;
          b.stops_sources = (flags & 2) != 0;
          gate.push(c.channel, b);
          break;
        }
        case FrameKind::kEndOfInput:
          ended = true;
          gate.push(c.channel, EndOfInput{});
          break;
        default: throw ChannelError(std::string("unexpected ") + wire::kind_name(kind) + " frame from the sender");
      }
    }
    if (in.fill(c.fd.get()) == wire::FrameReader::Fill::kEof) {
      if (!in.empty()) throw ChannelError("the sender closed the connection in the middle of a frame");
      return;
    }
  }
}

void ShuffleServer::Impl::serve(const std::shared_ptr<Connection>& c) {
  wire::FrameReader in;
  std::shared_ptr<Route> route;
  bool ended = false;
  try {
    try {
      read_hello(*c, in);
      route = wait_for_route(*c);
      {
        std::lock_guard lock(route->mu);
        route->channels[c->channel] = c;
      }
      c->grant(static_cast<std::uint32_t>(route->gate->capacity()));
      stream(*c, *route, in, ended);
      if (!ended) throw ChannelError("the sender closed the channel before its end of input");
    } catch (const ChannelError&) {
      throw;
    } catch (const TaskCancelled&) {
      throw;
    } catch (const std::exception& e) {
      throw ChannelError(e.what());  // a socket error, a truncated frame
    }
  } catch (const TaskCancelled&) {
    // unregister_attempt or the server's shutdown: nothing to say. The gate was
    // cancelled: tell the sender why the channel closes, but this is no failure.
    bool by_us;
    {
      std::lock_guard lock(mu);
      by_us = c->unregistered || stopping;
    }
    if (!by_us) c->send_error("the receiving task was cancelled");
  } catch (const ChannelError& e) {
    bool quiet;
    {
      std::lock_guard lock(mu);
      quiet = c->unregistered || stopping;
    }
    if (!quiet) {
      std::string where = c->identified ? "channel " + std::to_string(c->channel) + " of task " + std::to_string(c->task) +
                                              " (job " + c->job_id + ", attempt " + std::to_string(c->attempt) + ") from " + c->peer + ": "
                                        : "";
      const std::string message = e.what();
      report(*c, message.rfind("channel ", 0) == 0 ? message : where + message);  // first: the sender waits for the next line
      c->send_error(message);
    }
  }
  if (route) {
    std::lock_guard lock(route->mu);
    if (route->channels[c->channel] == c) route->channels[c->channel] = nullptr;
  }
  {
    std::lock_guard lock(c->write_mu);
    c->closed = true;
    c->fd.reset();
  }
  c->done = true;
}

ShuffleServer::ShuffleServer(const std::string& host, int port, ShuffleServerOptions options)
    : impl_(std::make_unique<Impl>()) {
  register_builtin_batch_codecs();
  impl_->host = host;
  impl_->options = std::move(options);
  const std::string address = host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (int gai = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), std::to_string(port).c_str(), &hints, &found))
    throw ClinkError("shuffle: cannot resolve the listen address " + address + ": " + ::gai_strerror(gai));
  std::string error = "no address";
  for (addrinfo* ai = found; ai && !impl_->listen_fd; ai = ai->ai_next) {
    wire::Fd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
    int one = 1;
    if (fd) ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (!fd || ::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd.get(), 256) != 0) {
      error = wire::errno_text(errno);
      continue;
    }
    impl_->listen_fd = std::move(fd);
  }
  ::freeaddrinfo(found);
  if (!impl_->listen_fd) throw ClinkError("shuffle: cannot listen on " + address + ": " + error);
  sockaddr_storage sa{};
  socklen_t len = sizeof sa;
  ::getsockname(impl_->listen_fd.get(), reinterpret_cast<sockaddr*>(&sa), &len);
  impl_->port = ntohs(sa.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&sa)->sin6_port
                                               : reinterpret_cast<sockaddr_in*>(&sa)->sin_port);
  impl_->acceptor = std::thread([impl = impl_.get()] { impl->accept_loop(); });
}

ShuffleServer::~ShuffleServer() {
  std::vector<std::shared_ptr<Connection>> all;
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
    all.swap(impl_->connections);
    for (auto& c : all) c->unregistered = true;
  }
  impl_->route_added.notify_all();
  ::shutdown(impl_->listen_fd.get(), SHUT_RDWR);  // wakes accept()
  impl_->acceptor.join();
  for (auto& c : all) c->shut_down();
  for (auto& c : all) c->thread.join();
}

const std::string& ShuffleServer::host() const { return impl_->host; }
int ShuffleServer::port() const { return impl_->port; }

void ShuffleServer::register_gate(const std::string& job_id, std::int64_t attempt, std::int32_t task, InputGate* gate) {
  auto route = std::make_shared<Route>();
  route->gate = gate;
  route->credit_batch = static_cast<std::uint32_t>(std::max<std::size_t>(1, gate->capacity() / 4));
  route->channels.resize(gate->channels());
  route->used.resize(gate->channels());
  {
    std::lock_guard lock(impl_->mu);
    if (impl_->dead_attempts.count({job_id, attempt}))
      throw ClinkError("shuffle: attempt " + std::to_string(attempt) + " of job " + job_id + " was unregistered");
    if (!impl_->routes.emplace(std::make_tuple(job_id, attempt, task), route).second)
      throw ClinkError("shuffle: task " + std::to_string(task) + " of job " + job_id + " attempt " + std::to_string(attempt) +
                       " is already registered");
  }
  // The listener keeps the route alive as long as the gate does.
  gate->set_pop_listener([route](std::size_t channel) { route->on_pop(channel); });
  impl_->route_added.notify_all();
}

void ShuffleServer::unregister_attempt(const std::string& job_id, std::int64_t attempt) {
  std::vector<std::shared_ptr<Connection>> closing;
  {
    std::lock_guard lock(impl_->mu);
    impl_->dead_attempts.insert({job_id, attempt});
    for (auto it = impl_->routes.begin(); it != impl_->routes.end();) {
      if (std::get<0>(it->first) == job_id && std::get<1>(it->first) == attempt) it = impl_->routes.erase(it);
      else ++it;
    }
    auto mine = [&](const std::shared_ptr<Connection>& c) { return c->identified && c->job_id == job_id && c->attempt == attempt; };
    auto it = std::stable_partition(impl_->connections.begin(), impl_->connections.end(), [&](const auto& c) { return !mine(c); });
    closing.assign(std::make_move_iterator(it), std::make_move_iterator(impl_->connections.end()));
    impl_->connections.erase(it, impl_->connections.end());
    for (auto& c : closing) c->unregistered = true;
  }
  impl_->route_added.notify_all();
  for (auto& c : closing) c->shut_down();
  for (auto& c : closing) {
    if (c->thread.get_id() == std::this_thread::get_id()) c->thread.detach();  // called from on_channel_failure
    else c->thread.join();
  }
}

std::size_t ShuffleServer::open_connections() const {
  std::lock_guard lock(impl_->mu);
  return static_cast<std::size_t>(std::count_if(impl_->connections.begin(), impl_->connections.end(),
                                                [](const auto& c) { return !c->done.load(); }));
}

}  // namespace clink::cluster
