// sql_watermark_assigner: WATERMARK FOR rowtime AS <expr>, with Flink SQL's rules
// (flink-table-runtime WatermarkAssignerOperator):
//  - every row's event time is its rowtime (ms); a NULL rowtime fails the job;
//  - the watermark is the max over rows of the expression's value (NULL values are
//    skipped), with no "- 1" (unlike the DataStream strategies); it starts at 0, so a
//    watermark <= 0 is never emitted, as in Flink;
//  - it is emitted when it advanced by more than interval_ms over the last emitted one
//    (Flink's eager emission), and by a processing-time timer every interval_ms;
//    data_driven (the planner sets it over a bounded source) leaves the timer out: which
//    rows a watermark came before then depends on the rows alone, not on when the timer
//    fired, so a row just behind the watermark (by less than interval_ms) is late, or
//    not, the same way on every run of the same input (issue 15's determinism);
//    emit 'on-event' is interval 0: every advance is emitted; with per_row (the planner
//    sets it when the job calls CURRENT_WATERMARK) right after the row that made it, so
//    the next row sees it, as in Flink (a batch is cut there);
//  - rows always precede the watermark that follows them in Flink's per-row order. A
//    batch is cut only where a later row of it would be at or below a watermark Flink
//    had already emitted before that row (out-of-order data); rows above it cannot be
//    affected by that watermark, so in-order batches go out whole, with one watermark;
//  - idle_timeout_ms: after that long without rows an idle marker; the next row
//    re-activates the stream; upstream watermarks are dropped except the final one;
//  - alignment: before each batch the assigner waits (at most update_interval_ms)
//    while its watermark is more than max_drift_ms ahead of its group's slowest
//    member (time/alignment_group.hpp, as the DataStream assigner);
//  - source_bounded: the source (a filesystem source reading several old readers' files
//    after a rescale) sends before each batch the minimum of its splits' watermarks,
//    the batch's rows included (connectors/sql/source_watermarks.hpp). The watermark
//    never passes it: the max of the expression is capped at it row by row, so it
//    never runs ahead of the split a row comes from. With one split the bound is that
//    max itself and changes nothing; upstream watermarks are bounds then, not read by
//    CURRENT_WATERMARK.
// Checkpoint: the emitted and the current watermark, per subtask, in the union list
// "sql-watermark-assigner"; a restore at the same parallelism takes its own entry back
// and re-emits its watermark first; rescaled, the minimum over the old subtasks.
#include <memory>

#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/sql/expression/expr_compiler.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "clink/sql/spec/sql_window_spec.hpp"
#include "clink/state/state_codec.hpp"
#include "clink/time/alignment_group.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {
namespace {

struct WatermarkConfig {
  std::string where;
  std::size_t rowtime = 0;
  ExprPtr watermark;
  SessionContext session;
  std::int64_t interval_ms = 200;
  bool periodic = true;
  bool per_row = false;  // 'on-event': a watermark right after each row that advances it
  std::int64_t idle_timeout_ms = 0;
  WatermarkAlignment alignment;
  bool source_bounded = false;
  bool data_driven = false;  // no periodic emission by processing time (a bounded input)
};

class SqlWatermarkAssigner final : public StreamOperator {
 public:
  explicit SqlWatermarkAssigner(const WatermarkConfig& cfg)
      : cfg_(cfg), batch_time_(std::make_shared<BatchTimeContext>()),
        expr_(cfg.watermark, with_batch_time(cfg.session, batch_time_)) {}

  static constexpr const char* kState = "sql-watermark-assigner";

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    last_row_time_ = now();
    if (ctx.is_restored()) restore();
    if (ctx.timer_service().processing_time_timer_count() == 0) arm_timer();
    if (cfg_.alignment.enabled()) {
      group_ = &AlignmentGroupRegistry::group(cfg_.alignment.group);
      member_ = group_->join();
      group_->publish(member_, last_, false);
    }
  }
  void close() override { leave_group(); }

  void process_batch(int, BatchPtr batch) override {
    auto& in = column_batch_cast(*batch);
    const std::size_t n = in.size();
    if (n == 0) return;
    if (group_) group_->wait_until_aligned(last_, cfg_.alignment.max_drift_ms, cfg_.alignment.max_wait_ms);
    emit_restored();
    if (idle_) {
      idle_ = false;
      output().emit_watermark(Watermark::at(last_));
      publish();
    }
    last_row_time_ = now();
    const Column& rt = in.column(cfg_.rowtime);
    for (std::size_t r = 0; r < n; ++r) {
      if (rt.is_null(r))
        throw ClinkError(cfg_.where + ": RowTime field should not be null (row " + std::to_string(r) +
                         "), please convert it to a non-null value");
      in.event_times()[r] = micros_to_millis(rt.values<std::int64_t>()[r]);
    }
    // The expression's time functions (CURRENT_TIMESTAMP, NOW(), ...) read the task's
    // processing-time clock once per batch, as sql_calc's do (a test's manual clock too).
    batch_time_->now_micros = now() * 1000;
    const Column& w = expr_.evaluate(in);
    std::size_t start = 0;
    EventTime pending = last_;  // the watermark Flink would have emitted so far in this batch
    for (std::size_t r = 0; r < n; ++r) {
      if (pending > last_ && in.event_times()[r] <= pending) {  // this row would follow it: cut here
        emit_rows(in, start, r);
        start = r;
        advance_to(pending);
      }
      if (w.is_valid(r)) current_ = std::max(current_, micros_to_millis(w.values<std::int64_t>()[r]));
      if (cfg_.source_bounded) current_ = std::min(current_, bound_);
      if (current_ - pending > cfg_.interval_ms && current_ > pending) pending = current_;
      if (cfg_.per_row && pending > last_) {  // the next row comes after this watermark
        emit_rows(in, start, r + 1);
        start = r + 1;
        advance_to(pending);
      }
    }
    if (start == 0) output().emit(std::move(batch));
    else emit_rows(in, start, n);
    if (pending > last_) advance_to(pending);
  }

  // Upstream watermarks are not forwarded (but the final one); CURRENT_WATERMARK in the
  // expression reads the last one, as Flink's operator-level current watermark.
  void process_watermark(Watermark wm) override {
    if (wm.is_max()) return emit_final();
    if (cfg_.source_bounded) {
      if (!wm.idle) bound_ = std::max(bound_, wm.timestamp);
      return;
    }
    if (!wm.idle && wm.timestamp != kMinEventTime) batch_time_->current_watermark_millis = wm.timestamp;
  }

  void on_processing_time_timer(const Timer&) override {
    if (finished_) return;
    emit_restored();
    if (cfg_.periodic && !cfg_.data_driven && current_ > last_) advance_to(current_);
    if (cfg_.idle_timeout_ms > 0 && !idle_ && now() - last_row_time_ > cfg_.idle_timeout_ms) {
      idle_ = true;
      output().emit_watermark(Watermark::idle_marker(last_));
      publish();
    }
    arm_timer();
  }

  void finish() override { emit_final(); }

  void snapshot_state(std::int64_t) override {
    std::string item;
    StateCodec<std::int64_t>::encode(ctx().subtask_index(), item);
    StateCodec<std::int64_t>::encode(ctx().parallelism(), item);
    StateCodec<std::int64_t>::encode(last_, item);
    StateCodec<std::int64_t>::encode(current_, item);
    ctx().operator_state().list(kState, Redistribution::kUnion).assign(1, std::move(item));
  }

 private:
  std::int64_t now() { return ctx().timer_service().current_processing_time(); }
  void arm_timer() {
    std::int64_t every = 0;
    if (cfg_.periodic && !cfg_.data_driven) every = cfg_.interval_ms;
    if (cfg_.idle_timeout_ms > 0) every = every == 0 ? cfg_.idle_timeout_ms : std::min(every, cfg_.idle_timeout_ms);
    if (every > 0) ctx().timer_service().register_processing_time_timer(sat_add(now(), every), {}, {});
  }
  void emit_rows(const ColumnBatch& in, std::size_t begin, std::size_t end) {
    if (end <= begin) return;
    idx_.resize(end - begin);
    for (std::size_t i = 0; i < idx_.size(); ++i) idx_[i] = static_cast<std::uint32_t>(begin + i);
    output().emit(std::make_unique<ColumnBatch>(in.gather(idx_.data(), idx_.size())));
  }
  void advance_to(EventTime wm) {
    if (finished_ || wm <= last_) return;
    last_ = wm;
    output().emit_watermark(Watermark::at(wm));
    publish();
  }
  void publish() {
    if (group_) group_->publish(member_, last_, idle_);
  }
  void leave_group() {
    if (group_) group_->leave(member_);
    group_ = nullptr;
  }
  void emit_final() {
    if (finished_) return emit_restored();
    finished_ = true;
    restored_pending_ = false;
    last_ = current_ = kMaxEventTime;
    output().emit_watermark(Watermark::max());
    leave_group();
  }
  void restore() {
    EventTime own_last = 0, own_current = 0, min_last = kMaxEventTime;
    bool own = false, any = false;
    for (const std::string& item : ctx().operator_state().list(kState, Redistribution::kUnion)) {
      std::string_view in(item);
      auto subtask = StateCodec<std::int64_t>::decode(in);
      auto parallelism = StateCodec<std::int64_t>::decode(in);
      auto last = StateCodec<std::int64_t>::decode(in);
      auto current = StateCodec<std::int64_t>::decode(in);
      any = true;
      min_last = std::min(min_last, last);
      if (subtask == ctx().subtask_index() && parallelism == ctx().parallelism()) {
        own = true;
        own_last = last;
        own_current = current;
      }
    }
    if (!any) return;
    last_ = own ? own_last : min_last;
    current_ = own ? own_current : min_last;
    finished_ = last_ == kMaxEventTime;
    restored_pending_ = last_ > 0;
    bound_ = std::max(bound_, current_);  // the source's splits start again: not below what was reached
  }
  void emit_restored() {
    if (!restored_pending_) return;
    restored_pending_ = false;
    output().emit_watermark(Watermark::at(last_));
  }

  static SessionContext with_batch_time(SessionContext s, std::shared_ptr<const BatchTimeContext> t) {
    s.batch_time = std::move(t);
    return s;
  }

  WatermarkConfig cfg_;
  // Shared with the compiled expression through its session; refreshed per batch.
  std::shared_ptr<BatchTimeContext> batch_time_;
  CompiledExpr expr_;
  std::vector<std::uint32_t> idx_;
  EventTime current_ = 0;  // Flink: "watermark and timestamp should start from 0"
  EventTime last_ = 0;
  EventTime bound_ = 0;  // source_bounded: the source's watermark so far
  std::int64_t last_row_time_ = 0;
  bool idle_ = false;
  bool finished_ = false;
  bool restored_pending_ = false;
  AlignmentGroup* group_ = nullptr;
  int member_ = -1;
};

}  // namespace

void register_sql_watermark_assigner(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_watermark_assigner",
      .description = "sql_row -> sql_row: stamps the rowtime column as event time and emits Flink SQL watermarks "
                     "(max of the watermark expression; on-event / on-periodic, idleness, alignment)",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_watermark_assigner",
                      {"rowtime", "watermark", "emit", "interval_ms", "per_row", "idle_timeout_ms", "alignment",
                       "source_bounded", "data_driven"});
        SchemaPtr in = p.input_schema(0);
        check_schema_equal(*in, *p.output_schema(), p.where() + ": param 'schema'");
        auto cfg = std::make_shared<WatermarkConfig>();
        cfg->where = p.where();
        cfg->session = session_from_params(p);
        cfg->rowtime = p.column(p.require("rowtime"), *in, "param 'rowtime'");
        const LogicalType& rt = in->type(cfg->rowtime);
        if (!rt.is(TypeKind::kTimestamp) && !rt.is(TypeKind::kTimestampLtz))
          p.fail("param 'rowtime': column " + std::to_string(cfg->rowtime) + " is " + rt.to_string() +
                 ", a rowtime must be TIMESTAMP or TIMESTAMP_LTZ");
        try {
          cfg->watermark = expr_from_json(p.require("watermark"), *in);
        } catch (const std::exception& e) {
          p.fail(std::string("param 'watermark': ") + e.what());
        }
        if (!cfg->watermark->type.is(TypeKind::kTimestamp) && !cfg->watermark->type.is(TypeKind::kTimestampLtz))
          p.fail("param 'watermark' is " + cfg->watermark->type.to_string() + ", it must be a TIMESTAMP");
        std::string emit = p.get_string("emit", "on-periodic");
        if (emit != "on-event" && emit != "on-periodic")
          p.fail("param 'emit' must be on-event or on-periodic, got '" + emit + "'");
        cfg->periodic = emit == "on-periodic";
        cfg->interval_ms = cfg->periodic ? p.get_int("interval_ms", 200, 1) : 0;
        if (!cfg->periodic && p.has("interval_ms")) p.fail("param 'interval_ms' applies to emit 'on-periodic' only");
        cfg->per_row = p.get_bool("per_row", false);
        if (cfg->per_row && cfg->periodic) p.fail("param 'per_row' applies to emit 'on-event' only");
        cfg->idle_timeout_ms = p.get_int("idle_timeout_ms", 0, 0);
        cfg->source_bounded = p.get_bool("source_bounded", false);
        cfg->data_driven = p.get_bool("data_driven", false);
        if (p.has("alignment")) {
          const auto& a = p.params().at("alignment");
          if (!a.is_object() || !a.contains("group") || !a.at("group").is_string() || a.at("group").get<std::string>().empty())
            p.fail("param 'alignment' needs a non-empty 'group', got " + a.dump());
          auto num = [&](const char* k, std::int64_t dflt, std::int64_t min) {
            if (!a.contains(k)) return dflt;
            if (!a.at(k).is_number_integer() || a.at(k).get<std::int64_t>() < min)
              p.fail("param 'alignment'." + std::string(k) + " must be an integer >= " + std::to_string(min));
            return a.at(k).get<std::int64_t>();
          };
          cfg->alignment = WatermarkAlignment{a.at("group").get<std::string>(), num("max_drift_ms", 0, 0),
                                              num("update_interval_ms", 1000, 1)};
        }
        return [cfg] { return std::make_unique<SqlWatermarkAssigner>(*cfg); };
      }});
}

}  // namespace clink::sql
