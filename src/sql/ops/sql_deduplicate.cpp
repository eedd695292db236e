// sql_deduplicate: Flink's StreamExecDeduplicate (ROW_NUMBER() OVER (PARTITION BY k ORDER BY
// <time attribute>) = 1, the rank not output), per key in keyed value state "dedup":
//   proctime, keep first  ProcTimeDeduplicateKeepFirstRowFunction: the first row, +I; later
//                         rows of the key are dropped (state: a marker);
//   proctime, keep last   ProcTimeDeduplicateKeepLastRowFunction: +I for the first row, then
//                         -U previous / +U new per row (nothing when the row equals the
//                         previous one and no state TTL is set);
//   rowtime, keep last    RowTimeDeduplicateFunction: a row with rowtime >= the kept one's
//                         replaces it (+I, then -U / +U); an older one is dropped (state:
//                         the kept row behind its rowtime);
//   rowtime, keep first   RowTimeDeduplicateKeepFirstRowFunction (Flink 2.1+, insert-only):
//                         the earliest row of the key waits in state "dedup-waiting" with an
//                         event-time timer at its rowtime; when the watermark reaches it the
//                         row is emitted (+I) once and later rows are ignored; rows older than
//                         the watermark are late (dropped, counted in late_records_dropped).
// Input is insert-only. `state_ttl_ms` expires the kept row or marker (not a waiting row).
#include "clink/core/error.hpp"
#include "clink/runtime/lateness.hpp"
#include "clink/sql/ops/sql_grouping.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "clink/state/state_ttl.hpp"
#include "rank_support.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {
namespace {

struct DedupConfig {
  std::string where;
  SchemaPtr in_schema, out_schema;
  std::vector<std::size_t> keys;
  std::size_t time_column = 0;
  bool keep_last = false;
  bool rowtime = false;
  std::int64_t state_ttl_ms = 0;
};

class SqlDeduplicateOperator final : public StreamOperator {
 public:
  explicit SqlDeduplicateOperator(std::shared_ptr<const DedupConfig> cfg)
      : cfg_(std::move(cfg)), keys_(*cfg_->in_schema, cfg_->keys), codec_(*cfg_->in_schema), out_(cfg_->out_schema, codec_, false) {}

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    if (cfg_->keys.empty() && ctx.parallelism() > 1)
      throw ClinkError(cfg_->where + ": a deduplication without PARTITION BY runs at parallelism 1, got " +
                       std::to_string(ctx.parallelism()));
    backend_ = ctx.keyed_state_backend_or_private();
    backend_->set_current_namespace({});
    state_ = backend_->register_state("dedup", StateKind::kValue, cfg_->state_ttl_ms);
    if (cfg_->rowtime && !cfg_->keep_last) waiting_ = backend_->register_state("dedup-waiting", StateKind::kValue);
  }

  void process_batch(int, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    now_ = cfg_->state_ttl_ms > 0 ? backend_->clock().now_ms() : 0;
    const Column& time = in.column(cfg_->time_column);
    std::int64_t late = 0;
    for (std::size_t r = 0; r < in.size(); ++r) {
      if (in.row_kind(r) != RowKind::kInsert) throw ClinkError(cfg_->where + ": deduplication takes insert-only input");
      partition_key(keys_, in, r, key_);
      backend_->set_current_key(key_);
      if (!cfg_->rowtime && !cfg_->keep_last) {
        if (read(state_)) continue;
        write(state_, {});
        emit_input(in, r, RowKind::kInsert);
        continue;
      }
      row_.clear();
      codec_.encode(in, r, row_);
      if (cfg_->rowtime && !cfg_->keep_last) {
        if (time.is_null(r)) throw ClinkError(cfg_->where + ": the rowtime is NULL");
        const std::int64_t t = floor_ms(time.values<std::int64_t>()[r]);
        if (t < lateness_watermark(ctx())) {
          ++late;
          continue;
        }
        if (read(state_)) continue;  // already emitted
        if (backend_->get(waiting_, prev_)) {
          const std::int64_t pt = RankRowCodec::event_time(prev_);
          if (t >= pt) continue;
          ctx().timer_service().delete_event_time_timer(pt, key_, {});
        }
        // The row's event time is its rowtime here (a time attribute), kept for the timer.
        set_time(row_, t);
        backend_->put(waiting_, row_);
        ctx().timer_service().register_event_time_timer(t, key_, {});
        continue;
      }
      const bool had = read(state_);
      if (had) prev_.assign(value_);
      std::string_view prev_row(prev_);
      if (cfg_->rowtime) {
        // Row-time keep-last keeps [rowtime][row]: the comparison reads no column.
        const std::int64_t t = time.is_null(r) ? INT64_MIN : time.values<std::int64_t>()[r];
        if (had && t < KeyCodec<std::int64_t>::decode(prev_row)) continue;
        stored_.clear();
        KeyCodec<std::int64_t>::encode(t, stored_);
        stored_.append(row_);
        write(state_, stored_);
      } else {
        if (had && cfg_->state_ttl_ms == 0 && RankRowCodec::same_values(prev_row, row_)) continue;
        write(state_, row_);
      }
      if (!had) {
        out_.emit(row_, RowKind::kInsert, 0);
      } else {
        out_.emit(prev_row, RowKind::kUpdateBefore, 0);
        out_.emit(row_, RowKind::kUpdateAfter, 0);
      }
      if (out_.pending() >= kDefaultBatchSize) out_.flush(output());
    }
    if (late > 0) ctx().metrics().late_records_dropped.fetch_add(late, std::memory_order_relaxed);
    out_.flush(output());
  }

  void process_watermark(Watermark wm) override {
    if (!wm.idle) {
      ctx().timer_service().advance_watermark(wm.timestamp, [this](const Timer& t) { on_event_time_timer(t); });
      out_.flush(output());
    }
    output().emit_watermark(wm);
  }

  void on_event_time_timer(const Timer& t) override {
    backend_->set_current_key(t.key);
    if (!backend_->get(waiting_, prev_)) return;
    backend_->remove(waiting_);
    now_ = cfg_->state_ttl_ms > 0 ? backend_->clock().now_ms() : 0;
    write(state_, {});
    out_.emit(prev_, RowKind::kInsert, 0);
    if (out_.pending() >= kDefaultBatchSize) out_.flush(output());
  }

 private:
  static std::int64_t floor_ms(std::int64_t micros) { return micros >= 0 ? micros / 1000 : -((-micros + 999) / 1000); }
  static void set_time(std::string& row, std::int64_t t) {
    std::string head;
    KeyCodec<std::int64_t>::encode(t, head);
    row.replace(0, 8, head);
  }

  void emit_input(const ColumnBatch& in, std::size_t r, RowKind kind) {
    row_.clear();
    codec_.encode(in, r, row_);
    out_.emit(row_, kind, 0);
    if (out_.pending() >= kDefaultBatchSize) out_.flush(output());
  }

  // The key's state into value_ (without its TTL time); false when absent or expired.
  bool read(StateId id) {
    if (!backend_->get(id, bytes_)) return false;
    std::string_view v(bytes_);
    if (cfg_->state_ttl_ms > 0 && ttl_expired(get_ttl_timestamp(v), cfg_->state_ttl_ms, now_)) return false;
    value_.assign(v);
    return true;
  }
  void write(StateId id, std::string_view value) {
    bytes_.clear();
    if (cfg_->state_ttl_ms > 0) put_ttl_timestamp(now_, bytes_);
    bytes_.append(value);
    backend_->put(id, bytes_);
  }

  std::shared_ptr<const DedupConfig> cfg_;
  RowKeyEncoder keys_;
  RankRowCodec codec_;
  RankEmitter out_;
  KeyedStateBackend* backend_ = nullptr;
  StateId state_, waiting_;
  std::int64_t now_ = 0;
  std::string key_, row_, prev_, bytes_, value_, stored_;
};

}  // namespace

void register_sql_deduplicate(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_deduplicate",
      .description = "sql_row -> sql_row: keep the first or last row per key by a time attribute (Flink's "
                     "Deduplicate); keep-first is insert-only, keep-last emits -U/+U",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_deduplicate", {"keys", "time_column", "keep_last", "rowtime", "state_ttl_ms"});
        auto cfg = std::make_shared<DedupConfig>();
        cfg->where = p.where();
        cfg->in_schema = p.input_schema(0);
        cfg->out_schema = p.output_schema();
        cfg->keys = p.columns("keys", *cfg->in_schema);
        cfg->time_column = p.column(p.require("time_column"), *cfg->in_schema, "param 'time_column'");
        const auto& tt = cfg->in_schema->type(cfg->time_column);
        if (!tt.is(TypeKind::kTimestamp) && !tt.is(TypeKind::kTimestampLtz))
          p.fail("param 'time_column' must be a TIMESTAMP column, got " + tt.to_string());
        cfg->keep_last = p.get_bool("keep_last", false);
        cfg->rowtime = p.get_bool("rowtime", false);
        cfg->state_ttl_ms = p.get_int("state_ttl_ms", 0, 0);
        RankRowCodec::check_storable(*cfg->in_schema, p);
        check_output_types(*cfg->out_schema, cfg->in_schema->fields(), p);
        return [cfg] { return std::make_unique<SqlDeduplicateOperator>(cfg); };
      }});
}

}  // namespace clink::sql
