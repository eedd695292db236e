#pragma once
// The receiving end of the network shuffle: one per worker process. It listens on TCP;
// every connection carries one channel (a handshake names the job, attempt, target task
// and channel index) and is routed to the InputGate registered for that task. A thread
// per connection decodes frames and pushes the elements into the gate, which never
// blocks: the sender only sends what it has credits for (see remote_channel_writer.hpp),
// and the server returns credits as the gate's task pops.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace clink {
class InputGate;
}

namespace clink::cluster {

// A channel that failed on the receiving side: rejected (no gate registered in time, a
// bad handshake or channel index, a second connection for the channel), a frame that
// does not decode, a sender that exceeded its credits, or a sender that went away
// before its end of input. Identity fields are empty / -1 when the handshake was not read.
struct ChannelFailure {
  std::string job_id;
  std::int64_t attempt = -1;
  std::int32_t task = -1;
  std::int64_t channel = -1;
  std::string peer;  // the sender's host:port
  std::string message;
};

struct ShuffleServerOptions {
  // How long a connection waits for its gate to be registered (a deploy on this worker
  // may lag the sender's) before it is refused.
  std::chrono::milliseconds gate_wait{30000};
  // How long a new connection may take to send its handshake.
  std::chrono::milliseconds hello_timeout{10000};
  // Called from the connection's thread for each failed channel (not for connections
  // closed by unregister_attempt or the server's shutdown). Default: a line on stderr.
  // It may call unregister_attempt (the calling connection's thread is then detached
  // rather than joined).
  std::function<void(const ChannelFailure&)> on_channel_failure;
};

class ShuffleServer {
 public:
  // Listens on host:port (port 0: any free port). Throws ClinkError naming the address.
  ShuffleServer(const std::string& host, int port, ShuffleServerOptions options = {});
  // Closes every connection and joins every thread.
  ~ShuffleServer();
  ShuffleServer(const ShuffleServer&) = delete;
  ShuffleServer& operator=(const ShuffleServer&) = delete;

  const std::string& host() const;
  int port() const;

  // Routes the channels of (job_id, attempt, task) to `gate` and installs the gate's
  // pop listener (credits back to the senders): call it before the task pops. Throws
  // ClinkError when that task is already registered or the attempt was unregistered.
  void register_gate(const std::string& job_id, std::int64_t attempt, std::int32_t task, InputGate* gate);
  // Forgets every gate of the attempt, closes its connections and joins their threads,
  // so no element reaches those gates after it returns; later connections for the
  // attempt are refused. Call it before the gates are destroyed.
  void unregister_attempt(const std::string& job_id, std::int64_t attempt);

  // Connections open now (handshaking, waiting for a gate or streaming).
  std::size_t open_connections() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace clink::cluster
