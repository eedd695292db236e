#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

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
  std::shared_ptr<const Source<T>> source_;
  std::size_t batch_size_;
  std::unique_ptr<SourceReader<T>> reader_;
};

}  // namespace clink
