#pragma once
// Exactly-once sinks (Flink's TwoPhaseCommitSinkFunction): records go into a
// transaction; at a checkpoint barrier the transaction is pre-committed (flushed,
// made durable but invisible) and its committable kept in operator state; once the
// checkpoint completes it is committed (made visible). After a failure the restored
// operator commits again what the restored checkpoint pre-committed, so commits must
// be idempotent. At end of input the last transaction commits directly.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "clink/api/sink.hpp"
#include "clink/state/state_codec.hpp"

namespace clink {

// The batch type a transactional sink of T receives: Batch<T>, unless a record type
// declares otherwise (the SQL runtime's columnar batch is its own batch type).
template <class T>
struct TransactionalBatch {
  using type = Batch<T>;
};

template <class T>
class TransactionalSinkWriter {
 public:
  virtual ~TransactionalSinkWriter() = default;
  virtual void open(RuntimeContext&) {}
  // Starts the transaction that the following writes go to.
  virtual void begin_transaction(std::int64_t transaction_id) = 0;
  virtual void write(const typename TransactionalBatch<T>::type& batch) = 0;
  // Makes the current transaction durable; returns what commit() needs.
  virtual std::string pre_commit() = 0;
  // Makes a pre-committed transaction visible. Idempotent.
  virtual void commit(const std::string& committable) = 0;
  // Drops the current (not pre-committed) transaction.
  virtual void abort() {}
  // The sink's input watermark advanced (a non-idle one).
  virtual void on_watermark(EventTime) {}
  // The input ended; the last transaction's pre_commit and commit follow.
  virtual void end_of_input() {}
  virtual void close() {}
};

template <class T>
class TransactionalSink {
 public:
  virtual ~TransactionalSink() = default;
  virtual std::unique_ptr<TransactionalSinkWriter<T>> create_writer(int subtask, int parallelism) const = 0;
  virtual std::string factory_name() const = 0;
};

template <class T>
class TwoPhaseCommitSinkOperator final : public StreamOperator {
 public:
  explicit TwoPhaseCommitSinkOperator(std::shared_ptr<const TransactionalSink<T>> sink) : sink_(std::move(sink)) {}

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    writer_ = sink_->create_writer(ctx.subtask_index(), ctx.parallelism());
    writer_->open(ctx);
    // Pre-committed in the checkpoint we restored from, which completed: commit now.
    for (const auto& item : ctx.operator_state().list(kPendingState)) {
      std::string_view in(item);
      StateCodec<std::int64_t>::decode(in);
      writer_->commit(StateCodec<std::string>::decode(in));
    }
    ctx.operator_state().list(kPendingState).clear();
    // Transaction ids keep growing across restores, so staged names never collide.
    next_transaction_ = (static_cast<std::int64_t>(ctx.subtask_index()) << 40) + 1;
    for (const auto& item : ctx.operator_state().list(kNextTransactionState, Redistribution::kUnion))
      next_transaction_ = std::max<std::int64_t>(next_transaction_, std::stoll(item));
    writer_->begin_transaction(next_transaction_++);
  }
  void process_batch(int, BatchPtr batch) override {
    writer_->write(static_cast<const typename TransactionalBatch<T>::type&>(*batch));
  }
  void process_watermark(Watermark wm) override {
    if (!wm.idle) writer_->on_watermark(wm.timestamp);
  }

  void snapshot_state(std::int64_t checkpoint_id) override {
    pending_.emplace_back(checkpoint_id, writer_->pre_commit());
    writer_->begin_transaction(next_transaction_++);
    auto& list = ctx().operator_state().list(kPendingState);
    list.clear();
    for (const auto& [id, committable] : pending_) {
      std::string item;
      StateCodec<std::int64_t>::encode(id, item);
      StateCodec<std::string>::encode(committable, item);
      list.push_back(std::move(item));
    }
    ctx().operator_state().list(kNextTransactionState, Redistribution::kUnion).assign(1, std::to_string(next_transaction_));
  }
  void notify_checkpoint_complete(std::int64_t checkpoint_id) override {
    std::size_t done = 0;
    while (done < pending_.size() && pending_[done].first <= checkpoint_id) writer_->commit(pending_[done++].second);
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(done));
  }
  void finish() override {
    // End of input: nothing can fail before this is visible, commit at once.
    writer_->end_of_input();
    notify_checkpoint_complete(INT64_MAX);
    writer_->commit(writer_->pre_commit());
    finished_ = true;
  }
  void close() override {
    if (!writer_) return;
    if (!finished_) writer_->abort();
    writer_->close();
  }

 private:
  static constexpr const char* kPendingState = "pending-commits";
  static constexpr const char* kNextTransactionState = "next-transaction";
  std::shared_ptr<const TransactionalSink<T>> sink_;
  std::unique_ptr<TransactionalSinkWriter<T>> writer_;
  std::vector<std::pair<std::int64_t, std::string>> pending_;
  std::int64_t next_transaction_ = 1;
  bool finished_ = false;
};

}  // namespace clink
