// sql_temporal_join: the event-time temporal join, Flink's TemporalRowTimeJoinOperator.
// `FROM l [LEFT] JOIN v FOR SYSTEM_TIME AS OF l.rowtime ON l.k = v.k`: each left row joins
// the version of its key valid at the left row's time (the latest right row with
// rowtime <= that time), once the watermark has passed the left row's time.
//   - Keyed by the join keys. The left rows are buffered per key in a map by arrival
//     sequence number (Flink's "left" + "next-index"); the right rows (versions) in a map
//     by their rowtime (Flink's "right": a later row with the same rowtime replaces the
//     earlier one). A right DELETE is a version too: left rows in its validity join
//     nothing. UPDATE_BEFORE rows are skipped: Flink consumes the versioned side as an
//     upsert stream (UPDATE_AFTER only), so a version ends where the next one begins.
//   - One event-time timer per key (Flink's "timer" value state), at the smallest time
//     buffered. When it fires, every buffered left row at or before the watermark is
//     joined and emitted, in arrival order, then removed; the versions older than the
//     latest one at or before the watermark are dropped (that one is still valid); the
//     timer is re-armed at the earliest left row left.
//   - The residual condition is evaluated over the (left row, version) pair; INNER emits
//     only pairs that pass, LEFT pads the rest with NULLs.
//   - Append-only output (+I), timed by the left row's time attribute. The watermark
//     passes through (the output rows are never later than it: they are emitted when it
//     passes them).
// A right row whose equality key holds a NULL (with `=`) can never match and is not kept.
//
// Lateness by channel (runtime/lateness.hpp). The operator runs on the minimum of its
// channels' watermarks, so what a row already behind its own channel's watermark W met
// (which left rows were still waiting, which versions were not yet cleaned) depended on
// how far the other channels had got: thread timing. With W the watermark the row's
// channel had sent before it (at least the operator's):
//   - a version late in its channel (t <= W) takes effect from W + 1 instead of t: the
//     left rows before that may already have been emitted; every later one sees it.
//     After a cleanup at watermark c no version takes effect at or before c any more.
//   - a left row late in its channel (t <= W) is emitted when the watermark reaches W
//     (its map key is its arrival number then W, so arrival order is kept), and joins the
//     latest version at or before t only if no version takes effect in (t, W]: the latest
//     version at or before W. Otherwise it is unmatched (INNER: dropped, counted in
//     late_records_dropped; LEFT: padded). That version is never cleaned before: the
//     row came when the operator's watermark was <= W, cleanups since then kept the
//     latest version at or before their watermark, and the one that reaches W emits
//     the row before it cleans.
// Rows not late in their channels are joined exactly as Flink does; a late row gets one
// of Flink's outcomes, the same on every run.
#include <algorithm>
#include <limits>

#include "clink/core/error.hpp"
#include "clink/runtime/lateness.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "sql_join_common.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {
namespace {

struct TemporalJoinConfig {
  JoinSpec spec;
  std::size_t time_column[2] = {0, 0};  // the left's AS OF attribute, the versions' rowtime
};

class SqlTemporalJoinOperator final : public StreamOperator {
 public:
  explicit SqlTemporalJoinOperator(std::shared_ptr<const TemporalJoinConfig> cfg)
      : cfg_(std::move(cfg)),
        spec_(cfg_->spec),
        codec_{SideRowCodec(*spec_.side[0]), SideRowCodec(*spec_.side[1])},
        key_encoder_{RowKeyEncoder(*spec_.side[0], spec_.keys[0]), RowKeyEncoder(*spec_.side[1], spec_.keys[1])},
        ready_(spec_.side[0]),
        versions_(spec_.side[1]),
        joined_(spec_) {}

  int num_inputs() const override { return 2; }

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    backend_ = ctx.keyed_state_backend_or_private();
    backend_->set_current_namespace({});
    left_ = backend_->register_state("temporal-left", StateKind::kMap);
    next_index_ = backend_->register_state("temporal-next-index", StateKind::kValue);
    right_ = backend_->register_state("temporal-right", StateKind::kMap);
    timer_ = backend_->register_state("temporal-timer", StateKind::kValue);
  }

  void process_batch(int input, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    const EventTime arrival_wm = lateness_watermark(ctx());  // the rows' W
    for (std::size_t r = 0; r < in.size(); ++r) {
      const RowKind kind = in.row_kinds()[r];
      if (input == 1 && (kind == RowKind::kUpdateBefore || has_null_key(in, r, spec_.keys[1], spec_.filter_nulls)))
        continue;
      const std::int64_t t = time_attribute_ms(spec_, input, in, r, cfg_->time_column[input]);
      key_.clear();
      key_encoder_[input].encode(in, r, key_);
      backend_->set_current_key(key_);
      value_.clear();
      if (input == 0) {
        KeyCodec<std::int64_t>::encode(t, value_);
        codec_[0].encode(in, r, value_);
        map_key_.clear();
        KeyCodec<std::int64_t>::encode(next_left_index(), map_key_);
        if (arrival_wm > t) KeyCodec<std::int64_t>::encode(arrival_wm, map_key_);  // (W = t: the same as t)
        backend_->map_put(left_, map_key_, value_);
        register_smallest_timer(std::max(arrival_wm, t));
      } else {
        value_.push_back(static_cast<char>(kind));
        codec_[1].encode(in, r, value_);
        const std::int64_t effective = t > arrival_wm ? t : arrival_wm == kMaxEventTime ? arrival_wm : arrival_wm + 1;
        map_key_.clear();
        KeyCodec<std::int64_t>::encode(effective, map_key_);
        backend_->map_put(right_, map_key_, value_);
        register_smallest_timer(effective);
      }
    }
  }

  void process_watermark(Watermark wm) override {
    if (!wm.idle) {
      ctx().timer_service().advance_watermark(wm.timestamp, [this](const Timer& t) { on_event_time_timer(t); });
      joined_.flush(output());
    }
    output().emit_watermark(wm);
  }

  void on_event_time_timer(const Timer& t) override {
    key_.assign(t.key);
    backend_->set_current_key(key_);
    backend_->remove(timer_);
    const EventTime wm = ctx().timer_service().current_watermark();
    load_versions();
    const std::int64_t unprocessed = take_ready_left_rows(wm);
    emit_ready();
    drop_old_versions(wm);
    if (unprocessed < std::numeric_limits<std::int64_t>::max()) register_timer(unprocessed);
    if (joined_.pending() >= kDefaultBatchSize) joined_.flush(output());
  }

 private:
  std::int64_t next_left_index() {
    std::int64_t index = 0;
    if (backend_->get(next_index_, scratch_)) {
      std::string_view v(scratch_);
      index = KeyCodec<std::int64_t>::decode(v);
    }
    scratch_.clear();
    KeyCodec<std::int64_t>::encode(index + 1, scratch_);
    backend_->put(next_index_, scratch_);
    return index;
  }

  // Flink's registerSmallestTimer: one timer per key, at the smallest time buffered.
  void register_smallest_timer(std::int64_t t) {
    if (backend_->get(timer_, scratch_)) {
      std::string_view v(scratch_);
      const std::int64_t current = KeyCodec<std::int64_t>::decode(v);
      if (current <= t) return;
      ctx().timer_service().delete_event_time_timer(current, key_, {});
    }
    register_timer(t);
  }
  void register_timer(std::int64_t t) {
    scratch_.clear();
    KeyCodec<std::int64_t>::encode(t, scratch_);
    backend_->put(timer_, scratch_);
    ctx().timer_service().register_event_time_timer(t, key_, {});
  }

  // The current key's versions, in rowtime order (the map's key order).
  void load_versions() {
    versions_.clear();
    version_times_.clear();
    version_kinds_.clear();
    backend_->map_for_each(right_, [&](std::string_view time_bytes, std::string_view value) {
      if (value.empty()) throw ClinkError(spec_.where + ": corrupt temporal join state");
      version_times_.push_back(KeyCodec<std::int64_t>::decode(time_bytes));
      version_kinds_.push_back(static_cast<RowKind>(value[0]));
      codec_[1].decode(value.substr(1), versions_);
      return true;
    });
  }

  // Moves the buffered left rows whose time (W for a late row) the watermark reached into
  // ready_ (arrival order); returns the earliest such time of the rows still buffered
  // (INT64_MAX: none).
  std::int64_t take_ready_left_rows(EventTime wm) {
    ready_.clear();
    ready_times_.clear();
    ready_waits_.clear();
    taken_.clear();
    std::int64_t unprocessed = std::numeric_limits<std::int64_t>::max();
    backend_->map_for_each(left_, [&](std::string_view seq, std::string_view value) {
      std::string_view v = value;
      const std::int64_t t = KeyCodec<std::int64_t>::decode(v);
      std::string_view late_wm = seq.substr(std::min<std::size_t>(seq.size(), 8));
      const EventTime waits_for = late_wm.size() == 8 ? KeyCodec<std::int64_t>::decode(late_wm) : kMinEventTime;
      const std::int64_t at = std::max(t, waits_for);
      if (at > wm) {
        unprocessed = std::min(unprocessed, at);
        return true;
      }
      taken_.emplace_back(seq);
      ready_times_.push_back(t);
      ready_waits_.push_back(waits_for);
      codec_[0].decode(v, ready_);
      return true;
    });
    for (const auto& k : taken_) backend_->map_remove(left_, k);
    return unprocessed;
  }

  // Joins each ready left row with the version valid at its time (Flink's
  // latestRightRowToJoin: the latest version at or before it, if that is not a DELETE);
  // a row late in its channel only if that is also the latest at or before its W.
  void emit_ready() {
    const std::size_t n = ready_.size();
    if (n == 0) return;
    joined_.reset_pairs();
    pair_of_.assign(n, kNoPair);
    std::size_t late = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (has_null_key(ready_, i, spec_.keys[0], spec_.filter_nulls)) continue;
      auto it = std::upper_bound(version_times_.begin(), version_times_.end(),
                                 std::max(ready_times_[i], ready_waits_[i]));
      if (it == version_times_.begin()) continue;
      const auto v = static_cast<std::size_t>(it - version_times_.begin()) - 1;
      if (version_times_[v] > ready_times_[i]) {  // a version took effect in (t, W]
        if (!spec_.outer[0]) ++late;
        continue;
      }
      if (version_kinds_[v] != RowKind::kInsert && version_kinds_[v] != RowKind::kUpdateAfter) continue;
      pair_of_[i] = joined_.add_pair(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(v));
    }
    if (late > 0) ctx().metrics().late_records_dropped.fetch_add(static_cast<std::int64_t>(late), std::memory_order_relaxed);
    joined_.evaluate(0, ready_, versions_);
    for (std::size_t i = 0; i < n; ++i) {
      if (pair_of_[i] != kNoPair && joined_.matches(pair_of_[i])) {
        joined_.emit_pair(pair_of_[i], RowKind::kInsert, ready_times_[i]);
      } else if (spec_.outer[0]) {
        joined_.emit_padded(0, ready_, i, RowKind::kInsert, ready_times_[i]);
      }
    }
    joined_.gather_emitted_pairs();  // ready_ and versions_ change before the next flush
  }

  // Flink's cleanupExpiredVersionInState: keeps the latest version at or before the
  // watermark (still valid for later left rows) and every newer one.
  void drop_old_versions(EventTime wm) {
    auto newer = std::upper_bound(version_times_.begin(), version_times_.end(), wm);
    std::size_t keep_from = newer == version_times_.end()
                                ? (version_times_.empty() ? 0 : version_times_.size() - 1)
                                : (newer == version_times_.begin() ? 0 : static_cast<std::size_t>(newer - version_times_.begin()) - 1);
    for (std::size_t i = 0; i < keep_from; ++i) {
      map_key_.clear();
      KeyCodec<std::int64_t>::encode(version_times_[i], map_key_);
      backend_->map_remove(right_, map_key_);
    }
  }

  static constexpr std::size_t kNoPair = static_cast<std::size_t>(-1);

  std::shared_ptr<const TemporalJoinConfig> cfg_;
  const JoinSpec& spec_;
  SideRowCodec codec_[2];
  RowKeyEncoder key_encoder_[2];
  KeyedStateBackend* backend_ = nullptr;
  StateId left_, next_index_, right_, timer_;
  // Per timer (buffers reused).
  ColumnBatch ready_, versions_;
  std::vector<std::int64_t> ready_times_, version_times_;
  std::vector<EventTime> ready_waits_;  // W of a ready row late in its channel, else kMinEventTime
  std::vector<RowKind> version_kinds_;
  std::vector<std::string> taken_;
  std::vector<std::size_t> pair_of_;
  JoinedRows joined_;
  std::string key_, map_key_, value_, scratch_;
};

}  // namespace

void register_sql_temporal_join(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_temporal_join",
      .description = "sql_row x sql_row -> sql_row: event-time temporal join of a stream with a versioned table "
                     "(inner, left), append-only, left rows joined when the watermark passes them",
      .num_inputs = 2,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_temporal_join", JoinSpec::param_names({"left_time", "right_time"}));
        auto cfg = std::make_shared<TemporalJoinConfig>();
        cfg->spec = JoinSpec::parse(p);
        if (cfg->spec.outer[1]) p.fail("param 'join_type' must be inner or left for a temporal join");
        if (cfg->spec.keys[0].empty()) p.fail("a temporal join needs equi-join keys (the versioned table's primary key)");
        cfg->time_column[0] = cfg->spec.time_column(p, 0, "left_time");
        cfg->time_column[1] = cfg->spec.time_column(p, 1, "right_time");
        return [cfg] { return std::make_unique<SqlTemporalJoinOperator>(cfg); };
      }});
}

}  // namespace clink::sql
