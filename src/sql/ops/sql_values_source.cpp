// sql_values_source: the rows of a VALUES clause (and the one empty row of a SELECT
// without FROM), as Flink's StreamExecValues: a bounded, insert-only source. The rows
// are constant expressions (expr_json.hpp) evaluated once when the reader opens (so
// `VALUES (CURRENT_TIMESTAMP)` reads the clock once, as Flink's generated values do),
// then emitted in order, up to a batch at a time.
//
// Checkpointing: the rows form one split, "<rows emitted>", held by subtask 0 (the
// planner runs the op at parallelism 1); a restore continues after the last emitted row,
// and a restored empty split list means every row was already emitted.
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "clink/connectors/sql/sql_source.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/runtime_context.hpp"
#include "clink/sql/expression/expr_compiler.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {
namespace {

struct ValuesConfig {
  std::string where;
  SchemaPtr schema;
  std::vector<std::vector<ExprPtr>> rows;  // each of schema's types, no column references
  SessionContext session;
};

class ValuesReader final : public SqlSourceReader {
 public:
  ValuesReader(std::shared_ptr<const ValuesConfig> cfg, bool owns_rows)
      : cfg_(std::move(cfg)), next_(owns_rows ? 0 : cfg_->rows.size()) {}

  void open(RuntimeContext& ctx) override {
    // One "now" for every row (CURRENT_TIMESTAMP & co): the task's processing-time clock.
    auto time = std::make_shared<BatchTimeContext>();
    time->now_micros = ctx.timer_service().current_processing_time() * 1000;
    SessionContext session = cfg_->session;
    session.batch_time = time;
    rows_ = std::make_unique<ColumnBatch>(cfg_->schema, cfg_->rows.size());
    // The expressions see a batch of one row and no columns.
    ColumnBatch one(std::make_shared<const Schema>(std::vector<RowField>{}));
    one.commit_rows(1);
    std::vector<std::string> names;
    for (const auto& f : cfg_->schema->fields()) names.push_back(f.name);
    const std::uint32_t first = 0;
    try {
      for (const auto& row : cfg_->rows) {
        CompiledProjection projection(row, names, session);
        ColumnBatch values = projection.project(one);
        for (std::size_t c = 0; c < values.num_columns(); ++c)
          if (!cfg_->schema->type(c).nullable() && !values.column(c).is_valid(0))
            throw ClinkError(cfg_->where + ": VALUES row " + std::to_string(rows_->size() + 1) + ": column " +
                             std::to_string(c) + " ('" + cfg_->schema->name(c) + "') is NOT NULL but the value is NULL");
        rows_->append_gather(values, &first, 1);
      }
    } catch (const SqlRuntimeError& e) {
      throw ClinkError(cfg_->where + ": " + e.what());
    }
  }

  Status poll(ColumnBatch& out, std::size_t max_rows) override {
    const std::size_t total = cfg_->rows.size();
    if (next_ >= total) return Status::kEnd;
    const std::size_t n = std::min(max_rows, total - next_);
    idx_.resize(n);
    std::iota(idx_.begin(), idx_.end(), static_cast<std::uint32_t>(next_));
    out.append_gather(*rows_, idx_.data(), n);
    next_ += n;
    return next_ >= total ? Status::kEnd : Status::kMore;
  }

  std::vector<std::string> snapshot_splits() const override {
    if (next_ >= cfg_->rows.size()) return {};
    return {std::to_string(next_)};
  }

  void restore_splits(std::vector<std::string> splits) override {
    next_ = cfg_->rows.size();
    if (splits.empty()) return;
    if (splits.size() != 1 || splits[0].empty() || splits[0].find_first_not_of("0123456789") != std::string::npos)
      throw ClinkError(cfg_->where + ": malformed split list in the restored checkpoint");
    std::size_t emitted = std::stoul(splits[0]);
    if (emitted > cfg_->rows.size())
      throw ClinkError(cfg_->where + ": the restored checkpoint emitted " + splits[0] + " rows but VALUES has " +
                       std::to_string(cfg_->rows.size()));
    next_ = emitted;
  }

 private:
  std::shared_ptr<const ValuesConfig> cfg_;
  std::size_t next_;
  std::unique_ptr<ColumnBatch> rows_;
  std::vector<std::uint32_t> idx_;
};

class ValuesSource final : public SqlSource {
 public:
  explicit ValuesSource(std::shared_ptr<const ValuesConfig> cfg) : cfg_(std::move(cfg)) {}
  std::unique_ptr<SqlSourceReader> create_reader(int subtask, int) const override {
    return std::make_unique<ValuesReader>(cfg_, subtask == 0);
  }
  const SchemaPtr& output_schema() const override { return cfg_->schema; }
  std::string factory_name() const override { return "sql_values_source"; }

 private:
  std::shared_ptr<const ValuesConfig> cfg_;
};

std::shared_ptr<const ValuesConfig> values_config(const OperatorSpecContext& ctx) {
  SqlOpParams p(ctx, "sql_values_source", {"rows"});
  auto cfg = std::make_shared<ValuesConfig>();
  cfg->where = p.where();
  cfg->schema = p.output_schema();
  cfg->session = session_from_params(p);
  const auto& rows = p.require("rows");
  if (!rows.is_array()) p.fail("param 'rows' must be an array of rows (arrays of expressions)");
  const Schema no_columns{std::vector<RowField>{}};
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto& row = rows[r];
    if (!row.is_array() || row.size() != cfg->schema->size())
      p.fail("param 'rows'[" + std::to_string(r) + "] must be an array of " + std::to_string(cfg->schema->size()) +
             " expressions");
    std::vector<ExprPtr> exprs;
    for (std::size_t c = 0; c < row.size(); ++c) {
      std::string at = "param 'rows'[" + std::to_string(r) + "][" + std::to_string(c) + "]";
      try {
        exprs.push_back(expr_from_json(row[c], no_columns));
      } catch (const std::exception& e) {
        p.fail(at + ": " + e.what());
      }
      // Nullability may differ (a loaded CAST is typed nullable); open() checks the values.
      const LogicalType& want = cfg->schema->type(c);
      if (!(exprs.back()->type.with_nullable(want.nullable()) == want))
        p.fail(at + " is " + exprs.back()->type.to_string() + " but column " + std::to_string(c) + " ('" +
               cfg->schema->name(c) + "') is " + cfg->schema->type(c).to_string());
    }
    cfg->rows.push_back(std::move(exprs));
  }
  return cfg;
}

}  // namespace

void register_sql_values_source(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_values_source",
      .description = "bounded insert-only source of the rows of a VALUES clause; params: schema, rows "
                     "(arrays of constant expressions)",
      .num_inputs = 0,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        auto source = std::make_shared<const ValuesSource>(values_config(ctx));
        return [source] { return std::make_unique<SqlSourceOperator>(source); };
      }});
}

}  // namespace clink::sql
