#pragma once
// SQL sources: readers that fill ColumnBatches, checkpointed as FLIP-27 splits exactly
// like the typed sources (api/source.hpp): the same "source-splits" even-split operator
// state, so a restore at another parallelism deals the splits over the new readers.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clink/runtime/operator.hpp"
#include "clink/connectors/sql/source_watermarks.hpp"
#include "clink/sql/common/column_batch.hpp"

namespace clink::sql {

class SqlSourceReader {
 public:
  using Status = SourceOperator::PollStatus;
  virtual ~SqlSourceReader() = default;
  virtual void open(RuntimeContext&) {}
  // Appends at most `max_rows` rows to `out` (its columns, then commit_rows).
  virtual Status poll(ColumnBatch& out, std::size_t max_rows) = 0;
  virtual std::int64_t wait_hint_ms() const { return 1; }
  virtual void close() {}
  // As SourceReader: the unfinished splits, each continuing exactly after its last row.
  virtual std::vector<std::string> snapshot_splits() const = 0;
  virtual void restore_splits(std::vector<std::string> splits) = 0;
  // State every subtask gets whole on restore (union redistribution), before its splits:
  // what a source without a split enumerator needs all subtasks to know (the files a
  // monitoring filesystem source already took). Empty for most sources.
  virtual std::vector<std::string> snapshot_shared() const { return {}; }
  virtual void restore_shared(std::vector<std::string>) {}
  // After snapshot_splits for checkpoint `checkpoint_id`; and when that checkpoint
  // completed (a source that reports its progress back, as Kafka's committed offsets).
  virtual void snapshot_taken(std::int64_t /*checkpoint_id*/) {}
  virtual void notify_checkpoint_complete(std::int64_t /*checkpoint_id*/) {}
  // For watermarks per split (source_watermarks.hpp): the split each row of the last
  // poll came from (empty: one split), and the splits the reader holds now.
  virtual const std::vector<std::uint64_t>& row_splits() const {
    static const std::vector<std::uint64_t> none;
    return none;
  }
  virtual const std::vector<std::uint64_t>& held_splits() const {
    static const std::vector<std::uint64_t> one{0};
    return one;
  }
};

class SqlSource {
 public:
  virtual ~SqlSource() = default;
  virtual std::unique_ptr<SqlSourceReader> create_reader(int subtask, int parallelism) const = 0;
  // The schema of the batches the readers produce.
  virtual const SchemaPtr& output_schema() const = 0;
  virtual std::string factory_name() const = 0;
};

class SqlSourceOperator final : public SourceOperator {
 public:
  explicit SqlSourceOperator(std::shared_ptr<const SqlSource> source, std::size_t batch_size = kDefaultBatchSize,
                             std::shared_ptr<const SourceWatermarkSpec> watermarks = nullptr)
      : source_(std::move(source)), batch_size_(batch_size), watermark_spec_(std::move(watermarks)) {}

  void open(RuntimeContext& ctx) override;
  void snapshot_state(std::int64_t checkpoint_id) override;
  PollStatus poll_next() override;
  std::int64_t wait_hint_ms() const override { return reader_ ? reader_->wait_hint_ms() : 1; }
  void notify_checkpoint_complete(std::int64_t checkpoint_id) override {
    if (reader_) reader_->notify_checkpoint_complete(checkpoint_id);
  }
  void close() override {
    if (reader_) reader_->close();
  }

 private:
  std::shared_ptr<const SqlSource> source_;
  std::size_t batch_size_;
  std::unique_ptr<SqlSourceReader> reader_;
  std::shared_ptr<const SourceWatermarkSpec> watermark_spec_;  // null: watermarks come downstream
  std::unique_ptr<SplitWatermarks> watermarks_;
};

}  // namespace clink::sql
