#pragma once
// The messages waiting to be written on one control stream. send() only queues (it
// never waits on the network, so a hung peer never blocks the sender); one writer
// thread per stream drains the queue in order, one blocking gRPC write at a time (gRPC
// allows one outstanding write per stream).
#include <condition_variable>
#include <deque>
#include <mutex>

namespace clink::cluster {

template <class Message>
class WriteQueue {
 public:
  // False once closed: the stream is gone, the message is not kept.
  bool push(const Message& message) {
    {
      std::lock_guard lock(mu_);
      if (closed_) return false;
      queue_.push_back(message);
    }
    cv_.notify_one();
    return true;
  }

  // The writer thread: writes each message with `write(const Message&) -> bool` until
  // close() or a failed write (which closes the queue).
  template <class Write>
  void drain(Write&& write) {
    std::unique_lock lock(mu_);
    while (true) {
      cv_.wait(lock, [&] { return closed_ || !queue_.empty(); });
      if (closed_) return;
      Message message = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      bool ok = write(message);
      lock.lock();
      if (!ok) {
        closed_ = true;
        queue_.clear();
        return;
      }
    }
  }

  // Drops what is queued, fails later pushes and ends drain().
  void close() {
    {
      std::lock_guard lock(mu_);
      closed_ = true;
      queue_.clear();
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Message> queue_;
  bool closed_ = false;
};

}  // namespace clink::cluster
