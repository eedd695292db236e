#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "clink/core/stream_element.hpp"

namespace clink {

class InputGate;

// The sending end of one channel: from one upstream subtask to one downstream
// subtask's input gate. In one process it pushes into the gate; across processes it
// sends over the network (src/cluster/shuffle), with the same blocking when the
// receiver has no room, so backpressure reaches the producer either way.
class ChannelWriter {
 public:
  virtual ~ChannelWriter() = default;
  // Blocks while the receiver has no room; returns the nanoseconds it blocked. Throws
  // TaskCancelled when the job is being cancelled.
  virtual std::int64_t push(StreamElement element) = 0;
  // Where to add the bytes of the batches this writer serializes (Flink's numBytesOut of
  // the sending operator). In-process writers serialize nothing and count nothing.
  virtual void count_bytes_into(std::atomic<std::int64_t>* counter) { (void)counter; }
};

// Channel `channel` of `gate`, in this process.
std::unique_ptr<ChannelWriter> make_local_channel_writer(InputGate& gate, std::size_t channel);

}  // namespace clink
