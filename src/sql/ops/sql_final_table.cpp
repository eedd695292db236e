// sql_final_table: the final table of an updating query, for batch execution mode
// ('execution.runtime-mode' = 'batch'). Flink's batch mode gives each query's final result
// once, as inserts, at the end of the input; clink runs the same streaming operators over
// the bounded input (without watermarks until its end) and folds their changelog here:
// keyed by the whole row (keyed value state "final": the number of copies, then the row),
// +I / +U add a copy and -U / -D take one away; finish() emits every row left, as +I.
#include <cstring>

#include "clink/core/error.hpp"
#include "clink/sql/ops/sql_grouping.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "rank_support.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {
namespace {

struct FinalTableConfig {
  std::string where;
  SchemaPtr schema;
  std::vector<std::size_t> columns;  // all of them: the key is the row
};

class SqlFinalTableOperator final : public StreamOperator {
 public:
  explicit SqlFinalTableOperator(std::shared_ptr<const FinalTableConfig> cfg)
      : cfg_(std::move(cfg)), keys_(*cfg_->schema, cfg_->columns), codec_(*cfg_->schema), out_(cfg_->schema, codec_, false) {}

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    backend_ = ctx.keyed_state_backend_or_private();
    backend_->set_current_namespace({});
    state_ = backend_->register_state("final", StateKind::kValue);
  }

  void process_batch(int, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    for (std::size_t r = 0; r < in.size(); ++r) {
      const RowKind kind = in.row_kind(r);
      const std::int64_t delta = kind == RowKind::kInsert || kind == RowKind::kUpdateAfter ? 1 : -1;
      partition_key(keys_, in, r, key_);
      backend_->set_current_key(key_);
      std::int64_t copies = 0;
      if (backend_->get(state_, value_)) std::memcpy(&copies, value_.data(), sizeof copies);
      copies += delta;
      if (copies <= 0) {  // a retraction of a row never inserted cannot happen in a valid changelog
        backend_->remove(state_);
        continue;
      }
      if (copies == 1 && delta == 1) {
        value_.assign(sizeof copies, '\0');
        codec_.encode(in, r, value_);
      }
      std::memcpy(value_.data(), &copies, sizeof copies);
      backend_->put(state_, value_);
    }
  }

  void finish() override {
    for (int kg = ctx().key_groups().first; kg <= ctx().key_groups().last; ++kg)
      backend_->for_each_entry(state_, kg, [&](std::string_view, std::string_view, std::string_view value) {
        std::int64_t copies = 0;
        std::memcpy(&copies, value.data(), sizeof copies);
        for (std::int64_t i = 0; i < copies; ++i) {
          out_.emit(value.substr(sizeof copies), RowKind::kInsert, 0, kNoEventTime);
          if (out_.pending() >= kDefaultBatchSize) out_.flush(output());
        }
      });
    out_.flush(output());
  }

 private:
  std::shared_ptr<const FinalTableConfig> cfg_;
  RowKeyEncoder keys_;
  RankRowCodec codec_;
  RankEmitter out_;
  KeyedStateBackend* backend_ = nullptr;
  StateId state_;
  std::string key_, value_;
};

}  // namespace

void register_sql_final_table(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_final_table",
      .description = "sql_row -> sql_row: an updating query's final table, emitted as inserts when the input ends "
                     "(batch execution mode); keyed by the whole row",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_final_table", {});
        auto cfg = std::make_shared<FinalTableConfig>();
        cfg->where = p.where();
        cfg->schema = p.input_schema(0);
        for (std::size_t i = 0; i < cfg->schema->size(); ++i) cfg->columns.push_back(i);
        RankRowCodec::check_storable(*cfg->schema, p);
        check_output_types(*p.output_schema(), cfg->schema->fields(), p);
        return [cfg] { return std::make_unique<SqlFinalTableOperator>(cfg); };
      }});
}

}  // namespace clink::sql
