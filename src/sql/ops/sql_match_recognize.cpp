// sql_match_recognize: MATCH_RECOGNIZE on the CEP engine (docs/cep.md). The operator is a
// CepOperator<MatchEvent, ..., RowKey> run inside a SQL operator: each input row becomes
// an event (its partition key bytes, as the hash edge routed it, and the row in
// SideRowCodec bytes, which is also what the CEP state stores), the pattern is built with
// Pattern::from_steps (concatenation = next, Flink's StreamExecMatch quantifier rules),
// and each DEFINE is an iterative condition evaluating its compiled expression over the
// "extended row" (LogicalMatch in logical_plan.hpp): the current row, MATCH_ROWTIME /
// MATCH_PROCTIME / CLASSIFIER, then one row per navigation (A.x, FIRST(A.x, n), ...).
// Matches append their extended rows to a batch (one per match, or with ALL ROWS PER
// MATCH one per row of the match, its RUNNING navigations and aggregates over the rows up
// to that row); the measures are evaluated over that batch at once (vectorised) before the
// watermark that completed them goes downstream.
// Event time: late rows are dropped (numLateRecordsDropped), as the CEP operator does.
#include <chrono>
#include <span>

#include <nlohmann/json.hpp>

#include "clink/cep/cep_operator.hpp"
#include "clink/sql/common/column_key.hpp"
#include "clink/sql/expression/expr_compiler.hpp"
#include "clink/sql/ops/row_key.hpp"
#include "clink/sql/ops/sql_aggregates.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "clink/sql/spec/plan_structs.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "join_row_codec.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {

namespace {

using MatchEvent = std::pair<std::string, std::string>;  // partition key bytes, row bytes
using NoOutput = char;                                   // matches go to the SQL batch, not the CEP collector

// An aggregate over a variable's rows (MatchAggregate) as the operator runs it.
struct AggregateSpec {
  std::string variable;
  bool final = false;  // ALL ROWS PER MATCH: over the whole match, else RUNNING
  std::vector<ExprPtr> args;  // over one input row
  SchemaPtr arg_schema;
  std::shared_ptr<const AggregateSet> set;  // one call over arg_schema
};

struct MatchConfig {
  std::string where;
  SchemaPtr in_schema, out_schema;
  std::vector<std::size_t> partition_keys;
  std::size_t order_column = 0;
  bool proctime = false;
  bool all_rows = false;  // ALL ROWS PER MATCH
  std::vector<MatchStep> pattern;
  std::optional<std::int64_t> within_ms;
  cep::AfterMatchSkipStrategy skip;
  std::vector<MatchDefinition> defines;  // condition over its extended row
  std::vector<std::vector<AggregateSpec>> define_aggregates;  // per define
  std::vector<MatchNav> measure_navs;
  std::vector<AggregateSpec> measure_aggregates;
  std::vector<ExprPtr> outputs;
  std::optional<std::size_t> rowtime_output;
  LogicalType rowtime_type;
  SessionContext session;
};

// The pattern step of `variable`; pattern.size() for none (every row of the match).
std::size_t step_of(const MatchConfig& cfg, const std::string& variable) {
  for (std::size_t s = 0; s < cfg.pattern.size(); ++s)
    if (cfg.pattern[s].variable == variable) return s;
  return cfg.pattern.size();
}

// A (partial) match's rows in row order: the steps are concatenated, so each step's rows
// are a range of them.
struct MatchRows {
  std::vector<const MatchEvent*> all;
  std::vector<std::size_t> step_of;                        // per row: its pattern step
  std::vector<std::pair<std::size_t, std::size_t>> steps;  // per step: its rows [begin, end)

  void clear() {
    all.clear();
    step_of.clear();
    steps.clear();
  }
  void add(const MatchEvent* row, std::size_t step) {
    all.push_back(row);
    step_of.push_back(step);
  }
  // The rows of `step` (steps.size(): every row) among the first `prefix`: [begin, end),
  // empty when end <= begin.
  std::pair<std::size_t, std::size_t> range(std::size_t step, std::size_t prefix) const {
    if (step == steps.size()) return {0, prefix};
    return {steps[step].first, std::min(steps[step].second, prefix)};
  }
};

std::vector<LogicalType> result_types(const std::vector<AggregateSpec>& aggs) {
  std::vector<LogicalType> out;
  for (const auto& a : aggs) out.push_back(a.set->calls()[0].result_type);
  return out;
}

// Fills extended rows (one per condition evaluation or per match) into a batch.
class ExtendedRows {
 public:
  ExtendedRows(const MatchConfig& cfg, std::size_t navs, const std::vector<AggregateSpec>& aggs)
      : n_(cfg.in_schema->size()),
        navs_(navs),
        codec_(*cfg.in_schema),
        scratch_(cfg.in_schema),
        batch_(std::make_shared<const Schema>(
            match_extended_schema(*cfg.in_schema, navs, cfg.rowtime_type, result_types(aggs)))) {}

  // The column of aggregate j.
  std::size_t aggregate_column(std::size_t j) const { return n_ + 3 + n_ * navs_ + j; }

  ColumnBatch& batch() { return batch_; }
  void clear() { batch_.clear(); }

  // Appends slot `slot` (0: the current / last row, 1 + k: navigation k) from row bytes,
  // or NULLs when `row` is null.
  void put_row(std::size_t slot, const MatchEvent* row) {
    const std::size_t base = slot == 0 ? 0 : n_ + 3 + (slot - 1) * n_;
    if (!row) {
      for (std::size_t c = 0; c < n_; ++c) batch_.column(base + c).append_null();
      return;
    }
    scratch_.clear();
    codec_.decode(row->second, scratch_);
    for (std::size_t c = 0; c < n_; ++c) batch_.column(base + c).append_range(scratch_.column(c), 0, 1);
  }
  void put_specials(std::int64_t rowtime_ms, std::int64_t proctime_ms, std::string_view classifier) {
    batch_.column(n_).append<std::int64_t>(rowtime_ms * 1000);
    batch_.column(n_ + 1).append<std::int64_t>(proctime_ms * 1000);
    batch_.column(n_ + 2).append_string(classifier);
  }
  void commit(EventTime t, std::size_t rows = 1) { batch_.commit_rows(rows, RowKind::kInsert, t); }

 private:
  std::size_t n_;
  std::size_t navs_;
  SideRowCodec codec_;
  ColumnBatch scratch_;
  ColumnBatch batch_;
};

// Computes one aggregate over the rows of a step (or every row): decodes them into a
// batch, evaluates the compiled arguments over it, folds them into a fresh accumulator
// and appends its result once per prefix (RUNNING: the rows among the first `prefix`).
class AggregateEvaluator {
 public:
  AggregateEvaluator(const MatchConfig& cfg, const AggregateSpec& spec)
      : spec_(spec), step_(step_of(cfg, spec.variable)), codec_(*cfg.in_schema), rows_(cfg.in_schema) {
    for (const auto& e : spec.args) args_.emplace_back(e, cfg.session);
  }

  void append(const MatchRows& match, std::span<const std::size_t> prefixes, ColumnBatch& out, std::size_t column) {
    const auto [b, e] = match.range(step_, match.all.size());
    rows_.clear();
    for (std::size_t i = b; i < e; ++i) codec_.decode(match.all[i]->second, rows_);
    ColumnBatch args(spec_.arg_schema);
    for (std::size_t i = 0; i < args_.size(); ++i) args.column(i) = args_[i].evaluate_owned(rows_);
    args.commit_rows(rows_.size());
    AggState state = spec_.set->create();
    spec_.set->bind(args, input_);
    std::size_t next = b;
    for (std::size_t prefix : prefixes) {
      for (; next < std::min(e, prefix); ++next) spec_.set->add(state, input_, static_cast<std::uint32_t>(next - b), 1);
      spec_.set->append_results(state, out, column);
    }
  }

 private:
  const AggregateSpec& spec_;
  std::size_t step_;
  SideRowCodec codec_;
  ColumnBatch rows_;
  std::vector<CompiledExpr> args_;
  AggregateInput input_;
};

// The row a navigation selects among the first `prefix` rows of the match (RUNNING), null
// when there is none: `step`'s rows (or every row) from the first / the last, or PREV: the
// rows before the last of them.
const MatchEvent* navigate(const MatchNav& nav, const MatchRows& match, std::size_t step, std::size_t prefix) {
  const auto [b, e] = match.range(step, prefix);
  const auto off = static_cast<std::size_t>(nav.offset);
  if (e <= b) return nullptr;
  switch (nav.kind) {
    case MatchNav::Kind::kLast: return off < e - b ? match.all[e - 1 - off] : nullptr;
    case MatchNav::Kind::kFirst: return off < e - b ? match.all[b + off] : nullptr;
    case MatchNav::Kind::kPrev: return off <= e - 1 ? match.all[e - 1 - off] : nullptr;
  }
  return nullptr;
}

// Whether `e` reads extended-row column `col`.
bool reads_column(const Expr& e, std::size_t col) {
  if (e.kind == ExprKind::kColumnRef) return e.column_index == col;
  for (const auto& a : e.args)
    if (a && reads_column(*a, col)) return true;
  return false;
}

std::int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// One DEFINE: an iterative condition over (row, partial match).
class DefineEvaluator {
 public:
  DefineEvaluator(const MatchConfig& cfg, std::size_t index)
      : cfg_(cfg),
        def_(cfg.defines[index]),
        step_(step_of(cfg, def_.variable)),
        aggs_(cfg.define_aggregates[index]),
        rows_(cfg, def_.navs.size(), aggs_),
        expr_(def_.condition, cfg.session),
        reads_proctime_(reads_column(*def_.condition, cfg.in_schema->size() + 1)) {
    for (const auto& n : def_.navs) nav_steps_.push_back(step_of(cfg, n.variable));
    for (const auto& a : aggs_) agg_evals_.emplace_back(cfg, a);
  }

  // Whether the condition reads the current row only (no navigation, aggregate or
  // MATCH_ROWTIME / MATCH_PROCTIME): then it is a simple condition, which the CEP engine
  // evaluates once per row instead of once per partial match.
  bool reads_row_only() const {
    const std::size_t n = cfg_.in_schema->size();
    return def_.navs.empty() && aggs_.empty() && !reads_column(*def_.condition, n) && !reads_column(*def_.condition, n + 1);
  }

  bool operator()(const MatchEvent& row) {
    rows_.clear();
    rows_.put_row(0, &row);
    rows_.put_specials(0, 0, def_.variable);
    rows_.commit(kNoEventTime);
    return holds();
  }

  bool operator()(const MatchEvent& row, const cep::MatchContext<MatchEvent>& ctx) {
    rows_.clear();
    rows_.put_row(0, &row);
    rows_.put_specials(ctx.timestamp(), reads_proctime_ ? wall_clock_ms() : 0, def_.variable);
    if (!def_.navs.empty() || !aggs_.empty()) {
      // The partial match so far plus the current row, in row order (later steps have no
      // rows yet).
      match_.clear();
      for (std::size_t s = 0; s < cfg_.pattern.size(); ++s) {
        const std::size_t begin = match_.all.size();
        if (s <= step_)
          for (const MatchEvent* e : ctx.events(cfg_.pattern[s].variable)) match_.add(e, s);
        if (s == step_) match_.add(&row, s);
        match_.steps.emplace_back(begin, match_.all.size());
      }
      const std::size_t rows = match_.all.size();
      for (std::size_t k = 0; k < def_.navs.size(); ++k)
        rows_.put_row(1 + k, navigate(def_.navs[k], match_, nav_steps_[k], rows));
      for (std::size_t j = 0; j < aggs_.size(); ++j)
        agg_evals_[j].append(match_, std::span<const std::size_t>(&rows, 1), rows_.batch(), rows_.aggregate_column(j));
    }
    rows_.commit(kNoEventTime);
    return holds();
  }

 private:
  bool holds() {
    const Column& c = expr_.evaluate(rows_.batch());
    return c.is_valid(0) && c.values<std::uint8_t>()[0] != 0;
  }

  const MatchConfig& cfg_;
  const MatchDefinition& def_;
  std::size_t step_;  // the defined variable's
  const std::vector<AggregateSpec>& aggs_;
  ExtendedRows rows_;
  CompiledExpr expr_;
  bool reads_proctime_;  // MATCH_PROCTIME(): the clock is read only when asked for
  std::vector<std::size_t> nav_steps_;
  std::vector<AggregateEvaluator> agg_evals_;
  MatchRows match_;
};

// Collects the extended rows of each match (its last row, or with ALL ROWS PER MATCH each
// of its rows); the measures are evaluated per batch of matches.
class MeasureCollector final : public cep::PatternProcessFunction<MatchEvent, NoOutput> {
 public:
  explicit MeasureCollector(std::shared_ptr<const MatchConfig> cfg)
      : cfg_(std::move(cfg)),
        rows_(*cfg_, cfg_->measure_navs.size(), cfg_->measure_aggregates),
        projection_(cfg_->outputs, names(*cfg_->out_schema), cfg_->session) {
    for (const auto& n : cfg_->measure_navs) nav_steps_.push_back(step_of(*cfg_, n.variable));
    for (const auto& a : cfg_->measure_aggregates) agg_evals_.emplace_back(*cfg_, a);
  }

  void process_match(const cep::Match<MatchEvent>& m, Context& ctx, Collector<NoOutput>&) override {
    match_.clear();
    for (std::size_t s = 0; s < cfg_->pattern.size(); ++s) {
      const std::size_t begin = match_.all.size();
      for (const MatchEvent& e : m.events(cfg_->pattern[s].variable)) match_.add(&e, s);
      match_.steps.emplace_back(begin, match_.all.size());
    }
    const std::size_t rows = match_.all.size();
    if (rows == 0) return;  // a pattern that matches no row is rejected at plan time
    const std::size_t first = cfg_->all_rows ? 0 : rows - 1;
    const std::int64_t now = ctx.current_processing_time();
    const std::int64_t match_time = cfg_->proctime ? now : ctx.timestamp();
    // Row i sees the first i + 1 rows (RUNNING); FINAL ones every row.
    running_.clear();
    final_.assign(rows - first, rows);
    for (std::size_t i = first; i < rows; ++i) {
      running_.push_back(i + 1);
      rows_.put_row(0, match_.all[i]);
      rows_.put_specials(match_time, now, cfg_->pattern[match_.step_of[i]].variable);
      for (std::size_t k = 0; k < cfg_->measure_navs.size(); ++k) {
        const MatchNav& nav = cfg_->measure_navs[k];
        rows_.put_row(1 + k, navigate(nav, match_, nav_steps_[k], nav.final ? rows : i + 1));
      }
    }
    for (std::size_t j = 0; j < agg_evals_.size(); ++j)
      agg_evals_[j].append(match_, cfg_->measure_aggregates[j].final ? final_ : running_, rows_.batch(),
                           rows_.aggregate_column(j));
    rows_.commit(cfg_->proctime ? kNoEventTime : ctx.timestamp(), rows - first);
  }

  // The measures of the matches collected since the last call; null when none.
  std::unique_ptr<ColumnBatch> take() {
    if (rows_.batch().size() == 0) return nullptr;
    auto out = std::make_unique<ColumnBatch>(projection_.project(rows_.batch()));
    rows_.clear();
    return out;
  }

 private:
  static std::vector<std::string> names(const Schema& s) {
    std::vector<std::string> out;
    for (const auto& f : s.fields()) out.push_back(f.name);
    return out;
  }
  std::shared_ptr<const MatchConfig> cfg_;
  ExtendedRows rows_;
  CompiledProjection projection_;
  std::vector<std::size_t> nav_steps_;
  std::vector<AggregateEvaluator> agg_evals_;
  MatchRows match_;
  std::vector<std::size_t> running_, final_;  // the prefixes of the rows output per match
};

cep::Pattern<MatchEvent> build_pattern(const std::shared_ptr<const MatchConfig>& cfg) {
  std::vector<cep::PatternStep<MatchEvent>> steps;
  for (const auto& s : cfg->pattern) {
    cep::PatternStep<MatchEvent> step;
    step.name = s.variable;
    step.quantifier.consuming = cep::ConsumingStrategy::kStrict;  // SQL rows are contiguous: next()
    const std::string where = "MATCH_RECOGNIZE variable " + s.variable;
    const bool optional = s.min == 0 && s.max == 1;
    if (optional) {
      step.quantifier.set_optional(where);
    } else if (!(s.min == 1 && s.max == 1)) {
      // Flink: oneOrMore / times / timesOrMore, consecutive; * and {0,n} also optional.
      step.quantifier_applied = true;
      if (s.max == -1) {
        step.quantifier.kind = cep::Quantifier::Kind::kLooping;
        step.times = cep::Times{std::max(s.min, 1), std::max(s.min, 1)};
      } else {
        step.quantifier.kind = cep::Quantifier::Kind::kTimes;
        step.times = cep::Times{std::max(s.min, 1), s.max};
      }
      if (s.min == 0) step.quantifier.set_optional(where);
      step.quantifier.set_consecutive(where);
      if (!s.reluctant && s.min != s.max) step.quantifier.set_greedy(where);
    }
    for (std::size_t i = 0; i < cfg->defines.size(); ++i)
      if (cfg->defines[i].variable == s.variable) {
        auto eval = std::make_shared<DefineEvaluator>(*cfg, i);
        if (eval->reads_row_only()) {
          step.condition = cep::make_condition<MatchEvent>([eval](const MatchEvent& e) { return (*eval)(e); });
        } else {
          step.condition = cep::make_condition<MatchEvent>(
              [eval](const MatchEvent& e, const cep::MatchContext<MatchEvent>& ctx) { return (*eval)(e, ctx); });
        }
      }
    if (cfg->within_ms) step.within = *cfg->within_ms;
    steps.push_back(std::move(step));
  }
  auto p = cep::Pattern<MatchEvent>::from_steps(std::move(steps), cfg->skip);
  p.validate();
  return p;
}

// Forwards the inner CEP operator's watermarks after the measures it completed.
class MatchOutput final : public Output {
 public:
  void bind(Output* real, MeasureCollector* collector) {
    real_ = real;
    collector_ = collector;
  }
  void flush() {
    if (auto b = collector_->take()) real_->emit(std::move(b));
  }
  void emit(BatchPtr) override {}  // the collector never collects (NoOutput)
  void emit_watermark(Watermark wm) override {
    flush();
    real_->emit_watermark(wm);
  }
  void emit_side(const std::string& tag, BatchPtr batch) override { real_->emit_side(tag, std::move(batch)); }

 private:
  Output* real_ = nullptr;
  MeasureCollector* collector_ = nullptr;
};

class MatchRecognizeOperator final : public StreamOperator {
 public:
  explicit MatchRecognizeOperator(std::shared_ptr<const MatchConfig> cfg)
      : cfg_(std::move(cfg)),
        key_encoder_(*cfg_->in_schema, cfg_->partition_keys),
        row_codec_(*cfg_->in_schema),
        collector_(std::make_shared<MeasureCollector>(cfg_)) {
    cep::CepOptions<MatchEvent> options;
    options.event_time = !cfg_->proctime;
    cep_ = std::make_unique<cep::CepOperator<MatchEvent, NoOutput, RowKey>>(
        build_pattern(cfg_), [](const MatchEvent& e) { return RowKey{e.first}; }, collector_, options);
  }

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    adapter_.bind(&ctx.output(), collector_.get());
    ctx.set_output(&adapter_);
    cep_->open(ctx);
  }

  void process_batch(int input, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    auto events = std::make_unique<Batch<MatchEvent>>();
    events->records.resize(in.size());
    for (std::size_t r = 0; r < in.size(); ++r) {
      if (in.row_kind(r) != RowKind::kInsert)
        throw ClinkError(cfg_->where + ": MATCH_RECOGNIZE takes insert-only input, got " + std::string(row_kind_short_string(in.row_kind(r))));
      auto& rec = events->records[r];
      key_encoder_.encode(in, r, rec.value.first);
      row_codec_.encode(in, r, rec.value.second);
      rec.event_time = in.event_times()[r];
    }
    cep_->process_batch(input, std::move(events));
    adapter_.flush();
  }
  void process_watermark(Watermark wm) override {
    cep_->process_watermark(wm);
    adapter_.flush();
  }
  void process_processing_time(std::int64_t now) override {
    cep_->process_processing_time(now);
    adapter_.flush();
  }
  void finish() override {
    cep_->finish();
    adapter_.flush();
  }
  void snapshot_state(std::int64_t id) override { cep_->snapshot_state(id); }
  void notify_checkpoint_complete(std::int64_t id) override { cep_->notify_checkpoint_complete(id); }
  void close() override { cep_->close(); }

 private:
  std::shared_ptr<const MatchConfig> cfg_;
  RowKeyEncoder key_encoder_;
  SideRowCodec row_codec_;
  std::shared_ptr<MeasureCollector> collector_;
  MatchOutput adapter_;
  std::unique_ptr<cep::CepOperator<MatchEvent, NoOutput, RowKey>> cep_;
};

std::vector<AggregateSpec> aggregates_from_json(const nlohmann::json& j, const Schema& input, const SqlOpParams& p) {
  std::vector<AggregateSpec> out;
  for (const auto& a : j) {
    AggregateSpec spec;
    spec.variable = a.at("variable").get<std::string>();
    spec.final = a.value("final", false);
    std::vector<RowField> fields;
    for (const auto& e : a.at("args")) {
      spec.args.push_back(expr_from_json(e, input, FunctionRegistry::process()));
      fields.push_back({"$arg" + std::to_string(fields.size()), spec.args.back()->type});
    }
    spec.arg_schema = std::make_shared<const Schema>(std::move(fields));
    spec.set = std::make_shared<const AggregateSet>(
        AggregateSet::parse(nlohmann::json::array({a.at("call")}), *spec.arg_schema, p, false, FunctionRegistry::process()),
        false);
    out.push_back(std::move(spec));
  }
  return out;
}

std::vector<MatchNav> navs_from_json(const nlohmann::json& j, const SqlOpParams& p) {
  std::vector<MatchNav> out;
  for (const auto& n : j) {
    MatchNav nav;
    std::string kind = n.at("kind").get<std::string>();
    if (kind == "LAST") nav.kind = MatchNav::Kind::kLast;
    else if (kind == "FIRST") nav.kind = MatchNav::Kind::kFirst;
    else if (kind == "PREV") nav.kind = MatchNav::Kind::kPrev;
    else p.fail("unknown navigation '" + kind + "' (LAST, FIRST, PREV)");
    nav.variable = n.at("variable").get<std::string>();
    nav.offset = n.at("offset").get<int>();
    nav.final = n.value("final", false);
    out.push_back(std::move(nav));
  }
  return out;
}

}  // namespace

void register_sql_match_recognize(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_match_recognize",
      .description = "sql_row -> sql_row: MATCH_RECOGNIZE (ONE ROW or ALL ROWS PER MATCH) on the CEP engine, keyed on the "
                     "partition columns, ordered by an event- or processing-time attribute; insert-only",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_match_recognize",
                      {"partition_keys", "order_column", "proctime", "all_rows", "pattern", "within_ms", "skip", "skip_variable",
                       "defines", "measure_navs", "measure_aggregates", "outputs", "rowtime_output"});
        auto cfg = std::make_shared<MatchConfig>();
        cfg->where = p.where();
        cfg->in_schema = p.input_schema(0);
        cfg->out_schema = p.output_schema();
        cfg->session = session_from_params(p);
        cfg->partition_keys = p.columns("partition_keys", *cfg->in_schema);
        cfg->order_column = p.column(p.require("order_column"), *cfg->in_schema, "param 'order_column'");
        cfg->proctime = p.get_bool("proctime", false);
        cfg->all_rows = p.get_bool("all_rows", false);
        cfg->rowtime_type = cfg->proctime ? LogicalType::timestamp(3).not_null()
                                          : cfg->in_schema->type(cfg->order_column).with_nullable(false);
        for (const auto& s : p.require("pattern"))
          cfg->pattern.push_back(MatchStep{s.at("variable").get<std::string>(), s.at("min").get<int>(),
                                           s.at("max").get<int>(), s.at("reluctant").get<bool>(), ""});
        if (cfg->pattern.empty()) p.fail("param 'pattern' is empty");
        if (p.has("within_ms")) cfg->within_ms = p.require_int("within_ms", 1);
        const std::string skip = p.get_string("skip", "PAST_LAST_ROW");
        const std::string var = p.get_string("skip_variable", "");
        if (skip == "PAST_LAST_ROW") cfg->skip = cep::AfterMatchSkipStrategy::skip_past_last_event();
        else if (skip == "TO_NEXT_ROW") cfg->skip = cep::AfterMatchSkipStrategy::skip_to_next();
        else if (skip == "TO_FIRST") cfg->skip = cep::AfterMatchSkipStrategy::skip_to_first(var);
        else if (skip == "TO_LAST") cfg->skip = cep::AfterMatchSkipStrategy::skip_to_last(var);
        else p.fail("unknown param 'skip' '" + skip + "' (PAST_LAST_ROW, TO_NEXT_ROW, TO_FIRST, TO_LAST)");
        const LogicalType rt = cfg->rowtime_type;
        for (const auto& d : p.require("defines")) {
          MatchDefinition def;
          def.variable = d.at("variable").get<std::string>();
          def.navs = navs_from_json(d.at("navs"), p);
          cfg->define_aggregates.push_back(aggregates_from_json(d.at("aggregates"), *cfg->in_schema, p));
          Schema ext = match_extended_schema(*cfg->in_schema, def.navs.size(), rt, result_types(cfg->define_aggregates.back()));
          def.condition = expr_from_json(d.at("condition"), ext, FunctionRegistry::process());
          cfg->defines.push_back(std::move(def));
        }
        cfg->measure_navs = navs_from_json(p.require("measure_navs"), p);
        cfg->measure_aggregates = aggregates_from_json(p.require("measure_aggregates"), *cfg->in_schema, p);
        Schema ext = match_extended_schema(*cfg->in_schema, cfg->measure_navs.size(), rt,
                                           result_types(cfg->measure_aggregates));
        for (const auto& o : p.require("outputs")) cfg->outputs.push_back(expr_from_json(o, ext, FunctionRegistry::process()));
        if (cfg->outputs.size() != cfg->out_schema->size())
          p.fail("param 'outputs' has " + std::to_string(cfg->outputs.size()) + " expressions for " +
                 std::to_string(cfg->out_schema->size()) + " output columns");
        build_pattern(cfg);  // rejects a pattern the CEP engine does not accept at plan time
        return [cfg] { return std::make_unique<MatchRecognizeOperator>(cfg); };
      }});
}

}  // namespace clink::sql
