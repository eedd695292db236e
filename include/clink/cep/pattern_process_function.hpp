#pragma once
// What the CEP operator calls with each match (Flink's PatternProcessFunction, with
// TimedOutPartialMatchHandler folded in), and the adapters behind PatternStream's
// select / flat_select / select-with-timeout.
#include <memory>
#include <utility>

#include "clink/api/functions.hpp"
#include "clink/cep/match.hpp"

namespace clink::cep {

template <class T, class U>
class PatternProcessFunction {
 public:
  using input_type = T;
  using output_type = U;
  class Context {
   public:
    Context(RuntimeContext& rc, SideOutputBuffers& sides) : rc_(rc), sides_(sides) {}
    // Event time of the match: its last event's timestamp (the time the match was found),
    // the watermark for a trailing not_followed_by, first event + within for a timeout.
    EventTime timestamp() const { return ts_; }
    EventTime current_watermark() const { return rc_.timer_service().current_watermark(); }
    std::int64_t current_processing_time() const { return rc_.timer_service().current_processing_time(); }
    template <class X>
    void output(const OutputTag<X>& tag, X value) { sides_.add(tag, std::move(value), out_ts_); }
    RuntimeContext& runtime_context() { return rc_; }
    void set(EventTime ts, EventTime out_ts) {
      ts_ = ts;
      out_ts_ = out_ts;
    }

   private:
    RuntimeContext& rc_;
    SideOutputBuffers& sides_;
    EventTime ts_ = kNoEventTime;
    EventTime out_ts_ = kNoEventTime;
  };

  virtual ~PatternProcessFunction() = default;
  virtual void open(RuntimeContext&) {}
  virtual void process_match(const Match<T>& match, Context& ctx, Collector<U>& out) = 0;
  // Timed-out partial matches (within) reach process_timed_out_match only when this
  // returns true; otherwise the NFA drops them without materialising them (Flink: a
  // function that does not implement TimedOutPartialMatchHandler).
  virtual bool handles_timed_out_matches() const { return false; }
  virtual void process_timed_out_match(const Match<T>& /*match*/, Context& /*ctx*/) {}
  virtual void close() {}
};

template <class T, class U>
using PatternProcessFunctionPtr = std::shared_ptr<PatternProcessFunction<T, U>>;

namespace function_detail {
// select: fn(const Match<T>&) -> U, one result per match.
template <class T, class U, class F>
class SelectFunction final : public PatternProcessFunction<T, U> {
 public:
  explicit SelectFunction(F f) : f_(std::move(f)) {}
  void process_match(const Match<T>& m, typename PatternProcessFunction<T, U>::Context&, Collector<U>& out) override {
    out.collect(f_(m));
  }

 private:
  F f_;
};
// flat_select: fn(const Match<T>&, Collector<U>&), zero or more results per match.
template <class T, class U, class F>
class FlatSelectFunction final : public PatternProcessFunction<T, U> {
 public:
  explicit FlatSelectFunction(F f) : f_(std::move(f)) {}
  void process_match(const Match<T>& m, typename PatternProcessFunction<T, U>::Context&, Collector<U>& out) override {
    f_(m, out);
  }

 private:
  F f_;
};
// select with a timeout side output: timeout_fn(const Match<T>&, EventTime) -> X to `tag`.
template <class T, class U, class X, class TF, class F>
class SelectWithTimeoutFunction final : public PatternProcessFunction<T, U> {
 public:
  SelectWithTimeoutFunction(OutputTag<X> tag, TF tf, F f) : tag_(std::move(tag)), tf_(std::move(tf)), f_(std::move(f)) {}
  void process_match(const Match<T>& m, typename PatternProcessFunction<T, U>::Context&, Collector<U>& out) override {
    out.collect(f_(m));
  }
  bool handles_timed_out_matches() const override { return true; }
  void process_timed_out_match(const Match<T>& m, typename PatternProcessFunction<T, U>::Context& ctx) override {
    ctx.output(tag_, tf_(m, ctx.timestamp()));
  }

 private:
  OutputTag<X> tag_;
  TF tf_;
  F f_;
};
}  // namespace function_detail

}  // namespace clink::cep
