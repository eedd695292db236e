// sql_window_session: Flink's SESSION window TVF without an aggregation over it (Flink's
// WindowTableFunction with an unaligned window, UnalignedWindowTableFunctionOperator): a
// row's session is known only once the watermark passes the session's end, so the rows are
// kept per partition (the TVF's PARTITION BY keys; none: one partition at parallelism 1) in
// the one window engine's merging session windows, and when a session fires its rows are
// emitted with window_start, window_end and window_time appended (+I, event time
// window_time). What follows (a window Top-N, a window deduplication, a plain projection)
// sees each row once its window is final, as in Flink.
//
// Window state is the session's rows, each [u32 length][RankRowCodec bytes], one string per
// (partition, session); merging sessions concatenates them. The engine checkpoints it and
// drops late rows (a row whose session already fired), counting them in
// late_records_dropped.
#include <memory>
#include <optional>

#include "clink/core/error.hpp"
#include "clink/runtime/lateness.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/sql/ops/row_key.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "clink/sql/spec/sql_window_spec.hpp"
#include "clink/windows/window_operator.hpp"
#include "rank_support.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {
namespace {

struct SessionTvfConfig {
  std::string where;
  SchemaPtr in_schema, out_schema;
  SqlWindowSpec window;
  std::vector<std::size_t> keys;
};

// The engine's input: one row of the batch being processed, with its partition key bytes.
struct SessionRow {
  const ColumnBatch* batch;
  std::uint32_t row;
  const char* key;
  std::uint32_t key_len;
};
struct SessionKeyOf {
  RowKey operator()(const SessionRow& r) const { return RowKey{std::string(r.key, r.key_len)}; }
};
struct NoRecord {};  // the engine's output type: rows go straight into ColumnBatches

// Writes a fired session's rows: the input columns, then the window columns.
class SessionRowWriter {
 public:
  explicit SessionRowWriter(const SessionTvfConfig& cfg) : cfg_(cfg), codec_(*cfg.in_schema) {}
  void set_output(Output* out) { out_ = out; }
  void write(std::string_view rows, const TimeWindow& w) {
    const std::size_t cols = cfg_.in_schema->size();
    const EventTime time = cfg_.window.window_time_ms(w);
    while (!rows.empty()) {
      const std::uint32_t len = KeyCodec<std::uint32_t>::decode(rows);
      if (len > rows.size()) throw ClinkError(cfg_.where + ": session state: truncated row");
      if (!batch_) batch_ = std::make_unique<ColumnBatch>(cfg_.out_schema, 64);
      codec_.decode(rows.substr(0, len), *batch_);
      rows.remove_prefix(len);
      cfg_.window.append_window(*batch_, cols, w);
      batch_->row_kinds().push_back(RowKind::kInsert);
      batch_->event_times().push_back(time);
      if (batch_->size() >= kDefaultBatchSize) flush();
    }
  }
  void encode(const ColumnBatch& in, std::size_t row, std::string& state) {
    scratch_.clear();
    codec_.encode(in, row, scratch_);
    KeyCodec<std::uint32_t>::encode(static_cast<std::uint32_t>(scratch_.size()), state);
    state.append(scratch_);
  }
  void flush() {
    if (batch_ && batch_->size() > 0) out_->emit(std::move(batch_));
    batch_.reset();
  }

 private:
  const SessionTvfConfig& cfg_;
  RankRowCodec codec_;
  Output* out_ = nullptr;
  std::unique_ptr<ColumnBatch> batch_;
  std::string scratch_;
};

class SessionRowsPolicy {
 public:
  using State = std::string;
  using Out = NoRecord;
  static constexpr bool kIncremental = true;
  explicit SessionRowsPolicy(SessionRowWriter* writer) : writer_(writer) {}
  void open(RuntimeContext&) {}
  void close() {}
  State create() const { return {}; }
  void add(State& s, const SessionRow& v, EventTime) const { writer_->encode(*v.batch, v.row, s); }
  void merge(State& into, const State& from) const { into.append(from); }
  void fire(const RowKey&, State& s, WindowContext& ctx, Collector<Out>&) { writer_->write(s, ctx.window()); }
  void clear(const RowKey&, WindowContext&) {}
  bool empty(const State&) const { return false; }

 private:
  SessionRowWriter* writer_;
};

// What the engine emits through: fired rows are already in the writer; watermarks follow
// them (over TIMESTAMP_LTZ, the operator's input watermark, not the shifted one).
class SessionEngineOutput final : public Output {
 public:
  explicit SessionEngineOutput(SessionRowWriter& writer) : writer_(writer) {}
  void bind(Output* real) { real_ = real; }
  void set_input_watermark(Watermark wm) { input_wm_ = wm; }
  void emit(BatchPtr) override {}
  void emit_watermark(Watermark wm) override {
    writer_.flush();
    real_->emit_watermark(input_wm_ ? *input_wm_ : wm);
  }
  void emit_side(const std::string& tag, BatchPtr batch) override { real_->emit_side(tag, std::move(batch)); }

 private:
  SessionRowWriter& writer_;
  Output* real_ = nullptr;
  std::optional<Watermark> input_wm_;
};

class SqlWindowSessionOperator final : public StreamOperator {
 public:
  explicit SqlWindowSessionOperator(std::shared_ptr<const SessionTvfConfig> cfg)
      : cfg_(std::move(cfg)), keys_(*cfg_->in_schema, cfg_->keys), writer_(*cfg_), adapter_(writer_) {
    WindowConfig<SessionRow> wc;
    wc.assigner = cfg_->window.assigner();
    engine_ = std::make_unique<WindowOperator<RowKey, SessionRow, SessionKeyOf, SessionRowsPolicy>>(
        std::move(wc), SessionKeyOf{}, SessionRowsPolicy(&writer_));
  }

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    if (cfg_->keys.empty() && ctx.parallelism() > 1)
      throw ClinkError(cfg_->where + ": a SESSION window without PARTITION BY runs at parallelism 1, got " +
                       std::to_string(ctx.parallelism()));
    writer_.set_output(&ctx.output());
    adapter_.bind(&ctx.output());
    ctx.set_output(&adapter_);
    engine_->open(ctx);
  }

  void process_batch(int, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    const std::size_t n = in.size();
    const Column& tcol = in.column(cfg_->window.time_column);
    key_bytes_.clear();
    key_ends_.resize(n);
    for (std::size_t r = 0; r < n; ++r) {
      if (in.row_kind(r) != RowKind::kInsert)
        throw ClinkError(cfg_->where + ": a SESSION window TVF consumes insert-only input, row " + std::to_string(r) +
                         " is " + std::string(row_kind_short_string(in.row_kind(r))));
      if (tcol.is_null(r))
        throw ClinkError(cfg_->where + ": row " + std::to_string(r) + " has a NULL time attribute '" +
                         in.schema()->name(cfg_->window.time_column) + "'");
      partition_key(keys_, in, r, key_);
      key_bytes_.append(key_);
      key_ends_[r] = static_cast<std::uint32_t>(key_bytes_.size());
    }
    auto rows = std::make_unique<Batch<SessionRow>>();
    rows->records.resize(n);
    std::uint32_t begin = 0;
    for (std::size_t r = 0; r < n; ++r) {
      rows->records[r] = Record<SessionRow>{
          SessionRow{&in, static_cast<std::uint32_t>(r), key_bytes_.data() + begin, key_ends_[r] - begin},
          cfg_->window.assign_time(tcol.values<std::int64_t>()[r]), kNoPartition};
      begin = key_ends_[r];
    }
    // Over TIMESTAMP_LTZ the engine's times are shifted: so is the channel's watermark.
    std::optional<ChannelWatermarkScope> shifted;
    if (cfg_->window.ltz)
      if (auto c = channel_watermark(ctx())) shifted.emplace(ctx(), cfg_->window.shift_watermark(*c));
    engine_->process_batch(0, std::move(rows));
    writer_.flush();
  }

  void process_watermark(Watermark wm) override {
    if (!cfg_->window.ltz) return engine_->process_watermark(wm);
    adapter_.set_input_watermark(wm);
    shifted_ = std::max(shifted_, cfg_->window.shift_watermark(wm.timestamp));
    engine_->process_watermark(Watermark{shifted_, wm.idle});
  }
  void process_processing_time(std::int64_t now) override {
    engine_->process_processing_time(now);
    writer_.flush();
  }
  void finish() override {
    engine_->finish();
    writer_.flush();
  }
  void snapshot_state(std::int64_t id) override { engine_->snapshot_state(id); }
  void notify_checkpoint_complete(std::int64_t id) override { engine_->notify_checkpoint_complete(id); }
  void close() override { engine_->close(); }

 private:
  std::shared_ptr<const SessionTvfConfig> cfg_;
  RowKeyEncoder keys_;
  SessionRowWriter writer_;
  SessionEngineOutput adapter_;
  std::unique_ptr<StreamOperator> engine_;
  std::string key_, key_bytes_;
  std::vector<std::uint32_t> key_ends_;
  EventTime shifted_ = kMinEventTime;
};

}  // namespace

void register_sql_window_session(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_window_session",
      .description = "sql_row -> sql_row: the SESSION window TVF without aggregation: rows kept per partition "
                     "('keys') in merging session windows, emitted with window_start, window_end, window_time "
                     "appended when the watermark closes their session",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_window_session", {"window", "keys"});
        auto cfg = std::make_shared<SessionTvfConfig>();
        cfg->where = p.where();
        cfg->in_schema = p.input_schema(0);
        cfg->out_schema = p.output_schema();
        cfg->window = SqlWindowSpec::parse(p.require("window"), *cfg->in_schema, p);
        if (cfg->window.ltz) cfg->window.zone = session_from_params(p).time_zone;
        if (cfg->window.kind != SqlWindowSpec::Kind::kSession) p.fail("param 'window': a SESSION window expected");
        if (cfg->window.proctime) p.fail("param 'window': a processing-time SESSION window TVF is not supported");
        cfg->keys = p.has("keys") ? p.columns("keys", *cfg->in_schema) : std::vector<std::size_t>{};
        for (const auto& f : cfg->in_schema->fields())
          if (!key_type_decodable(f.type))
            p.fail("column '" + f.name + "' of type " + f.type.to_string() +
                   " cannot be kept in a SESSION window TVF's state (nested types are not supported)");
        std::vector<RowField> fields = cfg->in_schema->fields();
        append_window_fields(fields, cfg->window.ltz);
        check_schema_equal(Schema(fields), *cfg->out_schema, p.where() + ": param 'schema'");
        return [cfg] { return std::make_unique<SqlWindowSessionOperator>(cfg); };
      }});
}

}  // namespace clink::sql
