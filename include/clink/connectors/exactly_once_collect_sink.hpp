#pragma once
// A CollectSink that commits through the two-phase-commit protocol: records become
// visible only when the checkpoint covering them completes (or at end of input), and
// a transaction is committed at most once even when a restore commits it again. For
// exactly-once tests: its contents after failures and restarts must equal a
// failure-free run. A transaction id committed again with other records fails the
// commit: a restored run reused the id of a committed transaction (whose records a
// sink that skips committed ids would lose).
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "clink/api/two_phase_commit_sink.hpp"
#include "clink/core/error.hpp"
#include "clink/state/state_codec.hpp"

namespace clink {

template <class T>
class ExactlyOnceCollectSink final : public TransactionalSink<T> {
 public:
  std::unique_ptr<TransactionalSinkWriter<T>> create_writer(int subtask, int) const override {
    return std::make_unique<Writer>(state_, subtask);
  }
  std::string factory_name() const override { return "exactly_once_collect"; }

  std::vector<T> values() const {
    std::lock_guard lock(state_->mu);
    return state_->committed;
  }
  std::size_t commits() const {
    std::lock_guard lock(state_->mu);
    return state_->committed_ids.size();
  }

 private:
  struct State {
    mutable std::mutex mu;
    std::vector<T> committed;
    std::map<std::string, std::string> committed_ids;  // id -> its records, encoded
  };
  class Writer final : public TransactionalSinkWriter<T> {
   public:
    Writer(std::shared_ptr<State> s, int subtask) : state_(std::move(s)), subtask_(subtask) {}
    void begin_transaction(std::int64_t id) override {
      id_ = std::to_string(subtask_) + "/" + std::to_string(id);
      open_.clear();
    }
    void write(const Batch<T>& batch) override {
      for (const auto& r : batch.records) open_.push_back(r.value);
    }
    std::string pre_commit() override {
      std::string c;
      StateCodec<std::string>::encode(id_, c);
      StateCodec<std::vector<T>>::encode(open_, c);
      open_.clear();
      return c;
    }
    void commit(const std::string& committable) override {
      std::string_view in(committable);
      std::string id = StateCodec<std::string>::decode(in);
      std::string_view records = in;
      auto values = StateCodec<std::vector<T>>::decode(in);
      std::lock_guard lock(state_->mu);
      auto [it, fresh] = state_->committed_ids.emplace(id, records);
      if (!fresh) {
        if (it->second != records)
          throw ClinkError("exactly-once collect sink: transaction " + id +
                           " committed again with other records (a restored run reused its id)");
        return;  // already committed
      }
      state_->committed.insert(state_->committed.end(), values.begin(), values.end());
    }

   private:
    std::shared_ptr<State> state_;
    int subtask_;
    std::string id_;
    std::vector<T> open_;
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace clink
