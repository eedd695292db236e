#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clink/api/split_watermarks.hpp"
#include "clink/core/error.hpp"
#include "clink/core/record.hpp"
#include "clink/runtime/operator.hpp"

namespace clink {

// Reads one subtask's share of a source. Polled by the source task on its thread.
template <class T>
class SourceReader {
 public:
  using Status = SourceOperator::PollStatus;
  virtual ~SourceReader() = default;
  virtual void open(RuntimeContext&) {}
  // Append at most `max_records` records to `out`.
  virtual Status poll(Batch<T>& out, std::size_t max_records) = 0;
  // How long to wait after kNothingAvailable before polling again.
  virtual std::int64_t wait_hint_ms() const { return 1; }
  virtual void close() {}
  // Where the reader is, for checkpoints, as FLIP-27 splits: independent pieces of the
  // source's input, each with its own progress. A finished split may be left out.
  // nullopt: this reader cannot be checkpointed (a checkpoint that meets it fails,
  // saying so). Each split is one item of an even-split operator state list, so a
  // restore at another parallelism deals the splits over the new readers.
  virtual std::optional<std::vector<std::string>> snapshot_splits() const { return std::nullopt; }
  // Called after open() on a restored run with this reader's share of the splits
  // (possibly none, possibly several): it must continue each exactly after the last
  // record polled from it, and read nothing else. Not called on a fresh run, nor when
  // the checkpoint holds no splits of this source (a source new to the job).
  virtual void restore_splits(std::vector<std::string> /*splits*/) {}
  // State every subtask gets whole on restore (union redistribution), before its splits:
  // what a source without a split enumerator needs all readers to know (the Kafka
  // partitions some reader already took). Empty for most sources.
  virtual std::vector<std::string> snapshot_shared() const { return {}; }
  virtual void restore_shared(std::vector<std::string> /*items*/) {}
  // After the snapshot for checkpoint `checkpoint_id`; and when that checkpoint
  // completed (a source that reports its progress back, as Kafka's committed offsets).
  virtual void snapshot_taken(std::int64_t /*checkpoint_id*/) {}
  virtual void notify_checkpoint_complete(std::int64_t /*checkpoint_id*/) {}
  // For watermarks per split (split_watermarks.hpp): the splits the reader holds now, as
  // record_split(Record::partition) of their records. Default: one split, records
  // without partition.
  virtual const std::vector<std::uint64_t>& held_splits() const {
    static const std::vector<std::uint64_t> one{record_split(kNoPartition)};
    return one;
  }
};

// The operator state of a FLIP-27 source, typed (ReaderSourceOperator) or SQL
// (SqlSourceOperator) alike: its splits, dealt over the readers on restore (even split),
// and its shared items, which every reader gets whole (union).
struct SourceSplitState {
  static constexpr const char* kSplits = "source-splits";
  static constexpr const char* kShared = "source-shared";
  static constexpr const char* kOldPosition = "source-position";  // checkpoints of older clinks

  // What a restored run's checkpoint holds for this reader. Each list is there on every
  // subtask iff the checkpoint holds that state of this source (not for a source new to
  // the job); this subtask's share of the splits may be empty (more readers than splits).
  struct Restored {
    std::optional<std::vector<std::string>> shared;
    std::optional<std::vector<std::string>> splits;
  };
  static Restored restored(RuntimeContext& ctx) {
    Restored r;
    if (!ctx.is_restored()) return r;
    const auto& lists = ctx.operator_state().lists();
    if (lists.count(kOldPosition))
      throw ClinkError("source '" + ctx.operator_id() + "' cannot restore reader positions of an older clink's " +
                       "checkpoint (sources now checkpoint splits; take the checkpoint again)");
    if (auto it = lists.find(kShared); it != lists.end()) r.shared = it->second.items;
    if (auto it = lists.find(kSplits); it != lists.end()) r.splits = it->second.items;
    return r;
  }
  static void snapshot(RuntimeContext& ctx, std::vector<std::string> splits, std::vector<std::string> shared) {
    ctx.operator_state().list(kSplits, Redistribution::kEvenSplit) = std::move(splits);
    // Written once some reader had shared state, so a restore sees every reader's.
    if (!shared.empty() || ctx.operator_state().lists().count(kShared))
      ctx.operator_state().list(kShared, Redistribution::kUnion) = std::move(shared);
  }
};

// A source: makes one reader per subtask. Sources with a natural parallelism (one
// file, a collection) report it; others run at the operator's parallelism.
template <class T>
class Source {
 public:
  virtual ~Source() = default;
  virtual std::unique_ptr<SourceReader<T>> create_reader(int subtask, int parallelism) const = 0;
  virtual int max_parallelism() const { return 0; }  // 0: no limit
  virtual std::string factory_name() const = 0;
};

// Adapts a SourceReader to the runtime's SourceOperator. With a watermark strategy the
// source stamps event times and emits watermarks itself, per split (split_watermarks.hpp).
template <class T>
class ReaderSourceOperator final : public SourceOperator {
 public:
  ReaderSourceOperator(std::shared_ptr<const Source<T>> source, std::size_t batch_size = kDefaultBatchSize,
                       std::shared_ptr<const WatermarkStrategy<T>> watermarks = nullptr)
      : source_(std::move(source)), batch_size_(batch_size), watermark_strategy_(std::move(watermarks)) {}

  void open(RuntimeContext& ctx) override {
    SourceOperator::open(ctx);
    reader_ = source_->create_reader(ctx.subtask_index(), ctx.parallelism());
    reader_->open(ctx);
    if (watermark_strategy_) watermarks_ = std::make_unique<SplitWatermarkStrategies<T>>(*watermark_strategy_);
    auto restored = SourceSplitState::restored(ctx);
    if (restored.shared) reader_->restore_shared(std::move(*restored.shared));
    if (restored.splits) reader_->restore_splits(std::move(*restored.splits));
  }
  void snapshot_state(std::int64_t checkpoint_id) override {
    auto splits = reader_->snapshot_splits();
    if (!splits)
      throw ClinkError("source '" + ctx().operator_id() + "' (" + source_->factory_name() +
                       ") does not support checkpoints");
    SourceSplitState::snapshot(ctx(), std::move(*splits), reader_->snapshot_shared());
    reader_->snapshot_taken(checkpoint_id);
  }
  void notify_checkpoint_complete(std::int64_t checkpoint_id) override {
    if (reader_) reader_->notify_checkpoint_complete(checkpoint_id);
  }
  PollStatus poll_next() override {
    auto batch = std::make_unique<Batch<T>>();
    batch->records.reserve(batch_size_);
    PollStatus s = reader_->poll(*batch, batch_size_);
    if (watermarks_) {
      const std::int64_t now = ctx().timer_service().current_processing_time();
      watermarks_->set_splits(reader_->held_splits(), now);
      watermarks_->on_batch(*batch, now);
      if (!batch->records.empty()) output().emit(std::move(batch));
      if (auto wm = watermarks_->poll(now)) output().emit_watermark(*wm);
      return s;
    }
    if (!batch->records.empty()) output().emit(std::move(batch));
    return s;
  }
  std::int64_t wait_hint_ms() const override { return reader_ ? reader_->wait_hint_ms() : 1; }
  void close() override {
    if (reader_) reader_->close();
  }

 private:
  std::shared_ptr<const Source<T>> source_;
  std::size_t batch_size_;
  std::unique_ptr<SourceReader<T>> reader_;
  std::shared_ptr<const WatermarkStrategy<T>> watermark_strategy_;  // null: watermarks come downstream
  std::unique_ptr<SplitWatermarkStrategies<T>> watermarks_;
};

// The record types most jobs and tests use are instantiated once, in
// src/api/common_operator_instances.cpp: without these declarations every translation
// unit that builds one of these operators compiled and optimised its own copy.
extern template class ReaderSourceOperator<std::int64_t>;
extern template class ReaderSourceOperator<std::string>;

}  // namespace clink
