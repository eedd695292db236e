#pragma once
// Discards its input (Flink's blackhole connector), counting records so benchmarks
// and tests can check how many arrived.
#include <atomic>
#include <cstdint>
#include <memory>

#include "clink/api/sink.hpp"

namespace clink {

template <class T>
class BlackholeSink final : public Sink<T> {
 public:
  std::unique_ptr<SinkWriter<T>> create_writer(int, int) const override { return std::make_unique<Writer>(count_); }
  std::string factory_name() const override { return "blackhole"; }
  std::int64_t count() const { return count_->load(std::memory_order_relaxed); }

 private:
  class Writer final : public SinkWriter<T> {
   public:
    explicit Writer(std::shared_ptr<std::atomic<std::int64_t>> c) : count_(std::move(c)) {}
    void write(const Batch<T>& batch) override {
      count_->fetch_add(static_cast<std::int64_t>(batch.size()), std::memory_order_relaxed);
    }

   private:
    std::shared_ptr<std::atomic<std::int64_t>> count_;
  };
  std::shared_ptr<std::atomic<std::int64_t>> count_ = std::make_shared<std::atomic<std::int64_t>>(0);
};

}  // namespace clink
