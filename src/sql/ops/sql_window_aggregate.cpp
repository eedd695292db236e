// sql_window_aggregate: Flink's window aggregation (GROUP BY window_start, window_end,
// keys over TUMBLE / HOP / CUMULATE / SESSION) as an instantiation of the one window
// engine (windows/window_operator.hpp): key = the grouping key's encoded bytes (RowKey),
// (or, for one 8-byte integer key, Int64Key: the same key bytes, a cheaper map key),
// input = a reference to a row of the arriving ColumnBatch, window state = the AggState
// block of the aggregate calls (the registry's aggregate functions). The engine assigns, fires, cleans, handles lateness
// and checkpoints; firing writes the result row straight into an output ColumnBatch.
//
// The engine emits through RuntimeContext::output(); this operator points that at an
// adapter that forwards watermarks after the rows written before them, and turns late
// rows (the engine's late side output) into dead letters.
//
// Allowed lateness follows the seed's SQL option (SEMANTICS.md): with L > 0 a window
// fires once, when the watermark passes end - 1 + L, with the late rows of the band
// folded in (DelayedEventTimeTrigger); L = 0 uses the default trigger and the engine's
// sliced path.
#include <memory>
#include <optional>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/runtime/lateness.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/ops/row_key.hpp"
#include "clink/sql/ops/sql_aggregates.hpp"
#include "clink/sql/ops/sql_grouping.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "clink/sql/spec/sql_window_spec.hpp"
#include "clink/windows/window_operator.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {
namespace {

// The engine's input: one row of the batch being processed, under one grouping set.
struct SqlWindowRow {
  const ColumnBatch* batch;
  std::uint32_t row;
  std::uint32_t set;
  const char* key;
  std::uint32_t key_len;
};
struct SqlNoRecord {};  // the engine's output type: results go straight into ColumnBatches
struct RowKeyOf {
  RowKey operator()(const SqlWindowRow& r) const { return RowKey{std::string(r.key, r.key_len)}; }
};
// The fast path of one 8-byte integer key: read straight from the key column.
struct Int64KeyOf {
  std::size_t column;
  Int64Key operator()(const SqlWindowRow& r) const {
    const Column& c = r.batch->column(column);
    return Int64Key{c.values<std::int64_t>()[r.row], c.is_null(r.row)};
  }
};

// Fires a window once, when the watermark passes end - 1 + lateness (the window's
// cleanup time): late rows within the band are folded in before the single firing.
class DelayedEventTimeTrigger final : public Trigger {
 public:
  explicit DelayedEventTimeTrigger(std::int64_t lateness) : lateness_(lateness) {}
  TriggerResult on_element(EventTime, const TimeWindow& w, TriggerContext& ctx) const override {
    ctx.register_event_time_timer(at(w));
    return TriggerResult::kContinue;
  }
  TriggerResult on_event_time(std::int64_t time, const TimeWindow& w, TriggerContext&) const override {
    return time == at(w) ? TriggerResult::kFire : TriggerResult::kContinue;
  }
  TriggerResult on_processing_time(std::int64_t, const TimeWindow&, TriggerContext&) const override {
    return TriggerResult::kContinue;
  }
  void clear(const TimeWindow& w, TriggerContext& ctx) const override { ctx.delete_event_time_timer(at(w)); }
  bool can_merge() const override { return true; }
  void on_merge(const TimeWindow& w, OnMergeContext& ctx) const override {
    if (at(w) > ctx.current_watermark()) ctx.register_event_time_timer(at(w));
  }
  std::string describe() const override { return "DelayedEventTimeTrigger(" + std::to_string(lateness_) + ")"; }

 private:
  std::int64_t at(const TimeWindow& w) const { return sat_add(w.max_timestamp(), lateness_); }
  std::int64_t lateness_;
};

struct WindowAggConfig {
  std::string where;
  std::string op_id;
  SchemaPtr out_schema;
  SqlWindowSpec window;
  SqlGrouping grouping;
  std::shared_ptr<const AggregateSet> aggs;
  std::int64_t lateness = 0;
  bool dlq = false;
  bool int64_key = false;  // one 8-byte integer key: Int64Key instead of RowKey
};

// Writes fired windows as rows: keys, window_start, window_end, window_time, aggregates.
class WindowResultWriter {
 public:
  explicit WindowResultWriter(const WindowAggConfig& cfg) : cfg_(cfg) {}
  void set_output(Output* out) { out_ = out; }
  template <class K>
  void write(const K& key, const TimeWindow& w, const AggState& s) {
    if (!batch_) batch_ = std::make_unique<ColumnBatch>(cfg_.out_schema, 64);
    const std::size_t nk = cfg_.grouping.keys.size();
    std::size_t set = 0;
    if constexpr (std::is_same_v<K, Int64Key>) {
      if (key.null) batch_->column(0).append_null();
      else batch_->column(0).append<std::int64_t>(key.value);
    } else {
      set = cfg_.grouping.decode(key.bytes, *batch_);
    }
    cfg_.window.append_window(*batch_, nk, w);
    cfg_.aggs->append_results(s, *batch_, nk + 3);
    cfg_.grouping.append_set_column(set, *batch_);
    batch_->row_kinds().push_back(RowKind::kInsert);
    batch_->event_times().push_back(cfg_.window.window_time_ms(w));
    if (batch_->size() >= kDefaultBatchSize) flush();
  }
  void flush() {
    if (batch_ && batch_->size() > 0) out_->emit(std::move(batch_));
    batch_.reset();
  }

 private:
  const WindowAggConfig& cfg_;
  Output* out_ = nullptr;
  std::unique_ptr<ColumnBatch> batch_;
};

template <class K>
class SqlWindowPolicy {
 public:
  using State = AggState;
  using Out = SqlNoRecord;
  static constexpr bool kIncremental = true;
  SqlWindowPolicy(std::shared_ptr<const AggregateSet> aggs, WindowResultWriter* writer, const AggregateInput* input)
      : aggs_(std::move(aggs)), writer_(writer), input_(input) {}
  void open(RuntimeContext&) {}
  void close() {}
  State create() const { return aggs_->create(); }
  // The engine hands rows over one at a time; `input_` holds the batch's bound columns.
  void add(State& s, const SqlWindowRow& v, EventTime) const { aggs_->add(s, *input_, v.row, 1); }
  void merge(State& into, const State& from) const { aggs_->merge(into, from); }
  void fire(const K& key, State& s, WindowContext& ctx, Collector<Out>&) { writer_->write(key, ctx.window(), s); }
  void clear(const K&, WindowContext&) {}
  bool empty(const State&) const { return false; }

 private:
  std::shared_ptr<const AggregateSet> aggs_;
  WindowResultWriter* writer_;
  const AggregateInput* input_;
};

// Whether a grouping takes the Int64Key fast path.
bool int64_path(const SqlGrouping& g, const Schema& input) {
  return g.routed() && g.keys.size() == 1 && int64_key_type(input.type(g.keys[0]));
}

// What the engine emits through: result rows are already in the writer; watermarks
// follow them; the late side output becomes dead letters.
class EngineOutput final : public Output {
 public:
  EngineOutput(const WindowAggConfig& cfg, WindowResultWriter& writer) : cfg_(cfg), writer_(writer) {}
  void bind(Output* real, RuntimeContext* ctx) {
    real_ = real;
    ctx_ = ctx;
  }
  void emit(BatchPtr) override {}  // the policy collects nothing
  // Over TIMESTAMP_LTZ windows the engine runs on shifted watermarks; downstream gets the
  // operator's input watermark.
  void set_input_watermark(Watermark wm) { input_wm_ = wm; }
  void emit_watermark(Watermark wm) override {
    writer_.flush();
    real_->emit_watermark(input_wm_ ? *input_wm_ : wm);
  }
  void emit_side(const std::string&, BatchPtr batch) override {
    const auto& late = batch_cast<SqlWindowRow>(*batch).records;
    auto out = std::make_unique<ColumnBatch>(dead_letter_schema(), late.size());
    const EventTime wm = ctx_->timer_service().current_watermark();
    for (const auto& r : late) {
      if (r.value.set != 0) continue;  // one dead letter per row, not per grouping set
      out->append_row({Value("late record"), Value(cfg_.op_id),
                       Value("event time " + std::to_string(r.event_time) + " ms, watermark " + std::to_string(wm) +
                             " ms"),
                       Value(format_row(*r.value.batch, r.value.row, *TimeZone::utc()))},
                      RowKind::kInsert, r.event_time);
    }
    ctx_->metrics().dead_letters.fetch_add(static_cast<std::int64_t>(out->size()), std::memory_order_relaxed);
    if (out->size() > 0) real_->emit_side(kDeadLetterTag, std::move(out));
  }

 private:
  const WindowAggConfig& cfg_;
  WindowResultWriter& writer_;
  Output* real_ = nullptr;
  RuntimeContext* ctx_ = nullptr;
  std::optional<Watermark> input_wm_;
};

class SqlWindowAggregateOperator final : public StreamOperator {
 public:
  explicit SqlWindowAggregateOperator(WindowAggConfig cfg)
      : cfg_(std::move(cfg)), input_(), writer_(cfg_), adapter_(cfg_, writer_) {
    WindowConfig<SqlWindowRow> wc;
    wc.assigner = cfg_.window.assigner();
    // Processing-time windows (PROCTIME()) take the assigner's ProcessingTimeTrigger: the
    // engine places rows by its clock and fires on processing-time timers; lateness is an
    // event-time notion (the planner only threads it to event-time windows).
    wc.allowed_lateness = cfg_.window.proctime ? 0 : cfg_.lateness;
    if (wc.allowed_lateness > 0) wc.trigger = std::make_shared<DelayedEventTimeTrigger>(cfg_.lateness);
    if (cfg_.dlq) wc.late_data_tag.emplace(kDeadLetterTag);
    // Pane slicing merges pane accumulators; an aggregate that cannot merge takes the
    // engine's generic path (every row folded into each of its windows). A TUMBLE window
    // is its one pane, which slicing never merges: it keeps the sliced path.
    wc.allow_slicing = cfg_.aggs->mergeable() || cfg_.window.kind == SqlWindowSpec::Kind::kTumble;
    if (cfg_.int64_key) {
      engine_ = std::make_unique<WindowOperator<Int64Key, SqlWindowRow, Int64KeyOf, SqlWindowPolicy<Int64Key>>>(
          std::move(wc), Int64KeyOf{cfg_.grouping.keys[0]}, SqlWindowPolicy<Int64Key>(cfg_.aggs, &writer_, &input_));
    } else {
      engine_ = std::make_unique<WindowOperator<RowKey, SqlWindowRow, RowKeyOf, SqlWindowPolicy<RowKey>>>(
          std::move(wc), RowKeyOf{}, SqlWindowPolicy<RowKey>(cfg_.aggs, &writer_, &input_));
    }
  }

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    if (!cfg_.grouping.routed() && ctx.parallelism() > 1)
      throw ClinkError(cfg_.where + ": " +
                       (cfg_.grouping.keys.empty() ? std::string("an aggregation without keys")
                                                   : std::string("several grouping sets")) +
                       " runs at parallelism 1, got " + std::to_string(ctx.parallelism()));
    real_ = &ctx.output();
    writer_.set_output(real_);
    adapter_.bind(real_, &ctx);
    ctx.set_output(&adapter_);
    engine_->open(ctx);
  }

  void process_batch(int, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    const std::size_t n = in.size(), sets = cfg_.grouping.num_sets();
    const Column& tcol = in.column(cfg_.window.time_column);
    cfg_.aggs->bind(in, input_);
    keys_.clear();
    key_ends_.assign(n * sets, 0);
    if (!cfg_.int64_key) {
      for (std::size_t s = 0; s < sets; ++s)
        for (std::size_t r = 0; r < n; ++r) {
          cfg_.grouping.encode(in, r, s, keys_);
          key_ends_[s * n + r] = static_cast<std::uint32_t>(keys_.size());
        }
    }
    auto rows = std::make_unique<Batch<SqlWindowRow>>();
    rows->records.resize(n * sets);
    auto* out = rows->records.data();
    std::uint32_t begin = 0;
    for (std::size_t s = 0; s < sets; ++s)
      for (std::size_t r = 0; r < n; ++r) {
        if (s == 0) check_row(in, tcol, r);
        const std::uint32_t end = key_ends_[s * n + r];
        *out++ = Record<SqlWindowRow>{
            SqlWindowRow{&in, static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(s), keys_.data() + begin, end - begin},
            cfg_.window.assign_time(tcol.values<std::int64_t>()[r]), kNoPartition};
        begin = end;
      }
    // Over TIMESTAMP_LTZ the engine's times are shifted: so is the channel's watermark.
    std::optional<ChannelWatermarkScope> shifted;
    if (cfg_.window.ltz)
      if (auto c = channel_watermark(ctx())) shifted.emplace(ctx(), cfg_.window.shift_watermark(*c));
    engine_->process_batch(0, std::move(rows));
    writer_.flush();
  }

  void process_watermark(Watermark wm) override {
    if (!cfg_.window.ltz) return engine_->process_watermark(wm);
    adapter_.set_input_watermark(wm);
    shifted_ = std::max(shifted_, cfg_.window.shift_watermark(wm.timestamp));
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
  void check_row(const ColumnBatch& in, const Column& tcol, std::size_t r) const {
    if (in.row_kind(r) != RowKind::kInsert)
      throw ClinkError(cfg_.where + ": a window aggregation consumes insert-only input, row " + std::to_string(r) +
                       " is " + std::string(row_kind_short_string(in.row_kind(r))));
    if (tcol.is_null(r))
      throw ClinkError(cfg_.where + ": row " + std::to_string(r) + " has a NULL time attribute '" +
                       in.schema()->name(cfg_.window.time_column) + "'");
  }

  WindowAggConfig cfg_;
  AggregateInput input_;  // the columns of the batch being processed (for the policy)
  WindowResultWriter writer_;
  EngineOutput adapter_;
  std::unique_ptr<StreamOperator> engine_;  // the window engine, instantiated for the key type
  Output* real_ = nullptr;
  std::string keys_;
  std::vector<std::uint32_t> key_ends_;
  EventTime shifted_ = kMinEventTime;
};

}  // namespace

void register_sql_window_aggregate(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_window_aggregate",
      .description = "sql_row -> sql_row: window aggregation (TUMBLE / HOP / CUMULATE / SESSION) on the window "
                     "engine: keys, window_start, window_end, window_time, aggregates; late rows to 'dead-letter' "
                     "with late_records_to_dlq",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_window_aggregate",
                      {"window", "keys", "grouping_sets", "grouping_set_column", "aggregates", "allowed_lateness_ms",
                       "late_records_to_dlq"});
        SchemaPtr in = p.input_schema(0);
        auto cfg = std::make_shared<WindowAggConfig>();
        cfg->where = p.where();
        cfg->op_id = ctx.id;
        cfg->out_schema = p.output_schema();
        cfg->window = SqlWindowSpec::parse(p.require("window"), *in, p);
        if (cfg->window.ltz) cfg->window.zone = session_from_params(p).time_zone;
        cfg->grouping = SqlGrouping::parse(p, *in);
        cfg->int64_key = int64_path(cfg->grouping, *in);
        cfg->aggs = std::make_shared<const AggregateSet>(
            AggregateSet::parse(p.has("aggregates") ? p.params().at("aggregates") : nlohmann::json::array(), *in, p,
                                false, FunctionRegistry::process()),
            false);
        if (cfg->window.kind == SqlWindowSpec::Kind::kSession)
          if (const RuntimeAggregate* c = cfg->aggs->first_unmergeable())
            p.fail("aggregate function " + c->function + " cannot merge accumulators, which SESSION windows need");
        cfg->lateness = p.get_int("allowed_lateness_ms", 0, 0);
        cfg->dlq = p.get_bool("late_records_to_dlq", false);
        std::vector<RowField> fields;
        cfg->grouping.key_fields(*in, fields);
        append_window_fields(fields, cfg->window.ltz);
        for (const auto& c : cfg->aggs->calls()) fields.push_back({"", c.result_type});
        cfg->grouping.set_column_field(fields);
        check_output_types(*cfg->out_schema, fields, p);
        return [cfg] { return std::make_unique<SqlWindowAggregateOperator>(*cfg); };
      },
      .side_outputs = {{kDeadLetterTag, kSqlRowType}}});
}

}  // namespace clink::sql
