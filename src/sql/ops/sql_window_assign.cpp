// sql_window_assign: Flink's window TVFs without aggregation (TUMBLE / HOP / CUMULATE).
// Every row is repeated once per window it belongs to, with window_start, window_end
// and window_time appended; row kinds and event times are kept.
#include <memory>

#include "clink/core/error.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "clink/sql/spec/sql_window_spec.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {
namespace {

class SqlWindowAssignOperator final : public StreamOperator {
 public:
  SqlWindowAssignOperator(std::string where, SchemaPtr out, SqlWindowSpec spec)
      : where_(std::move(where)), out_schema_(std::move(out)), spec_(spec), assigner_(spec.assigner()) {}

  void process_batch(int, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    const std::size_t n = in.size(), cols = in.num_columns();
    const Column& tcol = in.column(spec_.time_column);
    idx_.clear();
    windows_.clear();
    for (std::size_t r = 0; r < n; ++r) {
      if (tcol.is_null(r))
        throw ClinkError(where_ + ": row " + std::to_string(r) + " has a NULL time attribute '" +
                         in.schema()->name(spec_.time_column) + "'");
      const std::size_t before = windows_.size();
      assigner_->assign(spec_.assign_time(tcol.values<std::int64_t>()[r]), 0, windows_);
      idx_.insert(idx_.end(), windows_.size() - before, static_cast<std::uint32_t>(r));
    }
    auto out = std::make_unique<ColumnBatch>(out_schema_, idx_.size());
    for (std::size_t c = 0; c < cols; ++c) out->column(c).append_gather(in.column(c), idx_.data(), idx_.size());
    for (const auto& w : windows_) spec_.append_window(*out, cols, w);
    for (auto r : idx_) {
      out->row_kinds().push_back(in.row_kind(r));
      out->event_times().push_back(in.event_times()[r]);
    }
    if (out->size() > 0) output().emit(std::move(out));
  }

 private:
  std::string where_;
  SchemaPtr out_schema_;
  SqlWindowSpec spec_;
  std::unique_ptr<WindowAssigner> assigner_;
  std::vector<std::uint32_t> idx_;
  std::vector<TimeWindow> windows_;
};

}  // namespace

void register_sql_window_assign(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_window_assign",
      .description = "sql_row -> sql_row: window TVF columns (TUMBLE / HOP / CUMULATE): each row once per window, "
                     "with window_start, window_end, window_time appended",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_window_assign", {"window"});
        SchemaPtr in = p.input_schema(0);
        SchemaPtr out = p.output_schema();
        SqlWindowSpec spec = SqlWindowSpec::parse(p.require("window"), *in, p);
        if (spec.ltz) spec.zone = session_from_params(p).time_zone;
        if (spec.kind == SqlWindowSpec::Kind::kSession)
          p.fail("param 'window': a SESSION window is not assigned row by row (use sql_window_session)");
        std::vector<RowField> fields = in->fields();
        append_window_fields(fields, spec.ltz);
        check_schema_equal(Schema(fields), *out, p.where() + ": param 'schema'");
        return [where = p.where(), out, spec] { return std::make_unique<SqlWindowAssignOperator>(where, out, spec); };
      }});
}

}  // namespace clink::sql
