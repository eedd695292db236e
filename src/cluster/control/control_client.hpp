#pragma once
// The worker's end of the control plane: opens `Coordinator.Connect` (control.proto),
// registers, heartbeats, delivers the coordinator's commands, and reconnects (with
// backoff, to the address a resolver gives: a new leader under HA) when the stream
// breaks. gRPC's headers stay in control_client.cpp.
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "cluster/control/control.pb.h"

namespace clink::cluster {

struct ControlClientOptions {
  // Where to connect ("host:port"), asked before each attempt (the first one too); unset:
  // always the target given to connect(). Under HA it returns the current leader, or ""
  // while there is none (the attempt is skipped: wait the backoff, ask again).
  std::function<std::string()> resolver;
  // The wait before reconnecting: doubles after each failed attempt up to the maximum,
  // back to the initial one once registered.
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{5000};
  // How long an attempt may take to connect and be answered Registered.
  std::chrono::milliseconds connect_timeout{5000};
};

// Called from the client's threads, never under its lock (send() may be called from
// them). on_message and on_connected come from the reader thread, in stream order.
struct ControlClientCallbacks {
  // Registered by the coordinator at `target` (first connection and each reconnection).
  std::function<void(const std::string& target, const proto::Registered&)> on_connected;
  // A command of the coordinator (not Registered, not the heartbeat replies).
  std::function<void(const proto::CoordinatorMessage&)> on_message;
  // A registered stream broke (the reason names the address); reconnection follows.
  std::function<void(const std::string& reason)> on_disconnected;
  // The metrics_json of each Heartbeat (empty if unset).
  std::function<std::string()> metrics_json;
};

class ControlClient {
 public:
  // `registration` is sent first on every stream.
  ControlClient(proto::Register registration, ControlClientOptions options, ControlClientCallbacks callbacks);
  ~ControlClient();  // stop()
  ControlClient(const ControlClient&) = delete;
  ControlClient& operator=(const ControlClient&) = delete;

  // Starts connecting to `target` ("host:port"; with a resolver, to what it gives) in the
  // background, and keeps connected until stop(): returns at once (wait_connected()
  // waits for the registration). Once only.
  void connect(const std::string& target);
  // Waits until registered and on_connected returned (true), or `timeout` passed (false).
  bool wait_connected(std::chrono::milliseconds timeout);
  bool connected() const;
  std::string target() const;  // of the current (or last) stream
  std::string last_error() const;  // why the last stream or attempt ended ("" if none did)

  // Queues `message` for the stream's writer thread and returns at once (thread-safe;
  // the messages of one thread arrive in order); false if not registered now (a message
  // sent while reconnecting is not kept: the owner resends what it must after
  // on_connected). A queued message is lost if the stream breaks before it is written.
  bool send(const proto::WorkerMessage& message);

  // Ends the stream and the threads; no on_disconnected. Idempotent.
  void stop();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace clink::cluster
