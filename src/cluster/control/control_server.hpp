#pragma once
// The coordinator's end of the control plane: a gRPC server of `Coordinator.Connect`
// (control.proto), one bidirectional stream per worker. gRPC's headers stay in
// control_server.cpp; this header brings only the protobuf messages.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cluster/control/control.pb.h"

namespace clink::cluster {

struct ControlServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port (ControlServer::port() tells which)
  // Flink's heartbeat.interval / heartbeat.timeout (defaults 10 s / 50 s): sent to each
  // worker in Registered; a worker sending nothing for the timeout is lost.
  std::chrono::milliseconds heartbeat_interval{10000};
  std::chrono::milliseconds heartbeat_timeout{50000};
};

// Called from the server's threads, never under its lock: the owner may call send() or
// disconnect() from them. The calls for one worker come from its stream's thread in
// order (on_registered, then each on_message); they should not block for long, since
// the worker's next message waits for them.
struct ControlServerCallbacks {
  std::function<void(const proto::Register&)> on_registered;
  std::function<void(const std::string& worker_id, const proto::WorkerMessage&)> on_message;
  // Once per registered session, after its last on_message: its stream ended (the worker
  // exited or was killed, the network broke), no message came for heartbeat_timeout, or
  // the same worker_id registered again on a new stream (then before the new stream's
  // on_registered). Not called for disconnect() nor at shutdown.
  std::function<void(const std::string& worker_id, const std::string& reason)> on_lost;
};

class ControlServer {
 public:
  // Listens at once; throws std::runtime_error naming the address if it cannot.
  ControlServer(ControlServerOptions options, ControlServerCallbacks callbacks);
  ~ControlServer();  // shutdown()
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  int port() const;
  std::string address() const;  // host:port

  // Queues `message` on the worker's stream and returns at once (a writer thread per
  // stream sends in queue order, so messages from one thread arrive in order); false if
  // no registered worker has this id (never registered, lost or disconnected).
  bool send(const std::string& worker_id, const proto::CoordinatorMessage& message);
  // Ends the worker's stream (the worker sees it broken and reconnects); no on_lost (an
  // on_message already under way still completes).
  void disconnect(const std::string& worker_id);
  // The ids of the registered workers.
  std::vector<std::string> workers() const;

  // Ends every stream and stops serving; waits for the server's threads, so no callback
  // runs once it returns. Idempotent.
  void shutdown();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace clink::cluster
