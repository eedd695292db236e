// sql_changelog_normalize: Flink's ChangelogNormalize, behind an upsert source (upsert-kafka).
// An upsert stream says only "the row of key k is now r" (+I / +U) or "key k is gone" (-D,
// whose other columns may be NULL); downstream operators need retractions of the exact
// rows they saw. Per key (keyed value state "normalize") the last row is kept:
//   +I / +U r   no row yet: +I r; the same row: nothing; else -U old, +U r;
//   -D          a row: -D old (the full row, not the tombstone's); none: nothing.
// -U input is dropped (the +U after it carries the change).
#include "clink/core/error.hpp"
#include "clink/sql/ops/sql_grouping.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "rank_support.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {
namespace {

struct NormalizeConfig {
  std::string where;
  SchemaPtr schema;
  std::vector<std::size_t> keys;
};

class SqlChangelogNormalizeOperator final : public StreamOperator {
 public:
  explicit SqlChangelogNormalizeOperator(std::shared_ptr<const NormalizeConfig> cfg)
      : cfg_(std::move(cfg)), keys_(*cfg_->schema, cfg_->keys), codec_(*cfg_->schema), out_(cfg_->schema, codec_, false) {}

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    backend_ = ctx.keyed_state_backend_or_private();
    backend_->set_current_namespace({});
    state_ = backend_->register_state("normalize", StateKind::kValue);
  }

  void process_batch(int, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    for (std::size_t r = 0; r < in.size(); ++r) {
      const RowKind kind = in.row_kind(r);
      if (kind == RowKind::kUpdateBefore) continue;
      partition_key(keys_, in, r, key_);
      backend_->set_current_key(key_);
      const bool had = backend_->get(state_, prev_);
      if (kind == RowKind::kDelete) {
        if (!had) continue;
        backend_->remove(state_);
        out_.emit(prev_, RowKind::kDelete, 0);
      } else {
        row_.clear();
        codec_.encode(in, r, row_);
        if (had && RankRowCodec::same_values(prev_, row_)) continue;
        backend_->put(state_, row_);
        if (!had) {
          out_.emit(row_, RowKind::kInsert, 0);
        } else {
          out_.emit(prev_, RowKind::kUpdateBefore, 0);
          out_.emit(row_, RowKind::kUpdateAfter, 0);
        }
      }
      if (out_.pending() >= kDefaultBatchSize) out_.flush(output());
    }
    out_.flush(output());
  }

 private:
  std::shared_ptr<const NormalizeConfig> cfg_;
  RowKeyEncoder keys_;
  RankRowCodec codec_;
  RankEmitter out_;
  KeyedStateBackend* backend_ = nullptr;
  StateId state_;
  std::string key_, row_, prev_;
};

}  // namespace

void register_sql_changelog_normalize(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_changelog_normalize",
      .description = "sql_row -> sql_row: an upsert stream (+I/+U/-D by key) into a retract stream keeping the last "
                     "row per key (Flink's ChangelogNormalize); params: keys",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_changelog_normalize", {"keys"});
        auto cfg = std::make_shared<NormalizeConfig>();
        cfg->where = p.where();
        cfg->schema = p.input_schema(0);
        cfg->keys = p.columns("keys", *cfg->schema);
        if (cfg->keys.empty()) p.fail("param 'keys' must name the upsert key's columns");
        RankRowCodec::check_storable(*cfg->schema, p);
        check_output_types(*p.output_schema(), cfg->schema->fields(), p);
        return [cfg] { return std::make_unique<SqlChangelogNormalizeOperator>(cfg); };
      }});
}

}  // namespace clink::sql
