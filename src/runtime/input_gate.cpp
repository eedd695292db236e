#include "clink/runtime/input_gate.hpp"

#include <algorithm>

#include "clink/core/error.hpp"
#include "clink/runtime/channel_writer.hpp"

namespace clink {

InputGate::InputGate(std::vector<int> channel_inputs, std::size_t capacity_per_channel)
    : channel_inputs_(std::move(channel_inputs)),
      capacity_(std::max<std::size_t>(1, capacity_per_channel)),
      channels_(channel_inputs_.size()) {}

std::int64_t InputGate::push(std::size_t channel, StreamElement element) {
  std::unique_lock lock(mu_);
  Channel& ch = channels_[channel];
  std::int64_t blocked_ns = 0;
  if (ch.queue.size() >= capacity_ && !cancelled_) {
    auto start = std::chrono::steady_clock::now();
    not_full_.wait(lock, [&] { return cancelled_ || ch.queue.size() < capacity_; });
    blocked_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  }
  if (cancelled_) throw TaskCancelled();
  ch.queue.push_back(std::move(element));
  high_water_ = std::max(high_water_, ch.queue.size());
  lock.unlock();
  not_empty_.notify_one();
  return blocked_ns;
}

std::optional<InputGate::Popped> InputGate::pop(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mu_);
  const std::size_t n = channels_.size();
  for (;;) {
    if (cancelled_) throw TaskCancelled();
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t c = (next_ + i) % n;
      Channel& ch = channels_[c];
      if (ch.blocked || ch.queue.empty()) continue;
      Popped p{c, std::move(ch.queue.front())};
      ch.queue.pop_front();
      // Stay on a channel while it has data (keeps batches of one producer together),
      // but move on after each element so no channel starves.
      next_ = (c + 1) % n;
      auto listener = pop_listener_;
      lock.unlock();
      not_full_.notify_all();
      if (listener) (*listener)(c);
      return p;
    }
    if (woken_) {
      woken_ = false;
      return std::nullopt;
    }
    if (not_empty_.wait_until(lock, deadline) == std::cv_status::timeout) {
      // One last look before giving up.
      bool any = std::any_of(channels_.begin(), channels_.end(),
                             [](const Channel& ch) { return !ch.blocked && !ch.queue.empty(); });
      if (!any) return std::nullopt;
    }
  }
}

void InputGate::set_blocked(std::size_t channel, bool blocked) {
  std::lock_guard lock(mu_);
  channels_[channel].blocked = blocked;
}

void InputGate::set_pop_listener(std::function<void(std::size_t channel)> listener) {
  auto shared = listener ? std::make_shared<const std::function<void(std::size_t)>>(std::move(listener)) : nullptr;
  std::lock_guard lock(mu_);
  pop_listener_ = std::move(shared);
}

void InputGate::wake() {
  {
    std::lock_guard lock(mu_);
    woken_ = true;
  }
  not_empty_.notify_all();
}

void InputGate::cancel() {
  {
    std::lock_guard lock(mu_);
    cancelled_ = true;
  }
  not_empty_.notify_all();
  not_full_.notify_all();
}

std::size_t InputGate::high_water_mark() const {
  std::lock_guard lock(mu_);
  return high_water_;
}

namespace {

class LocalChannelWriter final : public ChannelWriter {
 public:
  LocalChannelWriter(InputGate& gate, std::size_t channel) : gate_(gate), channel_(channel) {}
  std::int64_t push(StreamElement element) override { return gate_.push(channel_, std::move(element)); }

 private:
  InputGate& gate_;
  std::size_t channel_;
};

}  // namespace

std::unique_ptr<ChannelWriter> make_local_channel_writer(InputGate& gate, std::size_t channel) {
  return std::make_unique<LocalChannelWriter>(gate, channel);
}

}  // namespace clink
