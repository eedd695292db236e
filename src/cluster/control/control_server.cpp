// The coordinator's control-plane server on gRPC's synchronous API: gRPC runs each
// worker's Connect call on a thread of its own, which reads the stream and calls the
// owner back; a writer thread per stream sends what send() queued; one watchdog thread
// ends the streams whose worker went silent for heartbeat.timeout.
#include "control_server.hpp"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "cluster/control/control.grpc.pb.h"
#include "control_common.hpp"
#include "write_queue.hpp"

namespace clink::cluster {
// Not an anonymous namespace: this file is compiled inside one unity translation unit
// (CMakeLists.txt), where GCC rejects classes of external linkage using one.
namespace control_server_internal {

using ServerStream = grpc::ServerReaderWriter<proto::CoordinatorMessage, proto::WorkerMessage>;

// One registered worker's stream.
struct Session {
  std::string worker_id;
  std::string peer;
  grpc::ServerContext* context = nullptr;
  WriteQueue<proto::CoordinatorMessage> queue;
  std::atomic<int64_t> last_message_ms{0};
  std::mutex mu;
  std::string end_reason;  // set by whoever ends the stream from this side
  bool finished = false;   // Connect is returning: `context` is about to go
  // Held around each callback about this session, so that its on_lost comes after its
  // last on_message (a stream replaced by a new one may still be delivering).
  std::mutex callback_mu;
  bool lost_reported = false;  // under callback_mu: nothing more is delivered

  // Ends the stream from this side (the reading thread's Read returns false). Safe from
  // any thread at any time: shutdown() and disconnect() call it outside the server's
  // lock, when the stream may be ending by itself.
  void end(const std::string& reason) {
    std::lock_guard lock(mu);
    if (end_reason.empty()) end_reason = reason;  // before anything can end the reading
    queue.close();
    if (!finished) context->TryCancel();
  }
  // Called by Connect before it returns: no TryCancel on the context after this.
  void finish() {
    std::lock_guard lock(mu);
    finished = true;
  }
  std::string reason() {
    std::lock_guard lock(mu);
    return end_reason;
  }
};

}  // namespace control_server_internal
using control_server_internal::ServerStream;
using control_server_internal::Session;

class ControlServer::Impl final : public proto::Coordinator::Service {
 public:
  Impl(ControlServerOptions options, ControlServerCallbacks callbacks)
      : options_(std::move(options)), callbacks_(std::move(callbacks)) {
    if (options_.heartbeat_timeout.count() <= 0 || options_.heartbeat_interval.count() <= 0)
      throw std::invalid_argument("control plane: heartbeat.interval and heartbeat.timeout must be positive");
    std::string listen = options_.host + ":" + std::to_string(options_.port);
    grpc::ServerBuilder builder;
    // Without this gRPC sets SO_REUSEPORT and a second coordinator on a taken port would
    // share it silently instead of failing.
    builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    // The receive window stays at HTTP/2's 64 KiB instead of growing with the measured
    // bandwidth-delay product: a worker writing to a hung coordinator then blocks on
    // HTTP/2 flow control, which cancelling the stream ends, never on a full TCP buffer,
    // which only the kernel's timeout ends (control messages need no large window).
    builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    builder.SetMaxReceiveMessageSize(kMaxControlMessageBytes);
    builder.SetMaxSendMessageSize(kMaxControlMessageBytes);
    builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
    if (!server_ || port_ == 0)
      throw std::runtime_error("control plane: cannot listen on " + listen + " (address in use or invalid)");
    address_ = options_.host + ":" + std::to_string(port_);
    watchdog_ = std::thread([this] { watch_heartbeats(); });
  }

  ~Impl() override { shutdown(); }

  int port() const { return port_; }
  const std::string& address() const { return address_; }

  bool send(const std::string& worker_id, const proto::CoordinatorMessage& message) {
    std::shared_ptr<Session> session = find(worker_id);
    return session && session->queue.push(message);
  }

  void disconnect(const std::string& worker_id) {
    std::shared_ptr<Session> session;
    {
      std::lock_guard lock(mu_);
      auto it = sessions_.find(worker_id);
      if (it == sessions_.end()) return;
      session = std::move(it->second);
      sessions_.erase(it);  // so that its end reports no on_lost
    }
    session->end("worker " + worker_id + " disconnected by the coordinator");
  }

  std::vector<std::string> workers() const {
    std::lock_guard lock(mu_);
    std::vector<std::string> ids;
    for (const auto& [id, session] : sessions_) ids.push_back(id);
    return ids;
  }

  void shutdown() {
    std::map<std::string, std::shared_ptr<Session>> sessions;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      stopping_ = true;
      sessions.swap(sessions_);  // none of them reports on_lost now
    }
    cv_.notify_all();
    for (auto& [id, session] : sessions) session->end("the coordinator at " + address_ + " shut down");
    {
      std::lock_guard lock(mu_);
      for (auto& [context, since] : unregistered_) context->TryCancel();
    }
    // Calls still arriving are refused by Connect (stopping_); the deadline cancels any
    // call that started in between.
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
    server_->Wait();
    if (watchdog_.joinable()) watchdog_.join();
  }

  grpc::Status Connect(grpc::ServerContext* context, ServerStream* stream) override {
    proto::WorkerMessage message;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the coordinator at " + address_ + " is shutting down");
      unregistered_[context] = steady_ms();  // the watchdog ends it if Register does not come
    }
    bool read = stream->Read(&message);
    {
      std::lock_guard lock(mu_);
      unregistered_.erase(context);
    }
    if (!read)
      return grpc::Status(grpc::StatusCode::CANCELLED, "control stream from " + context->peer() +
                                                           " ended before Register (or sent none within heartbeat.timeout)");
    if (!message.has_register_())
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "the first message on the control stream must be Register, got " +
                              std::string(kind_name(message)) + " from " + context->peer());
    const proto::Register registration = message.register_();  // a copy: `message` is read into again
    const std::string id = registration.worker_id();
    if (id.empty())
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "Register from " + context->peer() + " has an empty worker_id");

    auto session = std::make_shared<Session>();
    session->worker_id = id;
    session->peer = context->peer();
    session->context = context;
    session->last_message_ms = steady_ms();
    proto::CoordinatorMessage registered;
    registered.mutable_registered()->set_heartbeat_interval_ms(options_.heartbeat_interval.count());
    registered.mutable_registered()->set_heartbeat_timeout_ms(options_.heartbeat_timeout.count());
    session->queue.push(registered);  // first on the stream, before any send() can be
    std::shared_ptr<Session> replaced;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the coordinator at " + address_ + " is shutting down");
      auto& slot = sessions_[id];
      replaced = std::move(slot);
      slot = session;
    }
    if (replaced) {
      std::string reason = "worker " + id + " registered again from " + session->peer + " (its stream from " +
                           replaced->peer + " is replaced)";
      replaced->end(reason);
      report_lost(*replaced, reason);
    }
    std::thread writer([session, stream] {
      session->queue.drain([&](const proto::CoordinatorMessage& m) { return stream->Write(m); });
      session->context->TryCancel();  // a failed write ends the reading too
    });
    if (callbacks_.on_registered) callbacks_.on_registered(registration);

    while (stream->Read(&message)) {
      session->last_message_ms = steady_ms();
      if (message.has_heartbeat()) {
        proto::CoordinatorMessage reply;
        reply.mutable_heartbeat()->set_time_ms(message.heartbeat().time_ms());
        session->queue.push(reply);
      }
      std::lock_guard callback_lock(session->callback_mu);
      if (session->lost_reported) continue;  // replaced: what it still sends no longer counts
      if (callbacks_.on_message) callbacks_.on_message(id, message);
    }
    std::string reason = session->reason();
    if (reason.empty()) reason = "the control stream of worker " + id + " from " + session->peer + " ended";
    session->queue.close();
    bool lost = false;
    {
      std::lock_guard lock(mu_);
      auto it = sessions_.find(id);
      if (it != sessions_.end() && it->second == session) {
        sessions_.erase(it);
        lost = true;
      }
    }
    if (lost) report_lost(*session, reason);  // not after the writer: it may wait for the network
    writer.join();
    session->finish();
    return grpc::Status(grpc::StatusCode::CANCELLED, reason);
  }

 private:
  std::shared_ptr<Session> find(const std::string& worker_id) const {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(worker_id);
    return it == sessions_.end() ? nullptr : it->second;
  }

  // Once per session, after its last on_message.
  void report_lost(Session& session, const std::string& reason) {
    std::lock_guard callback_lock(session.callback_mu);
    if (session.lost_reported) return;
    session.lost_reported = true;
    if (callbacks_.on_lost) callbacks_.on_lost(session.worker_id, reason);
  }

  // Ends each stream whose worker sent nothing for heartbeat_timeout; checks at a tenth
  // of the timeout (at most every 100 ms), so detection takes at most that much longer.
  void watch_heartbeats() {
    const int64_t timeout = options_.heartbeat_timeout.count();
    const auto tick = std::chrono::milliseconds(std::clamp<int64_t>(timeout / 10, 1, 100));
    std::unique_lock lock(mu_);
    while (!stopping_) {
      cv_.wait_for(lock, tick);
      int64_t now = steady_ms();
      for (auto& [context, since] : unregistered_)
        if (now - since > timeout) context->TryCancel();
      for (auto& [id, session] : sessions_) {
        int64_t silent = now - session->last_message_ms.load();
        if (silent > timeout)
          session->end("no message from worker " + id + " (" + session->peer + ") for " + std::to_string(silent) +
                       " ms (heartbeat.timeout " + std::to_string(timeout) + " ms)");
      }
    }
  }

  const ControlServerOptions options_;
  const ControlServerCallbacks callbacks_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::string address_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::shared_ptr<Session>> sessions_;  // registered workers by id
  std::map<grpc::ServerContext*, int64_t> unregistered_;      // streams waiting for Register, since
  bool stopping_ = false;
  std::thread watchdog_;
};

ControlServer::ControlServer(ControlServerOptions options, ControlServerCallbacks callbacks)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(callbacks))) {}
ControlServer::~ControlServer() { shutdown(); }
int ControlServer::port() const { return impl_->port(); }
std::string ControlServer::address() const { return impl_->address(); }
bool ControlServer::send(const std::string& worker_id, const proto::CoordinatorMessage& message) {
  return impl_->send(worker_id, message);
}
void ControlServer::disconnect(const std::string& worker_id) { impl_->disconnect(worker_id); }
std::vector<std::string> ControlServer::workers() const { return impl_->workers(); }
void ControlServer::shutdown() { impl_->shutdown(); }

}  // namespace clink::cluster
