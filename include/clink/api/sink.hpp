#pragma once
#include <memory>
#include <string>

#include "clink/core/record.hpp"
#include "clink/runtime/operator.hpp"

namespace clink {

// Writes one subtask's records.
template <class T>
class SinkWriter {
 public:
  virtual ~SinkWriter() = default;
  virtual void open(RuntimeContext&) {}
  virtual void write(const Batch<T>& batch) = 0;
  // End of input: make everything written durable/visible.
  virtual void finish() {}
  virtual void close() {}
};

template <class T>
class Sink {
 public:
  virtual ~Sink() = default;
  virtual std::unique_ptr<SinkWriter<T>> create_writer(int subtask, int parallelism) const = 0;
  virtual std::string factory_name() const = 0;
  virtual int max_parallelism() const { return 0; }  // 0: no limit
};

template <class T>
class SinkOperator final : public StreamOperator {
 public:
  explicit SinkOperator(std::shared_ptr<const Sink<T>> sink) : sink_(std::move(sink)) {}
  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    writer_ = sink_->create_writer(ctx.subtask_index(), ctx.parallelism());
    writer_->open(ctx);
  }
  void process_batch(int, BatchPtr batch) override { writer_->write(batch_cast<T>(*batch)); }
  void process_watermark(Watermark) override {}
  void finish() override { writer_->finish(); }
  void close() override {
    if (writer_) writer_->close();
  }

 private:
  std::shared_ptr<const Sink<T>> sink_;
  std::unique_ptr<SinkWriter<T>> writer_;
};

// The record types most jobs and tests use are instantiated once, in
// src/api/common_operator_instances.cpp: without these declarations every translation
// unit that builds one of these operators compiled and optimised its own copy.
extern template class SinkOperator<std::int64_t>;
extern template class SinkOperator<std::string>;

}  // namespace clink
