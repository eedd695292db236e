#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "clink/core/output_tag.hpp"
#include "clink/core/record.hpp"
#include "clink/runtime/key_group.hpp"
#include "clink/runtime/runtime_context.hpp"
#include "clink/runtime/timer_service.hpp"
#include "clink/state/keyed_state.hpp"

namespace clink {

// Receives the records a function emits. Emitted records carry the event time of the
// record (or timer) being processed unless one is given.
template <class T>
class Collector {
 public:
  explicit Collector(Batch<T>* out = nullptr) : out_(out) {}
  void collect(T value) { out_->records.push_back(Record<T>{std::move(value), timestamp_, kNoPartition}); }
  void collect_with_timestamp(T value, EventTime ts) {
    out_->records.push_back(Record<T>{std::move(value), ts, kNoPartition});
  }

  // Runtime side.
  void reset(Batch<T>* out, EventTime ts) {
    out_ = out;
    timestamp_ = ts;
  }
  void set_timestamp(EventTime ts) { timestamp_ = ts; }

 private:
  Batch<T>* out_;
  EventTime timestamp_ = kNoEventTime;
};

// Per-tag buffers of side-output records, flushed by the operator after each call.
class SideOutputBuffers {
 public:
  template <class X>
  void add(const OutputTag<X>& tag, X value, EventTime ts) {
    auto& slot = buffers_[tag.name];
    if (!slot) slot = std::make_unique<Batch<X>>();
    batch_cast<X>(*slot).records.push_back(Record<X>{std::move(value), ts, kNoPartition});
  }
  template <class Emit>
  void flush(Emit&& emit) {
    for (auto& [name, batch] : buffers_) {
      if (batch && !batch->empty()) emit(name, std::exchange(batch, nullptr));
    }
  }

 private:
  std::map<std::string, BatchPtr> buffers_;
};

enum class TimeDomain { kEventTime, kProcessingTime };

// The keyed state of a keyed operator's subtask, for open() of a keyed function
// (Flink's getRuntimeContext().getState(...)): the returned states live as long as the
// operator and always address the key of the record (or timer) being processed.
//   void open(RuntimeContext& rc) override {
//     count_ = &keyed_state_store(rc).get_state(ValueStateDescriptor<std::int64_t>{"count"});
//   }
inline KeyedStateStore keyed_state_store(RuntimeContext& rc) {
  auto* backend = rc.keyed_state_backend();
  if (!backend) throw ClinkError("keyed state is only available to keyed functions (after key_by), in " + rc.task_name());
  return KeyedStateStore(*backend);
}

// Flink's ProcessFunction: one record at a time, with side outputs.
// Functions are copied once per parallel subtask (as Flink deserialises one instance
// per subtask), so members are per-subtask state.
template <class In, class Out>
class ProcessFunction {
 public:
  using output_type = Out;
  class Context {
   public:
    Context(RuntimeContext& rc, SideOutputBuffers& sides) : rc_(rc), sides_(sides) {}
    EventTime timestamp() const { return ts_; }
    EventTime current_watermark() const { return rc_.timer_service().current_watermark(); }
    std::int64_t current_processing_time() const { return rc_.timer_service().current_processing_time(); }
    template <class X>
    void output(const OutputTag<X>& tag, X value) { sides_.add(tag, std::move(value), ts_); }
    RuntimeContext& runtime_context() { return rc_; }
    void set_timestamp(EventTime ts) { ts_ = ts; }

   private:
    RuntimeContext& rc_;
    SideOutputBuffers& sides_;
    EventTime ts_ = kNoEventTime;
  };
  virtual ~ProcessFunction() = default;
  virtual void open(RuntimeContext&) {}
  virtual void process_element(const In& value, Context& ctx, Collector<Out>& out) = 0;
  virtual void close() {}
};

// Flink's KeyedProcessFunction: per-key processing with event- and processing-time
// timers scoped to the current key.
template <class K, class In, class Out>
class KeyedProcessFunction {
 public:
  using output_type = Out;
  class Context {
   public:
    Context(RuntimeContext& rc, SideOutputBuffers& sides) : rc_(rc), sides_(sides) {}
    EventTime timestamp() const { return ts_; }
    const K& current_key() const { return *key_; }
    // register_event_time_timer / register_processing_time_timer / delete_*,
    // current_watermark(), current_processing_time(): all for the current key.
    TimerService& timer_service() { return rc_.timer_service(); }
    template <class X>
    void output(const OutputTag<X>& tag, X value) { sides_.add(tag, std::move(value), ts_); }
    RuntimeContext& runtime_context() { return rc_; }
    TimeDomain time_domain() const { return domain_; }  // meaningful in on_timer
    // Keyed state, scoped to the current key: ctx.state().get_state(descriptor).
    KeyedStateStore& state() {
      if (!store_) store_.emplace(keyed_state_store(rc_));
      return *store_;
    }

    void set(const K* key, EventTime ts, TimeDomain domain = TimeDomain::kEventTime) {
      key_ = key;
      ts_ = ts;
      domain_ = domain;
    }

   private:
    RuntimeContext& rc_;
    SideOutputBuffers& sides_;
    const K* key_ = nullptr;
    EventTime ts_ = kNoEventTime;
    TimeDomain domain_ = TimeDomain::kEventTime;
    std::optional<KeyedStateStore> store_;
  };
  using OnTimerContext = Context;

  virtual ~KeyedProcessFunction() = default;
  virtual void open(RuntimeContext&) {}
  virtual void process_element(const In& value, Context& ctx, Collector<Out>& out) = 0;
  virtual void on_timer(std::int64_t /*timestamp*/, OnTimerContext& /*ctx*/, Collector<Out>& /*out*/) {}
  virtual void close() {}
};

// Two inputs (connect()): one method per input, shared state and timers.
template <class In1, class In2, class Out>
class CoProcessFunction {
 public:
  using output_type = Out;
  using Context = typename ProcessFunction<In1, Out>::Context;
  virtual ~CoProcessFunction() = default;
  virtual void open(RuntimeContext&) {}
  virtual void process_element1(const In1& value, Context& ctx, Collector<Out>& out) = 0;
  virtual void process_element2(const In2& value, Context& ctx, Collector<Out>& out) = 0;
  virtual void close() {}
};

}  // namespace clink
