#pragma once
// Collects every record of every subtask into memory, for tests: keep the shared_ptr,
// run the job, then read values() or records().
#include <memory>
#include <mutex>
#include <vector>

#include "clink/api/sink.hpp"

namespace clink {

template <class T>
class CollectSink final : public Sink<T> {
 public:
  std::unique_ptr<SinkWriter<T>> create_writer(int, int) const override { return std::make_unique<Writer>(state_); }
  std::string factory_name() const override { return "collect"; }

  // In arrival order: each subtask's records in its order, subtasks interleaved.
  std::vector<Record<T>> records() const {
    std::lock_guard lock(state_->mu);
    return state_->records;
  }
  std::vector<T> values() const {
    std::lock_guard lock(state_->mu);
    std::vector<T> v;
    v.reserve(state_->records.size());
    for (const auto& r : state_->records) v.push_back(r.value);
    return v;
  }
  std::size_t size() const {
    std::lock_guard lock(state_->mu);
    return state_->records.size();
  }
  void clear() {
    std::lock_guard lock(state_->mu);
    state_->records.clear();
  }

 private:
  // Shared with the writers, which may outlive a job but not this state.
  struct State {
    mutable std::mutex mu;
    std::vector<Record<T>> records;
  };
  class Writer final : public SinkWriter<T> {
   public:
    explicit Writer(std::shared_ptr<State> s) : state_(std::move(s)) {}
    void write(const Batch<T>& batch) override {
      std::lock_guard lock(state_->mu);  // once per batch
      state_->records.insert(state_->records.end(), batch.records.begin(), batch.records.end());
    }

   private:
    std::shared_ptr<State> state_;
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace clink
