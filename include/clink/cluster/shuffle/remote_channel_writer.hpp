#pragma once
// The sending end of a channel whose input gate is in another process: frames over one
// TCP connection to that worker's ShuffleServer, with credit-based flow control (Flink's
// design): the receiver grants one credit per free slot of the channel in its gate and
// returns them as its task pops, the sender never sends an element (batch, watermark,
// barrier, end of input) without one, and blocks while it has none: that is the
// backpressure, and the receiving gate never holds more than its capacity.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "clink/runtime/channel_writer.hpp"

namespace clink::cluster {

struct ChannelConnectOptions {
  // How long to keep retrying a connection that is refused or times out (the receiving
  // worker may still be starting).
  std::chrono::milliseconds connect_timeout{30000};
  // How often a sender blocked on credits or on the socket checks `cancelled`.
  std::chrono::milliseconds poll_interval{50};
  // After end of input, how long the writer's destructor waits for the receiver to read
  // everything and close, before it closes anyway.
  std::chrono::milliseconds close_timeout{10000};
};

// Connects to the ShuffleServer at host:port and opens channel `channel` of task `task`
// of (job_id, attempt) there. Retries until connect_timeout, then throws ClinkError
// naming host:port and the channel; throws TaskCancelled as soon as `cancelled()` says
// so (here and in push). The returned writer's push() throws ClinkError when the
// receiver rejects the channel (its message), closes it, or a batch type has no codec
// (register_batch_codec); the built-in codecs are registered by this call.
std::unique_ptr<ChannelWriter> connect_channel(const std::string& host, int port, const std::string& job_id,
                                               std::int64_t attempt, std::int32_t task, std::uint32_t channel,
                                               std::function<bool()> cancelled, ChannelConnectOptions options = {});

}  // namespace clink::cluster
