#pragma once
// "event_time_count": counts events per key per epoch-aligned tumbling bucket of
// `size_ms`, with an event-time timer at the bucket's last millisecond; when the
// watermark passes it, emits (key, bucket start, count) with the timer's time as the
// record's event time. Emissions come in timer order: by time, then by encoded key
// (length-prefixed, so shorter keys first).
//
// This demonstrates keyed event-time timers through KeyedProcessOperator; the window
// engine proper (assigners, triggers, lateness, panes) is a later issue. Records whose
// bucket already fired (late: bucket end - 1 <= watermark) are dropped and counted in
// numLateRecordsDropped, as a window with allowed lateness 0 would.
//
// The counts are keyed state, as Flink's WindowOperator keeps window contents: a
// ValueState<int64> "count" per key with the bucket start as its namespace, cleared
// when the bucket fires. With the timers (which the runtime checkpoints) they survive
// failures, savepoints and restores at another parallelism.
#include <cstdint>
#include <memory>
#include <string>

#include "clink/api/functions.hpp"
#include "clink/api/operators.hpp"
#include "clink/api/spec_types.hpp"
#include "clink/operators/key_selectors.hpp"
#include "clink/state/keyed_state.hpp"

namespace clink {

class EventTimeCountFunction final : public KeyedProcessFunction<std::string, Event, WindowCount> {
 public:
  explicit EventTimeCountFunction(std::int64_t size_ms);
  void open(RuntimeContext& rc) override;
  void process_element(const Event& value, Context& ctx, Collector<WindowCount>& out) override;
  void on_timer(std::int64_t timestamp, OnTimerContext& ctx, Collector<WindowCount>& out) override;

  std::int64_t size_ms() const { return size_; }

 private:
  // Scopes the keyed state to the bucket starting at `start`.
  void set_bucket(std::int64_t start);

  std::int64_t size_;
  KeyedStateBackend* backend_ = nullptr;
  ValueState<std::int64_t>* count_ = nullptr;  // per key, namespace = encoded bucket start
  std::string ns_;
};

using EventTimeCountOperator = KeyedProcessOperator<std::string, Event, WindowCount, EventKey>;

// One operator per subtask, each with its own function (and so its own state).
inline std::unique_ptr<StreamOperator> make_event_time_count_operator(std::int64_t size_ms) {
  return std::make_unique<EventTimeCountOperator>(std::make_shared<EventTimeCountFunction>(size_ms), EventKey{});
}

}  // namespace clink
