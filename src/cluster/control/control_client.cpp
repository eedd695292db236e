// The worker's control-plane client on gRPC's synchronous API. Three threads: the
// session thread connects, registers and then reads the stream (calling the owner back),
// and reconnects with backoff when it breaks; a writer thread per stream sends what
// send() queued; the ticker thread queues a Heartbeat every heartbeat interval and ends
// a stream the coordinator stopped answering (or that takes too long to register).
#include "control_client.hpp"

#include <grpcpp/grpcpp.h>

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "cluster/control/control.grpc.pb.h"
#include "control_common.hpp"
#include "write_queue.hpp"

namespace clink::cluster {

class ControlClient::Impl {
 public:
  Impl(proto::Register registration, ControlClientOptions options, ControlClientCallbacks callbacks)
      : registration_(std::move(registration)), options_(std::move(options)), callbacks_(std::move(callbacks)) {
    registration_message_.mutable_register_()->CopyFrom(registration_);
  }
  ~Impl() { stop(); }

  void connect(const std::string& target) {
    std::lock_guard lock(mu_);
    if (started_ || stopping_) return;
    started_ = true;
    first_target_ = target;
    session_thread_ = std::thread([this] { run_sessions(); });
    ticker_thread_ = std::thread([this] { tick(); });
  }

  bool wait_connected(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return (connected_ && announced_) || stopping_; }) && connected_;
  }
  bool connected() const {
    std::lock_guard lock(mu_);
    return connected_;
  }
  std::string target() const {
    std::lock_guard lock(mu_);
    return target_;
  }
  std::string last_error() const {
    std::lock_guard lock(mu_);
    return last_error_;
  }

  bool send(const proto::WorkerMessage& message) {
    std::shared_ptr<WriteQueue<proto::WorkerMessage>> queue;
    {
      std::lock_guard lock(mu_);
      if (!connected_) return false;
      queue = queue_;
    }
    return queue->push(message);
  }

  void stop() {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      stopping_ = true;
      if (context_) context_->TryCancel();
    }
    cv_.notify_all();
    if (session_thread_.joinable()) session_thread_.join();
    if (ticker_thread_.joinable()) ticker_thread_.join();
  }

 private:
  // Connects, serves the stream until it breaks, waits the backoff, again; until stop().
  void run_sessions() {
    auto backoff = options_.initial_backoff;
    while (true) {
      std::string target;
      {
        std::lock_guard lock(mu_);
        if (stopping_) return;
        target = first_target_;
      }
      if (options_.resolver) target = options_.resolver();
      bool registered = false;
      std::string reason = target.empty() ? "no coordinator address (the resolver knows no leader now)"
                                          : run_stream(target, registered);
      {
        std::lock_guard lock(mu_);
        if (stopping_) return;
        last_error_ = reason;
      }
      if (registered) {
        backoff = options_.initial_backoff;
        if (callbacks_.on_disconnected) callbacks_.on_disconnected(reason);
      }
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, backoff, [&] { return stopping_; });
      backoff = std::min(backoff * 2, options_.max_backoff);
    }
  }

  // One stream to `target`: returns why it ended; `registered` tells if it got that far.
  std::string run_stream(const std::string& target, bool& registered) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(kMaxControlMessageBytes);
    args.SetMaxSendMessageSize(kMaxControlMessageBytes);
    // A channel of its own per attempt: no connection shared with an earlier, broken one.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    // A fixed 64 KiB receive window (see the server's options): a coordinator writing to
    // this worker while it hangs blocks on HTTP/2 flow control, which cancels end.
    args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    auto channel = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
    auto stub = proto::Coordinator::NewStub(channel);
    grpc::ClientContext context;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return "stopped";
      context_ = &context;
      target_ = target;
      attempt_started_ms_ = steady_ms();
      end_reason_.clear();
    }
    auto stream = stub->Connect(&context);
    auto queue = std::make_shared<WriteQueue<proto::WorkerMessage>>();
    std::thread writer;
    proto::CoordinatorMessage message;
    std::string reason;
    if (!stream->Write(registration_message_)) {
      reason = "could not connect and send Register";
    } else if (!stream->Read(&message)) {
      reason = "no answer to Register";
    } else if (!message.has_registered()) {
      reason = std::string("the coordinator answered Register with ") + kind_name(message);
      context.TryCancel();
    } else {
      registered = true;
      const auto& answer = message.registered();
      {
        std::lock_guard lock(mu_);
        heartbeat_interval_ms_ = std::max<int64_t>(1, answer.heartbeat_interval_ms());
        heartbeat_timeout_ms_ = std::max<int64_t>(1, answer.heartbeat_timeout_ms());
        last_received_ms_ = steady_ms();
        next_heartbeat_ms_ = last_received_ms_;  // the first heartbeat at once
        queue_ = queue;
        connected_ = true;
      }
      cv_.notify_all();
      writer = std::thread([queue, &stream, &context] {
        queue->drain([&](const proto::WorkerMessage& m) { return stream->Write(m); });
        context.TryCancel();  // a failed write ends the reading too
      });
      if (callbacks_.on_connected) callbacks_.on_connected(target, answer);
      {
        std::lock_guard lock(mu_);
        announced_ = true;
      }
      cv_.notify_all();
      while (stream->Read(&message)) {
        {
          std::lock_guard lock(mu_);
          last_received_ms_ = steady_ms();
        }
        if (message.has_heartbeat()) continue;  // the answer to ours: liveness only
        if (callbacks_.on_message) callbacks_.on_message(message);
      }
      reason = "the stream ended";
    }
    {
      std::lock_guard lock(mu_);
      connected_ = false;
      announced_ = false;
      queue_.reset();
    }
    queue->close();
    if (writer.joinable()) writer.join();
    grpc::Status status = stream->Finish();
    std::string ended_by_us;
    {
      std::lock_guard lock(mu_);
      context_ = nullptr;
      ended_by_us = end_reason_;
    }
    std::string what = "control stream to coordinator " + target + ": ";
    if (!ended_by_us.empty()) return what + ended_by_us;
    if (!status.ok()) return what + reason + " (" + status.error_message() + ")";
    return what + reason;
  }

  // Queues the heartbeats and watches the coordinator's answers (and slow registrations).
  void tick() {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      int64_t interval = connected_ ? heartbeat_interval_ms_ : 50;
      cv_.wait_for(lock, std::chrono::milliseconds(std::clamp<int64_t>(interval / 4, 1, 50)));
      if (stopping_) return;
      int64_t now = steady_ms();
      if (connected_) {
        int64_t silent = now - last_received_ms_;
        if (silent > heartbeat_timeout_ms_) {
          end_stream("no answer from the coordinator for " + std::to_string(silent) + " ms (heartbeat.timeout " +
                     std::to_string(heartbeat_timeout_ms_) + " ms)");
        } else if (now >= next_heartbeat_ms_) {
          next_heartbeat_ms_ = now + heartbeat_interval_ms_;
          auto queue = queue_;
          lock.unlock();  // the metrics callback runs outside the lock
          proto::WorkerMessage heartbeat;
          heartbeat.mutable_heartbeat()->set_time_ms(
              std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
                  .count());
          heartbeat.mutable_heartbeat()->set_free_memory(static_cast<std::int64_t>(::sysconf(_SC_AVPHYS_PAGES)) *
                                                         ::sysconf(_SC_PAGE_SIZE));
          if (callbacks_.metrics_json) heartbeat.mutable_heartbeat()->set_metrics_json(callbacks_.metrics_json());
          queue->push(heartbeat);
          lock.lock();
        }
      } else if (context_ && now - attempt_started_ms_ > options_.connect_timeout.count()) {
        end_stream("not registered within " + std::to_string(options_.connect_timeout.count()) + " ms");
      }
    }
  }

  // Ends the current stream from this side (mu_ held).
  void end_stream(const std::string& reason) {
    if (!context_ || !end_reason_.empty()) return;
    end_reason_ = reason;
    context_->TryCancel();
  }

  proto::Register registration_;
  proto::WorkerMessage registration_message_;
  const ControlClientOptions options_;
  const ControlClientCallbacks callbacks_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false;
  bool stopping_ = false;
  bool connected_ = false;  // registered: send() queues
  bool announced_ = false;  // and on_connected returned
  std::string first_target_;
  std::string target_;
  std::string last_error_;
  grpc::ClientContext* context_ = nullptr;  // of the current attempt, for stop() and the ticker
  std::shared_ptr<WriteQueue<proto::WorkerMessage>> queue_;  // of the registered stream
  std::string end_reason_;  // why the ticker ended the current stream
  int64_t attempt_started_ms_ = 0;
  int64_t heartbeat_interval_ms_ = 10000;
  int64_t heartbeat_timeout_ms_ = 50000;
  int64_t last_received_ms_ = 0;
  int64_t next_heartbeat_ms_ = 0;
  std::thread session_thread_;
  std::thread ticker_thread_;
};

ControlClient::ControlClient(proto::Register registration, ControlClientOptions options,
                             ControlClientCallbacks callbacks)
    : impl_(std::make_unique<Impl>(std::move(registration), std::move(options), std::move(callbacks))) {}
ControlClient::~ControlClient() { stop(); }
void ControlClient::connect(const std::string& target) { impl_->connect(target); }
bool ControlClient::wait_connected(std::chrono::milliseconds timeout) { return impl_->wait_connected(timeout); }
bool ControlClient::connected() const { return impl_->connected(); }
std::string ControlClient::target() const { return impl_->target(); }
std::string ControlClient::last_error() const { return impl_->last_error(); }
bool ControlClient::send(const proto::WorkerMessage& message) { return impl_->send(message); }
void ControlClient::stop() { impl_->stop(); }

}  // namespace clink::cluster
