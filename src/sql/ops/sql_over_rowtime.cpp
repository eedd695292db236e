// sql_over_aggregate over an event-time attribute: Flink's RowTimeRowsBoundedPreceding-,
// RowTimeRangeBoundedPreceding-, RowTimeRowsUnboundedPreceding- and
// RowTimeRangeUnboundedPrecedingFunction. Rows wait in state until the watermark passes
// their time, then are emitted in time order (arrival order within a time), each with
// its frame's aggregates appended:
//   - bounded frames: a row is late when its time is not after the last time fired for
//     its key (Flink's lastTriggeringTs, 0 at first); an event-time timer at the row's
//     time fires it. A row already behind the watermark W its channel had sent
//     (runtime/lateness.hpp) while the operator's watermark (the minimum over the
//     channels) is still below W is judged when the operator's watermark reaches W:
//     Flink judges it at once, against a lastTriggeringTs that depends on how far the
//     other channels had got (thread timing). It waits in "over-deciding" under (W,
//     sequence) with a timer at W (namespace kDecide, after the key's own timers at W),
//     then is late or stored exactly as if it had come when the watermark was W: the
//     outcome Flink gives when the other channels are ahead, the same on every run. With
//     one channel W is the operator's watermark and this is Flink's rule unchanged.
//     ROWS n PRECEDING retracts the oldest row once n + 1 rows are in the frame (per
//     row); RANGE INTERVAL d PRECEDING retracts the rows older than time - d,
//     accumulates every row of the time, and emits them all with the same values
//     (peers). RANGE cleans a key up at an event-time timer 1.5 d after its last row.
//   - unbounded frames: a row is late when its time is not after the watermark (its
//     channel's, if that is ahead: runtime/lateness.hpp); a timer
//     at the next watermark fires every row the watermark passed. ROWS emits per row,
//     RANGE per time (peers share the values).
//   - `table.exec.state.ttl` (ROWS bounded and unbounded frames): Flink's processing-time
//     cleanup timer, 1.5 TTL after the key's last activity, dropping the key's state
//     unless rows still wait for the watermark.
// Late rows are dropped and counted (late_records_dropped).
#include "sql_over_aggregate.hpp"

#include <algorithm>
#include <limits>

#include "clink/runtime/lateness.hpp"

namespace clink::sql {

namespace {

// The namespace of the timer that judges the rows late in their channel (at their
// channel's watermark): after the key's row timers at the same time ("" sorts first).
constexpr std::string_view kDecide = "decide";

class RowtimeOverOperator final : public OverAggregateBase {
 public:
  explicit RowtimeOverOperator(std::shared_ptr<const OverConfig> cfg)
      : OverAggregateBase(std::move(cfg)), deciding_(cfg_->in_schema) {}

  void open(RuntimeContext& ctx) override {
    OverAggregateBase::open(ctx);
    if (cfg_->bounded()) deciding_.state = backend_->register_state("over-deciding", StateKind::kMap);
  }

  void process_batch(int, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    check_insert_only(in);
    cfg_->aggs->bind(in, input_);
    TimerService& timers = ctx().timer_service();
    const EventTime wm = timers.current_watermark();
    const EventTime late_at = lateness_watermark(ctx());
    const std::int64_t now = ttl_cleanup_enabled() ? timers.current_processing_time() : 0;
    std::size_t late = 0;
    for (std::size_t r = 0; r < in.size(); ++r) {
      const std::int64_t t = row_time(in, r);
      const std::string_view key = key_of(in, r);
      KeyState& k = touch(key);
      if (cfg_->bounded()) {
        if (cfg_->rows) register_ttl_cleanup(key, k, now);
        if (t <= late_at && late_at > wm) {  // judged when the watermark reaches its channel's
          store_row(deciding_.state, key, k, late_at, in, r);
          timers.register_event_time_timer(late_at, key, kDecide);
          continue;
        }
        if (t <= k.header.last_triggering.value_or(0)) {
          ++late;
          continue;
        }
        store_bounded(key, k, t, in, r);
      } else {
        register_ttl_cleanup(key, k, now);
        if (t <= late_at) {
          ++late;
          continue;
        }
        // One timer per key, at the next watermark (Flink starts at 0 before the first).
        timers.register_event_time_timer(wm < 0 ? 0 : wm + 1, key, {});
        store_row(pending_.state, key, k, t, in, r);
      }
    }
    end_pass();
    count_late(late);
  }

  void process_watermark(Watermark wm) override {
    if (!wm.idle) {
      ctx().timer_service().advance_watermark(wm.timestamp, [this](const Timer& t) { on_event_time_timer(t); });
      end_pass();
      flush();
    }
    output().emit_watermark(wm);
  }

  void on_event_time_timer(const Timer& t) override {
    KeyState& k = touch(t.key);
    if (!cfg_->bounded()) return fire_unbounded(t.key, k);
    if (t.ns == kDecide) return decide(t.key, k, t.time);
    if (!cfg_->rows && k.header.cleanup && *k.header.cleanup <= t.time) {
      // No row came within 1.5 d: nothing can be in a frame any more. Rows still to be
      // judged stay, and so does the sequence their keys use.
      const std::uint64_t seq = k.header.next_seq;
      clear_key(t.key, k);
      if (waiting(deciding_, t.key)) {
        k.header.next_seq = seq;
        k.exists = true;
      }
      return;
    }
    if (cfg_->rows) fire_rows(t.key, k, t.time);
    else fire_range(t.key, k, t.time);
    k.header.last_triggering = t.time;
    k.exists = k.dirty = true;
    if (cfg_->rows) register_ttl_cleanup(t.key, k, ctx().timer_service().current_processing_time());
  }

  void process_processing_time(std::int64_t now) override {
    ctx().timer_service().advance_processing_time(now, [this](const Timer& t) { on_processing_time_timer(t); });
    end_pass();
    flush();
  }

  // The state-TTL cleanup timer: drop the key unless rows still wait for the watermark.
  void on_processing_time_timer(const Timer& t) override {
    if (!ttl_cleanup_enabled()) return;
    KeyState& k = touch(t.key);
    if (!waiting(pending_, t.key) && !(cfg_->bounded() && waiting(deciding_, t.key))) {
      clear_key(t.key, k);
      return;
    }
    k.header.cleanup.reset();  // the timer fired: register the next one
    register_ttl_cleanup(t.key, k, t.time);
  }

 private:
  // A bounded frame's row not late: waits for the watermark to pass its time.
  void store_bounded(std::string_view key, KeyState& k, std::int64_t t, const ColumnBatch& in, std::size_t r) {
    store_row(pending_.state, key, k, t, in, r);
    ctx().timer_service().register_event_time_timer(t, key, {});
    if (!cfg_->rows) register_range_cleanup(key, k, t);
  }

  // The rows waiting in "over-deciding" for channel watermark `w`, in arrival order,
  // judged as if they came now (every timer of the key up to `w` fired): late when their
  // time is not after the last time fired, else stored (their timers, in the past, fire
  // next in this watermark's advance).
  void decide(std::string_view key, KeyState& k, std::int64_t w) {
    scan(deciding_, key, w);
    std::size_t late = 0;
    for (std::size_t i = 0; i < deciding_.entries.size(); ++i) {
      const std::uint32_t row = decoded(deciding_, i);
      const std::int64_t t = row_time(deciding_.rows, row);
      if (t <= k.header.last_triggering.value_or(0)) ++late;
      else store_bounded(key, k, t, deciding_.rows, row);
      remove(deciding_, key, i);
    }
    count_late(late);
  }

  bool waiting(Scan& s, std::string_view key) {
    scan(s, key, std::numeric_limits<std::int64_t>::max(), 1);
    return !s.entries.empty();
  }

  // Flink's RowTimeRangeBoundedPrecedingFunction.registerCleanupTimer.
  void register_range_cleanup(std::string_view key, KeyState& k, std::int64_t t) {
    const std::int64_t d = *cfg_->preceding;
    const std::int64_t min = t + d + 1;
    const std::int64_t max = t + static_cast<std::int64_t>(static_cast<double>(d) * 1.5) + 1;
    if (k.header.cleanup && *k.header.cleanup >= min) return;
    ctx().timer_service().register_event_time_timer(max, key, {});
    k.header.cleanup = max;
    k.exists = k.dirty = true;
  }

  // ROWS n PRECEDING: per row at `t`, retract the frame's oldest row once it holds n + 1.
  void fire_rows(std::string_view key, KeyState& k, std::int64_t t) {
    scan(pending_, key, t);
    const std::size_t first = first_pending_at(t);
    if (first == pending_.entries.size()) return;
    AggState& a = acc(k);
    for (std::size_t i = first; i < pending_.entries.size(); ++i) {
      make_room_in_rows_frame(key, k, a);
      const std::uint32_t row = decoded(pending_, i);
      fold(a, pending_.input, row, 1);
      emit_decoded(row, a);
      move_to_frame(key, i);
    }
    flush_decoded();
  }

  // UNBOUNDED PRECEDING: every row the watermark passed, in time order.
  void fire_unbounded(std::string_view key, KeyState& k) {
    const EventTime wm = ctx().timer_service().current_watermark();
    scan(pending_, key, wm);
    const std::size_t n = pending_.entries.size();
    if (n > 0 || pending_.more) {
      AggState& a = acc(k);
      for (std::size_t i = 0; i < n;) {
        std::size_t end = i + 1;
        while (end < n && pending_.entries[end].time == pending_.entries[i].time) ++end;
        if (cfg_->rows) {
          for (std::size_t j = i; j < end; ++j) {
            fold(a, pending_.input, decoded(pending_, j), 1);
            emit_decoded(decoded(pending_, j), a);
          }
        } else {
          for (std::size_t j = i; j < end; ++j) fold(a, pending_.input, decoded(pending_, j), 1);
          for (std::size_t j = i; j < end; ++j) emit_decoded(decoded(pending_, j), a);
        }
        i = end;
      }
      flush_decoded();
      if (pending_.more) {
        for (std::size_t i = 0; i < n; ++i) remove(pending_, key, i);
        ctx().timer_service().register_event_time_timer(wm + 1, key, {});
      } else {
        backend_->set_current_key(key);
        backend_->map_clear(pending_.state);
      }
    }
    register_ttl_cleanup(key, k, ctx().timer_service().current_processing_time());
  }

  Scan deciding_;  // "over-deciding": rows late in their channel, under (its watermark, sequence)
};

}  // namespace

std::unique_ptr<StreamOperator> make_rowtime_over(std::shared_ptr<const OverConfig> cfg) {
  return std::make_unique<RowtimeOverOperator>(std::move(cfg));
}

}  // namespace clink::sql
