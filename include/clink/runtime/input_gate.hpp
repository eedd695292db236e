#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "clink/core/stream_element.hpp"

namespace clink {

// The input side of a task: one bounded FIFO channel per upstream subtask and input
// edge. A producer pushing into a full channel blocks (backpressure); the consumer
// pops from any channel it has not blocked (barrier alignment blocks channels).
// cancel() wakes everyone; a cancelled push or pop throws TaskCancelled.
class InputGate {
 public:
  struct Popped {
    std::size_t channel;
    StreamElement element;
  };

  // channel_inputs[c] is the logical input (0 or 1) that channel c belongs to.
  InputGate(std::vector<int> channel_inputs, std::size_t capacity_per_channel);

  // Returns the nanoseconds spent blocked on a full channel.
  std::int64_t push(std::size_t channel, StreamElement element);
  // Waits until an element is available on an unblocked channel, or the deadline.
  std::optional<Popped> pop(std::chrono::steady_clock::time_point deadline);
  void set_blocked(std::size_t channel, bool blocked);
  // Makes a waiting pop() return (empty) now, so the task can read its mailbox.
  void wake();
  void cancel();
  // Called after each pop, outside the lock, with the channel popped: a channel that
  // ends in another process returns a credit to its sender (src/cluster/shuffle).
  void set_pop_listener(std::function<void(std::size_t channel)> listener);
  // Bytes of batches that reached this gate serialized (from another process), added to
  // `counter` (the head operator's numBytesIn); set before the gate is used.
  void set_bytes_counter(std::atomic<std::int64_t>* counter) { bytes_counter_ = counter; }
  void count_bytes(std::int64_t n) {
    if (bytes_counter_) bytes_counter_->fetch_add(n, std::memory_order_relaxed);
  }

  std::size_t channels() const { return channel_inputs_.size(); }
  int input_of(std::size_t channel) const { return channel_inputs_[channel]; }
  std::size_t capacity() const { return capacity_; }
  // Highest number of elements ever queued in one channel (for backpressure tests).
  std::size_t high_water_mark() const;

 private:
  struct Channel {
    std::deque<StreamElement> queue;
    bool blocked = false;
  };
  std::vector<int> channel_inputs_;
  std::size_t capacity_;
  std::atomic<std::int64_t>* bytes_counter_ = nullptr;
  mutable std::mutex mu_;
  std::condition_variable not_empty_;
  std::condition_variable not_full_;
  std::vector<Channel> channels_;
  std::size_t next_ = 0;  // round-robin start, for fairness between channels
  std::size_t high_water_ = 0;
  bool cancelled_ = false;
  bool woken_ = false;
  std::shared_ptr<const std::function<void(std::size_t)>> pop_listener_;  // under mu_
};

}  // namespace clink
