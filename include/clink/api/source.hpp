#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

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
  // Where the reader is, for checkpoints: restore_position(snapshot_position()) on a
  // fresh reader must continue exactly after the last record polled. nullopt: this
  // reader cannot be checkpointed (a checkpoint that meets it fails, saying so).
  virtual std::optional<std::string> snapshot_position() const { return std::nullopt; }
  virtual void restore_position(std::string_view /*position*/) {}
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

// Adapts a SourceReader to the runtime's SourceOperator.
template <class T>
class ReaderSourceOperator final : public SourceOperator {
 public:
  ReaderSourceOperator(std::shared_ptr<const Source<T>> source, std::size_t batch_size = kDefaultBatchSize)
      : source_(std::move(source)), batch_size_(batch_size) {}

  void open(RuntimeContext& ctx) override {
    SourceOperator::open(ctx);
    reader_ = source_->create_reader(ctx.subtask_index(), ctx.parallelism());
    reader_->open(ctx);
    if (ctx.is_restored()) {
      // One position per reader; a reader gets back the one it wrote (same parallelism).
      const auto& positions = ctx.operator_state().list(kPositionState);
      if (positions.size() > 1)
        throw ClinkError("source '" + ctx.operator_id() + "' cannot restore " + std::to_string(positions.size()) +
                         " reader positions into one subtask (change of source parallelism is not supported)");
      if (!positions.empty()) reader_->restore_position(positions.front());
    }
  }
  void snapshot_state(std::int64_t) override {
    auto position = reader_->snapshot_position();
    if (!position)
      throw ClinkError("source '" + ctx().operator_id() + "' (" + source_->factory_name() +
                       ") does not support checkpoints");
    auto& list = ctx().operator_state().list(kPositionState);
    list.assign(1, std::move(*position));
  }
  PollStatus poll_next() override {
    auto batch = std::make_unique<Batch<T>>();
    batch->records.reserve(batch_size_);
    PollStatus s = reader_->poll(*batch, batch_size_);
    if (!batch->records.empty()) output().emit(std::move(batch));
    return s;
  }
  std::int64_t wait_hint_ms() const override { return reader_ ? reader_->wait_hint_ms() : 1; }
  void close() override {
    if (reader_) reader_->close();
  }

 private:
  static constexpr const char* kPositionState = "source-position";
  std::shared_ptr<const Source<T>> source_;
  std::size_t batch_size_;
  std::unique_ptr<SourceReader<T>> reader_;
};

}  // namespace clink
