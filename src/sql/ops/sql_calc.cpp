// sql_calc: WHERE and SELECT through compiled expressions (expr_compiler.hpp), batch in,
// batch out. The filter runs first and selects rows (one gather of the kept rows, none
// when every row is kept); the projections then run over the kept rows only, so an
// expression never fails on a row the filter dropped (Flink evaluates the condition
// first too). The gather copies only the columns the projections read: a Nexmark event
// row's person, auction and bid structs (strings and all) are most of its bytes, and a
// query filtering on event_type reads a field or two of one of them. Row kinds and event
// times follow their rows.
#include <memory>

#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/sql/expression/expr_compiler.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {
namespace {

struct CalcConfig {
  std::string where;
  SchemaPtr out_schema;
  std::vector<ExprPtr> projections;
  ExprPtr filter;
  SessionContext session;
};

class SqlCalcOperator final : public StreamOperator {
 public:
  explicit SqlCalcOperator(const CalcConfig& cfg)
      : cfg_(cfg), batch_time_(std::make_shared<BatchTimeContext>()),
        session_(with_batch_time(cfg.session, batch_time_)),
        projection_(cfg.projections, names(*cfg.out_schema), session_) {
    if (cfg.filter) predicate_.emplace(cfg.filter, session_);
    for (const auto& e : cfg.projections) mark_read(*e);
  }

  // CURRENT_WATERMARK reads the last watermark this operator saw (NULL before the first).
  void process_watermark(Watermark wm) override {
    if (!wm.idle && wm.timestamp != kMinEventTime) batch_time_->current_watermark_millis = wm.timestamp;
    StreamOperator::process_watermark(wm);
  }

  void process_batch(int, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    if (in.size() == 0) return;
    // One "now" per batch for CURRENT_TIMESTAMP & co (the task's processing-time clock).
    batch_time_->now_micros = ctx().timer_service().current_processing_time() * 1000;
    const ColumnBatch* rows = &in;
    ColumnBatch kept(in.schema());
    try {
      if (predicate_) {
        const std::size_t n = predicate_->select(in, selection_);
        if (n == 0) return;
        if (n < in.size()) {
          kept = gather_read(in, n);
          rows = &kept;
        }
      }
      ColumnBatch out = projection_.project(*rows);
      output().emit(std::make_unique<ColumnBatch>(std::move(out)));
    } catch (const SqlRuntimeError& e) {
      throw ClinkError(cfg_.where + ": " + e.what());
    }
  }

 private:
  void mark_read(const Expr& e) {
    if (e.kind == ExprKind::kColumnRef) {
      if (read_.size() <= e.column_index) read_.resize(e.column_index + 1, false);
      read_[e.column_index] = true;
    }
    for (const auto& a : e.args) mark_read(*a);
  }
  // The selected rows of the columns the projections read; the others stay empty.
  ColumnBatch gather_read(const ColumnBatch& in, std::size_t n) const {
    ColumnBatch kept(in.schema());
    const std::uint32_t* idx = selection_.data();
    for (std::size_t c = 0; c < read_.size() && c < in.num_columns(); ++c)
      if (read_[c]) kept.column(c).append_gather(in.column(c), idx, n);
    kept.row_kinds().resize(n);
    kept.event_times().resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      kept.row_kinds()[k] = in.row_kind(idx[k]);
      kept.event_times()[k] = in.event_times()[idx[k]];
    }
    return kept;
  }
  static std::vector<std::string> names(const Schema& s) {
    std::vector<std::string> n;
    for (const auto& f : s.fields()) n.push_back(f.name);
    return n;
  }
  static SessionContext with_batch_time(SessionContext s, std::shared_ptr<const BatchTimeContext> t) {
    s.batch_time = std::move(t);
    return s;
  }
  CalcConfig cfg_;
  // Shared with the compiled expressions through session_.batch_time; updated per batch
  // and per watermark.
  std::shared_ptr<BatchTimeContext> batch_time_;
  SessionContext session_;
  CompiledProjection projection_;
  std::optional<CompiledPredicate> predicate_;
  std::vector<std::uint32_t> selection_;
  std::vector<bool> read_;  // by input column: read by a projection
};

}  // namespace

SessionContext session_from_params(const SqlOpParams& p) {
  SessionContext s;
  if (!p.has("session")) return s;
  const auto& j = p.params().at("session");
  if (!j.is_object()) p.fail("param 'session' must be an object of settings, got " + j.dump());
  for (const auto& [k, v] : j.items()) {
    if (k == "table.local-time-zone") {
      if (!v.is_string()) p.fail("param 'session'.table.local-time-zone must be a string");
      try {
        s.time_zone = TimeZone::of(v.get<std::string>());
      } catch (const std::exception& e) {
        p.fail("param 'session'.table.local-time-zone: " + std::string(e.what()));
      }
    }
  }
  return s;
}

void register_sql_calc(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_calc",
      .description = "sql_row -> sql_row: WHERE filter then SELECT projections, compiled to vectorised kernels",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_calc", {"projections", "filter"});
        SchemaPtr in = p.input_schema(0);
        auto cfg = std::make_shared<CalcConfig>();
        cfg->where = p.where();
        cfg->out_schema = p.output_schema();
        cfg->session = session_from_params(p);
        const auto& projections = p.require("projections");
        if (!projections.is_array()) p.fail("param 'projections' must be an array of expressions");
        for (std::size_t i = 0; i < projections.size(); ++i) {
          try {
            cfg->projections.push_back(expr_from_json(projections[i], *in));
          } catch (const std::exception& e) {
            p.fail("param 'projections'[" + std::to_string(i) + "]: " + e.what());
          }
        }
        if (p.has("filter")) {
          try {
            cfg->filter = expr_from_json(p.params().at("filter"), *in);
          } catch (const std::exception& e) {
            p.fail(std::string("param 'filter': ") + e.what());
          }
          if (!cfg->filter->type.is(TypeKind::kBoolean))
            p.fail("param 'filter' is " + cfg->filter->type.to_string() + ", not BOOLEAN");
        }
        std::vector<RowField> fields;
        for (const auto& e : cfg->projections) fields.push_back({"", e->type});
        if (fields.size() != cfg->out_schema->size())
          p.fail("param 'schema' has " + std::to_string(cfg->out_schema->size()) + " fields for " +
                 std::to_string(fields.size()) + " projections");
        for (std::size_t i = 0; i < fields.size(); ++i)
          if (!(fields[i].type == cfg->out_schema->type(i)))
            p.fail("param 'schema': field " + std::to_string(i) + " ('" + cfg->out_schema->name(i) + "') is " +
                   cfg->out_schema->type(i).to_string() + ", projection " + std::to_string(i) + " (" +
                   cfg->projections[i]->to_string() + ") is " + fields[i].type.to_string());
        return [cfg] { return std::make_unique<SqlCalcOperator>(*cfg); };
      }});
}

}  // namespace clink::sql
