#pragma once
// Test support for the two-input SQL join operators: JoinHarness runs one operator
// directly (like OpHarness), one input batch at a time in a fixed order, on a
// RuntimeContext whose keyed state backend uses `clock` (state TTL; ManualClock is in
// sql_ops_test_support.hpp); `restore`: keyed state snapshots it restores before the
// operator opens, with `timers` (event-time timers) re-registered.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "../support/print_form.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/lateness.hpp"
#include "sql_ops_test_support.hpp"

namespace clink::test {

// Two inputs, run like OpHarness (one operator on a RuntimeContext, output logged).
class JoinHarness final : public Output {
 public:
  JoinHarness(const std::string& factory, json params, const ProcessingTimeClock& clock = SystemClock::instance(),
              const std::vector<KeyedStateHandle>& restore = {}, const std::set<Timer>& timers = {}) {
    OperatorSpecContext sc;
    sc.id = "join";
    sc.params = std::move(params);
    sc.input_types = {sql::kSqlRowType, sql::kSqlRowType};
    op_ = builtin_registry().get(factory).make(sc)();
    ctx_ = std::make_unique<RuntimeContext>("join", "join", 0, 1, kDefaultMaxParallelism, this,
                                            std::make_shared<OperatorMetrics>(), SystemClock::instance());
    ctx_->set_keyed_state_backend(make_keyed_state_backend(StateBackendConfig{}, "join", 0, ctx_->key_groups(),
                                                           kDefaultMaxParallelism, clock));
    if (!restore.empty()) ctx_->keyed_state_backend()->restore(restore);
    for (const Timer& t : timers) ctx_->timer_service().register_event_time_timer(t.time, t.key, t.ns);
    op_->open(*ctx_);
  }
  ~JoinHarness() override { op_->close(); }

  // Pushes one batch on `input` and returns what it emitted.
  std::vector<std::string> push(int input, ColumnBatch b) {
    lines.clear();
    times.clear();
    op_->process_batch(input, std::make_unique<ColumnBatch>(std::move(b)));
    return lines;
  }
  // As push, the batch coming on a channel whose watermark is `channel_watermark`
  // (runtime/lateness.hpp: the task's part).
  std::vector<std::string> push(int input, ColumnBatch b, EventTime channel_watermark) {
    ChannelWatermarkScope scope(*ctx_, channel_watermark);
    return push(input, std::move(b));
  }
  // A checkpoint barrier (snapshot_state), the processing-time clock and the end of input
  // (finish): what they emitted.
  std::vector<std::string> barrier(std::int64_t checkpoint_id) {
    lines.clear();
    times.clear();
    op_->snapshot_state(checkpoint_id);
    return lines;
  }
  // The task's clock passed `now`: the operator's due processing-time timers fire.
  std::vector<std::string> processing_time(std::int64_t now) {
    lines.clear();
    times.clear();
    op_->process_processing_time(now);
    return lines;
  }
  std::vector<std::string> finish() {
    lines.clear();
    times.clear();
    op_->finish();
    return lines;
  }
  std::vector<std::string> watermark(EventTime t) {
    lines.clear();
    times.clear();
    op_->process_watermark(Watermark{t, false});
    return lines;
  }

  void emit(BatchPtr b) override {
    const auto& cb = sql::column_batch_cast(*b);
    for (auto& l : sql::format_rows(cb)) lines.push_back(std::move(l));
    times.insert(times.end(), cb.event_times().begin(), cb.event_times().end());
  }
  void emit_watermark(Watermark wm) override { lines.push_back("WM " + std::to_string(wm.timestamp)); }
  void emit_side(const std::string&, BatchPtr) override {}
  RuntimeContext& context() { return *ctx_; }

  std::vector<std::string> lines;
  std::vector<EventTime> times;  // of the rows in `lines`

 private:
  std::unique_ptr<StreamOperator> op_;
  std::unique_ptr<RuntimeContext> ctx_;
};

}  // namespace clink::test
