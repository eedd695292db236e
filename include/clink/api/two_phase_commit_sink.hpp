#pragma once
// Exactly-once sinks (Flink's TwoPhaseCommitSinkFunction): records go into a
// transaction; at a checkpoint barrier the transaction is pre-committed (flushed,
// made durable but invisible) and its committable kept in operator state; once the
// checkpoint completes it is committed (made visible). After a failure the restored
// operator commits again what the restored checkpoint pre-committed, so commits must
// be idempotent. At end of input the last transaction is pre-committed; with
// checkpointing it is committed by the final checkpoint (the first to complete after
// the end, FLIP-147), for a failure elsewhere may still restore a checkpoint from before
// it; without checkpointing, nothing restores, and the end of input commits it at once.
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
    // Transaction ids follow the checkpoints: the one after checkpoint n is
    // (subtask << 40) + n + 1, so a restored run continues above every id the restored
    // checkpoint's runs used, even those of subtasks that finished (and left no state),
    // and above every checkpoint the job issued: a restart that falls back past a
    // damaged newest checkpoint never reuses the id of a transaction that committed.
    std::int64_t restored_checkpoint = ctx.last_checkpoint_id();
    for (const auto& item : ctx.operator_state().list(kCheckpointState, Redistribution::kUnion))
      restored_checkpoint = std::max<std::int64_t>(restored_checkpoint, std::stoll(item));
    auto& older = ctx.operator_state().list(kNextTransactionState, Redistribution::kUnion);
    for (const auto& item : older) next_transaction_ = std::max<std::int64_t>(next_transaction_, std::stoll(item));
    older.clear();  // checkpoints of older clinks recorded the next id itself
    begin_transaction_after(restored_checkpoint);
  }
  void process_batch(int, BatchPtr batch) override {
    writer_->write(static_cast<const typename TransactionalBatch<T>::type&>(*batch));
  }
  void process_watermark(Watermark wm) override {
    if (!wm.idle) writer_->on_watermark(wm.timestamp);
  }

  void snapshot_state(std::int64_t checkpoint_id) override {
    if (!finished_) {
      pending_.emplace_back(checkpoint_id, writer_->pre_commit());
      begin_transaction_after(checkpoint_id);
    } else {
      // The first checkpoint after the end of input is the final one: it commits the last transaction.
      for (auto& entry : pending_)
        if (entry.first == kAtFinalCheckpoint) entry.first = checkpoint_id;
    }
    auto& list = ctx().operator_state().list(kPendingState);
    list.clear();
    for (const auto& [id, committable] : pending_) {
      std::string item;
      StateCodec<std::int64_t>::encode(id, item);
      StateCodec<std::string>::encode(committable, item);
      list.push_back(std::move(item));
    }
    ctx().operator_state().list(kCheckpointState, Redistribution::kUnion).assign(1, std::to_string(checkpoint_id));
  }
  void notify_checkpoint_complete(std::int64_t checkpoint_id) override {
    std::size_t done = 0;
    while (done < pending_.size() && pending_[done].first <= checkpoint_id) writer_->commit(pending_[done++].second);
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(done));
  }
  void finish() override {
    writer_->end_of_input();
    pending_.emplace_back(kAtFinalCheckpoint, writer_->pre_commit());
    finished_ = true;
    // Without checkpointing no run restores from anything: commit all at once.
    if (!ctx().checkpointing_enabled()) notify_checkpoint_complete(kAtFinalCheckpoint);
  }
  void close() override {
    if (!writer_) return;
    if (!finished_) writer_->abort();
    writer_->close();
  }

 private:
  static constexpr const char* kPendingState = "pending-commits";
  static constexpr const char* kNextTransactionState = "next-transaction";  // older checkpoints
  static constexpr const char* kCheckpointState = "checkpoint";
  // Pending label of the last transaction until a checkpoint takes it.
  static constexpr std::int64_t kAtFinalCheckpoint = INT64_MAX;

  void begin_transaction_after(std::int64_t checkpoint_id) {
    const std::int64_t id = (static_cast<std::int64_t>(ctx().subtask_index()) << 40) + checkpoint_id + 1;
    next_transaction_ = std::max(next_transaction_, id);
    writer_->begin_transaction(next_transaction_++);
  }
  std::shared_ptr<const TransactionalSink<T>> sink_;
  std::unique_ptr<TransactionalSinkWriter<T>> writer_;
  std::vector<std::pair<std::int64_t, std::string>> pending_;
  std::int64_t next_transaction_ = 0;  // the lowest id not used yet
  bool finished_ = false;
};

// The record types most jobs and tests use are instantiated once, in
// src/api/common_operator_instances.cpp: without these declarations every translation
// unit that builds one of these operators compiled and optimised its own copy.
extern template class TwoPhaseCommitSinkOperator<std::int64_t>;
extern template class TwoPhaseCommitSinkOperator<std::string>;

}  // namespace clink
