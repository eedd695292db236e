#pragma once
// The typed operators behind the DataStream API. Each works on whole batches: one
// virtual call per batch, a tight loop per record, no allocation per record.
#include <memory>
#include <type_traits>
#include <utility>

#include "clink/api/functions.hpp"
#include "clink/runtime/operator.hpp"

namespace clink {

template <class In, class Out, class F>
class MapOperator final : public StreamOperator {
 public:
  explicit MapOperator(F fn) : fn_(std::move(fn)) {}
  void process_batch(int, BatchPtr batch) override {
    auto& in = batch_cast<In>(*batch);
    if constexpr (std::is_same_v<In, Out>) {
      for (auto& r : in.records) r.value = fn_(r.value);  // reuse the batch in place
      output().emit(std::move(batch));
    } else {
      auto out = std::make_unique<Batch<Out>>();
      out->records.resize(in.records.size());
      auto* o = out->records.data();
      for (const auto& r : in.records) *o++ = Record<Out>{fn_(r.value), r.event_time, r.partition};
      output().emit(std::move(out));
    }
  }

 private:
  F fn_;
};

template <class T, class F>
class FilterOperator final : public StreamOperator {
 public:
  explicit FilterOperator(F fn) : fn_(std::move(fn)) {}
  void process_batch(int, BatchPtr batch) override {
    auto& recs = batch_cast<T>(*batch).records;
    std::size_t kept = 0;
    for (std::size_t i = 0, n = recs.size(); i < n; ++i) {
      if (fn_(recs[i].value)) {
        if (kept != i) recs[kept] = std::move(recs[i]);
        ++kept;
      }
    }
    recs.resize(kept);
    if (kept > 0) output().emit(std::move(batch));
  }

 private:
  F fn_;
};

template <class In, class Out, class F>
class FlatMapOperator final : public StreamOperator {
 public:
  explicit FlatMapOperator(F fn) : fn_(std::move(fn)) {}
  void process_batch(int, BatchPtr batch) override {
    auto& in = batch_cast<In>(*batch);
    auto out = std::make_unique<Batch<Out>>();
    out->records.reserve(in.records.size());
    Collector<Out> c(out.get());
    for (const auto& r : in.records) {
      c.set_timestamp(r.event_time);
      fn_(r.value, c);
      if (out->records.size() >= kDefaultBatchSize) {
        output().emit(std::move(out));
        out = std::make_unique<Batch<Out>>();
        out->records.reserve(kDefaultBatchSize);
        c.reset(out.get(), r.event_time);
      }
    }
    if (!out->records.empty()) output().emit(std::move(out));
  }

 private:
  F fn_;
};

// Shared by the function-backed operators: output and side-output buffers, flushed
// after every call into the function.
template <class Out>
class FunctionOperatorBase : public StreamOperator {
 protected:
  void begin_call() {
    if (!out_) {
      out_ = std::make_unique<Batch<Out>>();
      out_->records.reserve(kDefaultBatchSize);
    }
    collector_.reset(out_.get(), kNoEventTime);
  }
  void flush_output() {
    if (out_ && !out_->records.empty()) output().emit(std::move(out_));
    sides_.flush([this](const std::string& tag, BatchPtr b) { output().emit_side(tag, std::move(b)); });
  }
  std::unique_ptr<Batch<Out>> out_;
  Collector<Out> collector_;
  SideOutputBuffers sides_;
};

template <class In, class Out>
class ProcessOperator final : public FunctionOperatorBase<Out> {
 public:
  explicit ProcessOperator(std::shared_ptr<ProcessFunction<In, Out>> fn) : fn_(std::move(fn)) {}
  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    context_ = std::make_unique<typename ProcessFunction<In, Out>::Context>(ctx, this->sides_);
    fn_->open(ctx);
  }
  void process_batch(int, BatchPtr batch) override {
    this->begin_call();
    for (const auto& r : batch_cast<In>(*batch).records) {
      context_->set_timestamp(r.event_time);
      this->collector_.set_timestamp(r.event_time);
      fn_->process_element(r.value, *context_, this->collector_);
    }
    this->flush_output();
  }
  void close() override { fn_->close(); }

 private:
  std::shared_ptr<ProcessFunction<In, Out>> fn_;
  std::unique_ptr<typename ProcessFunction<In, Out>::Context> context_;
};

template <class K, class In, class Out, class KeyFn>
class KeyedProcessOperator final : public FunctionOperatorBase<Out> {
 public:
  KeyedProcessOperator(std::shared_ptr<KeyedProcessFunction<K, In, Out>> fn, KeyFn key_fn)
      : fn_(std::move(fn)), key_fn_(std::move(key_fn)) {}
  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    backend_ = ctx.keyed_state_backend_or_private();
    backend_->set_current_namespace({});
    context_ = std::make_unique<typename KeyedProcessFunction<K, In, Out>::Context>(ctx, this->sides_);
    fn_->open(ctx);
  }
  void process_batch(int, BatchPtr batch) override {
    this->begin_call();
    auto& timers = this->ctx().timer_service();
    for (const auto& r : batch_cast<In>(*batch).records) {
      key_ = key_fn_(r.value);
      key_bytes_.clear();
      KeyCodec<K>::encode(key_, key_bytes_);
      timers.set_current_key(key_bytes_);
      backend_->set_current_key(key_bytes_);
      context_->set(&key_, r.event_time);
      this->collector_.set_timestamp(r.event_time);
      fn_->process_element(r.value, *context_, this->collector_);
    }
    this->flush_output();
  }
  void process_watermark(Watermark wm) override {
    if (!wm.idle) {
      this->begin_call();
      this->ctx().timer_service().advance_watermark(
          wm.timestamp, [this](const Timer& t) { fire(t, TimeDomain::kEventTime); });
      this->flush_output();
    }
    this->output().emit_watermark(wm);
  }
  void process_processing_time(std::int64_t now) override {
    this->begin_call();
    this->ctx().timer_service().advance_processing_time(
        now, [this](const Timer& t) { fire(t, TimeDomain::kProcessingTime); });
    this->flush_output();
  }
  void close() override { fn_->close(); }

 private:
  void fire(const Timer& t, TimeDomain domain) {
    key_ = decode_key<K>(t.key);
    this->ctx().timer_service().set_current_key(t.key);
    backend_->set_current_key(t.key);
    EventTime ts = domain == TimeDomain::kEventTime ? t.time : kNoEventTime;
    context_->set(&key_, ts, domain);
    this->collector_.set_timestamp(ts);
    fn_->on_timer(t.time, *context_, this->collector_);
  }

  std::shared_ptr<KeyedProcessFunction<K, In, Out>> fn_;
  KeyFn key_fn_;
  std::unique_ptr<typename KeyedProcessFunction<K, In, Out>::Context> context_;
  KeyedStateBackend* backend_ = nullptr;
  K key_{};
  std::string key_bytes_;
};

template <class In1, class In2, class Out>
class CoProcessOperator final : public FunctionOperatorBase<Out> {
 public:
  explicit CoProcessOperator(std::shared_ptr<CoProcessFunction<In1, In2, Out>> fn) : fn_(std::move(fn)) {}
  int num_inputs() const override { return 2; }
  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    context_ = std::make_unique<typename CoProcessFunction<In1, In2, Out>::Context>(ctx, this->sides_);
    fn_->open(ctx);
  }
  void process_batch(int input, BatchPtr batch) override {
    this->begin_call();
    if (input == 0) {
      for (const auto& r : batch_cast<In1>(*batch).records) {
        context_->set_timestamp(r.event_time);
        this->collector_.set_timestamp(r.event_time);
        fn_->process_element1(r.value, *context_, this->collector_);
      }
    } else {
      for (const auto& r : batch_cast<In2>(*batch).records) {
        context_->set_timestamp(r.event_time);
        this->collector_.set_timestamp(r.event_time);
        fn_->process_element2(r.value, *context_, this->collector_);
      }
    }
    this->flush_output();
  }
  void close() override { fn_->close(); }

 private:
  std::shared_ptr<CoProcessFunction<In1, In2, Out>> fn_;
  std::unique_ptr<typename CoProcessFunction<In1, In2, Out>::Context> context_;
};

}  // namespace clink
