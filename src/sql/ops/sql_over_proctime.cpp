// sql_over_aggregate over a processing-time attribute: Flink's
// ProcTimeRowsBoundedPreceding-, ProcTimeRangeBoundedPreceding- and
// ProcTimeUnboundedPrecedingFunction. Time is the operator's clock, read once per input
// batch (the rows of one batch arrive together), never the rows' values.
//   - UNBOUNDED (ROWS or RANGE): each row is accumulated and emitted at once; with
//     `table.exec.state.ttl` the accumulators expire that long after their last write
//     (state TTL, as Flink).
//   - ROWS n PRECEDING: each row at once; once n + 1 rows are in the frame the oldest is
//     retracted first. With a state TTL, Flink's processing-time cleanup timer drops the
//     key 1.5 TTL after its last row.
//   - RANGE INTERVAL d PRECEDING: rows wait for the millisecond they arrived in to pass
//     (a timer at arrival + 1), then rows older than arrival - d are retracted and the
//     arrival's rows emitted with the same values; a key is cleaned up 1.5 d after its
//     last row. As Flink's streaming mode, pending processing-time timers do not fire at
//     the end of a bounded input.
#include "sql_over_aggregate.hpp"

#include <limits>

namespace clink::sql {

namespace {

class ProctimeOverOperator final : public OverAggregateBase {
 public:
  using OverAggregateBase::OverAggregateBase;

  void process_batch(int, BatchPtr batch) override {
    auto& in = static_cast<ColumnBatch&>(*batch);
    check_insert_only(in);
    cfg_->aggs->bind(in, input_);
    const std::int64_t now = ctx().timer_service().current_processing_time();
    if (cfg_->bounded() && !cfg_->rows) {
      buffer_range(in, now);
    } else {
      emit_each(in, now);
    }
    end_pass();
  }

  void process_processing_time(std::int64_t now) override {
    ctx().timer_service().advance_processing_time(now, [this](const Timer& t) { on_processing_time_timer(t); });
    end_pass();
    flush();
  }

  void on_processing_time_timer(const Timer& t) override {
    KeyState& k = touch(t.key);
    if (cfg_->rows || !cfg_->bounded()) {
      if (ttl_cleanup_enabled()) clear_key(t.key, k);  // ROWS: the state-TTL cleanup timer
      return;
    }
    if (k.header.cleanup && *k.header.cleanup <= t.time) {
      clear_key(t.key, k);
      return;
    }
    fire_range(t.key, k, t.time - 1);
  }

 private:
  // UNBOUNDED and ROWS n PRECEDING: the output is the input's columns (moved) plus the
  // aggregate values of each row computed here.
  void emit_each(ColumnBatch& in, std::int64_t now) {
    auto o = std::make_unique<ColumnBatch>(cfg_->out_schema, in.size());
    const std::size_t n_in = cfg_->in_schema->size();
    for (std::size_t r = 0; r < in.size(); ++r) {
      const std::string_view key = key_of(in, r);
      KeyState& k = touch(key);
      if (cfg_->bounded()) {
        register_ttl_cleanup(key, k, now);
        AggState& a = acc(k);
        make_room_in_rows_frame(key, k, a);
        store_row(frame_.state, key, k, now, in, r);
        fold(a, input_, static_cast<std::uint32_t>(r), 1);
        cfg_->aggs->append_results(a, *o, n_in);
      } else {
        AggState& a = acc(k);
        fold(a, input_, static_cast<std::uint32_t>(r), 1);
        cfg_->aggs->append_results(a, *o, n_in);
      }
    }
    for (std::size_t c = 0; c < n_in; ++c) o->column(c) = std::move(in.column(c));
    o->row_kinds() = std::move(in.row_kinds());
    o->event_times() = std::move(in.event_times());
    if (o->size() > 0) output().emit(std::move(o));
  }

  // RANGE d PRECEDING: rows wait for their arrival millisecond to pass.
  void buffer_range(const ColumnBatch& in, std::int64_t now) {
    TimerService& timers = ctx().timer_service();
    const std::int64_t d = *cfg_->preceding;
    for (std::size_t r = 0; r < in.size(); ++r) {
      const std::string_view key = key_of(in, r);
      KeyState& k = touch(key);
      store_row(pending_.state, key, k, now, in, r);
      timers.register_processing_time_timer(now + 1, key, {});
      // Flink's registerCleanupTimer, on processing time.
      const std::int64_t min = now + d + 1;
      const std::int64_t max = now + static_cast<std::int64_t>(static_cast<double>(d) * 1.5) + 1;
      if (!k.header.cleanup || *k.header.cleanup < min) {
        timers.register_processing_time_timer(max, key, {});
        k.header.cleanup = max;
      }
    }
  }

};

}  // namespace

std::unique_ptr<StreamOperator> make_proctime_over(std::shared_ptr<const OverConfig> cfg) {
  return std::make_unique<ProctimeOverOperator>(std::move(cfg));
}

}  // namespace clink::sql
