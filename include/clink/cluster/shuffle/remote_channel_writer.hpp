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
  // SO_SNDBUF (the kernel doubles it); 0 keeps the kernel's autotuning. A small buffer
  // keeps the bytes in flight in cache: on loopback 128 KiB carried Nexmark bid batches
  // about twice as fast, at half the CPU per side, as autotuning (shuffle_bench); it
  // still covers a LAN's bandwidth-delay product (10 Gbit/s x 0.2 ms = 250 KB).
  int send_buffer_bytes = 128 * 1024;
};

// Connects to the ShuffleServer at host:port and opens channel `channel` of task `task`
// of (job_id, attempt) there. Retries until connect_timeout, then throws ClinkError
// naming host:port and the channel; throws TaskCancelled as soon as `cancelled()` says
// so (here and in push). The returned writer's push() throws ClinkError when the
// receiver rejects the channel (its message), closes it, or a batch type has no codec
// (register_batch_codec); the built-in codecs are registered by this call. `cancelled`
// is called while the writer lives (its destructor too) and must stay callable.
std::unique_ptr<ChannelWriter> connect_channel(const std::string& host, int port, const std::string& job_id,
                                               std::int64_t attempt, std::int32_t task, std::uint32_t channel,
                                               std::function<bool()> cancelled, ChannelConnectOptions options = {});

// The same, connecting on the first push (in the pushing task's thread, which then
// also sees its cancel), so a deploy need not wait for every connection.
std::unique_ptr<ChannelWriter> connect_channel_lazily(std::string host, int port, std::string job_id,
                                                      std::int64_t attempt, std::int32_t task, std::uint32_t channel,
                                                      std::function<bool()> cancelled, ChannelConnectOptions options = {});

}  // namespace clink::cluster
